// positions.hpp: the positions a key maps to agree with what each filter does with them. A query
// says "possibly present" exactly when the key's positions are all set (or, for fingerprint
// filters, hold its fingerprint); an insert sets exactly those positions; the mapped view gives the
// same positions as the owning filter. (The suite is named after the function it tests.)
#include <gtest/gtest.h>
#include <bloomery/bloomery.hpp>
#include <bloomery/support/keys.hpp>
#include <bloomery/support/temp_dir.hpp>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

using namespace bloomery;
using support::absent_keys;
using support::present_keys;

namespace {

bool bit_set(std::span<const std::uint64_t> words, std::uint64_t i) {
  return ((words[i / 64] >> (i % 64)) & 1) != 0;
}

template <class F>
bool all_bits_set(const F& f, const bloom_positions& p) {
  return std::all_of(p.bits.begin(), p.bits.end(),
                     [&](std::uint64_t i) { return bit_set(f.words(), i); });
}

// Asserts that `answered(key)` (the filter's may_contain) equals `predicted(key)` (from the
// positions) for every key, and that the absent keys include both answers, so the check is not
// vacuous.
template <class Answered, class Predicted>
void expect_agreement(const std::vector<std::uint64_t>& present,
                      const std::vector<std::uint64_t>& absent, Answered answered,
                      Predicted predicted) {
  for (const auto k : present) {
    ASSERT_TRUE(answered(k));
    ASSERT_TRUE(predicted(k)) << "member " << k;
  }
  std::size_t positives = 0;
  for (const auto k : absent) {
    ASSERT_EQ(answered(k), predicted(k)) << "key " << k;
    positives += answered(k);
  }
  EXPECT_GT(positives, 0u) << "no false positive among the absent keys: the test proves little";
  EXPECT_LT(positives, absent.size());
}

TEST(positions, BloomKnownAnswer) {
  // The same positions `bloomery explain -m 32 -k 3 example.com` prints (tools/ cli_test.sh).
  const bloom_filter f(bloom_parameters{.bits = 32, .hashes = 3});
  EXPECT_EQ(positions(f, std::string_view("example.com")).bits,
            (std::vector<std::uint64_t>{21, 9, 28}));
}

TEST(positions, BloomInsertSetsExactlyItsBits) {
  bloom_filter f(target{.capacity = 1000, .fpr = 0.01});
  for (const auto k : present_keys(50, 3)) {
    const bloom_positions p = positions(f, k);
    ASSERT_EQ(p.bits.size(), f.hash_count());
    const std::uint64_t before = f.set_bit_count();
    std::set<std::uint64_t> fresh;
    for (const auto i : p.bits) {
      ASSERT_LT(i, f.bit_count());
      if (!bit_set(f.words(), i)) fresh.insert(i);
    }
    f.insert(k);
    EXPECT_TRUE(all_bits_set(f, p));
    EXPECT_EQ(f.set_bit_count(), before + fresh.size());
  }
}

TEST(positions, BloomQueryIsAllBitsSet) {
  const auto present = present_keys(500, 5);
  bloom_filter f(target{.capacity = 500, .fpr = 0.05});
  for (const auto k : present) f.insert(k);
  expect_agreement(
      present, absent_keys(5000, 6), [&](std::uint64_t k) { return f.may_contain(k); },
      [&](std::uint64_t k) { return all_bits_set(f, positions(f, k)); });
}

TEST(positions, BlockedBitsStayInOneBlock) {
  const auto present = present_keys(500, 7);
  blocked_bloom_filter f(target{.capacity = 500, .fpr = 0.05});
  const std::uint64_t blocks = f.bit_count() / blocked_positions::block_bits;
  for (const auto k : present) {
    const blocked_positions p = positions(f, k);
    ASSERT_LT(p.block, blocks);
    ASSERT_EQ(p.bits.size(), f.hash_count());
    const std::uint64_t before = f.set_bit_count();
    std::set<std::uint64_t> fresh;
    for (std::size_t i = 0; i < p.bits.size(); ++i) {
      ASSERT_LT(p.bits[i], blocked_positions::block_bits);
      if (!bit_set(f.words(), p.bit_index(i))) fresh.insert(p.bit_index(i));
    }
    f.insert(k);
    EXPECT_EQ(f.set_bit_count(), before + fresh.size());  // nothing outside the block changed
  }
  const auto all_set = [&](std::uint64_t k) {
    const blocked_positions p = positions(f, k);
    for (std::size_t i = 0; i < p.bits.size(); ++i) {
      if (!bit_set(f.words(), p.bit_index(i))) return false;
    }
    return true;
  };
  expect_agreement(
      present, absent_keys(5000, 8), [&](std::uint64_t k) { return f.may_contain(k); }, all_set);
}

TEST(positions, CountingInsertAndRemoveMoveExactlyItsCounters) {
  counting_bloom_filter f(target{.capacity = 200, .fpr = 0.01});
  const auto keys = present_keys(2, 9);
  const counting_positions p = positions(f, keys[0]);
  ASSERT_EQ(p.counters.size(), f.hash_count());
  f.insert(keys[0]);
  for (const auto c : p.counters) {
    ASSERT_LT(c, f.counter_count());
    EXPECT_EQ(f.counter(c),
              static_cast<std::uint64_t>(std::count(p.counters.begin(), p.counters.end(), c)));
  }
  const std::set<std::uint64_t> distinct(p.counters.begin(), p.counters.end());
  EXPECT_EQ(f.nonzero_count(), distinct.size());
  ASSERT_EQ(f.remove(keys[0]), remove_result::removed);
  EXPECT_EQ(f.nonzero_count(), 0u);
}

TEST(positions, CountingQueryIsAllCountersNonzero) {
  const auto present = present_keys(500, 10);
  counting_bloom_filter f(target{.capacity = 500, .fpr = 0.05});
  for (const auto k : present) f.insert(k);
  expect_agreement(
      present, absent_keys(5000, 11), [&](std::uint64_t k) { return f.may_contain(k); },
      [&](std::uint64_t k) {
        const counting_positions p = positions(f, k);
        return std::all_of(p.counters.begin(), p.counters.end(),
                           [&](std::uint64_t c) { return f.counter(c) != 0; });
      });
}

bool bucket_holds(const cuckoo_filter& f, std::uint64_t b, std::uint64_t fp) {
  const auto slots = bucket_fingerprints(f, b);
  return std::find(slots.begin(), slots.end(), fp) != slots.end();
}

bool cuckoo_predicts(const cuckoo_filter& f, const cuckoo_positions& p) {
  return bucket_holds(f, p.i1, p.fingerprint) || bucket_holds(f, p.i2, p.fingerprint) ||
         stash_holds(f, p);
}

// The pairing rule as cuckoo_positions documents it.
void expect_pairing(const cuckoo_filter& f, const cuckoo_positions& p) {
  const std::uint64_t nb = f.bucket_count();
  ASSERT_LT(p.i1, nb);
  ASSERT_LT(p.i2, nb);
  ASSERT_NE(p.fingerprint, 0u);
  ASSERT_LT(p.fingerprint, std::uint64_t{1} << f.fingerprint_bits());
  ASSERT_LT(p.pairing_target, nb);
  const std::uint64_t unfolded = (p.pairing_target + nb - p.i1) % nb;
  if (p.partner) {
    EXPECT_EQ(unfolded, p.i1);
    EXPECT_EQ(p.i2, (p.i1 + nb / 2) % nb);
  } else {
    EXPECT_EQ(p.i2, unfolded);
  }
  EXPECT_EQ(alternate_bucket(f, p.i1, p.fingerprint), p.i2);
  EXPECT_EQ(alternate_bucket(f, p.i2, p.fingerprint), p.i1);
}

TEST(positions, CuckooFingerprintSitsInOneOfItsBuckets) {
  // Small fingerprints so absent keys also match; plain and semi-sorted buckets.
  for (const bool semi : {false, true}) {
    SCOPED_TRACE(semi ? "semi-sorted" : "plain");
    cuckoo_filter f(cuckoo_parameters{.fingerprint_bits = 6, .buckets = 200, .semi_sorted = semi});
    ASSERT_EQ(f.semi_sorted(), semi);
    const auto present = present_keys(600, 12);
    for (const auto k : present) {
      const cuckoo_positions p = positions(f, k);
      expect_pairing(f, p);
      ASSERT_TRUE(f.insert(k));
      ASSERT_TRUE(cuckoo_predicts(f, p));
    }
    expect_agreement(
        present, absent_keys(5000, 13), [&](std::uint64_t k) { return f.may_contain(k); },
        [&](std::uint64_t k) { return cuckoo_predicts(f, positions(f, k)); });
  }
}

// Few buckets make the rule's special cases common: with an even count a fixed point of
// (t - i) mod buckets moves to the partner bucket; with an odd count it stays (i2 = i1).
TEST(positions, CuckooPairingRule) {
  for (const std::uint64_t buckets : {4u, 5u}) {
    const cuckoo_filter f(cuckoo_parameters{.fingerprint_bits = 8, .buckets = buckets});
    std::size_t partners = 0, single = 0;
    for (const auto k : present_keys(400, 21)) {
      const cuckoo_positions p = positions(f, k);
      expect_pairing(f, p);
      partners += p.partner;
      single += p.i1 == p.i2;
    }
    if (buckets % 2 == 0) {
      EXPECT_GT(partners, 0u);
      EXPECT_EQ(single, 0u);
    } else {
      EXPECT_EQ(partners, 0u);
      EXPECT_GT(single, 0u);
    }
  }
}

TEST(positions, CuckooStashHoldsTheLastVictim) {
  cuckoo_filter f(cuckoo_parameters{.fingerprint_bits = 8, .buckets = 4, .max_kicks = 8});
  std::vector<std::uint64_t> stored;
  for (const auto k : present_keys(100, 14)) {
    if (!f.insert(k)) break;
    stored.push_back(k);
  }
  ASSERT_TRUE(f.is_full());
  std::size_t stashed = 0;
  for (const auto k : stored) {
    const cuckoo_positions p = positions(f, k);
    ASSERT_TRUE(cuckoo_predicts(f, p));
    stashed += stash_holds(f, p);
  }
  EXPECT_GE(stashed, 1u);  // the stash holds a fingerprint of one of the stored keys
}

TEST(positions, ScalableQueryIsSomeSubFilterAllSet) {
  const auto present = present_keys(700, 15);
  scalable_bloom_filter f(target{.capacity = 100, .fpr = 0.1});
  for (const auto k : present) (void)f.insert(k);
  ASSERT_GE(f.sub_filter_count(), 3u);
  const auto any_sub_filter = [&](std::uint64_t k) {
    const scalable_positions p = positions(f, k);
    EXPECT_EQ(p.sub_filters.size(), f.sub_filter_count());
    for (std::size_t i = 0; i < p.sub_filters.size(); ++i) {
      EXPECT_EQ(p.sub_filters[i], positions(f.sub_filter(i), k));
      if (all_bits_set(f.sub_filter(i), p.sub_filters[i])) return true;
    }
    return false;
  };
  expect_agreement(
      present, absent_keys(5000, 16), [&](std::uint64_t k) { return f.may_contain(k); },
      any_sub_filter);
}

TEST(positions, StaticSlotsXorToTheFingerprint) {
  const auto present = present_keys(3000, 17);
  // Three whole-byte slots (explicit widths), four packed ones (built from a rate: 7 and 5 bits).
  for (const static_filter& f :
       {static_filter::build(present, fingerprint_width::bits8),
        static_filter::build(present, fingerprint_width::bits16),
        static_filter::build(present, 0.01), static_filter::build(present, 0.05)}) {
    const auto xor_matches = [&](std::uint64_t k) {
      const static_positions p = positions(f, k);
      EXPECT_EQ(p.slots.size(), f.arity());
      std::uint64_t x = 0;
      for (std::size_t j = 0; j < p.slots.size(); ++j) {
        EXPECT_LT(p.slots[j], f.array_length());
        // one slot in each of arity() consecutive segments
        EXPECT_EQ(p.slots[j] / f.segment_length(), p.slots[0] / f.segment_length() + j);
        x ^= slot_value(f, p.slots[j]);
      }
      EXPECT_LT(p.fingerprint, std::uint64_t{1} << f.fingerprint_bits());
      return x == p.fingerprint;
    };
    // 2^-16 would need millions of absent keys to see a false positive: check members only.
    if (f.fingerprint_bits() <= 8) {
      expect_agreement(
          present, absent_keys(20000, 18), [&](std::uint64_t k) { return f.may_contain(k); },
          xor_matches);
    } else {
      for (const auto k : present) ASSERT_TRUE(xor_matches(k));
      for (const auto k : absent_keys(2000, 18)) ASSERT_EQ(f.may_contain(k), xor_matches(k));
    }
  }
}

TEST(positions, EmptyStaticFilterHasNoSlots) {
  const static_filter f = static_filter::build(std::vector<std::uint64_t>{}, 0.01);
  EXPECT_TRUE(positions(f, std::uint64_t{1}).slots.empty());
  EXPECT_FALSE(f.may_contain(std::uint64_t{1}));
}

// A mapped file's view gives the positions of the filter it was saved from.
template <class F>
void expect_view_agrees(const F& f, const support::temp_dir& dir) {
  const auto path = dir / "f.bin";
  save(f, path);
  const auto mapped = map_file<F>(path);
  for (const auto k : present_keys(50, 19)) EXPECT_EQ(positions(*mapped, k), positions(f, k));
}

TEST(positions, MappedViewsAgree) {
  const support::temp_dir dir("bloomery-positions");
  const target t{.capacity = 1000, .fpr = 0.01};
  expect_view_agrees(bloom_filter(t), dir);
  expect_view_agrees(blocked_bloom_filter(t), dir);
  expect_view_agrees(counting_bloom_filter(t), dir);
  expect_view_agrees(cuckoo_filter(t), dir);
  expect_view_agrees(scalable_bloom_filter(t), dir);
  expect_view_agrees(static_filter::build(present_keys(1000, 20), 0.01), dir);
}

}  // namespace
