// The pollution attack of README "Threat model" (examples/pollution/attack.hpp): against the
// public default seed an attacker makes false positives to order and saturates a filter with the
// fewest possible inserts; against a keyed filter, without the key, its chosen keys behave
// exactly like random keys. Every statistical bound fails by chance with probability at most
// check_failure_probability.
#include <gtest/gtest.h>
#include <bloomery/blocked_bloom_filter.hpp>
#include <bloomery/bloom_filter.hpp>
#include <bloomery/hash.hpp>
#include <bloomery/support/keys.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../examples/pollution/attack.hpp"
#include "test_support.hpp"

namespace {

using bloomery::test::binomial_lower_bound;
using bloomery::test::binomial_upper_bound;
using bloomery::test::check_failure_probability;
using pollution::u64;

constexpr u64 n = 10000;
constexpr double target_fpr = 0.01;
constexpr u64 honest_stream = 11;
constexpr u64 candidate_stream = 12;
constexpr u64 probe_stream = 13;
constexpr u64 random_insert_stream = 14;

// estimated_fpr() is fill^k (per block for the blocked filter), exact for independent probes; the
// k probes of a key come from one hash, so the true rate of random keys may differ a little.
constexpr double model_slack = 0.02;

// A secret the attacker does not know, and a different one it might guess.
const bloomery::secret_key filter_key = pollution::stream_secret(21);
const bloomery::secret_key guessed_key = pollution::stream_secret(22);

template <class F>
F honest_filter(bloomery::hasher h) {
  F f({.capacity = n, .fpr = target_fpr}, std::move(h));
  for (const u64 key : bloomery::support::present_keys(n, honest_stream)) f.insert(key);
  return f;
}

// Expects `positives` among `trials` keys that are each a false positive with the filter's
// fill-based FPR (up to model_slack).
template <class F>
void expect_fill_based_rate(const F& f, std::size_t positives, u64 trials) {
  const double p = f.estimated_fpr();
  EXPECT_GE(positives, binomial_lower_bound(trials, p * (1 - model_slack)))
      << positives << " of " << trials << " at estimated_fpr " << p;
  EXPECT_LE(positives, binomial_upper_bound(trials, p * (1 + model_slack)))
      << positives << " of " << trials << " at estimated_fpr " << p;
}

template <class F>
class Pollution : public ::testing::Test {};

struct filter_name {
  template <class F>
  static std::string GetName(int) {
    return std::is_same_v<F, bloomery::bloom_filter> ? "bloom" : "blocked";
  }
};
using filters = ::testing::Types<bloomery::bloom_filter, bloomery::blocked_bloom_filter>;
TYPED_TEST_SUITE(Pollution, filters, filter_name);

TYPED_TEST(Pollution, ChosenKeysAgainstThePublicSeedAreAllFalsePositives) {
  using F = TypeParam;
  const F f = honest_filter<F>(bloomery::hasher{});
  // The attacker reads the seed from the file header: its guess is the filter's own hasher.
  pollution::attacker<F> a(f, f.hash(), candidate_stream);
  constexpr u64 budget = 500000;
  const pollution::search_result r =
      pollution::search_false_positives(a, std::numeric_limits<std::size_t>::max(), budget);
  ASSERT_EQ(r.tried, budget);

  std::vector<u64> honest = bloomery::support::present_keys(n, honest_stream);
  std::sort(honest.begin(), honest.end());
  for (const u64 key : r.chosen) {
    EXPECT_FALSE(std::binary_search(honest.begin(), honest.end(), key)) << key;
  }
  // By construction every chosen key answers "possibly present", none having been inserted.
  EXPECT_EQ(pollution::count_positives(f, r.chosen), r.chosen.size());
  // The search finds them at the filter's false-positive rate: about 1/p candidates per key.
  expect_fill_based_rate(f, r.chosen.size(), r.tried);
}

TYPED_TEST(Pollution, ChosenKeysAgainstAKeyedFilterAreRandomKeys) {
  using F = TypeParam;
  const F f = honest_filter<F>(bloomery::hasher(filter_key));
  const std::vector<u64> probes = pollution::outsider_keys(probe_stream, 500000);
  const std::size_t random_positives = pollution::count_positives(f, probes);
  expect_fill_based_rate(f, random_positives, probes.size());

  for (const bloomery::hasher& guess : {bloomery::hasher{}, bloomery::hasher(guessed_key)}) {
    SCOPED_TRACE(guess.keyed() ? "guess: another key" : "guess: the default seed");
    pollution::attacker<F> a(f, guess, candidate_stream);
    constexpr std::size_t wanted = 5000;
    const pollution::search_result r = pollution::search_false_positives(a, wanted, 100000000);
    ASSERT_EQ(r.chosen.size(), wanted);
    const std::size_t chosen_positives = pollution::count_positives(f, r.chosen);
    expect_fill_based_rate(f, chosen_positives, wanted);
    // Chosen and random keys are false positives with the same probability, so each of the s
    // positives among all of them is a chosen one with probability wanted / (wanted + probes),
    // whatever the filter's FPR.
    const std::size_t s = chosen_positives + random_positives;
    const double share = static_cast<double>(wanted) / static_cast<double>(wanted + probes.size());
    EXPECT_GE(chosen_positives, binomial_lower_bound(s, share));
    EXPECT_LE(chosen_positives, binomial_upper_bound(s, share));
  }
}

// J attacker inserts into an empty filter, the attacker insisting on k clear (believed) bits per
// key; beside each, the fresh bits a random key would have set in the same state.
struct paired_run {
  u64 inserts = 0;
  u64 attacker_fresh = 0;  // bits the attacker's keys set (truly)
  u64 random_fresh = 0;    // bits the paired random keys would have set
  std::uint32_t min_fresh = std::numeric_limits<std::uint32_t>::max();
};
template <class F>
paired_run paired_saturation(F& f, const bloomery::hasher& guess, u64 inserts) {
  pollution::attacker<F> a(f, guess, candidate_stream);
  paired_run r;
  r.inserts = inserts;
  for (u64 i = 0; i < inserts; ++i) {
    r.random_fresh += pollution::fresh_bits(f, pollution::outsider_key(random_insert_stream, i));
    const std::uint32_t fresh = pollution::insert_counting(f, a.next_polluter(0).key);
    r.attacker_fresh += fresh;
    r.min_fresh = std::min(r.min_fresh, fresh);
  }
  return r;
}

// ceil(m / 2k): no sequence of inserts sets half the bits with fewer, as each sets at most k.
template <class F>
u64 half_fill_inserts(const F& f) {
  return (f.bit_count() + 2 * f.hash_count() - 1) / (2 * f.hash_count());
}

TYPED_TEST(Pollution, SaturatingThePublicSeedSetsKClearBitsPerInsert) {
  using F = TypeParam;
  F f({.capacity = n, .fpr = target_fpr});
  const u64 j = half_fill_inserts(f);
  const u64 k = f.hash_count();
  const paired_run r = paired_saturation(f, f.hash(), j);
  EXPECT_EQ(r.min_fresh, k);
  EXPECT_EQ(r.attacker_fresh, k * j);
  EXPECT_EQ(f.set_bit_count(), k * j);
  EXPECT_GE(2 * f.set_bit_count(), f.bit_count());
  EXPECT_LT(2 * (f.set_bit_count() - k), f.bit_count());  // one insert fewer is not enough

  // The same count of random inserts leaves the filter well short of half full (their bits
  // overlap the ones already set).
  F g({.capacity = n, .fpr = target_fpr});
  const pollution::saturation_result random = pollution::saturate(
      g, [i = u64{0}](u64) mutable { return pollution::outsider_key(random_insert_stream, i++); },
      0.5, 2.0, std::numeric_limits<u64>::max(), j);
  EXPECT_EQ(random.set_bits, g.set_bit_count());
  EXPECT_EQ(random.inserts_to_fill, 0u) << "random inserts reached half fill";
}

TYPED_TEST(Pollution, SaturatingAKeyedFilterIsNoFasterThanRandomInserts) {
  using F = TypeParam;
  for (const bloomery::hasher& guess : {bloomery::hasher{}, bloomery::hasher(guessed_key)}) {
    SCOPED_TRACE(guess.keyed() ? "guess: another key" : "guess: the default seed");
    F f({.capacity = n, .fpr = target_fpr}, bloomery::hasher(filter_key));
    const u64 j = half_fill_inserts(f);
    const paired_run r = paired_saturation(f, guess, j);
    EXPECT_EQ(f.set_bit_count(), r.attacker_fresh);
    // Without the key the attacker's choice says nothing about a key's true bits: given the
    // past, its key and the paired random key set equally many fresh bits on average, so the
    // difference of the sums is a martingale with steps in [-k, k] (Azuma-Hoeffding bound).
    const double k = f.hash_count();
    const double azuma =
        k * std::sqrt(2.0 * static_cast<double>(j) * std::log(2.0 / check_failure_probability));
    const double gap = static_cast<double>(r.attacker_fresh) - static_cast<double>(r.random_fresh);
    EXPECT_LE(std::abs(gap), azuma) << r.attacker_fresh << " vs " << r.random_fresh;
    // The ceil(m / 2k) keys that half-fill the public-seed filter leave this one short of it.
    EXPECT_LT(2 * f.set_bit_count(), f.bit_count());
  }
}

}  // namespace
