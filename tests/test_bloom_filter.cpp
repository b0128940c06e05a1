#include <gtest/gtest.h>
#include <bloomery/bloomery.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace bloomery;
using namespace bloomery::support;

TEST(BloomFilter, SizedFromCapacityAndFpr) {
  bloom_filter f({.capacity = 1'000'000, .fpr = 0.01});
  EXPECT_EQ(f.bit_count(), optimal_bits(1'000'000, 0.01));
  EXPECT_EQ(f.hash_count(), 7u);
  EXPECT_EQ(f.capacity(), 1'000'000u);
  EXPECT_DOUBLE_EQ(f.target_fpr(), 0.01);
  EXPECT_EQ(f.size_in_bytes(), (f.bit_count() + 511) / 512 * 64);
  EXPECT_EQ(f.hash().seed(), default_seed);
}

TEST(BloomFilter, ExplicitParameters) {
  bloom_filter f({.bits = 1000, .hashes = 3}, 99);
  EXPECT_EQ(f.bit_count(), 1000u);
  EXPECT_EQ(f.hash_count(), 3u);
  EXPECT_EQ(f.hash().seed(), 99u);
  EXPECT_EQ(f.capacity(), 231u);  // floor(1000 ln2 / 3)
  EXPECT_DOUBLE_EQ(f.target_fpr(), false_positive_rate(231, 1000, 3));
}

TEST(BloomFilter, InsertedKeysAreFoundAndEmptyFilterFindsNothing) {
  bloom_filter f({.capacity = 10'000, .fpr = 0.01});
  const auto keys = present_keys(10'000);
  for (auto k : keys) EXPECT_FALSE(f.may_contain(k));
  for (auto k : keys) f.insert(k);
  for (auto k : keys) ASSERT_TRUE(f.may_contain(k));
  EXPECT_EQ(f.inserted(), 10'000u);
  f.clear();
  EXPECT_EQ(f.set_bit_count(), 0u);
  EXPECT_EQ(f.inserted(), 0u);
  for (auto k : keys) EXPECT_FALSE(f.may_contain(k));
}

TEST(BloomFilter, KeysOfEveryShape) {
  bloom_filter f({.capacity = 1000, .fpr = 0.001});
  const std::string s = "https://example.com/a";
  const std::vector<std::uint8_t> bytes = {0, 1, 2, 255};
  f.insert(s);
  f.insert(bytes);
  f.insert(std::int16_t{-3});
  f.insert(std::uint8_t{200});
  f.insert("");
  EXPECT_TRUE(f.may_contain(std::string_view(s)));
  EXPECT_TRUE(f.may_contain(std::span<const std::uint8_t>(bytes)));
  EXPECT_TRUE(f.may_contain(std::int64_t{-3}));  // same key as int16_t{-3}
  EXPECT_TRUE(f.may_contain(200ULL));
  EXPECT_TRUE(f.may_contain(std::string()));
}

TEST(BloomFilter, MayContainManyAgreesWithMayContain) {
  bloom_filter f({.capacity = 50'000, .fpr = 0.05});
  const auto keys = present_keys(50'000);
  for (auto k : keys) f.insert(k);
  test::expect_batched_matches_single_mixed(f, keys, 20'000);
  // Strings through the same path, and an output too small is an error, not an overflow.
  f.insert("b");
  test::expect_batched_output_checked(f);
}

// Filters past 1 MiB take the batched paths (bloom_core.hpp): rounds, and the mostly-present path
// that a batch takes after a mostly-present one. Their answers must equal may_contain's for
// batches that are mostly absent, mostly present, and mixed, and across the switches between them.
TEST(BloomFilter, BatchedRoundsAgreeWithMayContainOnLargeFilters) {
  bloom_filter f({.capacity = 1'500'000, .fpr = 0.01});
  ASSERT_GT(f.size_in_bytes(), detail::batch_min_bytes);
  const auto keys = present_keys(1'500'000);
  for (auto k : keys) f.insert(k);
  const auto absent = absent_keys(100'000);
  std::vector<std::uint64_t> probe;
  for (std::size_t i = 0; i < 100'000; ++i) {
    // Runs of 1000 keys alternate: all absent, all present, then a 50/50 mix.
    const std::size_t phase = (i / 1000) % 3;
    const bool present = phase == 1 || (phase == 2 && i % 2 == 0);
    probe.push_back(present ? keys[(i * 7919) % keys.size()] : absent[i]);
  }
  test::expect_batched_matches_single(f, probe);
}

// Few probes per key: k = 1 and 2 never take probe_hash's three eager loads, and a lane that
// finishes after round 0 or 1 must still report every key. Both query paths must agree.
TEST(BloomFilter, BatchedAndSingleAgreeForSmallK) {
  const auto keys = present_keys(200'000);
  const auto absent = absent_keys(60'000);
  for (std::uint32_t k : {1u, 2u, 3u, 4u}) {
    bloom_filter f({.bits = std::uint64_t{1} << 24, .hashes = k});
    ASSERT_GT(f.size_in_bytes(), detail::batch_min_bytes);
    for (auto key : keys) f.insert(key);
    std::vector<std::uint64_t> probe;
    for (std::size_t i = 0; i < 60'000; ++i) {
      const bool present = (i / 500) % 2 == 1;  // runs of absent, then present, keys
      probe.push_back(present ? keys[(i * 31) % keys.size()] : absent[i]);
    }
    EXPECT_GE(test::expect_batched_matches_single(f, probe), 30'000u) << "k=" << k;
  }
}

// The pipeline that far larger filters take (detail::ring_probe), called directly on a filter of
// any size: every k, ring sizes down to one slot, batches shorter than the ring, and a half-full
// filter so that keys travel several probes deep before they are answered.
TEST(BloomFilter, RingPipelineAnswersEqualMayContain) {
  const auto keys = present_keys(150'000);
  const auto absent = absent_keys(20'000);
  for (std::uint32_t k : {1u, 2u, 3u, 7u, 12u}) {
    bloom_filter f({.bits = std::uint64_t{150'000} * k * 3 / 2, .hashes = k});  // ~1/2 full
    for (auto key : keys) f.insert(key);
    std::vector<std::uint64_t> probe;
    for (std::size_t i = 0; i < 20'000; ++i) {
      const bool present = (i / 300) % 2 == 1 || i % 7 == 0;
      probe.push_back(present ? keys[(i * 31) % keys.size()] : absent[i]);
    }
    std::size_t positives = 0;
    for (auto key : probe) positives += f.may_contain(key);
    ASSERT_GT(positives, 5'000u);
    const auto run = [&]<std::size_t Slots>(std::size_t count) {
      std::vector<char> out(count, 2);
      const std::span<const std::uint64_t> batch(probe.data(), count);
      const std::size_t got = f.hash().with_mode([&](const auto& h) {
        return detail::ring_probe<Slots>(h, f.words().data(), f.bit_count(), k, batch, out);
      });
      std::size_t expected = 0;
      for (std::size_t i = 0; i < count; ++i) {
        ASSERT_EQ(out[i], f.may_contain(probe[i]) ? 1 : 0)
            << "k=" << k << " slots=" << Slots << " count=" << count << " key " << i;
        expected += out[i];
      }
      EXPECT_EQ(got, expected) << "k=" << k << " slots=" << Slots << " count=" << count;
    };
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{31},
                              std::size_t{32}, std::size_t{33}, probe.size()}) {
      run.operator()<detail::ring_slots>(count);
      run.operator()<1>(count);
      run.operator()<4>(count);
    }
  }
}

// Filters of ring_min_bytes and more answer through the pipeline; the answers must not change.
TEST(BloomFilter, FarLargerFiltersBatchThroughThePipeline) {
  bloom_filter f({.bits = detail::ring_min_bytes * 8 + 4096, .hashes = 3});
  ASSERT_GE(f.size_in_bytes(), detail::ring_min_bytes);
  const auto keys = present_keys(1'000'000);
  for (auto k : keys) f.insert(k);
  std::vector<std::uint64_t> probe = absent_keys(30'000);
  probe.insert(probe.end(), keys.begin(), keys.begin() + 30'000);
  EXPECT_GE(test::expect_batched_matches_single(f, probe), 30'000u);
  const bloom_filter keyed({.bits = detail::ring_min_bytes * 8, .hashes = 5}, random_key());
  EXPECT_EQ(test::expect_batched_matches_single(keyed, probe), 0u);  // empty: no false positives
}

// Measured FPR against theory at several (n, p); the tolerance is statistical (test_support.hpp).
struct fpr_case {
  std::uint64_t n;
  double p;
};
class BloomFpr : public ::testing::TestWithParam<fpr_case> {};

TEST_P(BloomFpr, MeasuredRateMatchesTheory) {
  const auto [n, p] = GetParam();
  bloom_filter f({.capacity = n, .fpr = p});
  for (auto k : present_keys(n)) f.insert(k);
  test::expect_classic_fpr(f, n, f.bit_count(), f.hash_count(), 1'000'000);
  // Sizing hits the target it was asked for.
  EXPECT_NEAR(false_positive_rate(n, f.bit_count(), f.hash_count()), p, p * 0.1) << "p=" << p;
}

INSTANTIATE_TEST_SUITE_P(Sizes, BloomFpr,
                         ::testing::Values(fpr_case{10'000, 0.1}, fpr_case{10'000, 0.01},
                                           fpr_case{10'000, 0.001}, fpr_case{1'000'000, 0.1},
                                           fpr_case{1'000'000, 0.01}, fpr_case{1'000'000, 0.001}));

TEST(BloomFilter, ApproximateCountWithinFivePercent) {
  const std::uint64_t cap = 200'000;
  bloom_filter f({.capacity = cap, .fpr = 0.01});
  const auto keys = present_keys(cap);
  for (std::size_t i = 0; i < cap / 2; ++i) f.insert(keys[i]);
  EXPECT_NEAR(static_cast<double>(f.approximate_count()), cap / 2.0, 0.05 * cap / 2);
  EXPECT_FALSE(f.is_over_capacity());
  for (std::size_t i = cap / 2; i < cap; ++i) f.insert(keys[i]);
  EXPECT_NEAR(static_cast<double>(f.approximate_count()), cap, 0.05 * cap);
  EXPECT_FALSE(f.is_over_capacity()) << "exactly full must not warn";
  // A full filter is about half set: 1 - e^{-kn/m} (0.518 here, with k rounded up to 7).
  EXPECT_NEAR(f.fill_ratio(), -std::expm1(-7.0 * cap / static_cast<double>(f.bit_count())), 0.005);
  EXPECT_NEAR(f.estimated_fpr(), 0.01, 0.001);
  // Duplicates do not move the estimate: it counts distinct keys.
  for (std::size_t i = 0; i < 1000; ++i) f.insert(keys[i]);
  EXPECT_NEAR(static_cast<double>(f.approximate_count()), cap, 0.05 * cap);
  // Driven past capacity, the filter warns and its FPR estimate climbs past the target.
  for (auto k : present_keys(cap / 10, 77)) f.insert(k);
  EXPECT_TRUE(f.is_over_capacity());
  EXPECT_GT(f.estimated_fpr(), 0.015);
}

TEST(BloomFilter, ApproximateCountSaturatesWhenFull) {
  test::expect_estimates_saturate(bloom_filter({.bits = 64, .hashes = 2}));
}

TEST(BloomFilter, UnionIsBitIdenticalToBuildingFromBothSets) {
  const auto a_keys = present_keys(30'000, 10), b_keys = present_keys(30'000, 11);
  bloom_filter a({.capacity = 60'000, .fpr = 0.01}), b = a, both = a;
  for (auto k : a_keys) a.insert(k), both.insert(k);
  for (auto k : b_keys) b.insert(k), both.insert(k);
  EXPECT_NE(a, both);
  const bloom_filter u = a | b;
  a |= b;
  EXPECT_EQ(a, both);
  EXPECT_EQ(u, both);
  EXPECT_EQ(a.inserted(), 60'000u);
  for (auto k : b_keys) ASSERT_TRUE(a.may_contain(k));
}

TEST(BloomFilter, IntersectionKeepsEveryCommonKey) {
  const auto common = present_keys(5'000, 20), only_a = present_keys(5'000, 21),
             only_b = present_keys(5'000, 22);
  bloom_filter a({.capacity = 20'000, .fpr = 0.01}), b = a;
  for (auto k : common) a.insert(k), b.insert(k);
  for (auto k : only_a) a.insert(k);
  for (auto k : only_b) b.insert(k);
  const bloom_filter i = a & b;
  for (auto k : common) ASSERT_TRUE(i.may_contain(k));
  // Most keys of only one side are gone.
  std::size_t survivors = 0;
  for (auto k : only_a) survivors += i.may_contain(k);
  EXPECT_LT(survivors, only_a.size() / 4);
  a &= b;
  EXPECT_EQ(a, i);
}

TEST(BloomFilter, MergingIncompatibleFiltersNamesTheDifference) {
  const bloom_filter base({.bits = 1000, .hashes = 3});
  const auto expect_merge_error = [&](const bloom_filter& other, const std::string& needle) {
    bloom_filter a = base;
    try {
      a |= other;
      ADD_FAILURE() << "union should fail: " << needle;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_THROW(a &= other, std::invalid_argument);
  };
  expect_merge_error(bloom_filter({.bits = 1001, .hashes = 3}), "bits differ (1000 vs 1001)");
  expect_merge_error(bloom_filter({.bits = 1000, .hashes = 4}), "hashes differ (3 vs 4)");
  expect_merge_error(bloom_filter({.bits = 1000, .hashes = 3}, 5), "seed differs");
  expect_merge_error(bloom_filter({.bits = 1000, .hashes = 3}, random_key()),
                     "hash algorithm differs");
}

TEST(BloomFilter, KeyedFiltersWorkAndMergeOnlyWithTheSameKey) {
  const secret_key key = random_key();
  bloom_filter a({.capacity = 1000, .fpr = 0.01}, key), b({.capacity = 1000, .fpr = 0.01}, key);
  a.insert("x");
  b.insert("y");
  a |= b;
  EXPECT_TRUE(a.may_contain("x"));
  EXPECT_TRUE(a.may_contain("y"));
  bloom_filter c({.capacity = 1000, .fpr = 0.01}, random_key());
  EXPECT_THROW(a |= c, std::invalid_argument);
}

TEST(BloomFilter, InvalidParametersThrowWithUsefulMessages) {
  // Targets ({.capacity, .fpr}) are checked for every filter in test_filter_family.cpp.
  test::expect_invalid([] { bloom_filter({.bits = 0, .hashes = 3}); }, "bits = 0");
  test::expect_invalid([] { bloom_filter({.bits = 100, .hashes = 0}); }, "hashes = 0");
  test::expect_invalid([] { bloom_filter({.bits = 100, .hashes = 256}); },
                       "allowed range is [1, 255]");
  test::expect_invalid([] { bloom_filter({.bits = (std::uint64_t{1} << 48) + 1, .hashes = 3}); },
                       "allowed range is [1, 2^48]");
}

// m beyond 2^32 bits: positions are computed in 64 bits, so keys land in the upper half too.
TEST(BloomFilter, MoreThanTwoToThe32Bits) {
  const std::uint64_t m = (std::uint64_t{1} << 33) + 12'345;  // 1 GiB, not a power of two
  bloom_filter f({.bits = m, .hashes = 3});
  std::vector<std::uint64_t> high_keys;
  std::uint64_t max_pos = 0;
  for (std::uint64_t key = 0; key < 2'000; ++key) {
    bool all_high = true;
    detail::for_each_position(hash_key(f.hash(), key), m, 3, [&](std::uint64_t pos) {
      all_high &= pos >= (std::uint64_t{1} << 32);
      max_pos = std::max(max_pos, pos);
    });
    f.insert(key);
    if (all_high) high_keys.push_back(key);
  }
  EXPECT_GT(high_keys.size(), 150u);  // about 1/8 of keys
  EXPECT_GT(max_pos, m - m / 100);    // the top of the range is reached
  const auto words = f.words();
  for (auto key : high_keys) {
    ASSERT_TRUE(f.may_contain(key));
    detail::for_each_position(hash_key(f.hash(), key), m, 3, [&](std::uint64_t pos) {
      ASSERT_TRUE((words[pos >> 6] >> (pos & 63)) & 1) << "bit " << pos << " not set";
    });
  }
  std::uint64_t upper_bits = 0;
  for (std::size_t w = (std::size_t{1} << 32) / 64; w < words.size(); ++w) {
    upper_bits += static_cast<std::uint64_t>(std::popcount(words[w]));
  }
  EXPECT_NEAR(static_cast<double>(upper_bits), 3000.0, 200.0);  // half of 6000 probes
  for (std::uint64_t key = 0; key < 2'000; ++key) ASSERT_TRUE(f.may_contain(key));
}

// insert_many (batched, prefetching) sets exactly the bits of inserting each key in turn, on both
// bit-array layouts, for batches that do and do not fill the internal batch size.
template <class F>
void expect_insert_many_equals_insert() {
  for (const std::size_t n :
       {std::size_t{0}, std::size_t{1}, std::size_t{31}, std::size_t{1000}, std::size_t{200'000}}) {
    const auto keys = present_keys(n, 9);
    F one({.capacity = 200'000, .fpr = 0.01}), many = one;
    for (auto k : keys) one.insert(k);
    many.insert_many(keys);
    EXPECT_EQ(many, one) << n;
    EXPECT_EQ(many.inserted(), n);
  }
  std::vector<std::string> words = {"a", "bb", "ccc"};
  F f({.capacity = 10, .fpr = 0.01});
  f.insert_many(words);
  for (const auto& w : words) EXPECT_TRUE(f.may_contain(w));
}

TEST(BloomFilter, InsertManyEqualsInsert) {
  expect_insert_many_equals_insert<bloom_filter>();
  expect_insert_many_equals_insert<blocked_bloom_filter>();
}
