// any_filter's writes (insert, check_and_insert, insert_many, remove) on every kind of the kind
// table, against the concrete filter's own verbs; the kind table's fills_up column against what
// each kind's insert does; and every kind has the places docs/architecture.md lists.
#include <gtest/gtest.h>

#include <bloomery/bloomery.hpp>
#include <bloomery/support/keys.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

using namespace bloomery;
using support::absent_keys;
using support::present_keys;

namespace {

// An empty filter of kind F for `capacity` keys (a static filter is built from `keys`).
template <class F>
F empty_for(std::uint64_t capacity, const std::vector<std::uint64_t>& keys) {
  if constexpr (std::same_as<F, static_filter>) {
    return static_filter::build(keys, 0.01);
  } else {
    return F(target{.capacity = capacity, .fpr = 0.01});
  }
}

template <class Fn>
void for_each_kind(Fn&& fn) {
  [&]<class... Fs>(type_list<Fs...>) { (fn.template operator()<Fs>(), ...); }(filter_types{});
}

// The message of the logic_error that fn throws ("" when it throws none).
template <class Fn>
std::string logic_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

// Every kind of the table has what a new kind must bring (docs/architecture.md, "A new kind"):
// a type in filter_types whose kind is its row's, a positions() overload, and the concepts its
// fills_up column implies.
template <class F>
concept has_positions = requires(const F& f) {
  positions(f, std::uint64_t{1});
};
static_assert(
    []<class... Fs>(type_list<Fs...>) { return (has_positions<Fs> && ...); }(filter_types{}),
    "every kind needs a positions() overload (positions.hpp)");
static_assert(
    []<class... Fs>(type_list<Fs...>) {
      return ((!info_of(Fs::kind).fills_up || insertable_filter<Fs>)&&...);
    }(filter_types{}),
    "a kind that fills up takes inserts");

TEST(AnyFilterWrites, AnswerAsTheConcreteFilterOnEveryKind) {
  const auto keys = present_keys(3000);
  const auto probes = absent_keys(3000);
  for_each_kind([&]<class F>() {
    SCOPED_TRACE(to_string(F::kind));
    F concrete = empty_for<F>(4000, keys);
    any_filter any = empty_for<F>(4000, keys);
    if constexpr (insertable_filter<F>) {
      // insert on the first third, check_and_insert on the second, insert_many on the rest: the
      // same results and the same bytes as the concrete filter's own verbs.
      for (std::size_t i = 0; i < 1000; ++i)
        EXPECT_EQ(any.insert(keys[i]), concrete.insert(keys[i]));
      for (std::size_t i = 1000; i < 2000; ++i) {
        EXPECT_EQ(any.check_and_insert(keys[i]), concrete.check_and_insert(keys[i]));
      }
      const std::vector<std::uint64_t> rest(keys.begin() + 2000, keys.end());
      EXPECT_EQ(any.insert_many(rest), rest.size());
      for (const auto k : rest) ASSERT_TRUE(concrete.insert(k));
      EXPECT_EQ(serialize(any), serialize(concrete));
      for (std::size_t i = 0; i < 50; ++i) {
        EXPECT_EQ(any.check_and_insert(keys[i]), insert_result::already_present) << "key " << i;
        (void)concrete.check_and_insert(keys[i]);  // a cuckoo or counting filter keeps the copy
      }
    } else {
      EXPECT_EQ(logic_error_of([&] { (void)any.insert(keys[0]); }),
                "bloomery: a " + std::string(to_string(F::kind)) + " filter cannot insert");
      EXPECT_NE(logic_error_of([&] { (void)any.check_and_insert(keys[0]); }), "");
      EXPECT_NE(logic_error_of([&] { (void)any.insert_many(keys); }), "");
    }
    for (const auto k : keys) ASSERT_TRUE(any.may_contain(k)) << "a false negative";
    if constexpr (removable_filter<F>) {
      F removed = concrete;
      for (std::size_t i = 0; i < 500; ++i) {
        ASSERT_EQ(any.remove(keys[i]), removed.remove(keys[i]));
      }
      EXPECT_EQ(serialize(any), serialize(removed));
      for (std::size_t i = 500; i < keys.size(); ++i) ASSERT_TRUE(any.may_contain(keys[i]));
      std::size_t refused = 0;
      for (const auto k : probes) {
        if (!removed.may_contain(k)) refused += any.remove(k) == remove_result::not_present;
      }
      EXPECT_GT(refused, 0u);
    } else {
      EXPECT_EQ(logic_error_of([&] { (void)any.remove(keys[0]); }),
                "bloomery: a " + std::string(to_string(F::kind)) + " filter cannot remove");
    }
  });
}

// fills_up is set exactly for the kinds whose insert can answer `full`: filled far past capacity,
// those refuse a key (and changed nothing), the others take every key.
TEST(KindTable, FillsUpIsWhatTheInsertDoes) {
  const auto keys = present_keys(20'000);
  for_each_kind([&]<class F>() {
    if constexpr (insertable_filter<F>) {
      SCOPED_TRACE(to_string(F::kind));
      F f = [] {
        if constexpr (std::same_as<F, scalable_cuckoo_filter>) {
          scalable_cuckoo_parameters p = F::parameters_for(target{.capacity = 64, .fpr = 0.01});
          p.max_sub_filters = 2;
          return F(p);
        } else {
          return F(target{.capacity = 64, .fpr = 0.01});
        }
      }();
      std::size_t full = 0;
      for (const auto k : keys) {
        const F before = f;
        if (f.insert(k) == insert_result::full) {
          ++full;
          EXPECT_EQ(f, before) << "a refused insert changes nothing";
          break;
        }
      }
      EXPECT_EQ(full != 0, info_of(F::kind).fills_up);
    }
  });
}

// any_filter::insert_many on a kind that fills up stops at the first refused key: the count is of
// the keys that went in, each of which is present.
TEST(AnyFilterWrites, InsertManyStopsAtTheFirstRefusedKey) {
  const auto keys = present_keys(5000);
  any_filter f = cuckoo_filter(target{.capacity = 100, .fpr = 0.01});
  const std::size_t done = f.insert_many(keys);
  EXPECT_GT(done, 100u);
  EXPECT_LT(done, keys.size());
  EXPECT_EQ(f.insert(keys[done]), insert_result::full);
  for (std::size_t i = 0; i < done; ++i) ASSERT_TRUE(f.may_contain(keys[i])) << "key " << i;
}

}  // namespace
