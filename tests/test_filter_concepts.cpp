// The shared shape of every filter: which concepts each models, the result types, check_and_insert,
// and stats() agreeing with each filter's own accessors.
#include <gtest/gtest.h>
#include <bloomery/bloomery.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <bloomery/support/keys.hpp>

using namespace bloomery;

// Each filter models exactly the concepts it should.
static_assert(intersectable_filter<bloom_filter> && insertable_filter<bloom_filter> &&
              !removable_filter<bloom_filter>);
static_assert(intersectable_filter<blocked_bloom_filter> &&
              insertable_filter<blocked_bloom_filter> && !removable_filter<blocked_bloom_filter>);
static_assert(removable_filter<counting_bloom_filter> && mergeable_filter<counting_bloom_filter> &&
              !intersectable_filter<counting_bloom_filter>);
static_assert(removable_filter<cuckoo_filter> && !mergeable_filter<cuckoo_filter>);
static_assert(insertable_filter<scalable_bloom_filter> && mergeable_filter<scalable_bloom_filter> &&
              !removable_filter<scalable_bloom_filter> &&
              !intersectable_filter<scalable_bloom_filter>);
static_assert(membership_filter<static_filter> && !insertable_filter<static_filter> &&
              !mergeable_filter<static_filter>);
static_assert(growable_filter<scalable_bloom_filter> && !growable_filter<bloom_filter> &&
              !growable_filter<cuckoo_filter> && !growable_filter<static_filter>);
// It grows, but its rate rises with every sub-filter (growable_filter promises it does not).
static_assert(removable_filter<scalable_cuckoo_filter> &&
              !mergeable_filter<scalable_cuckoo_filter> &&
              !growable_filter<scalable_cuckoo_filter>);
static_assert(!membership_filter<int>);

namespace {

using support::absent_keys;
using support::present_keys;

TEST(ResultTypes, TestAsBoolAndCompareByValue) {
  EXPECT_TRUE(static_cast<bool>(insert_result::inserted));
  EXPECT_FALSE(static_cast<bool>(insert_result::already_present));
  EXPECT_FALSE(static_cast<bool>(insert_result::full));
  EXPECT_NE(insert_result::already_present, insert_result::full);
  EXPECT_TRUE(static_cast<bool>(remove_result::removed));
  EXPECT_FALSE(static_cast<bool>(remove_result::not_present));
  EXPECT_STREQ(to_string(insert_result::full), "full");
  EXPECT_STREQ(to_string(remove_result::not_present), "not_present");
  // The counting filter's nested name is the shared type.
  static_assert(std::same_as<counting_bloom_filter::remove_result, remove_result>);
}

// check_and_insert: the first insert of a key says `inserted` unless the key was a false positive,
// a repeat says `already_present`, and the key answers "possibly present" afterwards.
template <class F>
void check_seen_semantics(F f) {
  const auto keys = present_keys(2000, 7);
  std::uint64_t first_inserted = 0;
  for (const auto k : keys) {
    const bool before = f.may_contain(k);
    const insert_result r = f.check_and_insert(k);
    ASSERT_EQ(r, before ? insert_result::already_present : insert_result::inserted);
    first_inserted += r == insert_result::inserted;
    ASSERT_TRUE(f.may_contain(k));
  }
  EXPECT_GT(first_inserted, keys.size() * 9 / 10);  // at 1% FPR almost every first insert is new
  for (const auto k : keys) ASSERT_EQ(f.check_and_insert(k), insert_result::already_present);
}

TEST(CheckAndInsert, EveryInsertableFilter) {
  const target t{.capacity = 10000, .fpr = 0.01};
  check_seen_semantics(bloom_filter(t));
  check_seen_semantics(blocked_bloom_filter(t));
  check_seen_semantics(counting_bloom_filter(t));
  check_seen_semantics(cuckoo_filter(t));
  check_seen_semantics(scalable_bloom_filter(t));
  check_seen_semantics(scalable_cuckoo_filter(t));
  check_seen_semantics(bloom_filter(t, hasher(random_key())));
}

TEST(CheckAndInsert, BitFilterSetsTheSameBitsAsInsert) {
  const target t{.capacity = 5000, .fpr = 0.01};
  bloom_filter a(t), b(t);
  for (const auto k : present_keys(5000, 3)) {
    a.insert(k);
    (void)b.check_and_insert(k);
  }
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.inserted(), b.inserted());
}

TEST(CheckAndInsert, CountingStoresRepeatsSoRemovesStayBalanced) {
  counting_bloom_filter f({.capacity = 1000, .fpr = 0.01});
  EXPECT_EQ(f.check_and_insert(std::string_view("k")), insert_result::inserted);
  EXPECT_EQ(f.check_and_insert(std::string_view("k")), insert_result::already_present);
  EXPECT_EQ(f.remove(std::string_view("k")), remove_result::removed);
  EXPECT_TRUE(f.may_contain(std::string_view("k")));  // the second copy is still there
  EXPECT_EQ(f.remove(std::string_view("k")), remove_result::removed);
  EXPECT_FALSE(f.may_contain(std::string_view("k")));
  EXPECT_EQ(f.remove(std::string_view("k")), remove_result::not_present);
}

TEST(CheckAndInsert, CuckooReportsFullAndChangesNothing) {
  cuckoo_filter f(cuckoo_parameters{.fingerprint_bits = 8, .buckets = 4});
  std::uint64_t k = 0;
  while (!f.is_full()) ASSERT_EQ(f.check_and_insert(k++), insert_result::inserted);
  const auto before = serialize(f);
  EXPECT_EQ(f.check_and_insert(std::uint64_t{1} << 40), insert_result::full);
  EXPECT_EQ(f.insert(std::uint64_t{1} << 41), insert_result::full);
  EXPECT_EQ(serialize(f), before);
  for (std::uint64_t i = 0; i < k; ++i) ASSERT_TRUE(f.may_contain(i));  // no false negative
  EXPECT_EQ(f.remove(std::uint64_t{0}), remove_result::removed);
  EXPECT_FALSE(f.is_full());
}

// stats() reports what each filter's own accessors say, with the kind's parameters in order.
template <class F>
void expect_common_stats(const F& f, const filter_stats& s) {
  EXPECT_EQ(s.kind, F::kind);
  EXPECT_EQ(s.size_in_bytes, f.size_in_bytes());
  EXPECT_EQ(s.capacity, f.capacity());
  EXPECT_EQ(s.inserted, f.inserted());
  EXPECT_EQ(s.approximate_count, f.approximate_count());
  EXPECT_DOUBLE_EQ(s.target_fpr, f.target_fpr());
  EXPECT_DOUBLE_EQ(s.estimated_fpr, f.estimated_fpr());
  EXPECT_EQ(s.keyed, f.hash().keyed());
  EXPECT_EQ(s.hash, f.hash().algorithm());
  EXPECT_EQ(s.seed, f.hash().keyed() ? 0 : f.hash().seed());
  EXPECT_DOUBLE_EQ(s.bits_per_key(), 8.0 * static_cast<double>(f.size_in_bytes()) /
                                         static_cast<double>(f.capacity()));
}

std::vector<std::string> param_names(const filter_stats& s) {
  std::vector<std::string> names;
  for (const auto& p : s.params) names.emplace_back(p.name);
  return names;
}

TEST(Stats, BitFilters) {
  bloom_filter f({.capacity = 1000, .fpr = 0.01}, hasher(99));
  for (const auto k : present_keys(500)) f.insert(k);
  const filter_stats s = f.stats();
  expect_common_stats(f, s);
  EXPECT_EQ(s.bits, f.bit_count());
  EXPECT_EQ(s.hashes, f.hash_count());
  EXPECT_DOUBLE_EQ(*s.fill_ratio, f.fill_ratio());
  EXPECT_FALSE(s.over_capacity);
  EXPECT_EQ(param_names(s), std::vector<std::string>{"set_bits"});
  EXPECT_EQ(std::get<std::uint64_t>(s.params[0].value), f.set_bit_count());
  EXPECT_EQ(s.seed, 99u);

  blocked_bloom_filter b({.capacity = 100, .fpr = 0.01}, hasher(random_key()));
  for (const auto k : present_keys(1000)) b.insert(k);
  const filter_stats bs = b.stats();
  expect_common_stats(b, bs);
  EXPECT_TRUE(bs.over_capacity);  // ten times its capacity
  EXPECT_TRUE(bs.keyed);
  EXPECT_EQ(bs.seed, 0u);
}

TEST(Stats, CountingCuckooScalableStatic) {
  counting_bloom_filter c({.capacity = 1000, .fpr = 0.01}, counting_options{.counter_bits = 8});
  for (const auto k : present_keys(300)) c.insert(k);
  const filter_stats cs = c.stats();
  expect_common_stats(c, cs);
  EXPECT_EQ(cs.bits, c.counter_count() * 8);
  EXPECT_DOUBLE_EQ(*cs.fill_ratio, c.fill_ratio());
  EXPECT_EQ(param_names(cs),
            (std::vector<std::string>{"counters", "counter_bits", "saturated_counters"}));
  EXPECT_EQ(std::get<std::uint64_t>(cs.params[1].value), 8u);

  cuckoo_filter k({.capacity = 1000, .fpr = 0.01});
  for (const auto key : present_keys(300)) ASSERT_TRUE(k.insert(key));
  const filter_stats ks = k.stats();
  expect_common_stats(k, ks);
  EXPECT_FALSE(ks.hashes.has_value());
  EXPECT_DOUBLE_EQ(*ks.fill_ratio, k.load_factor());
  EXPECT_DOUBLE_EQ(k.fill_ratio(), k.load_factor());
  EXPECT_EQ(param_names(ks), (std::vector<std::string>{"fingerprint_bits", "semi_sorted", "buckets",
                                                       "slots", "removed", "full"}));
  EXPECT_EQ(std::get<bool>(ks.params[5].value), false);

  scalable_bloom_filter s({.capacity = 100, .fpr = 0.01});
  for (const auto key : present_keys(1000)) (void)s.insert(key);
  const filter_stats ss = s.stats();
  expect_common_stats(s, ss);
  ASSERT_GT(s.sub_filter_count(), 1u);
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < s.sub_filter_count(); ++i) bits += s.sub_filter(i).bit_count();
  EXPECT_EQ(ss.bits, bits);
  EXPECT_DOUBLE_EQ(*ss.fill_ratio, s.fill_ratio());
  EXPECT_EQ(param_names(ss),
            (std::vector<std::string>{"sub_filters", "current_capacity", "growth", "tightening"}));
  EXPECT_EQ(std::get<std::uint64_t>(ss.params[0].value), s.sub_filter_count());

  const auto keys = present_keys(1000);
  const static_filter st = static_filter::build(keys, 0.001);
  const filter_stats sts = st.stats();
  expect_common_stats(st, sts);
  EXPECT_FALSE(sts.fill_ratio.has_value());
  EXPECT_FALSE(sts.hashes.has_value());
  EXPECT_EQ(sts.bits, st.array_length() * st.fingerprint_bits());
  EXPECT_EQ(param_names(sts),
            (std::vector<std::string>{"fingerprint_bits", "arity", "segment_length",
                                      "segment_count", "array_length"}));
  EXPECT_EQ(std::get<std::uint64_t>(sts.params[0].value), 10u);
  EXPECT_EQ(std::get<std::uint64_t>(sts.params[1].value), st.arity());
}

TEST(Kinds, NamesRoundTripAndUnknownTagsAreRejected) {
  for (const kind_info& k : filter_kinds) {
    EXPECT_EQ(parse_filter_kind(to_string(k.kind)), k.kind);
    EXPECT_TRUE(is_known_kind(static_cast<std::uint32_t>(k.kind)));
  }
  EXPECT_STREQ(to_string(filter_kind::blocked_bloom), "blocked");
  EXPECT_STREQ(to_string(filter_kind::static_filter), "static");
  EXPECT_FALSE(parse_filter_kind("bloomier").has_value());
  EXPECT_FALSE(is_known_kind(0));
  EXPECT_STREQ(to_string(filter_kind::scalable_cuckoo), "scalable-cuckoo");
  EXPECT_FALSE(is_known_kind(8));
  EXPECT_STREQ(info_of(filter_kind::cuckoo).name, "cuckoo");
}

}  // namespace
