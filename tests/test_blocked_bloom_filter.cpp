#include <gtest/gtest.h>
#include <bloomery/bloomery.hpp>

#include <cmath>
#include <cstring>
#include <span>
#include <vector>

#include "test_support.hpp"

using namespace bloomery;

TEST(BlockedBloom, EveryKeysBitsLieInOneCacheLine) {
  blocked_bloom_filter f({.bits = 512 * 1000, .hashes = 8});
  for (std::uint64_t key = 0; key < 200; ++key) {
    blocked_bloom_filter one({.bits = 512 * 1000, .hashes = 8});
    one.insert(key);
    std::size_t lines_touched = 0, bits = 0;
    const auto w = one.words();
    for (std::size_t line = 0; line < w.size() / 8; ++line) {
      std::size_t in_line = 0;
      for (std::size_t i = 0; i < 8; ++i) in_line += std::popcount(w[line * 8 + i]);
      lines_touched += in_line != 0;
      bits += in_line;
    }
    EXPECT_EQ(lines_touched, 1u);
    EXPECT_GE(bits, 6u);  // 8 probes, rarely colliding
    EXPECT_LE(bits, 8u);
  }
}

TEST(BlockedBloom, TenBitsPerKeyReachOnePercent) {
  // The target: at most 1.0% at 10 bits/key. k = 6 is the model's best at 10 bits/key.
  const std::uint64_t n = 1'000'000, probes = 2'000'000;
  blocked_bloom_filter f({.bits = n * 10 / 512 * 512, .hashes = 6});
  for (auto k : test::present_keys(n)) f.insert(k);
  const double measured = test::measured_fpr(f, probes);
  const double model = detail::blocked_layout::model_fpr(n, f.bit_count(), 6);
  EXPECT_LT(model, 0.0100);
  EXPECT_NEAR(measured, model, 5 * std::sqrt(model / probes) + 0.02 * model);
  EXPECT_LT(measured, 0.0100 + 5 * std::sqrt(0.01 / probes));
}

TEST(BlockedBloom, ModelIsAProbabilityThatFallsWithMemory) {
  // One key per block on average: each block is a tiny classic filter; the Poisson mixture must
  // still be a probability and decrease with memory.
  double previous = 1.0;
  for (double bits_per_key : {4.0, 8.0, 12.0, 16.0, 24.0}) {
    const double p = detail::blocked_fpr(1e6, 1e6 * bits_per_key / 512, 6);
    EXPECT_GT(p, 0.0);
    EXPECT_LT(p, previous);
    previous = p;
  }
}

TEST(BlockedBloom, SizedForTargetsDeliversThem) {
  for (const double p : {0.05, 0.01, 0.002}) {
    const std::uint64_t n = 100'000, probes = 1'000'000;
    blocked_bloom_filter f({.capacity = n, .fpr = p});
    for (auto k : test::present_keys(n)) f.insert(k);
    EXPECT_EQ(f.bit_count() % 512, 0u);
    EXPECT_LE(f.hash_count(), 16u);
    // Costs more bits than the classic filter at the same p, but not many more.
    EXPECT_GT(f.bit_count(), optimal_bits(n, p));
    EXPECT_LT(f.bit_count(), optimal_bits(n, p) * 1.35);
    const double measured = test::measured_fpr(f, probes);
    EXPECT_LT(measured, p * 1.03 + 5 * std::sqrt(p / probes)) << p;
  }
}

// Every SIMD path this CPU runs answers exactly as the portable probe, one at a time and batched.
TEST(BlockedBloom, SimdAndPortablePathsAgree) {
  const std::uint64_t n = 200'000;
  std::vector<simd_path> paths;
  for (const simd_path p : {simd_path::avx2, simd_path::avx512}) {
    if (p <= best_simd_path()) paths.push_back(p);
  }
  for (std::uint32_t k = 1; k <= 16; ++k) {  // every lane count of both SIMD steps
    blocked_bloom_filter f({.bits = 512 * 4000, .hashes = k});
    const auto keys = test::present_keys(n);
    for (std::size_t i = 0; i < n; i += 2) f.insert(keys[i]);
    std::vector<bool> portable(n);
    ASSERT_TRUE(select_simd_path(simd_path::portable));
    f.may_contain_many(keys, portable);
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(portable[i], i % 2 == 0 || f.may_contain(keys[i]));
    for (const simd_path p : paths) {
      SCOPED_TRACE(to_string(p));
      ASSERT_TRUE(select_simd_path(p));
      ASSERT_EQ(simd_path_in_use(), p);
      std::vector<bool> simd(n);
      f.may_contain_many(keys, simd);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(simd[i], portable[i]) << "k=" << k << " key " << i;
        ASSERT_EQ(f.may_contain(keys[i]), portable[i]) << "k=" << k << " key " << i;
      }
    }
    force_portable_simd(false);
    std::size_t positives = 0;
    for (std::size_t i = 1; i < n; i += 2) positives += portable[i];
    EXPECT_GT(positives, 0u);  // a loaded filter: some absent keys do collide
    EXPECT_LT(positives, n / 2);
  }
  EXPECT_EQ(simd_path_in_use(), best_simd_path());
}

TEST(BlockedBloom, SimdPathSelection) {
  EXPECT_TRUE(select_simd_path(simd_path::portable));
  EXPECT_FALSE(simd_in_use());
  force_portable_simd(false);
  EXPECT_EQ(simd_path_in_use(), best_simd_path());
  EXPECT_EQ(simd_available(), best_simd_path() != simd_path::portable);
  if (best_simd_path() != simd_path::avx512) {
    EXPECT_FALSE(select_simd_path(simd_path::avx512));  // refused, nothing changed
    EXPECT_EQ(simd_path_in_use(), best_simd_path());
  }
  EXPECT_STREQ(to_string(simd_path::portable), "portable");
  EXPECT_STREQ(to_string(simd_path::avx2), "avx2");
  EXPECT_STREQ(to_string(simd_path::avx512), "avx512");
}

TEST(BlockedBloom, ExplicitParametersAreChecked) {
  EXPECT_THROW(blocked_bloom_filter({.bits = 1000, .hashes = 4}), std::invalid_argument);
  EXPECT_THROW(blocked_bloom_filter({.bits = 512, .hashes = 17}), std::invalid_argument);
  EXPECT_THROW(blocked_bloom_filter({.bits = 0, .hashes = 4}), std::invalid_argument);
  try {
    blocked_bloom_filter({.bits = 1000, .hashes = 4});
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("multiple of 512"), std::string::npos);
  }
}

TEST(BlockedBloom, UnionAndCounts) {
  const auto a_keys = test::present_keys(50'000, 3), b_keys = test::present_keys(50'000, 4);
  blocked_bloom_filter a({.capacity = 100'000, .fpr = 0.01}), b = a, both = a;
  for (auto k : a_keys) a.insert(k), both.insert(k);
  for (auto k : b_keys) b.insert(k), both.insert(k);
  EXPECT_NEAR(static_cast<double>(a.approximate_count()), 50'000, 2'500);
  a |= b;
  EXPECT_EQ(a, both);
  EXPECT_NEAR(static_cast<double>(a.approximate_count()), 100'000, 5'000);
  EXPECT_FALSE(a.is_over_capacity());
  EXPECT_THROW(a |= blocked_bloom_filter({.capacity = 100'000, .fpr = 0.001}),
               std::invalid_argument);
}

// may_contain_bytes reads a filter's bits as plain bytes at any alignment (LevelDB's filter
// blocks) and answers exactly as the filter does, for both bit-array kinds.
template <class F>
void expect_bytes_answer_as_the_filter(const F& f) {
  const auto words = f.words();
  const std::size_t size = f.bit_count() / 8;
  for (std::size_t offset : {0, 1, 3, 7}) {
    std::vector<unsigned char> buffer(offset + size);
    std::memcpy(buffer.data() + offset, words.data(), size);
    const std::span<const unsigned char> bytes(buffer.data() + offset, size);
    std::size_t positives = 0;
    for (std::uint64_t key = 0; key < 20000; ++key) {
      const hash128 h = hash_key(f.hash(), key);
      const bool expected = f.may_contain(key);
      ASSERT_EQ(F::may_contain_bytes(bytes, f.hash_count(), h), expected) << key;
      positives += expected;
    }
    // Keys 0..1999 were inserted; the rest answer as the filter does, false positives included.
    EXPECT_GE(positives, 2000U);
    EXPECT_LT(positives, 20000U);
  }
}

TEST(BitArrayFilters, MayContainBytesAnswersAsTheFilterAtAnyAlignment) {
  bloom_filter classic({.bits = 8 * 2500, .hashes = 7}, hasher(0x1234));
  blocked_bloom_filter blocked({.bits = 512 * 40, .hashes = 8});
  for (std::uint64_t key = 0; key < 2000; ++key) {
    classic.insert(key);
    blocked.insert(key);
  }
  expect_bytes_answer_as_the_filter(classic);
  expect_bytes_answer_as_the_filter(blocked);
  EXPECT_EQ(bloom_filter::bits_multiple, 1U);
  EXPECT_EQ(blocked_bloom_filter::bits_multiple, 512U);
  EXPECT_EQ(bloom_filter::max_hash_count, max_hashes);
  EXPECT_EQ(blocked_bloom_filter::max_hash_count, 16U);
}
