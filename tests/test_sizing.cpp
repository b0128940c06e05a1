#include <gtest/gtest.h>

#include <bloomery/sizing.hpp>
#include "test_support.hpp"

#include <cmath>
#include <limits>

using namespace bloomery;

TEST(Sizing, BitsPerKeyMatchesTheClassicFormula) {
  EXPECT_NEAR(bits_per_key(0.01), 9.585, 0.001);
  // Each 10x lower p costs ln(10)/(ln 2)^2 = 4.79 more bits per key, whatever the key size.
  EXPECT_NEAR(bits_per_key(0.001) - bits_per_key(0.01), 4.7925, 0.001);
  EXPECT_NEAR(bits_per_key(0.0001) - bits_per_key(0.001), 4.7925, 0.001);
}

TEST(Sizing, OptimalBitsAndHashes) {
  EXPECT_EQ(optimal_bits(1'000'000, 0.01), 9'585'059u);
  EXPECT_EQ(optimal_hashes(9'585'059, 1'000'000), 7u);
  EXPECT_EQ(optimal_bits(1, 0.5), 2u);    // ceil(1.44)
  EXPECT_EQ(optimal_hashes(1, 100), 1u);  // never below one probe
  // 5,000,000 keys at 1%: about 6 MB.
  EXPECT_NEAR(optimal_bits(5'000'000, 0.01) / 8.0 / 1e6, 5.99, 0.01);
}

TEST(Sizing, FalsePositiveRate) {
  EXPECT_NEAR(false_positive_rate(1'000'000, 9'585'059, 7), 0.01, 0.0005);
  EXPECT_EQ(false_positive_rate(0, 1000, 3), 0.0);
  // (1 - e^{-kn/m})^k by hand for a small case.
  EXPECT_DOUBLE_EQ(false_positive_rate(10, 100, 2), std::pow(1 - std::exp(-0.2), 2));
  // More keys, higher rate.
  EXPECT_LT(false_positive_rate(100, 1000, 7), false_positive_rate(200, 1000, 7));
}

TEST(Sizing, CapacityForInvertsOptimalBits) {
  const std::uint64_t m = optimal_bits(123'456, 0.001);
  EXPECT_EQ(capacity_for(m, 0.001), 123'456u);
}

TEST(Sizing, FillEstimates) {
  EXPECT_DOUBLE_EQ(fpr_from_fill(0.5, 7), std::pow(0.5, 7));
  // X set bits after n keys is m(1 - e^{-kn/m}); the estimate inverts it.
  const double m = 1e6, k = 5, n = 100'000;
  const auto x = static_cast<std::uint64_t>(m * (1 - std::exp(-k * n / m)));
  EXPECT_NEAR(count_from_fill(x, 1'000'000, 5), n, 1.0);
  EXPECT_TRUE(std::isinf(count_from_fill(1000, 1000, 3)));
}

TEST(Sizing, InvalidParametersSayWhatAndWhy) {
  test::expect_invalid([] { optimal_bits(0, 0.01); }, "capacity = 0");
  test::expect_invalid([] { optimal_bits(10, 0.0); },
                       "fpr = 0 is invalid; allowed range is (0, 1)");
  test::expect_invalid([] { optimal_bits(10, 1.0); }, "fpr = 1 is invalid");
  test::expect_invalid([] { optimal_bits(10, -0.5); }, "fpr = -0.5");
  test::expect_invalid([] { optimal_bits(10, 1.5); }, "fpr = 1.5");
  test::expect_invalid([] { optimal_bits(10, std::nan("")); }, "fpr = nan");
  test::expect_invalid([] { optimal_bits(10, std::numeric_limits<double>::infinity()); },
                       "fpr = inf");
  test::expect_invalid([] { bits_per_key(2.0); }, "allowed range is (0, 1)");
  test::expect_invalid([] { optimal_hashes(0, 10); }, "m = 0");
  test::expect_invalid([] { optimal_hashes(10, 0); }, "n = 0");
  test::expect_invalid([] { false_positive_rate(10, 100, 0); }, "k = 0");
  test::expect_invalid([] { false_positive_rate(10, 0, 3); }, "m = 0");
  test::expect_invalid([] { capacity_for(100, 0.0); }, "fpr = 0");
  test::expect_invalid([] { optimal_bits(std::uint64_t{1} << 62, 0.01); },
                       "more than the maximum 2^48");
  test::expect_invalid([] { optimal_hashes(std::uint64_t{1} << 40, 1); },
                       "more than the maximum 255");
}
