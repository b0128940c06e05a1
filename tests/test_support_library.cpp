// The shared support target (support/): its key streams are fixed forever, since tests,
// benchmark tables and docs quote numbers measured on them; its helpers do what they say.
#include <gtest/gtest.h>
#include <bloomery/support/keys.hpp>
#include <bloomery/support/table.hpp>
#include <bloomery/support/temp_dir.hpp>
#include <bloomery/support/text.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "test_support.hpp"

using namespace bloomery::support;

TEST(SupportKeys, Splitmix64MatchesTheReferenceStream) {
  // The first outputs of the reference splitmix64 seeded with 0 (Vigna's splitmix64.c).
  std::uint64_t state = 0;
  EXPECT_EQ(splitmix64(state), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(splitmix64(state), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(splitmix64(state), 0x06c45d188009454fULL);
}

TEST(SupportKeys, RandomAccessEqualsTheSequentialStream) {
  for (const std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{1}, ~std::uint64_t{0}}) {
    std::uint64_t state = seed;
    for (std::uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(splitmix64_at(seed, i), splitmix64(state));
  }
  const auto keys = keys_at(7, 500, 10);
  for (std::uint64_t i = 0; i < 10; ++i) EXPECT_EQ(keys[i], splitmix64_at(7, 500 + i));
}

TEST(SupportKeys, PresentAndAbsentKeysNeverMeet) {
  const auto present = present_keys(20'000), absent = absent_keys(20'000);
  const std::unordered_set<std::uint64_t> seen(present.begin(), present.end());
  EXPECT_EQ(seen.size(), present.size());  // distinct: the finalizer is a bijection
  for (const auto k : absent) ASSERT_EQ(seen.count(k), 0u);
  EXPECT_TRUE(std::all_of(present.begin(), present.end(), [](auto k) { return k < top_bit; }));
  // Bit-identical to the stream they are cut from.
  std::uint64_t state = 1;
  EXPECT_EQ(present[0], splitmix64(state) & ~top_bit);
  EXPECT_EQ(present_keys(5, 9), present_keys(5, 9));
  EXPECT_NE(present_keys(5, 9), present_keys(5, 10));
}

TEST(SupportTempDir, IsCreatedEmptyAndRemovedWithItsContents) {
  std::filesystem::path where;
  {
    temp_dir a("bloomery-support-test"), b("bloomery-support-test");
    where = a.path();
    EXPECT_NE(a.path(), b.path());
    ASSERT_TRUE(std::filesystem::is_directory(where));
    EXPECT_TRUE(std::filesystem::is_empty(where));
    EXPECT_EQ((a / "f").parent_path(), where);
    std::filesystem::create_directories(a / "sub");
    std::ofstream(a / "sub" / "file") << "data";
  }
  EXPECT_FALSE(std::filesystem::exists(where));
  std::filesystem::path kept;
  {
    temp_dir c("bloomery-support-test");
    c.keep();
    kept = c.path();
  }
  EXPECT_TRUE(std::filesystem::is_directory(kept));
  std::filesystem::remove_all(kept);
}

TEST(SupportText, FormatsNumbers) {
  EXPECT_EQ(grouped(0), "0");
  EXPECT_EQ(grouped(999), "999");
  EXPECT_EQ(grouped(1000), "1,000");
  EXPECT_EQ(grouped(1234567), "1,234,567");
  EXPECT_EQ(fmt("%d-%s", 7, "x"), "7-x");
  const std::string long_text(1000, 'y');
  EXPECT_EQ(fmt("<%s>", long_text.c_str()), "<" + long_text + ">");  // longer than any buffer
  EXPECT_EQ(si_count(950), "950");
  EXPECT_EQ(si_count(12'345), "12.3k");
  EXPECT_EQ(si_count(4.2e6), "4.2M");
}

TEST(SupportTable, AlignsColumnsAndUnderlinesTheHeader) {
  text_table t({"k", "value"}, {.indent = 1, .gap = 2});
  t.row({"1", "10"});
  t.row({"12", "3"});
  EXPECT_EQ(t.str(),
            "  k  value\n"
            " --  -----\n"
            "  1     10\n"
            " 12      3\n");
  text_table labels({.indent = 2, .gap = 3, .first_left = true});
  labels.row({"name", "1"});
  labels.row({"n", "100", ""});
  EXPECT_EQ(labels.str(),
            "  name     1\n"
            "  n      100\n");
}

// The typed suite's FPR checks stand on these bounds (tests/test_support.hpp).
TEST(SupportBinomial, BoundsAreTheExactTails) {
  // Binomial(10, 1/2): P(X > 9) = 1/1024 <= 1e-3 < P(X > 8) = 11/1024, and symmetrically below.
  EXPECT_EQ(bloomery::test::binomial_upper_bound(10, 0.5, 1e-3), 9u);
  EXPECT_EQ(bloomery::test::binomial_lower_bound(10, 0.5, 1e-3), 1u);
  EXPECT_EQ(bloomery::test::binomial_upper_bound(10, 0.5, 0.5), 5u);  // P(X > 5) = 386/1024
  // Far out in a large binomial, about six standard deviations at 1e-9.
  const double mean = 10'000, sd = std::sqrt(1e6 * 0.01 * 0.99);
  const auto hi = static_cast<double>(bloomery::test::binomial_upper_bound(1'000'000, 0.01));
  const auto lo = static_cast<double>(bloomery::test::binomial_lower_bound(1'000'000, 0.01));
  EXPECT_GT(hi, mean + 5.5 * sd);
  EXPECT_LT(hi, mean + 6.5 * sd);
  EXPECT_LT(lo, mean - 5.5 * sd);
  EXPECT_GT(lo, mean - 6.5 * sd);
  EXPECT_EQ(bloomery::test::binomial_upper_bound(100, 0.0), 0u);
  EXPECT_EQ(bloomery::test::binomial_lower_bound(100, 1.0), 100u);
}
