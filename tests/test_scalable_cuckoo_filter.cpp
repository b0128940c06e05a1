// The scalable cuckoo filter (RedisBloom's growing CF as a kind of its own): its defaults, growth
// sizes, the `full` result at the end of the chain, exact count() and remove() across
// sub-filters, nested positions (no false negative after removes), parameters and files that are
// rejected with reasons, and a measured FPR within a binomial bound of the model. The behaviour
// every filter shares runs in test_filter_family.cpp.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <bloomery/bloomery.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "test_support.hpp"

using namespace bloomery;

namespace {

std::string format_error_of(auto&& fn) {
  return test::message_of<format_error>(fn);
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The bytes of a lone cuckoo table of `buckets` buckets with these parameters' layout.
std::uint64_t table_bytes(const scalable_cuckoo_parameters& p, std::uint64_t buckets) {
  return cuckoo_filter(cuckoo_parameters{.fingerprint_bits = p.fingerprint_bits,
                                         .buckets = buckets,
                                         .semi_sorted = p.semi_sorted})
      .size_in_bytes();
}

// Inserts one key until the filter has `subs` sub-filters. A key's two buckets hold 8 copies of
// its fingerprint; the 9th insert runs out of evictions and fills the stash, so every sub-filter
// takes exactly 9 copies and the 10th goes to a new one.
template <class K>
void grow_with(scalable_cuckoo_filter& f, const K& key, std::size_t subs) {
  while (f.sub_filter_count() < subs) ASSERT_TRUE(f.insert(key));
}

// Distinct keys inserted until the filter has `subs` sub-filters and its newest holds `extra`;
// returns them.
std::vector<std::uint64_t> fill(scalable_cuckoo_filter& f, std::size_t subs, std::uint64_t extra,
                                std::uint64_t seed = 1) {
  std::vector<std::uint64_t> keys;
  std::uint64_t state = seed;
  while (f.sub_filter_count() < subs || f.sub_filter(subs - 1).inserted < extra) {
    const std::uint64_t k = test::splitmix64(state);
    if (!f.insert(k)) break;
    keys.push_back(k);
  }
  return keys;
}

// The rate of the model for the filter's actual occupancy, exactly: an absent key matches a key
// stored in sub-filter i when their fingerprints are equal and its bucket is one of that key's two
// (probability 2 / (nb_i (2^f - 1)), independently for each stored key), so the rate is
// 1 - prod_i (1 - 2 / (nb_i (2^f - 1)))^(stored_i).
double exact_model(const scalable_cuckoo_filter& f) {
  double log_none = 0;
  const double values = std::ldexp(1.0, static_cast<int>(f.fingerprint_bits())) - 1;
  for (std::size_t i = 0; i < f.sub_filter_count(); ++i) {
    const scalable_cuckoo_sub_filter s = f.sub_filter(i);
    const double x = 2.0 / (static_cast<double>(s.buckets) * values);
    log_none += static_cast<double>(s.inserted - s.removed) * std::log1p(-x);
  }
  return -std::expm1(log_none);
}

}  // namespace

TEST(ScalableCuckoo, DefaultsAreRedisBloomsCf) {
  const scalable_cuckoo_parameters p{.initial_capacity = 1024};
  EXPECT_EQ(p.fingerprint_bits, 8u);
  EXPECT_EQ(p.max_kicks, 20u);
  EXPECT_EQ(p.expansion, 1u);
  EXPECT_EQ(p.max_sub_filters, 32u);
  EXPECT_TRUE(p.semi_sorted);
  const scalable_cuckoo_filter f(p);
  EXPECT_EQ(f.sub_filter_count(), 1u);
  EXPECT_EQ(scalable_cuckoo_filter::bucket_size, 4u);
  EXPECT_EQ(f.capacity(), 1024u);
  EXPECT_EQ(f.bucket_count(), cuckoo_filter::buckets_for(1024));
  EXPECT_EQ(f.size_in_bytes(), table_bytes(p, f.bucket_count()));
  EXPECT_EQ(f.inserted(), 0u);
  EXPECT_EQ(f.removed(), 0u);
  EXPECT_EQ(f.approximate_count(), 0u);
  EXPECT_EQ(f.estimated_fpr(), 0.0);
  EXPECT_FALSE(f.is_full());
  // Sub-filter 0's target is the model's rate at its capacity.
  EXPECT_DOUBLE_EQ(f.target_fpr(), -std::expm1(-2.0 * 1024 / (f.bucket_count() * 255.0)));
}

TEST(ScalableCuckoo, TheFirstSubFilterIsACuckooFilter) {
  for (const bool semi : {false, true}) {
    SCOPED_TRACE(semi);
    const scalable_cuckoo_parameters p{
        .initial_capacity = 500, .fingerprint_bits = 12, .max_kicks = 30, .semi_sorted = semi};
    scalable_cuckoo_filter f(p);
    cuckoo_filter c(cuckoo_parameters{.fingerprint_bits = 12,
                                      .buckets = cuckoo_filter::buckets_for(500),
                                      .max_kicks = 30,
                                      .semi_sorted = semi});
    std::uint64_t k = 0;
    for (; !c.is_full(); ++k) {
      ASSERT_TRUE(c.insert(k));
      ASSERT_TRUE(f.insert(k));
    }
    ASSERT_EQ(f.sub_filter_count(), 1u);
    EXPECT_TRUE(f.sub_filter(0).full);
    ASSERT_EQ(f.words().size(), c.words().size());
    EXPECT_TRUE(std::equal(c.words().begin(), c.words().end(), f.words().begin()));
    for (std::uint64_t j = 0; j < k; j += 37) {  // the same fingerprint and buckets
      const cuckoo_positions want = positions(c, j);
      const scalable_cuckoo_positions got = positions(f, j);
      ASSERT_EQ(got.fingerprint, want.fingerprint);
      ASSERT_EQ(got.sub_filters.size(), 1u);
      ASSERT_EQ(got.sub_filters[0].i1, want.i1);
      ASSERT_EQ(got.sub_filters[0].i2, want.i2);
    }
    // Where the cuckoo filter refuses, the chain grows and the key goes to sub-filter 1.
    EXPECT_EQ(c.insert(k), insert_result::full);
    EXPECT_EQ(f.insert(k), insert_result::inserted);
    EXPECT_EQ(f.sub_filter_count(), 2u);
    EXPECT_EQ(f.sub_filter(1).inserted, 1u);
    EXPECT_EQ(f.count_in(1, k), 1u);
    EXPECT_EQ(f.inserted(), k + 1);
  }
}

TEST(ScalableCuckoo, SubFilterIHoldsCapacityTimesExpansionToTheI) {
  for (const std::uint32_t e : {1u, 2u, 4u, 8u}) {
    SCOPED_TRACE(e);
    const scalable_cuckoo_parameters p{.initial_capacity = 100, .expansion = e};
    scalable_cuckoo_filter f(p);
    grow_with(f, std::string_view("key"), 5);
    const std::uint64_t nb0 = cuckoo_filter::buckets_for(100);
    std::uint64_t offset = 0, bytes = 0, capacity = 0, buckets = 0, scale = 1;
    for (std::size_t i = 0; i < 5; ++i, scale *= e) {
      const scalable_cuckoo_sub_filter s = f.sub_filter(i);
      EXPECT_EQ(s.capacity, 100 * scale) << i;  // e = 1: the same size again
      EXPECT_EQ(s.buckets, nb0 * scale) << i;
      EXPECT_EQ(s.size_in_bytes, table_bytes(p, s.buckets)) << i;
      EXPECT_EQ(s.word_offset, offset) << i;  // back to back
      EXPECT_EQ(s.full, i < 4) << i;
      EXPECT_EQ(s.inserted, i < 4 ? 9u : 1u) << i;
      offset += s.size_in_bytes / 8;
      bytes += s.size_in_bytes;
      capacity += s.capacity;
      buckets += s.buckets;
    }
    EXPECT_EQ(f.size_in_bytes(), bytes);
    EXPECT_EQ(f.words().size() * 8, bytes);
    EXPECT_EQ(f.total_capacity(), capacity);
    EXPECT_EQ(f.bucket_count(), buckets);
    EXPECT_EQ(f.slot_count(), 4 * buckets);
    EXPECT_EQ(f.next_sub_filter_bytes(), table_bytes(p, nb0 * scale));
    EXPECT_EQ(f.count(std::string_view("key")), 4 * 9 + 1u);
  }
}

TEST(ScalableCuckoo, FullAtTheMaximumIsAResultThatChangesNothing) {
  scalable_cuckoo_filter f({.initial_capacity = 50, .expansion = 2, .max_sub_filters = 3});
  std::vector<std::uint64_t> kept;
  std::uint64_t k = 0;
  insert_result r = insert_result::inserted;
  for (; r; ++k) {
    const bool was_full = f.is_full();
    r = f.insert(k);
    EXPECT_EQ(static_cast<bool>(r), !was_full);
    if (r) kept.push_back(k);
  }
  --k;  // the refused key
  EXPECT_EQ(r, insert_result::full);
  EXPECT_NE(r, insert_result::already_present);
  EXPECT_EQ(f.sub_filter_count(), 3u);
  EXPECT_TRUE(f.is_full());
  EXPECT_EQ(f.next_sub_filter_bytes(), 0u);
  EXPECT_EQ(std::get<bool>(f.stats().params.back().value), true);
  const auto before = serialize(f);
  EXPECT_EQ(f.insert(k), insert_result::full);
  EXPECT_EQ(f.check_and_insert(k + 1), insert_result::full);
  EXPECT_EQ(f.insert(std::string_view("another")), insert_result::full);
  EXPECT_EQ(serialize(f), before);
  EXPECT_EQ(f.inserted(), kept.size());
  for (const auto key : kept) ASSERT_TRUE(f.may_contain(key));  // never a key lost
  // Removes from the newest sub-filter make room there again (once its stashed fingerprint finds
  // a slot); the chain does not grow.
  std::size_t removes = 0;
  while (f.is_full()) {
    const std::uint64_t newest = kept[kept.size() - 1 - removes];
    ASSERT_GT(f.count_in(2, newest), 0u);
    ASSERT_EQ(f.remove(newest), remove_result::removed);
    ASSERT_LT(++removes, 20u);
  }
  EXPECT_EQ(f.insert(k), insert_result::inserted);
  EXPECT_EQ(f.sub_filter_count(), 3u);
  EXPECT_TRUE(f.may_contain(k));
}

TEST(ScalableCuckoo, OneSubFilterAtMostNeverGrows) {
  // RedisBloom's EXPANSION 0: a single table that refuses inserts once full.
  scalable_cuckoo_filter f({.initial_capacity = 20, .max_sub_filters = 1});
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(f.insert(std::uint64_t{7}));
  EXPECT_TRUE(f.is_full());
  EXPECT_EQ(f.insert(std::uint64_t{7}), insert_result::full);
  EXPECT_EQ(f.sub_filter_count(), 1u);
  EXPECT_EQ(f.count(std::uint64_t{7}), 9u);
}

TEST(ScalableCuckoo, CountAndRemoveAcrossSubFiltersAreExact) {
  scalable_cuckoo_filter f({.initial_capacity = 200, .expansion = 2});
  const std::string_view key = "k";
  grow_with(f, key, 2);  // 9 copies in sub-filter 0 (full), 1 in sub-filter 1
  EXPECT_EQ(f.count(key), 10u);
  EXPECT_EQ(f.count_in(0, key), 9u);
  EXPECT_EQ(f.count_in(1, key), 1u);
  // The newest sub-filter that holds a copy gives it up first.
  EXPECT_EQ(f.remove(key), remove_result::removed);
  EXPECT_EQ(f.count_in(1, key), 0u);
  EXPECT_EQ(f.sub_filter(1).removed, 1u);
  EXPECT_EQ(f.count(key), 9u);
  EXPECT_TRUE(f.sub_filter(0).full);
  EXPECT_EQ(f.remove(key), remove_result::removed);
  EXPECT_EQ(f.count_in(0, key), 8u);
  EXPECT_FALSE(f.sub_filter(0).full);  // the stashed copy moved back into the table
  for (int i = 0; i < 8; ++i) ASSERT_EQ(f.remove(key), remove_result::removed);
  EXPECT_EQ(f.count(key), 0u);
  EXPECT_FALSE(f.may_contain(key));
  const auto before = serialize(f);
  EXPECT_EQ(f.remove(key), remove_result::not_present);
  EXPECT_EQ(serialize(f), before);
  EXPECT_EQ(f.inserted(), 10u);
  EXPECT_EQ(f.removed(), 10u);
  EXPECT_EQ(f.approximate_count(), 0u);
  EXPECT_EQ(f.sub_filter_count(), 2u);  // removes never shrink the chain
}

TEST(ScalableCuckoo, RedisBloomSuiteCases) {
  // From RedisBloom's test_cuckoo.py: CF.ADD twice gives 1, 1; CF.COUNT 2; CF.DEL 1, 1; CF.COUNT
  // 0; CF.DEL 0; CF.ADDNX 1 then 0. ADDNX is may_contain, then insert.
  scalable_cuckoo_filter f({.initial_capacity = 1024});
  const std::string_view k1 = "k1";
  EXPECT_EQ(f.insert(k1), insert_result::inserted);
  EXPECT_EQ(f.insert(k1), insert_result::inserted);
  EXPECT_EQ(f.count(k1), 2u);
  EXPECT_EQ(f.remove(k1), remove_result::removed);
  EXPECT_EQ(f.remove(k1), remove_result::removed);
  EXPECT_EQ(f.count(k1), 0u);
  EXPECT_EQ(f.remove(k1), remove_result::not_present);
  EXPECT_FALSE(f.may_contain(k1));
  EXPECT_EQ(f.check_and_insert(k1), insert_result::inserted);
  EXPECT_TRUE(f.may_contain(k1));
  EXPECT_EQ(f.check_and_insert(k1), insert_result::already_present);  // and stored once more
  EXPECT_EQ(f.count(k1), 2u);
  // CF.INFO: Size, Number of buckets, Number of filters, items inserted (current), deleted,
  // Bucket size, Expansion rate, Max iterations.
  EXPECT_EQ(f.size_in_bytes(), table_bytes({.initial_capacity = 1024}, f.bucket_count()));
  EXPECT_EQ(f.bucket_count(), cuckoo_filter::buckets_for(1024));
  EXPECT_EQ(f.sub_filter_count(), 1u);
  EXPECT_EQ(f.approximate_count(), 2u);
  EXPECT_EQ(f.removed(), 2u);
  EXPECT_EQ(f.bucket_size, 4u);
  EXPECT_EQ(f.expansion(), 1u);
  EXPECT_EQ(f.max_kicks(), 20u);
}

TEST(ScalableCuckoo, RemovingInsertedKeysNeverLosesAnother) {
  // Keys that collide in a newer sub-filter collide in every older one, so a remove that takes
  // another key's copy from the newer one leaves a copy that key finds (with sub-filters of
  // unrelated bucket counts this test fails: docs/scalable-cuckoo-filter.md).
  for (const std::uint32_t e : {1u, 2u, 4u}) {
    SCOPED_TRACE(e);
    scalable_cuckoo_filter f({.initial_capacity = 2000, .expansion = e});
    std::vector<std::uint64_t> kept;
    for (const auto k : test::present_keys(40'000)) {
      if (f.insert(k)) kept.push_back(k);
    }
    ASSERT_GE(f.sub_filter_count(), 4u);
    for (std::size_t i = 0; i < kept.size(); i += 2) ASSERT_TRUE(f.remove(kept[i]));
    std::uint64_t missing = 0;
    for (std::size_t i = 1; i < kept.size(); i += 2) missing += !f.may_contain(kept[i]);
    EXPECT_EQ(missing, 0u);
  }
}

TEST(ScalableCuckoo, PositionsNestFromSubFilterToSubFilter) {
  // A key's buckets in sub-filter i, shifted right by log2(e) (i - j) bits, are its buckets in
  // sub-filter j; and every key has two distinct buckets in every sub-filter.
  for (const std::uint32_t e : {2u, 8u}) {
    SCOPED_TRACE(e);
    scalable_cuckoo_filter f({.initial_capacity = 50, .expansion = e, .max_sub_filters = 6});
    grow_with(f, std::string_view("x"), 6);
    const auto step = static_cast<unsigned>(std::countr_zero(e));
    for (const auto k : test::present_keys(2000)) {
      const scalable_cuckoo_positions p = positions(f, k);
      ASSERT_EQ(p.sub_filters.size(), 6u);
      for (std::size_t i = 0; i < 6; ++i) {
        const auto& b = p.sub_filters[i];
        ASSERT_LT(b.i1, f.sub_filter(i).buckets);
        ASSERT_LT(b.i2, f.sub_filter(i).buckets);
        ASSERT_NE(b.i1, b.i2);
        for (std::size_t j = 0; j < i; ++j) {
          const unsigned shift = step * static_cast<unsigned>(i - j);
          ASSERT_EQ(b.i1 >> shift, p.sub_filters[j].i1);
          ASSERT_EQ(b.i2 >> shift, p.sub_filters[j].i2);
        }
      }
    }
    for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(f.count_in(i, std::string_view("x")), 9u);
  }
}

TEST(ScalableCuckoo, EachKeyIsHashedOnce) {
  scalable_cuckoo_filter f({.initial_capacity = 30, .expansion = 2});
  grow_with(f, test::counted_key{1}, 4);
  test::counted_key_hashes = 0;
  (void)f.may_contain(test::counted_key{2});
  EXPECT_EQ(test::counted_key_hashes, 1u);
  (void)f.count(test::counted_key{1});
  EXPECT_EQ(test::counted_key_hashes, 2u);
  (void)f.remove(test::counted_key{1});
  EXPECT_EQ(test::counted_key_hashes, 3u);
  (void)f.check_and_insert(test::counted_key{3});
  EXPECT_EQ(test::counted_key_hashes, 4u);
  const std::vector<test::counted_key> keys = {{1}, {2}, {3}, {4}, {5}};
  std::vector<bool> out(keys.size());
  EXPECT_GE(f.may_contain_many(keys, out), 2u);
  EXPECT_EQ(test::counted_key_hashes, 9u);
}

TEST(ScalableCuckoo, BadParametersNameTheValueAndTheRange) {
  const auto expect = [](scalable_cuckoo_parameters p, const std::string& needle) {
    test::expect_invalid([&] { scalable_cuckoo_filter f(p); }, needle);
    test::expect_invalid([&] { (void)scalable_cuckoo_filter::plan(p); }, needle);
  };
  expect({}, "initial_capacity = 0 is invalid");
  expect({.initial_capacity = (std::uint64_t{1} << 48) + 1}, "allowed range is [1, 2^48]");
  expect({.initial_capacity = 10, .fingerprint_bits = 3}, "fingerprint_bits = 3 is invalid");
  expect({.initial_capacity = 10, .fingerprint_bits = 17}, "allowed range is [4, 16]");
  expect({.initial_capacity = 10, .max_kicks = 0}, "max_kicks = 0 is invalid; allowed range is");
  expect({.initial_capacity = 10, .max_kicks = 65536}, "[1, 65535]");
  expect({.initial_capacity = 10, .expansion = 0}, "expansion = 0 is invalid");
  expect({.initial_capacity = 10, .expansion = 3}, "expansion = 3 is invalid; allowed: a power");
  expect({.initial_capacity = 10, .expansion = 65536}, "[1, 32768]");
  expect({.initial_capacity = 10, .max_sub_filters = 0}, "max_sub_filters = 0 is invalid");
  expect({.initial_capacity = 10, .max_sub_filters = 65}, "allowed range is [1, 64]");
  // 2^48 keys fit the range, but not their table.
  expect({.initial_capacity = std::uint64_t{1} << 48}, "needs more than the maximum 2^48 bits");
  // From a target: the cuckoo filter's messages.
  test::expect_invalid([] { scalable_cuckoo_filter f(target{.capacity = 0, .fpr = 0.01}); },
                       "capacity = 0 is invalid");
  test::expect_invalid([] { scalable_cuckoo_filter f(target{.capacity = 10, .fpr = 1e-6}); },
                       "fpr = 9.9999999999999995e-07 is invalid");
  test::expect_invalid(
      [] { scalable_cuckoo_filter f(target{.capacity = ~std::uint64_t{0}, .fpr = 0.01}); },
      "allowed range is [1, 2^48]");
}

TEST(ScalableCuckoo, SizedFromATargetLikeACuckooFilter) {
  const target t{.capacity = 50'000, .fpr = 0.001};
  const scalable_cuckoo_filter f(t);
  const cuckoo_filter c(t);
  EXPECT_EQ(f.fingerprint_bits(), c.fingerprint_bits());
  EXPECT_EQ(f.bucket_count(), c.bucket_count());
  EXPECT_EQ(f.size_in_bytes(), c.size_in_bytes());
  EXPECT_EQ(f.target_fpr(), t.fpr);
  EXPECT_EQ(f.max_kicks(), cuckoo_filter::default_max_kicks);
  EXPECT_EQ(f.expansion(), 2u);
  EXPECT_EQ(f.max_sub_filters(), 32u);
  EXPECT_TRUE(f.semi_sorted());
  EXPECT_EQ(scalable_cuckoo_filter::plan(t).bytes, cuckoo_filter::plan(t).bytes);
  const scalable_cuckoo_parameters p = scalable_cuckoo_filter::parameters_for(t);
  EXPECT_EQ(p.initial_capacity, t.capacity);
  EXPECT_EQ(scalable_cuckoo_filter(p, f.hash()), f);
}

TEST(ScalableCuckoo, HowFarAChainCanGrow) {
  // n0 = 1 (2 buckets) doubling three bits at a time: sub-filter i has 2 * 8^i buckets. At f = 8
  // semi-sorted (28 bits a bucket) 2^43 buckets still fit in 2^48 bits, 2^46 do not: 15
  // sub-filters (i = 0..14). At f = 16 plain (64 bits a bucket), 14.
  EXPECT_EQ(scalable_cuckoo_filter::sub_filter_limit({.initial_capacity = 1, .expansion = 8}), 15u);
  EXPECT_EQ(
      scalable_cuckoo_filter::sub_filter_limit(
          {.initial_capacity = 1, .fingerprint_bits = 16, .expansion = 8, .semi_sorted = false}),
      14u);
  EXPECT_EQ(scalable_cuckoo_filter::sub_filter_limit(
                {.initial_capacity = 1, .expansion = 8, .max_sub_filters = 10}),
            10u);
  EXPECT_EQ(scalable_cuckoo_filter::sub_filter_limit({.initial_capacity = 1000}), 32u);
}

TEST(ScalableCuckoo, MemoryThatCannotBeHadIsAnAllocationError) {
  // The first sub-filter: 2^40 keys at 1% (over a TiB).
  const target t{.capacity = std::uint64_t{1} << 40, .fpr = 0.01};
  const std::uint64_t bytes = scalable_cuckoo_filter::plan(t).bytes;
  try {
    scalable_cuckoo_filter f(t);
    ADD_FAILURE() << "allocated " << bytes << " bytes";
  } catch (const allocation_error& e) {
    EXPECT_EQ(e.bytes(), bytes);
  }
  // A growth: 2^24 keys (35 MB) whose next sub-filter is 32768 times larger (over a TiB). The
  // insert that needs it throws, and the filter is as it was.
  scalable_cuckoo_filter g({.initial_capacity = std::uint64_t{1} << 24,
                            .fingerprint_bits = 16,
                            .expansion = 32768,
                            .semi_sorted = false});
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(g.insert(std::uint64_t{5}));
  ASSERT_TRUE(g.sub_filter(0).full);
  const std::uint64_t asked = g.size_in_bytes() + g.next_sub_filter_bytes();
  try {
    (void)g.insert(std::uint64_t{6});
    ADD_FAILURE() << "allocated " << asked << " bytes";
  } catch (const allocation_error& e) {
    EXPECT_EQ(e.bytes(), asked);
    EXPECT_TRUE(contains(e.what(), "bloomery: cannot allocate")) << e.what();
  }
  EXPECT_EQ(g.sub_filter_count(), 1u);
  EXPECT_EQ(g.inserted(), 9u);
  EXPECT_EQ(g.count(std::uint64_t{5}), 9u);
  EXPECT_FALSE(g.may_contain(std::uint64_t{6}));
}

TEST(ScalableCuckoo, StatsReportTheChain) {
  scalable_cuckoo_filter f({.initial_capacity = 100, .expansion = 4});
  const auto keys = fill(f, 3, 10);
  (void)f.remove(keys.front());
  const filter_stats s = f.stats();
  EXPECT_EQ(s.kind, filter_kind::scalable_cuckoo);
  EXPECT_EQ(s.size_in_bytes, f.size_in_bytes());
  EXPECT_EQ(s.bits, f.bucket_count() * 28);
  EXPECT_FALSE(s.hashes.has_value());
  EXPECT_EQ(s.capacity, 100u);
  EXPECT_EQ(s.inserted, keys.size());
  EXPECT_EQ(s.approximate_count, keys.size() - 1);
  EXPECT_DOUBLE_EQ(*s.fill_ratio, f.load_factor());
  EXPECT_DOUBLE_EQ(s.estimated_fpr, f.estimated_fpr());
  EXPECT_TRUE(s.over_capacity);  // 3 sub-filters: past 100 keys and above sub-filter 0's target
  std::vector<std::string> names;
  for (const auto& p : s.params) names.emplace_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"sub_filters", "fingerprint_bits", "semi_sorted",
                                             "buckets", "total_capacity", "expansion",
                                             "max_sub_filters", "max_kicks", "removed", "full"}));
  EXPECT_EQ(std::get<std::uint64_t>(s.params[0].value), 3u);
  EXPECT_EQ(std::get<std::uint64_t>(s.params[4].value), 100u + 400 + 1600);
  EXPECT_EQ(std::get<std::uint64_t>(s.params[8].value), 1u);
  EXPECT_FALSE(std::get<bool>(s.params[9].value));
  // The rate is the compound of the sub-filters' own estimates.
  double none = 1;
  for (std::size_t i = 0; i < 3; ++i) none *= 1 - f.sub_filter(i).estimated_fpr;
  EXPECT_NEAR(f.estimated_fpr(), 1 - none, 1e-12);
  EXPECT_FALSE(scalable_cuckoo_filter({.initial_capacity = 100}).stats().over_capacity);
}

TEST(ScalableCuckoo, ClearGoesBackToOneEmptySubFilter) {
  scalable_cuckoo_filter f({.initial_capacity = 64, .expansion = 2}, hasher(17));
  const auto keys = fill(f, 4, 5);
  const std::uint64_t first_bytes = f.sub_filter(0).size_in_bytes;
  f.clear();
  EXPECT_EQ(f.sub_filter_count(), 1u);
  EXPECT_EQ(f.size_in_bytes(), first_bytes);
  EXPECT_EQ(f.inserted(), 0u);
  EXPECT_EQ(f.removed(), 0u);
  EXPECT_FALSE(f.sub_filter(0).full);
  EXPECT_TRUE(f == scalable_cuckoo_filter({.initial_capacity = 64, .expansion = 2}, hasher(17)));
  for (const auto k : keys) ASSERT_FALSE(f.may_contain(k));
}

// Emptied by removes, a grown chain keeps its sub-filters and estimates a rate of +0, not -0.
TEST(ScalableCuckoo, AChainEmptiedByRemovesEstimatesZero) {
  scalable_cuckoo_filter f({.initial_capacity = 64, .expansion = 2}, hasher(17));
  const auto keys = fill(f, 3, 5);
  ASSERT_GT(f.sub_filter_count(), 1u);
  for (const auto k : keys) ASSERT_EQ(f.remove(k), remove_result::removed);
  EXPECT_EQ(f.approximate_count(), 0u);
  EXPECT_EQ(f.estimated_fpr(), 0.0);
  EXPECT_FALSE(std::signbit(f.estimated_fpr()));
}

TEST(ScalableCuckoo, AnEmptyFilterRoundTrips) {
  // RedisBloom cannot SCANDUMP an empty cuckoo filter; here the empty filter is a file like any.
  test::temp_dir dir;
  for (const bool grown_then_cleared : {false, true}) {
    scalable_cuckoo_filter f({.initial_capacity = 10});
    if (grown_then_cleared) {
      grow_with(f, 1, 3);
      f.clear();
    }
    const auto bytes = serialize(f);
    const auto back = deserialize<scalable_cuckoo_filter>(bytes);
    EXPECT_TRUE(back == f);
    EXPECT_EQ(serialize(back), bytes);
    EXPECT_EQ(back.inserted(), 0u);
    const any_filter any = deserialize_any(bytes);
    EXPECT_EQ(any.kind(), filter_kind::scalable_cuckoo);
    EXPECT_EQ(serialize(any), bytes);
    (void)test::expect_saved_copy(f, dir / "empty.bloom");
    const auto mapped = map_file<scalable_cuckoo_filter>(dir / "empty.bloom");
    EXPECT_EQ(mapped->sub_filter_count(), 1u);
    EXPECT_FALSE(mapped->may_contain(1));
  }
}

TEST(ScalableCuckoo, GrownFilesRoundTripWithTheirCountsAndAnswers) {
  test::temp_dir dir;
  scalable_cuckoo_filter f({.initial_capacity = 300, .fingerprint_bits = 10, .expansion = 2},
                           hasher(random_key()));
  const auto keys = fill(f, 4, 50);
  for (std::size_t i = 0; i < keys.size(); i += 7) ASSERT_TRUE(f.remove(keys[i]));
  grow_with(f, std::string_view("dup"), 5);  // and a full sub-filter 3 with a stash in use
  const auto loaded = test::expect_saved_copy(f, dir / "f.bloom");
  const auto mapped = map_file<scalable_cuckoo_filter>(dir / "f.bloom");
  EXPECT_TRUE(loaded.hash().keyed());
  EXPECT_EQ(loaded.removed(), f.removed());
  EXPECT_EQ(mapped->removed(), f.removed());
  EXPECT_EQ(mapped->sub_filter_count(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(mapped->sub_filter(i).inserted, f.sub_filter(i).inserted);
    EXPECT_EQ(mapped->sub_filter(i).full, f.sub_filter(i).full);
  }
  std::vector<std::uint64_t> probe = test::absent_keys(20'000);
  probe.insert(probe.end(), keys.begin(), keys.end());
  std::vector<bool> want(probe.size()), got(probe.size());
  EXPECT_EQ(mapped->may_contain_many(probe, got), f.may_contain_many(probe, want));
  EXPECT_EQ(got, want);
  for (const auto k : probe) {
    ASSERT_EQ(loaded.count(k), f.count(k));
    ASSERT_EQ(mapped->count(k), f.count(k));
  }
  EXPECT_EQ(mapped->count(std::string_view("dup")), f.count(std::string_view("dup")));
  EXPECT_EQ(f.count_in(4, std::string_view("dup")), 1u);
  // Loaded, it grows on like the original.
  scalable_cuckoo_filter a = f, b = loaded;
  for (const auto k : test::present_keys(3000, 9)) ASSERT_EQ(a.insert(k), b.insert(k));
  EXPECT_EQ(a, b);
  EXPECT_EQ(serialize(a), serialize(b));
}

// The bytes of two chains for fixed inputs, recorded when kind 7 was introduced: the sizing, the
// nested pairing rule and the layout are part of the file format, so the same inputs must give
// bit-identical files forever (a Redis server reloads its filters from them).
TEST(ScalableCuckoo, FilesAreBitIdenticalToTheFirstVersions) {
  std::vector<std::uint64_t> keys;
  for (std::uint64_t i = 0; i < 3000; ++i) keys.push_back(i * 0x9e3779b97f4a7c15ULL);
  secret_key key;
  for (std::size_t i = 0; i < key.bytes.size(); ++i) {
    key.bytes[i] = static_cast<std::uint8_t>(i * 7 + 1);
  }
  scalable_cuckoo_filter a({.initial_capacity = 500, .expansion = 2});
  scalable_cuckoo_filter b(
      {.initial_capacity = 700, .fingerprint_bits = 12, .max_kicks = 50, .semi_sorted = false},
      hasher(key));
  for (const auto x : keys) {
    ASSERT_TRUE(a.insert(x));
    ASSERT_TRUE(b.insert(x));
  }
  for (std::size_t i = 0; i < 100; ++i) {
    ASSERT_TRUE(a.remove(keys[i]));
    ASSERT_TRUE(b.remove(keys[i]));
  }
  EXPECT_EQ(a.sub_filter_count(), 3u);
  EXPECT_EQ(b.sub_filter_count(), 5u);
  const auto fa = serialize(a), fb = serialize(b);
  EXPECT_EQ(fa.size(), 3904u);
  EXPECT_EQ(XXH3_64bits(fa.data(), fa.size()), 0xd307745527049b95ULL);
  EXPECT_EQ(fb.size(), 6528u);
  EXPECT_EQ(XXH3_64bits(fb.data(), fb.size()), 0x13bafabf6eb79231ULL);
}

TEST(ScalableCuckoo, DamagedFilesAreRejected) {
  scalable_cuckoo_filter f({.initial_capacity = 8, .expansion = 2});
  (void)fill(f, 3, 2);
  test::expect_all_damage_rejected<scalable_cuckoo_filter>(serialize(f));
}

TEST(ScalableCuckoo, ForgedFieldsAreFormatErrorsWithReasons) {
  scalable_cuckoo_filter f({.initial_capacity = 8, .expansion = 2});
  (void)fill(f, 3, 2);
  const auto good = serialize(f);
  const auto with = [&](std::size_t offset, auto value) {
    return test::edited_image_error<scalable_cuckoo_filter>(good, offset, value);
  };
  // The parameter block (docs/file-format.md): n0 u64, target fpr f64, f, max kicks, expansion,
  // max sub-filters, layout, count (u32 each), then 48 bytes per sub-filter at 168: capacity,
  // buckets, inserts, removes (u64), stash state, stash fingerprint (u32), stash bucket (u64).
  constexpr std::size_t sub0 = 168;
  EXPECT_TRUE(contains(with(144, std::uint32_t{3}), "fingerprint_bits = 3 is invalid"));
  EXPECT_TRUE(contains(with(148, std::uint32_t{0}), "max_kicks = 0 is invalid"));
  EXPECT_TRUE(contains(with(152, std::uint32_t{0}), "expansion = 0 is invalid"));
  EXPECT_TRUE(contains(with(152, std::uint32_t{6}), "expansion = 6 is invalid"));
  EXPECT_TRUE(contains(with(156, std::uint32_t{0}), "max_sub_filters = 0 is invalid"));
  EXPECT_TRUE(
      contains(with(156, std::uint32_t{2}), "sub-filter count 3 exceeds max sub-filters 2"));
  EXPECT_TRUE(contains(with(160, std::uint32_t{2}), "bucket layout is 2"));
  EXPECT_FALSE(contains(with(160, std::uint32_t{0}), "no exception"));  // plain: other tables
  EXPECT_TRUE(contains(with(164, std::uint32_t{0}), "sub-filter count out of range: 0"));
  EXPECT_TRUE(contains(with(164, std::uint32_t{65}), "sub-filter count out of range: 65"));
  EXPECT_TRUE(contains(with(164, std::uint32_t{2}), "parameter block of scalable-cuckoo filter"));
  EXPECT_TRUE(contains(with(136, 1.5), "target fpr outside (0, 1)"));
  // A huge capacity is never believed (nor allocated): the shapes must follow from it, and the
  // payload must hold them.
  EXPECT_TRUE(contains(with(128, std::uint64_t{1} << 40),
                       "sub-filter 0: capacity 8 and 4 buckets do not follow from the parameters"));
  EXPECT_TRUE(contains(with(128, std::uint64_t{1} << 50), "initial_capacity = 1125899906842624"));
  auto huge = good;
  const std::uint64_t n = std::uint64_t{1} << 40;
  detail::put(huge.data() + 128, n);
  for (std::size_t i = 0; i < 3; ++i) {
    detail::put(huge.data() + sub0 + 48 * i, n << i);
    detail::put(huge.data() + sub0 + 48 * i + 8, cuckoo_filter::buckets_for(n) << i);
  }
  test::reseal(huge);
  EXPECT_TRUE(contains(format_error_of([&] { (void)deserialize<scalable_cuckoo_filter>(huge); }),
                       "payload has"));
  EXPECT_TRUE(contains(with(sub0 + 48 + 8, std::uint64_t{9}),
                       "sub-filter 1: capacity 16 and 9 buckets do not follow"));
  // Counts: the header's element count is the sum of the inserts, and each table holds exactly
  // its inserts minus its removes.
  const auto inserts0 = detail::get<std::uint64_t>(good.data() + sub0 + 16);
  EXPECT_TRUE(contains(with(sub0 + 16, inserts0 + 1), "element count"));
  auto more = good;
  detail::put(more.data() + sub0 + 16, inserts0 + 1);
  detail::put(more.data() + 64, f.inserted() + 1);
  test::reseal(more);
  EXPECT_TRUE(contains(format_error_of([&] { (void)deserialize<scalable_cuckoo_filter>(more); }),
                       "sub-filter 0: the table holds"));
  EXPECT_TRUE(contains(with(sub0 + 24, inserts0 + 1), "sub-filter 0: remove count"));
  EXPECT_TRUE(contains(with(sub0 + 48 * 2 + 32, std::uint32_t{2}),
                       "sub-filter 2: stash state is neither 0 nor 1"));
  // Another kind's tag on this block, and this kind read as another.
  EXPECT_TRUE(contains(with(12, std::uint32_t{4}), "holds a cuckoo filter, not a scalable-cuckoo"));
  EXPECT_TRUE(contains(format_error_of([&] { (void)deserialize<cuckoo_filter>(good); }),
                       "holds a scalable-cuckoo filter, not a cuckoo filter"));
}

TEST(ScalableCuckoo, MeasuredFprIsWithinABinomialBoundOfTheModel) {
  // The count of false positives among N absent probes is Binomial(N, q), q the filter's true
  // rate for its state. That rate moves around the exact model only with the number of stored
  // keys whose fingerprint and bucket pair coincide (a relative spread below 0.2% here), so it
  // stays within 2% of the model; the bounds then fail a correct filter with probability below
  // 1e-9 each.
  struct setup {
    const char* name;
    scalable_cuckoo_parameters p;
    std::uint64_t keys;
    std::size_t min_subs;
  };
  const setup setups[] = {
      // RedisBloom's defaults: 8-bit fingerprints, sub-filters the size of the first.
      {"redisbloom", {.initial_capacity = 20'000}, 100'000, 5},
      // One 8-bit table filled to capacity without refusing (cuckoo_filter's eviction bound): the
      // rate of 8-bit fingerprints in 4-slot buckets at 95% load.
      {"one_table_f8", {.initial_capacity = 100'000, .max_kicks = 2000}, 100'000, 1},
      {"doubling_f12",
       {.initial_capacity = 10'000, .fingerprint_bits = 12, .expansion = 2},
       100'000,
       4},
      {"plain_f6_x4",
       {.initial_capacity = 5'000, .fingerprint_bits = 6, .expansion = 4, .semi_sorted = false},
       60'000,
       3},
  };
  const std::uint64_t probes = 500'000;
  const auto absent = test::absent_keys(probes);
  std::vector<bool> out(probes);
  for (const setup& s : setups) {
    SCOPED_TRACE(s.name);
    scalable_cuckoo_filter f(s.p);
    const auto keys = test::present_keys(s.keys);
    for (const auto k : keys) ASSERT_TRUE(f.insert(k));
    EXPECT_GE(f.sub_filter_count(), s.min_subs);
    for (const auto k : keys) ASSERT_TRUE(f.may_contain(k));
    const double model = exact_model(f);
    EXPECT_NEAR(f.estimated_fpr(), model, model * 1e-3);
    const std::uint64_t positives = f.may_contain_many(absent, out);
    EXPECT_LE(positives, test::binomial_upper_bound(probes, model * 1.02))
        << "measured " << static_cast<double>(positives) / probes << " model " << model;
    EXPECT_GE(positives, test::binomial_lower_bound(probes, model * 0.98))
        << "measured " << static_cast<double>(positives) / probes << " model " << model;
  }
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

namespace {

using any_key = std::variant<std::string, std::vector<std::uint8_t>, std::int32_t, std::uint64_t>;

rc::Gen<any_key> gen_key() {
  return rc::gen::oneOf(rc::gen::cast<any_key>(rc::gen::arbitrary<std::string>()),
                        rc::gen::cast<any_key>(rc::gen::arbitrary<std::vector<std::uint8_t>>()),
                        rc::gen::cast<any_key>(rc::gen::arbitrary<std::int32_t>()),
                        rc::gen::cast<any_key>(rc::gen::arbitrary<std::uint64_t>()));
}

// Tiny sub-filters, small fingerprints, short eviction walks and short chains: collisions,
// growth and a full chain are where bugs hide.
rc::Gen<scalable_cuckoo_parameters> gen_params(std::uint64_t max_capacity) {
  return rc::gen::build<scalable_cuckoo_parameters>(
      rc::gen::set(&scalable_cuckoo_parameters::initial_capacity,
                   rc::gen::inRange<std::uint64_t>(1, max_capacity + 1)),
      rc::gen::set(&scalable_cuckoo_parameters::fingerprint_bits,
                   rc::gen::inRange<std::uint32_t>(4, 17)),
      rc::gen::set(&scalable_cuckoo_parameters::max_kicks, rc::gen::inRange<std::uint32_t>(1, 30)),
      rc::gen::set(&scalable_cuckoo_parameters::expansion,
                   rc::gen::element<std::uint32_t>(1, 2, 4, 8)),
      rc::gen::set(&scalable_cuckoo_parameters::max_sub_filters,
                   rc::gen::inRange<std::uint32_t>(1, 7)),
      rc::gen::set(&scalable_cuckoo_parameters::semi_sorted, rc::gen::arbitrary<bool>()));
}

hasher gen_hasher() {
  return *rc::gen::arbitrary<bool>() ? hasher(random_key())
                                     : hasher(*rc::gen::arbitrary<std::uint64_t>());
}

}  // namespace

// Keys of every shape into a chain that grows and fills up: each accepted key answers "possibly
// present" (directly, loaded from its bytes, and through the view of a mapped file); each refused
// one changed nothing.
RC_GTEST_PROP(ScalableCuckooProperties, NoFalseNegativeAfterGrowthAndFailedInserts, ()) {
  const auto p = *gen_params(16);
  scalable_cuckoo_filter f(p, gen_hasher());
  const auto keys = *rc::gen::container<std::vector<any_key>>(gen_key());
  std::map<any_key, std::uint64_t> accepted;
  bool refused = false;
  for (const auto& k : keys) {
    const bool was_full = f.is_full();
    const std::size_t subs = f.sub_filter_count();
    const auto before = serialize(f);
    if (std::visit([&](const auto& v) { return static_cast<bool>(f.insert(v)); }, k)) {
      RC_ASSERT(!was_full);
      ++accepted[k];
    } else {
      RC_ASSERT(was_full);
      RC_ASSERT(f.sub_filter_count() == subs);
      RC_ASSERT(serialize(f) == before);
      refused = true;
    }
  }
  RC_CLASSIFY(refused, "an insert was refused");
  RC_CLASSIFY(f.sub_filter_count() > 1, "grew");
  std::uint64_t total = 0;
  for (const auto& [k, c] : accepted) total += c;
  RC_ASSERT(f.approximate_count() == total);
  RC_ASSERT(f.inserted() == total);
  const auto loaded = deserialize<scalable_cuckoo_filter>(serialize(f));
  RC_ASSERT(loaded == f);
  std::vector<any_key> stored;
  for (const auto& [k, c] : accepted) stored.push_back(k);
  RC_ASSERT(test::files_keep_every_key(f, stored, [](const auto& g, const any_key& k) {
    return std::visit([&](const auto& v) { return g.may_contain(v); }, k);
  }));
  for (const auto& [k, copies] : accepted) {
    const std::uint64_t c = copies;  // a lambda may not capture a structured binding in clang 14
    std::visit(
        [&](const auto& v) {
          RC_ASSERT(f.may_contain(v));
          RC_ASSERT(loaded.may_contain(v));
          RC_ASSERT(f.count(v) >= c);  // colliding fingerprints can only add
        },
        k);
  }
}

// Random inserts, removes and queries over a small key pool (so duplicates are common) on chains
// that grow, fill up and shrink back, checked against an exact multiset: no false negative ever,
// removes of stored keys always succeed, and a refused insert or a remove of an absent key
// changes nothing.
RC_GTEST_PROP(ScalableCuckooProperties, AgreesWithAnExactMultiset, ()) {
  const auto p = *gen_params(12);
  scalable_cuckoo_filter f(p, *rc::gen::arbitrary<std::uint64_t>());
  const auto pool = *rc::gen::inRange<std::uint32_t>(1, 200);
  const auto length = *rc::gen::inRange<std::size_t>(0, 600);
  const auto ops = *rc::gen::container<std::vector<std::pair<std::uint8_t, std::uint32_t>>>(
      length, rc::gen::pair(rc::gen::inRange<std::uint8_t>(0, 5),
                            rc::gen::inRange<std::uint32_t>(0, pool)));
  std::map<std::uint32_t, std::uint32_t> model;
  std::uint64_t total = 0, removes = 0;
  for (const auto& [op, key] : ops) {
    if (op <= 2) {  // insert (three fifths of all operations)
      const bool was_full = f.is_full();
      if (f.insert(key)) {
        RC_ASSERT(!was_full);
        ++model[key];
        ++total;
      } else {
        RC_ASSERT(was_full);
      }
    } else if (op == 3) {  // remove
      if (model[key] > 0) {
        RC_ASSERT(f.remove(key));
        --model[key];
        --total;
        ++removes;
      } else if (!f.may_contain(key)) {
        const auto before = serialize(f);
        RC_ASSERT(!f.remove(key));  // certainly absent: not_present, unchanged
        RC_ASSERT(serialize(f) == before);
      }
      // (Removing a key never inserted that collides with a stored one is misuse: skipped.)
    } else if (model[key] > 0) {  // query
      RC_ASSERT(f.may_contain(key));
    }
    RC_ASSERT(f.approximate_count() == total);
    RC_ASSERT(f.removed() == removes);
    for (const auto& [k, c] : model) {
      if (c == 0) continue;
      RC_ASSERT(f.may_contain(k));
      RC_ASSERT(f.count(k) >= c);
    }
  }
  RC_CLASSIFY(f.sub_filter_count() > 2, "three or more sub-filters");
  RC_CLASSIFY(removes > 20, "more than 20 removes");
  RC_CLASSIFY(p.expansion > 1, "expansion above 1");
  std::vector<std::uint32_t> all(pool);
  for (std::uint32_t k = 0; k < pool; ++k) all[k] = k;
  std::vector<bool> out(pool);
  f.may_contain_many(all, out);
  for (std::uint32_t k = 0; k < pool; ++k) RC_ASSERT(out[k] == f.may_contain(k));
  // Through its file, every answer and count is the same.
  const auto back = deserialize<scalable_cuckoo_filter>(serialize(f));
  RC_ASSERT(back == f);
  for (std::uint32_t k = 0; k < pool; ++k) {
    RC_ASSERT(back.may_contain(k) == f.may_contain(k));
    RC_ASSERT(back.count(k) == f.count(k));
  }
  std::vector<std::uint32_t> stored;
  for (const auto& [k, c] : model) {
    if (c > 0) stored.push_back(k);
  }
  RC_ASSERT(test::files_keep_every_key(
      f, stored, [](const auto& g, std::uint32_t k) { return g.may_contain(k); }));
}

// Chains with many fingerprint collisions (f of 4 to 6 bits, a few buckets to start, sub-filters
// of growing size): removing any of the inserted keys, in any order, never makes another inserted
// key read as absent (the nested positions at work).
RC_GTEST_PROP(ScalableCuckooProperties, RemovesNeverCauseFalseNegatives, ()) {
  scalable_cuckoo_parameters p;
  p.initial_capacity = *rc::gen::inRange<std::uint64_t>(1, 9);
  p.fingerprint_bits = *rc::gen::inRange<std::uint32_t>(4, 7);
  p.max_kicks = *rc::gen::inRange<std::uint32_t>(1, 30);
  p.expansion = *rc::gen::element<std::uint32_t>(1, 2, 4, 8);
  p.max_sub_filters = *rc::gen::inRange<std::uint32_t>(2, 7);
  p.semi_sorted = *rc::gen::arbitrary<bool>();
  scalable_cuckoo_filter f(p, *rc::gen::arbitrary<std::uint64_t>());
  const auto n = *rc::gen::inRange<std::uint64_t>(1, 1000);
  std::vector<std::uint64_t> kept;
  for (std::uint64_t k = 0; k < n; ++k) {
    if (f.insert(k)) kept.push_back(k);
  }
  const auto order = *rc::gen::map(rc::gen::arbitrary<std::uint64_t>(), [&](std::uint64_t seed) {
    std::vector<std::uint64_t> v = kept;
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[seed++ % i]);
    return v;
  });
  const auto removes = *rc::gen::inRange<std::size_t>(0, order.size() + 1);
  for (std::size_t i = 0; i < removes; ++i) RC_ASSERT(f.remove(order[i]));
  for (std::size_t i = removes; i < order.size(); ++i) RC_ASSERT(f.may_contain(order[i]));
  RC_ASSERT(f.approximate_count() == order.size() - removes);
  RC_CLASSIFY(f.sub_filter_count() > 2, "three or more sub-filters");
}

RC_GTEST_PROP(ScalableCuckooProperties, CorruptedImagesNeverCrash, ()) {
  // Arbitrary damage to a valid image: either a clean format_error or (a checksum collision,
  // never seen in practice) a valid filter, but never a crash or another exception.
  const auto p = *gen_params(40);
  scalable_cuckoo_filter f(p);
  const auto n = *rc::gen::inRange<std::uint64_t>(0, 200);
  for (std::uint64_t k = 0; k < n; ++k) (void)f.insert(k);
  auto bytes = serialize(f);
  const auto edits =
      *rc::gen::container<std::vector<std::pair<std::size_t, std::uint8_t>>>(rc::gen::pair(
          rc::gen::inRange<std::size_t>(0, bytes.size()), rc::gen::arbitrary<std::uint8_t>()));
  const auto cut = *rc::gen::inRange<std::size_t>(0, bytes.size() + 1);
  bool changed = cut < bytes.size();
  for (auto [at, v] : edits) {
    changed |= bytes[at] != std::byte{v};
    bytes[at] = std::byte{v};
  }
  bytes.resize(cut);
  if (changed) {
    RC_ASSERT_THROWS_AS(deserialize<scalable_cuckoo_filter>(bytes), format_error);
  } else {
    RC_ASSERT(deserialize<scalable_cuckoo_filter>(bytes) == f);
  }
}
