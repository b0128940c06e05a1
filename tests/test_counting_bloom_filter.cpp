#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <bloomery/bloomery.hpp>
#include <bloomery/counting_bloom_filter.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace bloomery;
using namespace bloomery::support;
using removal = counting_bloom_filter::remove_result;

namespace {

counting_bloom_filter small_filter(hasher h = {}, std::uint32_t counter_bits = 4) {
  counting_bloom_filter f({.capacity = 100, .fpr = 0.01}, {.counter_bits = counter_bits},
                          std::move(h));
  for (int i = 0; i < 100; ++i) f.insert("key-" + std::to_string(i));
  return f;
}

template <class Fn>
std::string error_of(Fn&& fn) {
  return test::message_of<std::exception>(fn);
}

// The positions of a key, as the filter derives them.
std::vector<std::uint64_t> counter_indexes(const counting_bloom_filter& f, std::uint64_t key) {
  std::vector<std::uint64_t> out;
  detail::for_each_position(hash_key(f.hash(), key), f.counter_count(), f.hash_count(),
                            [&](std::uint64_t p) { out.push_back(p); });
  return out;
}

}  // namespace

TEST(CountingBloomFilter, SizedExactlyLikeTheClassicFilter) {
  const target t{.capacity = 1'000'000, .fpr = 0.01};
  counting_bloom_filter f(t);
  const bloom_filter classic(t);
  EXPECT_EQ(f.counter_count(), classic.bit_count());
  EXPECT_EQ(f.hash_count(), classic.hash_count());
  EXPECT_EQ(f.counter_bits(), 4u);
  EXPECT_EQ(f.counter_max(), 15u);
  EXPECT_EQ(f.capacity(), 1'000'000u);
  EXPECT_DOUBLE_EQ(f.target_fpr(), 0.01);
  EXPECT_EQ(f.size_in_bytes(), (f.counter_count() * 4 + 511) / 512 * 64);
  EXPECT_EQ(f.size_in_bytes(), counting_bloom_filter::plan(t).bytes);
  EXPECT_EQ(counting_bloom_filter::plan(t).parameters, "m=9585059 k=7 counter_bits=4");
  EXPECT_DOUBLE_EQ(counting_bloom_filter::plan(t).expected_fpr, bloom_filter::plan(t).expected_fpr);

  counting_bloom_filter wide(t, {.counter_bits = 8}, 7);
  EXPECT_EQ(wide.counter_bits(), 8u);
  EXPECT_EQ(wide.counter_max(), 255u);
  EXPECT_EQ(wide.hash().seed(), 7u);
  EXPECT_EQ(wide.size_in_bytes(), (wide.counter_count() * 8 + 511) / 512 * 64);
  EXPECT_EQ(wide.size_in_bytes(), counting_bloom_filter::plan(t, {.counter_bits = 8}).bytes);

  // Same positions as the classic filter: keys make nonzero exactly the counters whose bits they
  // set in a classic filter of the same target.
  counting_bloom_filter c({.capacity = 1000, .fpr = 0.01});
  bloom_filter b({.capacity = 1000, .fpr = 0.01});
  for (auto k : present_keys(1000)) c.insert(k), b.insert(k);
  EXPECT_EQ(c.nonzero_count(), b.set_bit_count());
  for (std::uint64_t i = 0; i < c.counter_count(); ++i) {
    ASSERT_EQ(c.counter(i) != 0, ((b.words()[i >> 6] >> (i & 63)) & 1) != 0) << i;
  }
}

TEST(CountingBloomFilter, ExplicitParameters) {
  counting_bloom_filter f({.counters = 1000, .hashes = 3, .counter_bits = 8}, 99);
  EXPECT_EQ(f.counter_count(), 1000u);
  EXPECT_EQ(f.hash_count(), 3u);
  EXPECT_EQ(f.counter_bits(), 8u);
  EXPECT_EQ(f.capacity(), 231u);  // floor(1000 ln2 / 3), as the classic filter
  EXPECT_DOUBLE_EQ(f.target_fpr(), false_positive_rate(231, 1000, 3));
  EXPECT_EQ(f.size_in_bytes(), 1024u);  // 8000 bits -> 16 lines
}

// The seed's claim: a counting filter costs about 4x the classic filter at the same FPR.
TEST(CountingBloomFilter, AboutFourTimesTheMemoryOfTheClassicFilter) {
  for (const target t : {target{1'000'000, 0.01}, target{5'000'000, 0.01}, target{100'000, 0.001},
                         target{12'345, 0.05}}) {
    const double classic = static_cast<double>(bloom_filter::plan(t).bytes);
    const double four = static_cast<double>(counting_bloom_filter(t).size_in_bytes());
    const double eight = static_cast<double>(counting_bloom_filter::plan(t, {8}).bytes);
    // Both round up to whole 64-byte lines; otherwise the ratio is exactly the counter width.
    EXPECT_NEAR(four / classic, 4.0, 4 * 64 / classic) << t.capacity << " " << t.fpr;
    EXPECT_NEAR(eight / classic, 8.0, 8 * 64 / classic) << t.capacity << " " << t.fpr;
    std::printf("n=%llu p=%g: classic %.3f bits/key, counting-4 %.3f (x%.4f), counting-8 %.3f\n",
                static_cast<unsigned long long>(t.capacity), t.fpr,
                8 * classic / static_cast<double>(t.capacity),
                8 * four / static_cast<double>(t.capacity), four / classic,
                8 * eight / static_cast<double>(t.capacity));
  }
  EXPECT_NEAR(counting_bloom_filter::plan({1'000'000, 0.01}).bits_per_key, 4 * 9.585, 0.01);
}

TEST(CountingBloomFilter, InsertThenRemoveEverythingLeavesAnEmptyFilter) {
  for (std::uint32_t bits : {4u, 8u}) {
    counting_bloom_filter f({.capacity = 10'000, .fpr = 0.01}, {.counter_bits = bits});
    const counting_bloom_filter empty = f;
    const auto keys = present_keys(10'000);
    for (auto k : keys) EXPECT_FALSE(f.may_contain(k));
    for (auto k : keys) f.insert(k);
    for (auto k : keys) ASSERT_TRUE(f.may_contain(k));
    EXPECT_EQ(f.inserted(), 10'000u);
    EXPECT_EQ(f.saturated_count(), 0u);
    EXPECT_NE(f, empty);
    // Remove half: the other half stays, and the removed half is mostly gone.
    for (std::size_t i = 0; i < 5'000; ++i) ASSERT_EQ(f.remove(keys[i]), removal::removed);
    for (std::size_t i = 5'000; i < 10'000; ++i) ASSERT_TRUE(f.may_contain(keys[i]));
    std::size_t still = 0;
    for (std::size_t i = 0; i < 5'000; ++i) still += f.may_contain(keys[i]);
    EXPECT_LT(still, 5'000u / 50);  // the FPR of a half-full filter (~0.05%), with margin
    EXPECT_EQ(f.inserted(), 5'000u);
    for (std::size_t i = 5'000; i < 10'000; ++i) ASSERT_EQ(f.remove(keys[i]), removal::removed);
    EXPECT_EQ(f, empty) << "every counter back to zero";
    EXPECT_EQ(f.nonzero_count(), 0u);
    EXPECT_EQ(f.inserted(), 0u);
    for (auto k : keys) EXPECT_FALSE(f.may_contain(k));
  }
}

TEST(CountingBloomFilter, RemovingAnAbsentKeyIsRefusedAndChangesNothing) {
  counting_bloom_filter f({.capacity = 1000, .fpr = 0.01});
  for (auto k : present_keys(1000)) f.insert(k);
  const counting_bloom_filter before = f;
  std::size_t refused = 0;
  for (auto k : absent_keys(2000)) {
    if (f.may_contain(k)) continue;  // a false positive cannot be told from a present key
    ASSERT_EQ(f.remove(k), removal::not_present);
    ++refused;
  }
  EXPECT_GT(refused, 1900u);
  EXPECT_EQ(f, before);
  EXPECT_EQ(f.inserted(), 1000u);
  // An empty filter refuses everything.
  counting_bloom_filter empty({.capacity = 10, .fpr = 0.1});
  EXPECT_EQ(empty.remove("anything"), removal::not_present);
  EXPECT_EQ(empty.inserted(), 0u);
}

TEST(CountingBloomFilter, DuplicatesAreCountedAndRemovedOneAtATime) {
  counting_bloom_filter f({.capacity = 1000, .fpr = 0.01});
  for (int i = 0; i < 3; ++i) f.insert("dup");
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(f.may_contain("dup"));
    ASSERT_EQ(f.remove("dup"), removal::removed) << i;
  }
  EXPECT_FALSE(f.may_contain("dup"));
  EXPECT_EQ(f.remove("dup"), removal::not_present);
  EXPECT_EQ(f.nonzero_count(), 0u);
}

// Two probes of one key can share a counter. A key whose shared counter holds less than its probe
// multiplicity there was never inserted: remove refuses it although may_contain says "possibly".
TEST(CountingBloomFilter, RemoveChecksProbeMultiplicity) {
  counting_bloom_filter f({.counters = 2, .hashes = 2});
  std::uint64_t twice = 0, spread = 0;  // a key probing {0, 0}, and one probing {0, 1}
  bool have_twice = false, have_spread = false;
  for (std::uint64_t key = 0; !(have_twice && have_spread); ++key) {
    const auto p = counter_indexes(f, key);
    if (p[0] == 0 && p[1] == 0 && !have_twice) twice = key, have_twice = true;
    if (p[0] != p[1] && !have_spread) spread = key, have_spread = true;
  }
  f.insert(spread);
  EXPECT_EQ(f.counter(0), 1u);
  EXPECT_EQ(f.counter(1), 1u);
  EXPECT_TRUE(f.may_contain(twice));
  const counting_bloom_filter before = f;
  EXPECT_EQ(f.remove(twice), removal::not_present);
  EXPECT_EQ(f, before);
  f.insert(twice);
  EXPECT_EQ(f.counter(0), 3u);
  EXPECT_EQ(f.remove(twice), removal::removed);
  EXPECT_EQ(f, before);
  EXPECT_TRUE(f.may_contain(spread));
}

TEST(CountingBloomFilter, SaturatedCountersStaySetForever) {
  for (std::uint32_t bits : {4u, 8u}) {
    counting_bloom_filter f({.capacity = 1000, .fpr = 0.01}, {.counter_bits = bits});
    const std::uint64_t max = f.counter_max();
    const auto p = counter_indexes(f, 42);
    const std::set<std::uint64_t> distinct(p.begin(), p.end());
    for (std::uint64_t i = 0; i < max + 20; ++i) f.insert(42);
    for (auto q : distinct) EXPECT_EQ(f.counter(q), max) << "never incremented past the maximum";
    EXPECT_EQ(f.saturated_count(), distinct.size());
    EXPECT_EQ(f.nonzero_count(), distinct.size());
    // Every remove succeeds (the counters are nonzero) but a saturated counter never moves.
    for (std::uint64_t i = 0; i < max + 20; ++i) ASSERT_EQ(f.remove(42), removal::removed);
    for (auto q : distinct) EXPECT_EQ(f.counter(q), max);
    EXPECT_TRUE(f.may_contain(42)) << "the key can no longer be removed: its counters are stuck";
    EXPECT_EQ(f.inserted(), 0u);
    f.clear();
    EXPECT_EQ(f.saturated_count(), 0u);
    EXPECT_FALSE(f.may_contain(42));
  }
}

// A saturated counter shared with other keys never turns them into false negatives.
TEST(CountingBloomFilter, SaturationNeverCausesFalseNegatives) {
  counting_bloom_filter f({.counters = 64, .hashes = 3});
  const auto keys = present_keys(100);
  for (int round = 0; round < 3; ++round) {
    for (auto k : keys) f.insert(k);
  }
  EXPECT_GT(f.saturated_count(), 0u);  // a mix of saturated and exact counters
  EXPECT_LT(f.saturated_count(), 64u);
  // Remove two of the three copies of every key, then check the rest (and the third copies).
  for (int round = 0; round < 2; ++round) {
    for (auto k : keys) ASSERT_EQ(f.remove(k), removal::removed);
  }
  for (auto k : keys) ASSERT_TRUE(f.may_contain(k));
}

TEST(CountingBloomFilter, UnionAddsCountersAndEqualsOneFilterBuiltFromBoth) {
  const auto a_keys = present_keys(30'000, 10), b_keys = present_keys(30'000, 11);
  counting_bloom_filter a({.capacity = 60'000, .fpr = 0.01}), b = a, both = a;
  for (auto k : a_keys) a.insert(k), both.insert(k);
  for (auto k : b_keys) b.insert(k), both.insert(k);
  const counting_bloom_filter u = a | b;
  a |= b;
  EXPECT_EQ(a, both);
  EXPECT_EQ(u, both);
  EXPECT_EQ(a.inserted(), 60'000u);
  // A union's keys can be removed again, one side at a time.
  for (auto k : b_keys) ASSERT_EQ(a.remove(k), removal::removed);
  for (auto k : a_keys) ASSERT_TRUE(a.may_contain(k));
  for (auto k : a_keys) ASSERT_EQ(a.remove(k), removal::removed);
  EXPECT_EQ(a.nonzero_count(), 0u);
}

TEST(CountingBloomFilter, UnionSaturates) {
  for (std::uint32_t bits : {4u, 8u}) {
    counting_bloom_filter a({.counters = 64, .hashes = 2, .counter_bits = bits}), b = a, both = a;
    const std::uint64_t half = a.counter_max() / 2 + 3;  // two halves overflow the counter
    for (std::uint64_t i = 0; i < half; ++i) a.insert(7), b.insert(7), both.insert(7);
    for (std::uint64_t i = 0; i < half; ++i) both.insert(7);
    for (std::uint64_t i = 0; i < 5; ++i) b.insert(9), both.insert(9);
    a |= b;
    EXPECT_EQ(a, both);
    for (auto p : counter_indexes(a, 7)) EXPECT_EQ(a.counter(p), a.counter_max());
    EXPECT_GT(a.saturated_count(), 0u);
  }
  // The lane arithmetic on whole words: every pair of 4-bit and 8-bit values.
  for (std::uint32_t bits : {4u, 8u}) {
    const detail::counter_layout c(bits);
    for (std::uint64_t x = 0; x <= c.max; ++x) {
      for (std::uint64_t y = 0; y <= c.max; ++y) {
        // Lane 0 holds x+y, lane 1 the swapped pair, the top lane (x, max) to test the carry out.
        const std::uint32_t top = 64 - bits;
        const std::uint64_t a = x | (y << bits) | (x << top), b = y | (x << bits) | (c.max << top);
        const std::uint64_t s = detail::counter_add_saturating(a, b, c);
        const std::uint64_t want = std::min(c.max, x + y);
        ASSERT_EQ(s & c.max, want) << x << "+" << y;
        ASSERT_EQ((s >> bits) & c.max, want);
        ASSERT_EQ(s >> top, c.max);
        for (std::uint32_t lane = 2; lane < 64 / bits - 1; ++lane) {
          ASSERT_EQ((s >> (lane * bits)) & c.max, 0u);
        }
      }
    }
  }
}

TEST(CountingBloomFilter, MergingIncompatibleFiltersNamesTheDifference) {
  const counting_bloom_filter base({.counters = 1000, .hashes = 3});
  const auto expect_merge_error = [&](const counting_bloom_filter& other,
                                      const std::string& needle) {
    counting_bloom_filter a = base;
    const std::string msg = error_of([&] { a |= other; });
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    EXPECT_EQ(a, base);
    EXPECT_EQ(base.incompatibility(other).empty(), false);
  };
  expect_merge_error(counting_bloom_filter({.counters = 1001, .hashes = 3}),
                     "counters differ (1000 vs 1001)");
  expect_merge_error(counting_bloom_filter({.counters = 1000, .hashes = 4}),
                     "hashes differ (3 vs 4)");
  expect_merge_error(counting_bloom_filter({.counters = 1000, .hashes = 3, .counter_bits = 8}),
                     "counter bits differ (4 vs 8)");
  expect_merge_error(counting_bloom_filter({.counters = 1000, .hashes = 3}, 5), "seed differs");
  expect_merge_error(counting_bloom_filter({.counters = 1000, .hashes = 3}, random_key()),
                     "hash algorithm differs");
  EXPECT_EQ(base.incompatibility(base), "");
}

// Measured FPR against the classic formula (same m, k, positions), with the statistical tolerance
// of test_support.hpp; plus the filter's own estimates.
struct counting_case {
  std::uint64_t n;
  double p;
  std::uint32_t bits;
};
class CountingFpr : public ::testing::TestWithParam<counting_case> {};

TEST_P(CountingFpr, MeasuredRateMatchesTheClassicModel) {
  const auto [n, p, bits] = GetParam();
  counting_bloom_filter f({.capacity = n, .fpr = p}, {.counter_bits = bits});
  for (auto k : present_keys(n)) f.insert(k);
  const double measured =
      test::expect_classic_fpr(f, n, f.counter_count(), f.hash_count(), 400'000);
  const double theory = false_positive_rate(n, f.counter_count(), f.hash_count());
  EXPECT_NEAR(static_cast<double>(f.approximate_count()), static_cast<double>(n), 0.05 * n);
  EXPECT_FALSE(f.is_over_capacity());
  std::printf("counting n=%llu p=%g b=%u: %.3f bits/key, measured fpr %.5f, model %.5f\n",
              static_cast<unsigned long long>(n), p, bits,
              8.0 * static_cast<double>(f.size_in_bytes()) / static_cast<double>(n), measured,
              theory);
}

INSTANTIATE_TEST_SUITE_P(Sizes, CountingFpr,
                         ::testing::Values(counting_case{10'000, 0.1, 4},
                                           counting_case{10'000, 0.01, 4},
                                           counting_case{200'000, 0.01, 4},
                                           counting_case{200'000, 0.001, 4},
                                           counting_case{50'000, 0.01, 8}));

TEST(CountingBloomFilter, FullFilterEstimatesSaturate) {
  test::expect_estimates_saturate(counting_bloom_filter({.counters = 64, .hashes = 2}));
}

TEST(CountingBloomFilter, MayContainManyAgreesWithMayContain) {
  // Small (plain loop) and over 1 MiB (hash a block, prefetch, probe).
  for (const std::uint64_t n : {std::uint64_t{20'000}, std::uint64_t{300'000}}) {
    counting_bloom_filter f({.capacity = n, .fpr = 0.01});
    const auto keys = present_keys(n);
    for (auto k : keys) f.insert(k);
    if (n > 100'000) {
      ASSERT_GE(f.size_in_bytes(), detail::batch_min_bytes);
    }
    test::expect_batched_matches_single_mixed(f, keys, 20'000);
  }
  counting_bloom_filter f({.capacity = 100, .fpr = 0.01});
  f.insert("b");
  EXPECT_EQ(test::expect_batched_output_checked(f), 1u);
}

TEST(CountingBloomFilter, InvalidParametersThrowWithUsefulMessages) {
  // Targets ({.capacity, .fpr}) are checked for every filter in test_filter_family.cpp.
  test::expect_invalid(
      [] { counting_bloom_filter({.capacity = 10, .fpr = 0.01}, {.counter_bits = 5}); },
      "counter_bits = 5 is invalid; allowed values are 4 and 8");
  test::expect_invalid(
      [] { counting_bloom_filter({.counters = 10, .hashes = 2, .counter_bits = 16}); },
      "counter_bits = 16");
  test::expect_invalid([] { counting_bloom_filter({.counters = 0, .hashes = 3}); }, "counters = 0");
  test::expect_invalid([] { counting_bloom_filter({.counters = 100, .hashes = 0}); }, "hashes = 0");
  test::expect_invalid([] { counting_bloom_filter({.counters = 100, .hashes = 256}); },
                       "allowed range is [1, 255]");
  test::expect_invalid(
      [] { (void)counting_bloom_filter::plan({.capacity = 10, .fpr = 0.01}, {3}); },
      "counter_bits = 3");
}

// --- file format ---

TEST(CountingFormat, SaveLoadSerializeAndMapRoundTrips) {
  temp_dir dir;
  for (const bool keyed : {false, true}) {
    for (const std::uint32_t bits : {4u, 8u}) {
      counting_bloom_filter f({.capacity = 5'000, .fpr = 0.01}, {.counter_bits = bits},
                              keyed ? hasher(random_key()) : hasher(17));
      const auto keys = present_keys(5'000);
      for (auto k : keys) f.insert(k);
      for (int i = 0; i < 40; ++i) f.insert(keys[0]);  // some saturated counters (4-bit)
      ASSERT_EQ(f.remove(keys[1]), removal::removed);
      const auto g = test::expect_saved_copy(f, dir / "c.bloom");
      EXPECT_EQ(g.counter_bits(), bits);

      const auto mapped = map_file<counting_bloom_filter>(dir / "c.bloom");
      EXPECT_EQ(mapped->counter_count(), f.counter_count());
      EXPECT_EQ(mapped->counter_bits(), bits);
      EXPECT_EQ(mapped->inserted(), f.inserted());
      EXPECT_EQ(mapped->approximate_count(), f.approximate_count());
      EXPECT_EQ(mapped->saturated_count(), f.saturated_count());
      for (std::size_t i = 2; i < keys.size(); ++i) ASSERT_TRUE(mapped->may_contain(keys[i]));
      const auto absent = absent_keys(20'000);
      std::vector<bool> a(absent.size()), b(absent.size()), c(absent.size());
      EXPECT_EQ(mapped->may_contain_many(absent, a), f.may_contain_many(absent, b));
      EXPECT_EQ(g.may_contain_many(absent, c), f.may_contain_many(absent, b));
      EXPECT_EQ(a, b);
      EXPECT_EQ(c, b);
      // The loaded copy is a full filter again: it can still remove.
      auto h = g;
      EXPECT_EQ(h.remove(keys[2]), removal::removed);
    }
  }
}

TEST(CountingFormat, LayoutIsDocumented) {
  // docs/counting-bloom-filter.md: the parameter block at offset 128, the payload at 192.
  const counting_bloom_filter f = small_filter(5);
  const auto bytes = serialize(f);
  ASSERT_EQ(bytes.size(), 192 + f.size_in_bytes());
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 12), 3u);    // kind: counting
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 20), 32u);   // parameter block size
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 64), 100u);  // element count
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 128), f.counter_count());
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 136), f.hash_count());
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 140), 4u);
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 144), 100u);
  EXPECT_EQ(detail::get<double>(bytes.data() + 152), 0.01);
  // Payload: 4-bit counter i is the low nibble of byte i/2 for even i, the high nibble for odd i.
  for (std::uint64_t i = 0; i < f.counter_count(); ++i) {
    const auto byte = std::to_integer<std::uint64_t>(bytes[192 + i / 2]);
    ASSERT_EQ(i % 2 == 0 ? byte & 15 : byte >> 4, f.counter(i)) << i;
  }
  const counting_bloom_filter w = small_filter(5, 8);
  const auto wide = serialize(w);
  EXPECT_EQ(detail::get<std::uint32_t>(wide.data() + 140), 8u);
  for (std::uint64_t i = 0; i < w.counter_count(); ++i) {
    ASSERT_EQ(std::to_integer<std::uint64_t>(wide[192 + i]), w.counter(i)) << i;
  }
}

TEST(CountingFormat, EveryTruncationAndFlippedByteIsRejected) {
  const auto bytes = serialize(small_filter());
  test::expect_all_damage_rejected<counting_bloom_filter>(bytes);
}

TEST(CountingFormat, OtherKindsAreRejected) {
  bloom_filter classic({.capacity = 100, .fpr = 0.01});
  classic.insert("x");
  const auto as_counting =
      error_of([&] { (void)deserialize<counting_bloom_filter>(serialize(classic)); });
  EXPECT_NE(as_counting.find("holds a bloom filter, not a counting filter"), std::string::npos)
      << as_counting;
  const auto as_bloom =
      error_of([] { (void)deserialize<bloom_filter>(serialize(small_filter())); });
  EXPECT_NE(as_bloom.find("holds a counting filter, not a bloom filter"), std::string::npos)
      << as_bloom;
  temp_dir dir;
  save(classic, dir / "classic.bloom");
  EXPECT_THROW(load<counting_bloom_filter>(dir / "classic.bloom"), format_error);
  EXPECT_THROW(map_file<counting_bloom_filter>(dir / "classic.bloom"), format_error);
}

TEST(CountingFormat, ValuesAreValidatedEvenWithAGoodChecksum) {
  const auto good = serialize(small_filter());
  const auto with = [&](std::size_t offset, auto value) {
    return test::edited_image_error<counting_bloom_filter>(good, offset, value);
  };
  EXPECT_NE(with(128, std::uint64_t{0}).find("counters = 0 is invalid"), std::string::npos);
  EXPECT_NE(with(128, std::uint64_t{5000}).find("payload has"), std::string::npos);
  EXPECT_NE(with(136, std::uint32_t{0}).find("hashes = 0 is invalid"), std::string::npos);
  EXPECT_NE(with(136, std::uint32_t{1000}).find("hashes = 1000 is invalid"), std::string::npos);
  EXPECT_NE(with(140, std::uint32_t{5}).find("counter_bits = 5 is invalid; allowed values are 4"),
            std::string::npos);
  EXPECT_NE(with(140, std::uint32_t{8}).find("payload has"), std::string::npos);
  EXPECT_NE(with(144, std::uint64_t{0}).find("capacity is zero"), std::string::npos);
  EXPECT_NE(with(152, 1.5).find("target fpr"), std::string::npos);
  EXPECT_NE(with(152, std::nan("")).find("target fpr"), std::string::npos);
  // A counter past m (in the last line's padding) is set.
  const counting_bloom_filter f = small_filter();
  ASSERT_LT(f.counter_count() * 4, f.size_in_bytes() * 8);
  EXPECT_NE(with(192 + f.size_in_bytes() - 1, std::uint8_t{0x10}).find("padding counters"),
            std::string::npos);
}

// --- properties ---

namespace {

struct op {
  int kind;               // 0 insert, 1 remove, 2 query
  std::uint32_t key;      // from a small universe, so duplicates are common
  std::uint32_t repeats;  // inserts and removes run this many times: counters saturate
};

}  // namespace

// Random sequences of inserts, removes and queries against an exact multiset: every key still in
// the model answers "possibly present", removes of keys in the model always succeed, removes of
// certainly absent keys are refused and change nothing. Tiny filters make counters collide and
// saturate (4-bit and 8-bit).
RC_GTEST_PROP(CountingProperties, AgreesWithAMultisetModel, ()) {
  const auto bits = *rc::gen::element(4u, 8u);
  const auto m = *rc::gen::inRange<std::uint64_t>(1, 300);
  const auto k = *rc::gen::inRange<std::uint32_t>(1, 9);
  const auto universe = *rc::gen::inRange<std::uint32_t>(1, 80);
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const auto ops = *rc::gen::container<std::vector<op>>(rc::gen::construct<op>(
      rc::gen::inRange(0, 3), rc::gen::inRange<std::uint32_t>(0, universe),
      rc::gen::weightedOneOf<std::uint32_t>(
          {{6, rc::gen::just(1u)}, {1, rc::gen::inRange<std::uint32_t>(2, 300)}})));
  counting_bloom_filter f({.counters = m, .hashes = k, .counter_bits = bits}, seed);
  std::multiset<std::uint32_t> model;
  for (const op& o : ops) {
    for (std::uint32_t r = 0; r < (o.kind == 2 ? 1 : o.repeats); ++r) {
      if (o.kind == 0) {
        f.insert(o.key);
        model.insert(o.key);
      } else if (o.kind == 1) {
        if (const auto it = model.find(o.key); it != model.end()) {
          RC_ASSERT(f.remove(o.key) == removal::removed);
          model.erase(it);
        } else if (!f.may_contain(o.key)) {
          const counting_bloom_filter before = f;
          RC_ASSERT(f.remove(o.key) == removal::not_present);
          RC_ASSERT(f == before);
        }
        // else: a false positive. Removing a key never inserted is the caller's error (it would
        // take counts from other keys), so the model never does it.
      } else if (model.count(o.key) != 0) {
        RC_ASSERT(f.may_contain(o.key));
      }
    }
    for (auto it = model.begin(); it != model.end(); it = model.upper_bound(*it)) {
      RC_ASSERT(f.may_contain(*it));
    }
    RC_ASSERT(f.inserted() == model.size());
  }
  RC_CLASSIFY(f.saturated_count() > 0, "saturated");
}

RC_GTEST_PROP(CountingProperties, NoFalseNegativesThroughUnionSaveLoadAndMap, ()) {
  const auto bits = *rc::gen::element(4u, 8u);
  const auto m = *rc::gen::inRange<std::uint64_t>(1, 3000);
  const auto k = *rc::gen::inRange<std::uint32_t>(1, 12);
  const auto a_keys = *rc::gen::arbitrary<std::vector<std::string>>();
  const auto b_keys = *rc::gen::arbitrary<std::vector<std::int64_t>>();
  const bool keyed = *rc::gen::arbitrary<bool>();
  const hasher h = keyed ? hasher(random_key()) : hasher(*rc::gen::arbitrary<std::uint64_t>());
  counting_bloom_filter a({.counters = m, .hashes = k, .counter_bits = bits}, h), b = a, both = a;
  for (const auto& key : a_keys) a.insert(key), both.insert(key);
  for (const auto key : b_keys) b.insert(key), both.insert(key);
  a |= b;
  RC_ASSERT(a == both);
  temp_dir dir;
  save(a, dir / "f.bloom");
  const auto loaded = load<counting_bloom_filter>(dir / "f.bloom");
  const auto mapped = map_file<counting_bloom_filter>(dir / "f.bloom");
  RC_ASSERT(loaded == a);
  std::vector<bool> out(a_keys.size());
  RC_ASSERT(mapped->may_contain_many(a_keys, out) == a_keys.size());
  for (const auto& key : a_keys) RC_ASSERT(loaded.may_contain(key) && mapped->may_contain(key));
  for (const auto key : b_keys) RC_ASSERT(loaded.may_contain(key) && mapped->may_contain(key));
}
