#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <bloomery/bloomery.hpp>
#include <bloomery/scalable_bloom_filter.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace bloomery;
using namespace bloomery::support;
using test::counted_key;
using test::counted_key_hashes;

namespace {

template <class Fn>
std::string error_of(Fn&& fn) {
  return test::message_of<std::exception>(fn);
}

// A filter with `subs` sub-filters, the last one partly filled.
scalable_bloom_filter grown_filter(std::uint64_t n0, std::size_t keys, hasher h = {}) {
  scalable_bloom_filter f({.capacity = n0, .fpr = 0.01}, std::move(h));
  for (auto k : present_keys(keys, 5)) f.insert(k);
  return f;
}

// The compound rate predicted from each sub-filter's actual key count, 1 - prod(1 - p(n_i, m_i,
// k_i)), and the spread of a filter's true rate around it (test_support.hpp's model term, summed
// over sub-filters).
struct compound_model {
  double fpr = 0;
  double sd = 0;
};
compound_model model_of(const scalable_bloom_filter& f) {
  double none = 1, var = 0;
  for (std::size_t i = 0; i < f.sub_filter_count(); ++i) {
    const auto s = f.sub_filter(i);
    if (s.inserted() == 0) continue;
    const double p = false_positive_rate(s.inserted(), s.bit_count(), s.hash_count());
    none *= 1 - p;
    const double sd = test::fpr_tolerance(p, std::uint64_t{1} << 62, s.bit_count(), s.hash_count(),
                                          s.inserted()) /
                      5;
    var += sd * sd;
  }
  return {1 - none, std::sqrt(var)};
}

}  // namespace

TEST(ScalableBloomFilter, StartsWithOneClassicSubFilterSizedForTheInitialCapacity) {
  const target t{.capacity = 10'000, .fpr = 0.01};
  scalable_bloom_filter f(t);
  EXPECT_EQ(f.sub_filter_count(), 1u);
  EXPECT_EQ(f.options().growth, 2.0);
  EXPECT_EQ(f.options().tightening, 0.85);
  EXPECT_EQ(f.capacity(), 10'000u);
  EXPECT_EQ(f.current_capacity(), 10'000u);
  EXPECT_EQ(f.target_fpr(), 0.01);
  EXPECT_DOUBLE_EQ(f.current_fpr_bound(), 0.01 * (1 - 0.85));
  EXPECT_EQ(f.hash().seed(), default_seed);
  // The first sub-filter is the classic filter for (n0, p (1 - r)).
  const bloom_filter classic({.capacity = 10'000, .fpr = 0.01 * (1 - 0.85)});
  const auto first = f.sub_filter(0);
  EXPECT_EQ(first.bit_count(), classic.bit_count());
  EXPECT_EQ(first.hash_count(), classic.hash_count());
  EXPECT_EQ(first.capacity(), 10'000u);
  EXPECT_DOUBLE_EQ(first.target_fpr(), 0.0015);
  EXPECT_EQ(f.size_in_bytes(), classic.size_in_bytes());
  const filter_plan plan = scalable_bloom_filter::plan(t);
  EXPECT_EQ(plan.bytes, f.size_in_bytes());
  EXPECT_EQ(plan.parameters, "s=2 r=0.84999999999999998 m0=" + std::to_string(classic.bit_count()) +
                                 " k0=" + std::to_string(classic.hash_count()));
  EXPECT_NEAR(plan.expected_fpr, 0.0015, 0.0002);
  EXPECT_NEAR(plan.bits_per_key, bits_per_key(0.0015), 0.1);  // 13.55 bits/key at first
  EXPECT_THROW(f.sub_filter(1), std::out_of_range);
}

// Insert 50x the initial capacity: no false negatives, the measured rate below the bound (and at
// the compound model), the count estimate within 5%, and as many sub-filters as the growth says.
struct growth_case {
  double growth;
  std::size_t expected_subs;  // smallest L with n0 (s^L - 1) / (s - 1) >= 50 n0
};
class ScalableGrowth : public ::testing::TestWithParam<growth_case> {};

TEST_P(ScalableGrowth, FiftyTimesTheInitialCapacityStaysUnderTheBound) {
  const auto [growth, expected_subs] = GetParam();
  const std::uint64_t n0 = 2'000;
  const double p = 0.01;
  scalable_bloom_filter f({.capacity = n0, .fpr = p}, {.growth = growth});
  const auto keys = present_keys(50 * n0);
  std::size_t added = 0;
  for (auto k : keys) added += f.check_and_insert(k);
  EXPECT_EQ(f.inserted(), added);
  EXPECT_GT(added, keys.size() * 99 / 100);  // only false positives are skipped (rate < p)
  for (auto k : keys) ASSERT_TRUE(f.may_contain(k));

  ASSERT_EQ(f.sub_filter_count(), expected_subs);
  double cap = n0, fpr = p * (1 - 0.85), bound = 0, none = 1;
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < f.sub_filter_count(); ++i) {
    const auto s = f.sub_filter(i);
    EXPECT_EQ(s.capacity(), static_cast<std::uint64_t>(std::ceil(cap))) << i;
    EXPECT_NEAR(s.target_fpr(), fpr, fpr * 1e-12) << i;
    EXPECT_EQ(s.bit_count(), optimal_bits(s.capacity(), s.target_fpr())) << i;
    if (i + 1 < f.sub_filter_count()) {
      EXPECT_EQ(s.inserted(), s.capacity()) << "older sub-filters are full: " << i;
    } else {
      EXPECT_LE(s.inserted(), s.capacity());
      EXPECT_GT(s.inserted(), 0u);
    }
    bytes += s.size_in_bytes();
    bound += fpr;
    none *= 1 - fpr;
    cap *= growth;
    fpr *= 0.85;
  }
  EXPECT_EQ(f.size_in_bytes(), bytes);
  EXPECT_LT(bound, p);
  EXPECT_NEAR(f.current_fpr_bound(), 1 - none, 1e-12);
  EXPECT_LE(f.current_fpr_bound(), bound);

  const std::uint64_t probes = 500'000;
  const double measured = test::measured_fpr(f, probes);
  const compound_model model = model_of(f);
  const double sampling = std::sqrt(model.fpr * (1 - model.fpr) / probes);
  const double tolerance = 5 * std::sqrt(model.sd * model.sd + sampling * sampling);
  EXPECT_NEAR(measured, model.fpr, tolerance);
  EXPECT_LE(measured, p + tolerance) << "the compound rate stays below the target";
  EXPECT_LE(model.fpr, bound);
  EXPECT_NEAR(measured, f.estimated_fpr(), 5 * std::sqrt(model.fpr / probes));
  EXPECT_NEAR(static_cast<double>(f.approximate_count()), static_cast<double>(keys.size()),
              0.05 * static_cast<double>(keys.size()));
  std::printf(
      "scalable s=%g: %zu sub-filters, %.3f bits/key, fpr measured %.5f model %.5f bound %.5f "
      "(target %g), count estimate %llu of %zu\n",
      growth, f.sub_filter_count(), 8.0 * static_cast<double>(f.size_in_bytes()) / 100'000,
      measured, model.fpr, bound, p, static_cast<unsigned long long>(f.approximate_count()),
      keys.size());
}

INSTANTIATE_TEST_SUITE_P(Growth, ScalableGrowth,
                         ::testing::Values(growth_case{2.0, 6}, growth_case{4.0, 4},
                                           growth_case{1.5, 9}));

TEST(ScalableBloomFilter, DuplicatesAreNotAddedAndDoNotGrowTheFilter) {
  scalable_bloom_filter f({.capacity = 1'000, .fpr = 0.01});
  const auto keys = present_keys(1'000);
  std::size_t added = 0;
  for (auto k : keys) added += f.check_and_insert(k);
  for (int round = 0; round < 10; ++round) {
    for (auto k : keys) EXPECT_EQ(f.check_and_insert(k), insert_result::already_present);
    // insert() skips them too, and says only that the key is in (it never fills up).
    for (auto k : keys) EXPECT_EQ(f.insert(k), insert_result::inserted);
  }
  EXPECT_EQ(f.inserted(), added);
  EXPECT_EQ(f.sub_filter_count(), 1u);
  // The next new key opens the second sub-filter, unless the first one is still short of capacity
  // because false positives were skipped.
  std::size_t extra = 0;
  for (auto k : present_keys(1'000, 9)) {
    if (f.sub_filter_count() > 1) break;
    extra += f.insert(k);
  }
  EXPECT_EQ(f.sub_filter_count(), 2u);
  EXPECT_EQ(f.sub_filter(0).inserted(), 1'000u);
  EXPECT_EQ(f.sub_filter(1).inserted(), 1u);
  EXPECT_EQ(added + extra, 1'001u);
}

TEST(ScalableBloomFilter, HashesEachKeyOnceWhateverTheNumberOfSubFilters) {
  scalable_bloom_filter f({.capacity = 10, .fpr = 0.01});
  for (std::uint64_t i = 0; i < 300; ++i) {
    counted_key_hashes = 0;
    f.insert(counted_key{i});
    ASSERT_EQ(counted_key_hashes, 1u);
  }
  ASSERT_GE(f.sub_filter_count(), 5u);
  counted_key_hashes = 0;
  EXPECT_TRUE(f.may_contain(counted_key{7}));
  EXPECT_FALSE(f.may_contain(counted_key{1u << 31}));
  EXPECT_EQ(counted_key_hashes, 2u);
  std::vector<counted_key> batch;
  for (std::uint64_t i = 0; i < 1'000; ++i) batch.push_back({i * 3});
  std::vector<bool> out(batch.size());
  counted_key_hashes = 0;
  f.may_contain_many(batch, out);
  EXPECT_EQ(counted_key_hashes, batch.size());
}

TEST(ScalableBloomFilter, MayContainManyAgreesWithMayContain) {
  // Small sub-filters, and a first sub-filter over 1 MiB (the prefetching path).
  for (const auto& [n0, n] : {std::pair<std::uint64_t, std::size_t>{500, 20'000},
                              std::pair<std::uint64_t, std::size_t>{650'000, 700'000}}) {
    scalable_bloom_filter f({.capacity = n0, .fpr = 0.01});
    const auto keys = present_keys(n);
    for (auto k : keys) f.insert(k);
    ASSERT_GE(f.sub_filter_count(), 2u);
    if (n0 > 100'000) {
      ASSERT_GE(f.sub_filter(0).size_in_bytes(), detail::batch_min_bytes);
    }
    test::expect_batched_matches_single_mixed(f, keys, 30'000, 7919);
  }
  scalable_bloom_filter f({.capacity = 100, .fpr = 0.01});
  f.insert("b");
  EXPECT_EQ(test::expect_batched_output_checked(f), 1u);
}

TEST(ScalableBloomFilter, UnionOrsEachSubFilter) {
  const auto a_keys = present_keys(2'500, 10), b_keys = present_keys(2'500, 11);
  scalable_bloom_filter a({.capacity = 1'000, .fpr = 0.01}), b = a;
  for (auto k : a_keys) a.insert(k);
  for (auto k : b_keys) b.insert(k);
  ASSERT_EQ(a.sub_filter_count(), 2u);
  ASSERT_EQ(b.sub_filter_count(), 2u);
  const double before = a.estimated_fpr();
  const scalable_bloom_filter u = a | b;
  a |= b;
  EXPECT_EQ(a, u);
  EXPECT_EQ(a.inserted(), u.inserted());
  EXPECT_EQ(a.sub_filter(0).inserted(), 2'000u);
  for (auto k : a_keys) ASSERT_TRUE(a.may_contain(k));
  for (auto k : b_keys) ASSERT_TRUE(a.may_contain(k));
  // Bit i of sub-filter j is the OR of both.
  for (std::size_t i = 0; i < a.words().size(); ++i) {
    ASSERT_EQ(a.words()[i], u.words()[i]);
  }
  EXPECT_GT(a.estimated_fpr(), before) << "each sub-filter now holds both key sets";
  EXPECT_NEAR(static_cast<double>(a.approximate_count()), 5'000, 250);
  // The next new key opens a third sub-filter: the newest is over its capacity.
  for (auto k : present_keys(10, 12)) a.insert(k);
  EXPECT_EQ(a.sub_filter_count(), 3u);
}

TEST(ScalableBloomFilter, MergingIncompatibleFiltersSaysWhy) {
  scalable_bloom_filter base({.capacity = 100, .fpr = 0.01});
  const auto expect_merge_error = [&](const scalable_bloom_filter& other,
                                      const std::string& needle) {
    scalable_bloom_filter a = base;
    const std::string msg = error_of([&] { a |= other; });
    EXPECT_NE(msg.find("cannot compute the union of scalable filters: " + needle),
              std::string::npos)
        << msg;
    EXPECT_EQ(a, base);
  };
  expect_merge_error(grown_filter(100, 150), "sub-filter counts differ (1 vs 2)");
  expect_merge_error(scalable_bloom_filter({.capacity = 100, .fpr = 0.01}, 5), "seed differs");
  expect_merge_error(scalable_bloom_filter({.capacity = 100, .fpr = 0.01}, random_key()),
                     "hash algorithm differs");
  expect_merge_error(scalable_bloom_filter({.capacity = 100, .fpr = 0.01}, {.growth = 4}),
                     "growth factors differ (2 vs 4)");
  expect_merge_error(scalable_bloom_filter({.capacity = 100, .fpr = 0.01}, {.tightening = 0.5}),
                     "tightening ratios differ");
  expect_merge_error(scalable_bloom_filter({.capacity = 101, .fpr = 0.01}),
                     "initial capacities differ (100 vs 101)");
  expect_merge_error(scalable_bloom_filter({.capacity = 100, .fpr = 0.02}), "target fprs differ");
  EXPECT_EQ(base.incompatibility(base), "");
}

TEST(ScalableBloomFilter, ClearReturnsToOneEmptySubFilter) {
  scalable_bloom_filter f = grown_filter(100, 1'000);
  ASSERT_EQ(f.sub_filter_count(), 4u);
  const scalable_bloom_filter fresh({.capacity = 100, .fpr = 0.01});
  EXPECT_NE(f, fresh);
  f.clear();
  EXPECT_EQ(f, fresh);
  EXPECT_EQ(f.sub_filter_count(), 1u);
  EXPECT_EQ(f.inserted(), 0u);
  EXPECT_EQ(f.size_in_bytes(), fresh.size_in_bytes());
  EXPECT_EQ(f.approximate_count(), 0u);
  EXPECT_EQ(f.estimated_fpr(), 0.0);
  EXPECT_FALSE(std::signbit(f.estimated_fpr()));  // printed as 0, not -0
  EXPECT_FALSE(std::signbit(f.current_fpr_bound()));
  for (auto k : present_keys(1'000, 5)) EXPECT_FALSE(f.may_contain(k));
  // And it grows again the same way.
  for (auto k : present_keys(1'000, 5)) f.insert(k);
  EXPECT_EQ(f, grown_filter(100, 1'000));
  f.clear();
  f.clear();  // clearing a one-sub-filter filter
  EXPECT_EQ(f, fresh);
}

TEST(ScalableBloomFilter, InvalidParametersThrowWithUsefulMessages) {
  // Targets ({.capacity, .fpr}) are checked for every filter in test_filter_family.cpp.
  const target t{.capacity = 100, .fpr = 0.01};
  test::expect_invalid([&] { scalable_bloom_filter(t, {.growth = 0.5}); },
                       "growth = 0.5 is invalid; allowed range is [1, 16]");
  test::expect_invalid([&] { scalable_bloom_filter(t, {.growth = 17}); }, "growth = 17");
  test::expect_invalid([&] { scalable_bloom_filter(t, {.growth = std::nan("")}); }, "growth = nan");
  test::expect_invalid([&] { scalable_bloom_filter(t, {.tightening = 1}); },
                       "tightening = 1 is invalid; allowed range is (0, 1), exclusive");
  test::expect_invalid([&] { scalable_bloom_filter(t, {.tightening = 0}); }, "tightening = 0");
  test::expect_invalid([&] { (void)scalable_bloom_filter::plan(t, {.tightening = -1}); },
                       "tightening = -1");
}

TEST(ScalableBloomFilter, GrowthStopsAtTheSubFilterLimitWithoutDamage) {
  // Growth 1 from one key: 64 sub-filters hold 64 keys; the 65th new key cannot be placed.
  scalable_bloom_filter f({.capacity = 1, .fpr = 0.5}, {.growth = 1, .tightening = 0.5});
  std::vector<std::uint64_t> added;
  std::string error;
  for (auto k : present_keys(10'000)) {
    const scalable_bloom_filter before = f;
    try {
      if (f.check_and_insert(k)) added.push_back(k);
    } catch (const std::length_error& e) {
      error = e.what();
      EXPECT_EQ(f, before) << "a failed insert changes nothing";
      EXPECT_FALSE(f.may_contain(k));
      break;
    }
  }
  EXPECT_NE(error.find("already has 64 sub-filters"), std::string::npos) << error;
  EXPECT_EQ(f.sub_filter_count(), scalable_bloom_filter::max_sub_filters);
  EXPECT_EQ(added.size(), 64u);
  for (auto k : added) EXPECT_TRUE(f.may_contain(k));
  EXPECT_LT(serialize(f).size(), 8192u);
  EXPECT_EQ(deserialize<scalable_bloom_filter>(serialize(f)), f);

  // A tightening so strong that sub-filter 8 would need more than 255 hashes.
  scalable_bloom_filter g({.capacity = 1, .fpr = 0.5}, {.growth = 1, .tightening = 1e-10});
  error.clear();
  for (auto k : present_keys(1'000)) {
    try {
      g.insert(k);
    } catch (const std::length_error& e) {
      error = e.what();
      break;
    }
  }
  EXPECT_NE(error.find("cannot add sub-filter 8"), std::string::npos) << error;
  EXPECT_NE(error.find("hashes"), std::string::npos) << error;
  EXPECT_EQ(g.sub_filter_count(), 8u);
}

// --- file format ---

TEST(ScalableFormat, SaveLoadSerializeAndMapRoundTrips) {
  temp_dir dir;
  for (const bool keyed : {false, true}) {
    const scalable_bloom_filter f =
        grown_filter(100, 1'000, keyed ? hasher(random_key()) : hasher(3));
    ASSERT_EQ(f.sub_filter_count(), 4u);
    auto g = test::expect_saved_copy(f, dir / "s.bloom");
    for (std::size_t i = 0; i < f.sub_filter_count(); ++i) {
      EXPECT_EQ(g.sub_filter(i).inserted(), f.sub_filter(i).inserted());
      EXPECT_EQ(g.sub_filter(i).capacity(), f.sub_filter(i).capacity());
      EXPECT_EQ(g.sub_filter(i).target_fpr(), f.sub_filter(i).target_fpr());
    }

    const auto mapped = map_file<scalable_bloom_filter>(dir / "s.bloom");
    EXPECT_EQ(mapped->sub_filter_count(), 4u);
    EXPECT_EQ(mapped->inserted(), f.inserted());
    EXPECT_EQ(mapped->approximate_count(), f.approximate_count());
    EXPECT_EQ(mapped->estimated_fpr(), f.estimated_fpr());
    EXPECT_EQ(mapped->size_in_bytes(), f.size_in_bytes());
    for (auto k : present_keys(1'000, 5)) ASSERT_TRUE(mapped->may_contain(k));
    const auto absent = absent_keys(20'000);
    std::vector<bool> a(absent.size()), b(absent.size());
    EXPECT_EQ(mapped->may_contain_many(absent, a), f.may_contain_many(absent, b));
    EXPECT_EQ(a, b);
    for (std::size_t i = 0; i < absent.size(); ++i) ASSERT_EQ(a[i], g.may_contain(absent[i]));

    // The loaded filter keeps growing exactly as the original would.
    auto h = f;
    for (auto k : present_keys(2'000, 6)) g.insert(k), h.insert(k);
    EXPECT_EQ(g, h);
    EXPECT_EQ(g.sub_filter_count(), 5u);
  }
}

TEST(ScalableFormat, LayoutIsDocumented) {
  const scalable_bloom_filter f = grown_filter(100, 200);  // two sub-filters
  ASSERT_EQ(f.sub_filter_count(), 2u);
  const auto bytes = serialize(f);
  const std::byte* b = bytes.data();
  EXPECT_EQ(detail::get<std::uint32_t>(b + 12), 5u);             // kind: scalable
  EXPECT_EQ(detail::get<std::uint32_t>(b + 20), 40u + 2 * 40u);  // parameter block size
  EXPECT_EQ(detail::get<std::uint64_t>(b + 64), f.inserted());   // element count
  EXPECT_EQ(detail::get<std::uint64_t>(b + 72), 256u);           // 128 + 120 -> 256
  EXPECT_EQ(detail::get<double>(b + 128), 2.0);                  // growth
  EXPECT_EQ(detail::get<double>(b + 136), 0.85);                 // tightening
  EXPECT_EQ(detail::get<std::uint64_t>(b + 144), 100u);          // initial capacity
  EXPECT_EQ(detail::get<double>(b + 152), 0.01);                 // overall fpr
  EXPECT_EQ(detail::get<std::uint32_t>(b + 160), 2u);            // sub-filter count
  EXPECT_EQ(detail::get<std::uint32_t>(b + 164), 0u);            // reserved
  std::size_t payload = 256;
  for (std::size_t i = 0; i < 2; ++i) {
    const std::byte* l = b + 168 + 40 * i;
    const auto s = f.sub_filter(i);
    EXPECT_EQ(detail::get<std::uint64_t>(l), s.bit_count());
    EXPECT_EQ(detail::get<std::uint32_t>(l + 8), s.hash_count());
    EXPECT_EQ(detail::get<std::uint32_t>(l + 12), 0u);
    EXPECT_EQ(detail::get<std::uint64_t>(l + 16), s.capacity());
    EXPECT_EQ(detail::get<double>(l + 24), s.target_fpr());
    EXPECT_EQ(detail::get<std::uint64_t>(l + 32), s.inserted());
    // Each sub-filter's payload is a classic filter's payload, whole 64-byte lines.
    EXPECT_EQ(s.size_in_bytes() % 64, 0u);
    std::uint64_t set = 0;
    for (std::size_t at = payload; at < payload + s.size_in_bytes(); ++at) {
      set += static_cast<std::uint64_t>(std::popcount(std::to_integer<unsigned>(b[at])));
    }
    EXPECT_EQ(set, s.set_bit_count()) << i;
    if (i == 0) {  // the first key went into sub-filter 0: its probes are set in that slice
      detail::for_each_position(hash_key(f.hash(), present_keys(1, 5)[0]), s.bit_count(),
                                s.hash_count(), [&](std::uint64_t bit) {
                                  const auto byte = std::to_integer<unsigned>(b[payload + bit / 8]);
                                  EXPECT_TRUE((byte >> (bit % 8)) & 1) << bit;
                                });
    }
    payload += s.size_in_bytes();
  }
  EXPECT_EQ(payload, bytes.size());
  // The payload is the filter's storage as in memory.
  const auto words = std::as_bytes(f.words());
  ASSERT_EQ(words.size(), bytes.size() - 256);
  EXPECT_EQ(std::memcmp(words.data(), b + 256, words.size()), 0);
}

TEST(ScalableFormat, EveryTruncationAndFlippedByteIsRejected) {
  const auto bytes = serialize(grown_filter(10, 20));
  ASSERT_EQ(deserialize<scalable_bloom_filter>(bytes).sub_filter_count(), 2u);
  test::expect_all_damage_rejected<scalable_bloom_filter>(bytes);
}

TEST(ScalableFormat, OtherKindsAreRejected) {
  bloom_filter classic({.capacity = 100, .fpr = 0.01});
  const auto msg = error_of([&] { (void)deserialize<scalable_bloom_filter>(serialize(classic)); });
  EXPECT_NE(msg.find("holds a bloom filter, not a scalable filter"), std::string::npos) << msg;
  const auto back =
      error_of([] { (void)deserialize<bloom_filter>(serialize(grown_filter(10, 20))); });
  EXPECT_NE(back.find("holds a scalable filter, not a bloom filter"), std::string::npos) << back;
  temp_dir dir;
  save(classic, dir / "classic.bloom");
  EXPECT_THROW(load<scalable_bloom_filter>(dir / "classic.bloom"), format_error);
  EXPECT_THROW(map_file<scalable_bloom_filter>(dir / "classic.bloom"), format_error);
}

TEST(ScalableFormat, ValuesAreValidatedEvenWithAGoodChecksum) {
  const scalable_bloom_filter f = grown_filter(10, 20);
  ASSERT_EQ(f.sub_filter_count(), 2u);
  const auto good = serialize(f);
  const auto with = [&](std::size_t offset, auto value) {
    return test::edited_image_error<scalable_bloom_filter>(good, offset, value);
  };
  const auto has = [](const std::string& msg, const std::string& needle) {
    return msg.find(needle) != std::string::npos ? ::testing::AssertionSuccess()
                                                 : ::testing::AssertionFailure() << msg;
  };
  EXPECT_TRUE(has(with(128, 0.5), "growth out of range"));
  EXPECT_TRUE(has(with(136, 1.0), "tightening outside (0, 1)"));
  EXPECT_TRUE(has(with(144, std::uint64_t{0}), "initial capacity is zero"));
  EXPECT_TRUE(has(with(144, std::uint64_t{11}), "do not follow from the growth parameters"));
  EXPECT_TRUE(has(with(152, 1.5), "target fpr outside (0, 1)"));
  EXPECT_TRUE(has(with(160, std::uint32_t{0}), "sub-filter count out of range: 0"));
  EXPECT_TRUE(has(with(160, std::uint32_t{65}), "sub-filter count out of range: 65"));
  EXPECT_TRUE(has(with(160, std::uint32_t{1}), "parameter block of scalable filter has 120"));
  EXPECT_TRUE(has(with(164, std::uint32_t{1}), "reserved parameter is not zero"));
  const std::size_t l1 = 168 + 40;  // sub-filter 1's entry
  EXPECT_TRUE(has(with(l1, std::uint64_t{0}), "sub-filter 1: bits = 0 is invalid"));
  EXPECT_TRUE(has(with(l1, f.sub_filter(1).bit_count() + 1000), "are not the sizing of"));
  EXPECT_TRUE(has(with(l1 + 8, std::uint32_t{0}), "sub-filter 1: hashes = 0 is invalid"));
  // Bits and hashes other than the sizing of the sub-filter's capacity and fpr: a forged small
  // layer for a huge capacity made the next grow() ask for that capacity's memory
  // (fuzz/regressions/deserialize_any/scalable_forged_capacity).
  EXPECT_TRUE(has(with(l1 + 8, f.sub_filter(1).hash_count() + 1),
                  "are not the sizing of its capacity and fpr"));
  EXPECT_TRUE(has(with(l1 + 12, std::uint32_t{1}), "sub-filter 1: reserved parameter"));
  EXPECT_TRUE(has(with(l1 + 16, std::uint64_t{21}), "sub-filter 1: capacity 21"));
  EXPECT_TRUE(has(with(l1 + 24, 0.5), "do not follow from the growth parameters"));
  EXPECT_TRUE(has(with(l1 + 32, std::uint64_t{3}), "is not the sum of the sub-filters"));
  EXPECT_TRUE(has(with(64, std::uint64_t{3}), "is not the sum of the sub-filters"));
  // A bit past m in sub-filter 0's last line.
  const auto payload = inspect_prefix(good).payload_offset;
  const std::size_t last = payload + f.sub_filter(0).size_in_bytes() - 1;
  ASSERT_LT(f.sub_filter(0).bit_count(), f.sub_filter(0).size_in_bytes() * 8 - 8);
  EXPECT_TRUE(has(with(last, std::uint8_t{0x80}), "sub-filter 0: padding bits past m are set"));
}

// --- properties ---

RC_GTEST_PROP(ScalableProperties, NoFalseNegativesAndBatchAgreesThroughSaveLoadAndMap, ()) {
  const auto n0 = *rc::gen::inRange<std::uint64_t>(1, 60);
  const double growth = *rc::gen::inRange(100, 401) / 100.0;
  const double tightening = *rc::gen::inRange(30, 96) / 100.0;
  const double fpr = *rc::gen::element(0.3, 0.05, 0.01, 0.001);
  // At most 60 keys: growth 1 from n0 = 1 holds only 64 (one per sub-filter, at most 64 of
  // them), and the 65th sub-filter is an error, not what this property is about.
  auto strings = *rc::gen::arbitrary<std::vector<std::string>>();
  auto numbers = *rc::gen::arbitrary<std::vector<std::int32_t>>();
  strings.resize(std::min<std::size_t>(strings.size(), 30));
  numbers.resize(std::min<std::size_t>(numbers.size(), 30));
  const auto probes = *rc::gen::arbitrary<std::vector<std::string>>();
  const bool keyed = *rc::gen::arbitrary<bool>();
  const hasher h = keyed ? hasher(random_key()) : hasher(*rc::gen::arbitrary<std::uint64_t>());
  scalable_bloom_filter f({.capacity = n0, .fpr = fpr}, {growth, tightening}, h);
  std::size_t added = 0;
  for (const auto& k : strings) added += f.check_and_insert(k);
  for (const auto k : numbers) added += f.check_and_insert(k);
  RC_ASSERT(f.inserted() == added);
  for (const auto& k : strings) RC_ASSERT(f.may_contain(k));
  for (const auto k : numbers) RC_ASSERT(f.may_contain(k));
  for (std::size_t i = 0; i + 1 < f.sub_filter_count(); ++i) {
    RC_ASSERT(f.sub_filter(i).inserted() == f.sub_filter(i).capacity());
  }
  std::vector<std::string> all = probes;
  all.insert(all.end(), strings.begin(), strings.end());
  std::vector<bool> out(all.size());
  f.may_contain_many(all, out);
  for (std::size_t i = 0; i < all.size(); ++i) RC_ASSERT(out[i] == f.may_contain(all[i]));

  temp_dir dir;
  save(f, dir / "f.bloom");
  const auto loaded = load<scalable_bloom_filter>(dir / "f.bloom");
  const auto mapped = map_file<scalable_bloom_filter>(dir / "f.bloom");
  RC_ASSERT(loaded == f);
  for (const auto& k : strings) RC_ASSERT(loaded.may_contain(k) && mapped->may_contain(k));
  for (const auto k : numbers) RC_ASSERT(loaded.may_contain(k) && mapped->may_contain(k));
  std::vector<bool> mapped_out(all.size());
  mapped->may_contain_many(all, mapped_out);
  RC_ASSERT(mapped_out == out);
  RC_CLASSIFY(f.sub_filter_count() > 1, "grew");
}
