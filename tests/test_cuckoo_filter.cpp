// The cuckoo filter: sizing, the packed table, the alternate-bucket involution, remove/count,
// behaviour when full, the FPR model, the file format, and model-based properties.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <bloomery/bloom_filter.hpp>
#include <bloomery/cuckoo_filter.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "test_support.hpp"

using namespace bloomery;
using namespace bloomery::support;

namespace {

std::string invalid_argument_of(auto&& fn) {
  return test::message_of<std::invalid_argument>(fn);
}

std::string format_error_of(auto&& fn) {
  return test::message_of<format_error>(fn);
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Tolerance for a measured false-positive rate: 5 standard deviations of the binomial sampling
// noise over `probes` queries combined with the spread of this filter's true rate around the
// model. The true rate is C / M, where M = nb·(2^f - 1) (bucket, fingerprint) cells and C the
// cells covered by the n stored keys (each covers two); changing one key moves C by at most 2, so
// by Efron–Stein Var(C) <= 2n and sd(rate) <= sqrt(2n) / M.
double cuckoo_tolerance(double p, std::uint64_t probes, const cuckoo_filter& f) {
  const double cells =
      static_cast<double>(f.bucket_count()) * (std::ldexp(1.0, f.fingerprint_bits()) - 1);
  const double sd_model = std::sqrt(2.0 * static_cast<double>(f.approximate_count())) / cells;
  const double sd_sampling = std::sqrt(p * (1 - p) / static_cast<double>(probes));
  return 5 * std::sqrt(sd_model * sd_model + sd_sampling * sd_sampling);
}

// Inserts keys from a stream until an insert fails; returns the keys that were accepted.
std::vector<std::uint64_t> fill_until_failure(cuckoo_filter& f, std::uint64_t seed) {
  std::vector<std::uint64_t> accepted;
  for (const auto k : present_keys(8 * f.slot_count() + 8, seed)) {
    if (!f.insert(k)) return accepted;
    accepted.push_back(k);
  }
  ADD_FAILURE() << "the filter never reported a failed insert";
  return accepted;
}

cuckoo_filter small_filter(hasher h = {}) {
  cuckoo_filter f({.capacity = 100, .fpr = 0.01}, std::move(h));
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(f.insert("key-" + std::to_string(i)));
  return f;
}

// A small filter driven to failure, so its stash is in use.
cuckoo_filter full_filter() {
  cuckoo_filter f({.fingerprint_bits = 6, .buckets = 6, .max_kicks = 20}, 3);
  fill_until_failure(f, 5);
  EXPECT_TRUE(f.is_full());
  return f;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Sizing
// ---------------------------------------------------------------------------------------------

TEST(CuckooFilter, SizedFromCapacityAndFpr) {
  const cuckoo_filter f({.capacity = 1'000'000, .fpr = 0.01});
  EXPECT_EQ(f.fingerprint_bits(), 10u);
  EXPECT_EQ(f.bucket_count(), cuckoo_filter::buckets_for(1'000'000));
  EXPECT_EQ(f.bucket_count(), 263'554u);  // ceil(5 (10^6 + 1500) / 19), even
  EXPECT_EQ(f.slot_count(), 4 * f.bucket_count());
  EXPECT_EQ(f.max_kicks(), cuckoo_filter::default_max_kicks);
  EXPECT_EQ(f.capacity(), 1'000'000u);
  EXPECT_DOUBLE_EQ(f.target_fpr(), 0.01);
  EXPECT_EQ(f.hash().seed(), default_seed);
  // Semi-sorted: 4f - 4 bits per bucket, packed, plus one zero word, rounded up to whole cache
  // lines.
  EXPECT_TRUE(f.semi_sorted());
  EXPECT_EQ(f.bucket_bits(), 36u);
  EXPECT_EQ(f.size_in_bytes(), (36 * f.bucket_count() + 64 + 511) / 512 * 64);
  EXPECT_EQ(f.words().size() * 8, f.size_in_bytes());
  EXPECT_EQ(cuckoo_filter({.capacity = 1'000'000, .fpr = 0.001}).fingerprint_bits(), 13u);

  const filter_plan plan = cuckoo_filter::plan({.capacity = 1'000'000, .fpr = 0.01});
  EXPECT_EQ(plan.bytes, f.size_in_bytes());
  EXPECT_DOUBLE_EQ(plan.bits_per_key, 8.0 * f.size_in_bytes() / 1e6);
  EXPECT_DOUBLE_EQ(plan.expected_fpr,
                   detail::cuckoo_fpr_model(10, 1e6 / static_cast<double>(f.slot_count())));
  EXPECT_LT(plan.expected_fpr, 0.01);
  EXPECT_EQ(plan.parameters, "f=10 buckets=263554 kicks=2000 semi-sorted");
}

TEST(CuckooFilter, ExplicitParameters) {
  const cuckoo_filter f({.fingerprint_bits = 7, .buckets = 1001, .max_kicks = 50}, 99);
  EXPECT_EQ(f.fingerprint_bits(), 7u);
  EXPECT_EQ(f.bucket_count(), 1001u);  // odd counts are allowed too
  EXPECT_EQ(f.max_kicks(), 50u);
  EXPECT_EQ(f.hash().seed(), 99u);
  EXPECT_EQ(f.capacity(), 3803u);  // floor(0.95 * 4 * 1001)
  EXPECT_DOUBLE_EQ(f.target_fpr(), detail::cuckoo_fpr_model(7, 3803.0 / 4004.0));
  EXPECT_EQ(f.size_in_bytes(), (28 * 1001 + 64 + 511) / 512 * 64);
  EXPECT_FALSE(f.semi_sorted());  // plain buckets unless asked for
  EXPECT_EQ(f.bucket_bits(), 28u);
  const cuckoo_filter s(
      {.fingerprint_bits = 7, .buckets = 1001, .max_kicks = 50, .semi_sorted = true}, 99);
  EXPECT_TRUE(s.semi_sorted());
  EXPECT_EQ(s.bucket_bits(), 24u);
  EXPECT_EQ(s.capacity(), 3803u);
  EXPECT_DOUBLE_EQ(s.target_fpr(), f.target_fpr());  // same f, same rate
  EXPECT_EQ(s.size_in_bytes(), (24 * 1001 + 64 + 511) / 512 * 64);
  EXPECT_NE(s, cuckoo_filter({.fingerprint_bits = 7, .buckets = 1001, .max_kicks = 50}, 99));
}

// Sized from a target, the filter takes semi-sorted buckets whenever they make it smaller. A tiny
// table whose two layouts round up to the same number of 64-byte lines stays plain (same bytes,
// faster).
TEST(CuckooFilter, SemiSortedWhenItSavesBytes) {
  for (const std::uint64_t n : {1ULL, 10ULL, 100ULL, 101ULL, 1000ULL, 200'000ULL}) {
    for (const double p : {0.5, 0.01, 0.001, 0.0002}) {
      const cuckoo_filter f({.capacity = n, .fpr = p});
      const std::uint32_t fb = f.fingerprint_bits();
      const std::uint64_t plain =
          detail::words_for_bits(detail::cuckoo_storage_bits(fb, f.bucket_count(), false)) * 8;
      const std::uint64_t semi =
          detail::words_for_bits(detail::cuckoo_storage_bits(fb, f.bucket_count(), true)) * 8;
      EXPECT_EQ(f.semi_sorted(), semi < plain) << n << " " << p;
      EXPECT_EQ(f.size_in_bytes(), std::min(plain, semi));
      EXPECT_EQ(cuckoo_filter::plan({n, p}).bytes, f.size_in_bytes());
      if (n >= 1000) {
        EXPECT_TRUE(f.semi_sorted()) << n << " " << p;
      }
    }
  }
  // 100 keys at 1%: 32 buckets, 1280 or 1152 table bits, both 192 bytes with the zero word.
  EXPECT_FALSE(cuckoo_filter({.capacity = 100, .fpr = 0.01}).semi_sorted());
}

// f is the smallest width whose model rate at 95% load, 1 - exp(-7.6 / (2^f - 1)), reaches p.
TEST(CuckooFilter, FingerprintWidthFollowsTheModel) {
  for (std::uint32_t f = 4; f <= 16; ++f) {
    const double p_f = detail::cuckoo_fpr_model(f, 0.95);
    EXPECT_NEAR(p_f, 1 - std::exp(-7.6 / (std::ldexp(1.0, f) - 1)), 1e-12 * p_f);
    EXPECT_EQ(cuckoo_filter::fingerprint_bits_for(p_f), f);
    EXPECT_EQ(cuckoo_filter::fingerprint_bits_for(p_f * 1.001), f) << f;
    if (f < 16) {
      EXPECT_EQ(cuckoo_filter::fingerprint_bits_for(p_f * 0.999), f + 1) << f;
    }
  }
  EXPECT_EQ(cuckoo_filter::fingerprint_bits_for(0.9), 4u);  // never below 4 bits
  EXPECT_EQ(cuckoo_filter::fingerprint_bits_for(0.01), 10u);
  EXPECT_EQ(cuckoo_filter::fingerprint_bits_for(0.001), 13u);
  EXPECT_NEAR(cuckoo_filter::min_fpr(), 1.1596e-4, 1e-8);
  EXPECT_EQ(cuckoo_filter::fingerprint_bits_for(cuckoo_filter::min_fpr()), 16u);
  // The model is never above its linear bound 8·load / (2^f - 1).
  EXPECT_LT(detail::cuckoo_fpr_model(10, 0.95), 7.6 / 1023);
}

TEST(CuckooFilter, BucketCountRunsAtAbout95PercentLoad) {
  for (const std::uint64_t n :
       {1ULL, 2ULL, 7ULL, 10ULL, 1000ULL, 200'000ULL, 1'000'000ULL, 1'000'000'000ULL, 1ULL << 40}) {
    const std::uint64_t nb = cuckoo_filter::buckets_for(n);
    const auto slack = static_cast<std::uint64_t>(std::ceil(1.5 * std::sqrt(double(n))));
    const std::uint64_t expected = ((n + slack) * 5 + 18) / 19;
    EXPECT_EQ(nb, expected + expected % 2) << n;
    EXPECT_EQ(nb % 2, 0u) << n;
    const double load = static_cast<double>(n) / static_cast<double>(4 * nb);
    EXPECT_LE(load, 0.95) << n;
    if (n >= 200'000) {
      EXPECT_GE(load, 0.946) << n;
    }
  }
  // Not rounded to a power of two.
  EXPECT_FALSE(std::has_single_bit(cuckoo_filter::buckets_for(1'000'000)));
}

// At 0.1% the cuckoo filter beats the classic filter's 14.38 bits per key: 12.68 semi-sorted,
// 13.73 with plain buckets.
TEST(CuckooFilter, SmallerThanTheClassicFilterAtOneTenthPercent) {
  const target t{.capacity = 200'000, .fpr = 0.001};
  const cuckoo_filter f(t);
  const double bits_per_key = 8.0 * static_cast<double>(f.size_in_bytes()) / 200'000;
  EXPECT_LT(bits_per_key, 14.38);
  EXPECT_NEAR(bits_per_key, 12.0 / 0.9468, 0.01);  // (f - 1) / load
  EXPECT_LT(f.size_in_bytes(), bloom_filter::plan(t).bytes);
  const cuckoo_filter plain(
      {.fingerprint_bits = f.fingerprint_bits(), .buckets = f.bucket_count()});
  EXPECT_NEAR(8.0 * static_cast<double>(plain.size_in_bytes()) / 200'000, 13.0 / 0.9468, 0.01);
  // At 1% semi-sorting makes it smaller too (9 bits per fingerprint at 95% load: 9.49 bits per key
  // against 9.59; plain buckets would take 10.5); at 5% it is not (7.4 against 6.2).
  const target one{.capacity = 200'000, .fpr = 0.01};
  EXPECT_LT(cuckoo_filter::plan(one).bytes, bloom_filter::plan(one).bytes);
  const target five{.capacity = 200'000, .fpr = 0.05};
  EXPECT_GT(cuckoo_filter::plan(five).bytes, bloom_filter::plan(five).bytes);
}

// Sweeps p from 5% down and compares plan() bytes with the classic filter's. Because f is an
// integer, the cuckoo filter's cost is a staircase (one step per halving of p) while the classic
// filter's grows smoothly, so the two cross many times. Semi-sorted (the default), the cuckoo
// filter is first smaller at about 1.74% (f = 9) and smaller at every p below about 0.63%. With
// plain buckets (one bit more per fingerprint), first at about 0.38% (just below the top of the f =
// 11 step, as theory's ~0.4% predicts) and at every p below about 0.083%.
TEST(CuckooFilter, CrossoverWithTheClassicFilter) {
  const std::uint64_t n = 1'000'000;
  struct crossing {
    double first_smaller = 0, smaller_from = 0;
    void add(double p, bool smaller) {
      if (smaller && first_smaller == 0) first_smaller = p;
      if (!smaller) smaller_from = 0;
      if (smaller && smaller_from == 0) smaller_from = p;
    }
  } semi, plain;
  for (int i = 0;; ++i) {
    const double p = std::pow(10.0, -1.3 - 0.001 * i);
    if (p < cuckoo_filter::min_fpr()) break;
    const std::uint64_t bloom_bytes = bloom_filter::plan({n, p}).bytes;
    semi.add(p, cuckoo_filter::plan({.capacity = n, .fpr = p}).bytes < bloom_bytes);
    const std::uint64_t plain_bytes =
        detail::words_for_bits(detail::cuckoo_storage_bits(cuckoo_filter::fingerprint_bits_for(p),
                                                           cuckoo_filter::buckets_for(n), false)) *
        8;
    plain.add(p, plain_bytes < bloom_bytes);
  }
  EXPECT_NEAR(semi.first_smaller, 0.0174, 0.0002);
  EXPECT_NEAR(semi.smaller_from, 0.0063, 0.0001);
  EXPECT_NEAR(plain.first_smaller, 0.0038, 0.0001);
  EXPECT_NEAR(plain.smaller_from, 0.00083, 0.00002);
  std::printf(
      "cuckoo vs classic at n = 10^6: semi-sorted first smaller at p = %.5f, smaller for all "
      "p <= %.6f; plain first smaller at p = %.5f, for all p <= %.6f\n",
      semi.first_smaller, semi.smaller_from, plain.first_smaller, plain.smaller_from);
}

// ---------------------------------------------------------------------------------------------
// The table: alternate buckets, fingerprints, packing
// ---------------------------------------------------------------------------------------------

// alt(i) = (t - i) mod nb, t = reduce(H(fp), nb), with an even nb's fixed points paired: an
// involution for any bucket count, and without fixed points when nb is even.
TEST(CuckooFilter, AlternateBucketIsAnInvolution) {
  for (const std::uint64_t nb : {1ULL, 2ULL, 3ULL, 4ULL, 5ULL, 6ULL, 7ULL, 10ULL, 16ULL, 17ULL,
                                 100ULL, 101ULL, 1000ULL, 1001ULL}) {
    for (std::uint64_t fp = 1; fp < 256; ++fp) {
      std::uint64_t fixed = 0;
      for (std::uint64_t i = 0; i < nb; ++i) {
        const std::uint64_t j = detail::cuckoo_alt_bucket(i, fp, nb);
        ASSERT_LT(j, nb);
        ASSERT_EQ(detail::cuckoo_alt_bucket(j, fp, nb), i) << "nb=" << nb << " fp=" << fp;
        fixed += j == i;
      }
      // 2i = t (mod nb) has exactly one solution for odd nb; even nb pairs its fixed points.
      ASSERT_EQ(fixed, nb % 2) << "nb=" << nb << " fp=" << fp;
    }
  }
  // Large and odd/even bucket counts, every 16-bit fingerprint, buckets at both ends.
  std::uint64_t state = 9;
  for (const std::uint64_t nb :
       {263'554ULL, 263'555ULL, (1ULL << 44) + 2, (1ULL << 44) + 3, 1ULL << 20}) {
    for (std::uint64_t fp = 1; fp < 65536; ++fp) {
      for (const std::uint64_t i : {std::uint64_t{0}, nb - 1, test::splitmix64(state) % nb}) {
        const std::uint64_t j = detail::cuckoo_alt_bucket(i, fp, nb);
        ASSERT_LT(j, nb);
        ASSERT_EQ(detail::cuckoo_alt_bucket(j, fp, nb), i);
      }
    }
  }
}

TEST(CuckooFilter, FingerprintsAreNeverZeroAndUniform) {
  const cuckoo_filter f({.fingerprint_bits = 4, .buckets = 1000});
  std::vector<std::uint64_t> histogram(16);
  const auto keys = present_keys(150'000);
  for (const auto k : keys) {
    const auto p = detail::cuckoo_locate(hash_key(f.hash(), k), 4, 1000);
    ASSERT_GE(p.fp, 1u);
    ASSERT_LE(p.fp, 15u);
    ASSERT_LT(p.i1, 1000u);
    ASSERT_EQ(p.i2, detail::cuckoo_alt_bucket(p.i1, p.fp, 1000));
    ASSERT_NE(p.i1, p.i2);
    ++histogram[p.fp];
  }
  EXPECT_EQ(histogram[0], 0u);
  // Each of the 15 non-zero values: 10,000 expected, binomial sd ~97.
  for (std::uint64_t v = 1; v < 16; ++v) EXPECT_NEAR(double(histogram[v]), 10'000, 500) << v;
}

// Buckets of 4f bits straddle 64-bit words for most f; reading and writing one must leave its
// neighbours and the zero tail alone. With 128 buckets the table ends exactly on a cache line, so
// reading the last bucket loads the tail word (AddressSanitizer checks it stays in bounds).
TEST(CuckooFilter, PackedBucketsStraddleWordsCorrectly) {
  std::uint64_t state = 5;
  for (const std::uint64_t nb : {37u, 128u})
    for (std::uint32_t f = 4; f <= 16; ++f) {
      const detail::cuckoo_lanes lanes(f);
      std::vector<std::uint64_t> words(detail::words_for_bits(detail::cuckoo_storage_bits(f, nb)));
      std::vector<std::uint64_t> ref(nb * 4, 0);
      std::uint64_t straddling = 0;
      for (std::uint64_t b = 0; b < nb; ++b)
        straddling += (4 * f * b) / 64 != (4 * f * b + 4 * f - 1) / 64;
      EXPECT_EQ(straddling > 0, 64 % (4 * f) != 0) << f;
      for (int round = 0; round < 2000; ++round) {
        const std::uint64_t b = test::splitmix64(state) % nb;
        const auto slot = static_cast<std::uint32_t>(test::splitmix64(state) % 4);
        const std::uint64_t value = test::splitmix64(state) & lanes.field;
        ref[b * 4 + slot] = value;
        detail::write_bucket(words.data(), lanes, b,
                             lanes.set(detail::read_bucket(words.data(), lanes, b), slot, value));
        if (round % 50 != 0) continue;
        for (std::uint64_t c = 0; c < nb; ++c) {
          const std::uint64_t got = detail::read_bucket(words.data(), lanes, c);
          for (std::uint32_t s = 0; s < 4; ++s) {
            ASSERT_EQ(lanes.get(got, s), ref[c * 4 + s]) << "f=" << f << " bucket " << c;
          }
        }
      }
      // Every bit past the table stays zero.
      const std::uint64_t table_bits = 4 * f * nb;
      for (std::uint64_t bit = table_bits; bit < words.size() * 64; ++bit) {
        ASSERT_EQ((words[bit / 64] >> (bit % 64)) & 1, 0u) << "f=" << f << " bit " << bit;
      }
    }
}

// The SWAR slot detectors are exact for every slot (checked exhaustively for 4- and 5-bit slots).
TEST(CuckooFilter, SlotDetectorsAreExact) {
  for (const std::uint32_t f : {4u, 5u}) {
    const detail::cuckoo_lanes lanes(f);
    for (std::uint64_t x = 0; x < (std::uint64_t{1} << (4 * f)); ++x) {
      std::uint64_t zeros = 0, matches = 0;
      const std::uint64_t v = 1 + x % lanes.field;
      for (std::uint32_t s = 0; s < 4; ++s) {
        zeros |= static_cast<std::uint64_t>(lanes.get(x, s) == 0) << (s * f + f - 1);
        matches |= static_cast<std::uint64_t>(lanes.get(x, s) == v) << (s * f + f - 1);
      }
      ASSERT_EQ(lanes.zero_slots(x), zeros) << x;
      ASSERT_EQ(lanes.matching_slots(x, v), matches) << x;
      if (zeros != 0) {
        ASSERT_EQ(lanes.get(x, lanes.first_slot(zeros)), 0u);
      }
    }
  }
  std::uint64_t state = 1;
  for (std::uint32_t f = 6; f <= 16; ++f) {
    const detail::cuckoo_lanes lanes(f);
    for (int i = 0; i < 20'000; ++i) {
      std::uint64_t x = test::splitmix64(state) & lanes.bucket;
      // Plant zeros and repeats so that every case occurs.
      const std::uint64_t r = test::splitmix64(state);
      if (r & 1) x = lanes.set(x, (r >> 1) & 3, 0);
      if (r & 8) x = lanes.set(x, (r >> 4) & 3, lanes.get(x, (r >> 6) & 3));
      const std::uint64_t v = lanes.get(x, (r >> 8) & 3) | ((r >> 10) & 1);
      std::uint32_t zeros = 0, matches = 0;
      for (std::uint32_t s = 0; s < 4; ++s) {
        zeros += lanes.get(x, s) == 0;
        matches += lanes.get(x, s) == v;
      }
      ASSERT_EQ(std::popcount(lanes.zero_slots(x)), static_cast<int>(zeros));
      ASSERT_EQ(std::popcount(lanes.matching_slots(x, v)), static_cast<int>(matches));
    }
  }
}

// Semi-sorted buckets: every sorted multiset of 4 nibbles has its own code in [0, 3876), the
// codes decode back to it, and no other code is used.
TEST(CuckooFilter, SemiSortCodesAreABijection) {
  const auto& t = detail::cuckoo_semisort;
  std::vector<int> seen(4096, 0);
  std::uint32_t multisets = 0;
  for (std::uint32_t a = 0; a < 16; ++a)
    for (std::uint32_t b = a; b < 16; ++b)
      for (std::uint32_t c = b; c < 16; ++c)
        for (std::uint32_t d = c; d < 16; ++d) {
          const std::uint32_t code = t.rank[0][a] + t.rank[1][b] + t.rank[2][c] + t.rank[3][d];
          ASSERT_LT(code, detail::cuckoo_semisort_codes);
          ASSERT_EQ(t.nibbles[code], a | b << 4 | c << 8 | d << 12) << code;
          ++seen[code];
          ++multisets;
        }
  EXPECT_EQ(multisets, 3876u);  // C(19, 4)
  for (std::uint32_t code = 0; code < 4096; ++code) {
    ASSERT_EQ(seen[code], code < 3876 ? 1 : 0) << code;
    if (code >= 3876) {
      ASSERT_EQ(t.nibbles[code], 0u);
    }
  }
  EXPECT_EQ(t.rank[0][0] + t.rank[1][0] + t.rank[2][0] + t.rank[3][0], 0u);  // empty bucket: 0
  // Through the lanes, for 4-bit fingerprints (no low bits) every bucket in every slot order
  // encodes to the code of its sorted nibbles and decodes to them sorted.
  const detail::cuckoo_lanes lanes(4, true);
  EXPECT_EQ(lanes.stored_bits, 12u);
  for (std::uint64_t x = 0; x < 65536; ++x) {
    std::uint64_t v[4] = {x & 15, (x >> 4) & 15, (x >> 8) & 15, x >> 12};
    std::sort(v, v + 4);
    const std::uint64_t code = lanes.encode(x);
    ASSERT_EQ(code, t.rank[0][v[0]] + t.rank[1][v[1]] + t.rank[2][v[2]] + t.rank[3][v[3]]);
    ASSERT_EQ(lanes.decode(code), v[0] | v[1] << 4 | v[2] << 8 | v[3] << 12) << x;
    ASSERT_TRUE(lanes.canonical(code));
  }
  for (std::uint64_t code = 3876; code < 4096; ++code) ASSERT_FALSE(lanes.canonical(code));
}

// For every f, a semi-sorted bucket holds the multiset of its 4 fingerprints (decoded ascending)
// in 4f - 4 bits; buckets straddle words, and neighbours and the zero tail stay untouched.
TEST(CuckooFilter, SemiSortedBucketsRoundTrip) {
  std::uint64_t state = 11;
  for (const std::uint64_t nb : {37u, 128u})
    for (std::uint32_t f = 4; f <= 16; ++f) {
      const detail::cuckoo_lanes lanes(f, true);
      ASSERT_EQ(lanes.stored_bits, 4 * f - 4);
      std::vector<std::uint64_t> words(
          detail::words_for_bits(detail::cuckoo_storage_bits(f, nb, true)));
      std::vector<std::uint64_t> ref(nb * 4, 0);  // each bucket's fingerprints, ascending
      for (int round = 0; round < 2000; ++round) {
        const std::uint64_t b = test::splitmix64(state) % nb;
        const auto slot = static_cast<std::uint32_t>(test::splitmix64(state) % 4);
        const std::uint64_t r = test::splitmix64(state);
        // Zeros, repeats and values sharing a nibble occur often.
        std::uint64_t value = r & lanes.field;
        if ((r >> 32) % 4 == 0) value = 0;
        if ((r >> 32) % 4 == 1) value = ref[b * 4 + (r >> 40) % 4];
        if ((r >> 32) % 4 == 2) value = (ref[b * 4 + (r >> 40) % 4] | (r & lanes.low_field));
        ref[b * 4 + slot] = value;
        std::sort(ref.begin() + static_cast<std::ptrdiff_t>(b * 4),
                  ref.begin() + static_cast<std::ptrdiff_t>(b * 4 + 4));
        // Written in descending slot order; read back ascending.
        std::uint64_t descending = 0;
        for (std::uint32_t s = 0; s < 4; ++s) {
          descending = lanes.set(descending, s, ref[b * 4 + 3 - s]);
        }
        detail::write_bucket(words.data(), lanes, b, descending);
        ASSERT_TRUE(lanes.canonical(detail::read_stored_bucket(words.data(), lanes, b)));
        if (round % 50 != 0) continue;
        for (std::uint64_t c = 0; c < nb; ++c) {
          const std::uint64_t got = detail::read_bucket(words.data(), lanes, c);
          for (std::uint32_t s = 0; s < 4; ++s) {
            ASSERT_EQ(lanes.get(got, s), ref[c * 4 + s]) << "f=" << f << " bucket " << c;
          }
        }
      }
      const std::uint64_t table_bits = (4 * f - 4) * nb;
      for (std::uint64_t bit = table_bits; bit < words.size() * 64; ++bit) {
        ASSERT_EQ((words[bit / 64] >> (bit % 64)) & 1, 0u) << "f=" << f << " bit " << bit;
      }
      // Random plain buckets in any slot order: encode sorts, decode restores the sorted form.
      for (int i = 0; i < 2000; ++i) {
        std::uint64_t x = test::splitmix64(state) & lanes.bucket;
        const std::uint64_t r = test::splitmix64(state);
        if (r & 1) x = lanes.set(x, (r >> 1) & 3, 0);
        if (r & 8) x = lanes.set(x, (r >> 4) & 3, lanes.get(x, (r >> 6) & 3) ^ (r >> 12 & 1));
        std::uint64_t v[4] = {lanes.get(x, 0), lanes.get(x, 1), lanes.get(x, 2), lanes.get(x, 3)};
        std::sort(v, v + 4);
        const std::uint64_t e = lanes.encode(x);
        ASSERT_LE(e, lanes.stored);
        ASSERT_TRUE(lanes.canonical(e));
        const std::uint64_t d = lanes.decode(e);
        for (std::uint32_t s = 0; s < 4; ++s) ASSERT_EQ(lanes.get(d, s), v[s]);
      }
    }
}

// ---------------------------------------------------------------------------------------------
// Inserts, queries, remove, count
// ---------------------------------------------------------------------------------------------

TEST(CuckooFilter, InsertedKeysAreFoundAndClearEmpties) {
  cuckoo_filter f({.capacity = 10'000, .fpr = 0.01});
  const cuckoo_filter empty = f;
  const auto keys = present_keys(10'000);
  for (auto k : keys) EXPECT_FALSE(f.may_contain(k));
  for (auto k : keys) ASSERT_TRUE(f.insert(k));
  for (auto k : keys) ASSERT_TRUE(f.may_contain(k));
  for (auto k : keys) ASSERT_GE(f.count(k), 1u);
  EXPECT_EQ(f.inserted(), 10'000u);
  EXPECT_EQ(f.approximate_count(), 10'000u);
  EXPECT_EQ(f.occupied_slots(), 10'000u);
  EXPECT_NE(f, empty);
  f.clear();
  EXPECT_EQ(f, empty);
  EXPECT_EQ(f.occupied_slots(), 0u);
  EXPECT_EQ(f.inserted(), 0u);
  EXPECT_EQ(f.approximate_count(), 0u);
  EXPECT_EQ(f.estimated_fpr(), 0.0);
  for (auto w : f.words()) ASSERT_EQ(w, 0u);
  for (auto k : keys) EXPECT_FALSE(f.may_contain(k));
}

TEST(CuckooFilter, KeysOfEveryShape) {
  cuckoo_filter f({.capacity = 1000, .fpr = 0.001});
  const std::string s = "https://example.com/a";
  const std::vector<std::uint8_t> bytes = {0, 1, 2, 255};
  EXPECT_TRUE(f.insert(s));
  EXPECT_TRUE(f.insert(bytes));
  EXPECT_TRUE(f.insert(std::int16_t{-3}));
  EXPECT_TRUE(f.insert(std::uint8_t{200}));
  EXPECT_TRUE(f.insert(""));
  EXPECT_TRUE(f.may_contain(std::string_view(s)));
  EXPECT_TRUE(f.may_contain(std::span<const std::uint8_t>(bytes)));
  EXPECT_TRUE(f.may_contain(std::int64_t{-3}));  // same key as int16_t{-3}
  EXPECT_EQ(f.count(std::int64_t{-3}), 1u);
  EXPECT_TRUE(f.may_contain(200ULL));
  EXPECT_TRUE(f.remove(std::string()));
  EXPECT_FALSE(f.may_contain(std::string()));
}

TEST(CuckooFilter, RemoveAndCount) {
  cuckoo_filter f({.capacity = 20'000, .fpr = 0.001});
  const cuckoo_filter empty = f;
  // Removing from an empty filter: false, nothing changes.
  EXPECT_FALSE(f.remove("ghost"));
  EXPECT_EQ(f, empty);
  EXPECT_EQ(f.removed(), 0u);
  // Copies of one key count up and down.
  for (std::uint32_t i = 1; i <= 3; ++i) {
    ASSERT_TRUE(f.insert("dup"));
    EXPECT_EQ(f.count("dup"), i);
  }
  for (std::uint32_t i = 3; i >= 1; --i) {
    EXPECT_TRUE(f.remove("dup"));
    EXPECT_EQ(f.count("dup"), i - 1);
  }
  EXPECT_FALSE(f.remove("dup"));
  EXPECT_EQ(f, empty);
  EXPECT_EQ(f.removed(), 3u);

  const auto keys = present_keys(20'000);
  for (auto k : keys) ASSERT_TRUE(f.insert(k));
  for (std::size_t i = 0; i < 10'000; ++i) ASSERT_TRUE(f.remove(keys[i]));
  for (std::size_t i = 10'000; i < 20'000; ++i) ASSERT_TRUE(f.may_contain(keys[i]));
  EXPECT_EQ(f.approximate_count(), 10'000u);
  EXPECT_EQ(f.occupied_slots(), 10'000u);
  // The removed keys are gone but for false positives (rate ~0.05% at this load).
  std::size_t still = 0;
  for (std::size_t i = 0; i < 10'000; ++i) still += f.may_contain(keys[i]);
  EXPECT_LT(still, 25u);

  // A certainly absent key: remove returns false and changes nothing.
  std::size_t tried = 0;
  for (auto k : absent_keys(2'000)) {
    if (f.may_contain(k)) continue;
    const cuckoo_filter before = f;
    ASSERT_FALSE(f.remove(k));
    ASSERT_EQ(f, before);
    ++tried;
  }
  EXPECT_GT(tried, 1'900u);
  EXPECT_EQ(f.removed(), 10'003u);

  for (std::size_t i = 10'000; i < 20'000; ++i) ASSERT_TRUE(f.remove(keys[i]));
  EXPECT_EQ(f, empty);  // back to an all-zero table
}

// A key's bucket pair holds 8 copies of it; the 9th goes to the stash; the 10th fails. Removes
// undo them in turn, and a stashed fingerprint returns to the table when a slot frees up.
TEST(CuckooFilter, DuplicatesFillThePairThenTheStashThenFail) {
  cuckoo_filter f({.capacity = 1000, .fpr = 0.01});
  const cuckoo_filter empty = f;
  for (std::uint32_t i = 1; i <= 8; ++i) {
    ASSERT_TRUE(f.insert("same"));
    EXPECT_FALSE(f.is_full());
  }
  EXPECT_EQ(f.count("same"), 8u);
  ASSERT_TRUE(f.insert("same"));  // out of kicks: the victim is stashed, nothing lost
  EXPECT_TRUE(f.is_full());
  EXPECT_EQ(f.count("same"), 9u);
  EXPECT_EQ(f.occupied_slots(), 8u);
  const cuckoo_filter full = f;
  EXPECT_FALSE(f.insert("same"));
  EXPECT_FALSE(f.insert("other"));  // a full table refuses every insert ...
  EXPECT_EQ(f, full);               // ... and changes nothing
  EXPECT_EQ(f.inserted(), 9u);
  EXPECT_EQ(f.count("same"), 9u);
  EXPECT_FALSE(f.may_contain("other"));

  ASSERT_TRUE(f.remove("same"));
  EXPECT_FALSE(f.is_full());  // the stashed copy moved into the freed slot
  EXPECT_EQ(f.count("same"), 8u);
  EXPECT_EQ(f.occupied_slots(), 8u);
  EXPECT_TRUE(f.insert("other"));
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(f.remove("same"));
  EXPECT_FALSE(f.remove("same"));
  EXPECT_TRUE(f.remove("other"));
  EXPECT_EQ(f, empty);
}

// Driven past its limit, the filter reports the failure and keeps every key inserted before.
TEST(CuckooFilter, DrivenToFailureKeepsEveryKey) {
  const cuckoo_parameters shapes[] = {
      {.fingerprint_bits = 4, .buckets = 3, .max_kicks = 10},
      {.fingerprint_bits = 9, .buckets = 250, .max_kicks = 0},
      {.fingerprint_bits = 12, .buckets = 20'001},
      {.fingerprint_bits = 16, .buckets = 1000},
      {.fingerprint_bits = 4, .buckets = 3, .max_kicks = 10, .semi_sorted = true},
      {.fingerprint_bits = 5, .buckets = 500, .semi_sorted = true},
      {.fingerprint_bits = 9, .buckets = 250, .max_kicks = 0, .semi_sorted = true},
      {.fingerprint_bits = 13, .buckets = 20'001, .semi_sorted = true},
      {.fingerprint_bits = 16, .buckets = 1000, .semi_sorted = true}};
  for (const auto& shape : shapes) {
    cuckoo_filter f(shape, 7);
    const auto accepted = fill_until_failure(f, shape.buckets);
    SCOPED_TRACE("f=" + std::to_string(shape.fingerprint_bits) + " buckets=" +
                 std::to_string(shape.buckets) + (shape.semi_sorted ? " semi-sorted" : ""));
    EXPECT_TRUE(f.is_full());
    EXPECT_EQ(f.inserted(), accepted.size());
    EXPECT_EQ(f.approximate_count(), accepted.size());
    EXPECT_EQ(f.occupied_slots() + 1, accepted.size());  // one fingerprint in the stash
    for (auto k : accepted) ASSERT_TRUE(f.may_contain(k));
    std::vector<bool> out(accepted.size());
    EXPECT_EQ(f.may_contain_many(accepted, out), accepted.size());
    if (shape.max_kicks >= 2000) {
      EXPECT_GT(f.load_factor(), 0.95);
    }
    // Every further insert fails at once and changes nothing.
    const cuckoo_filter snapshot = f;
    for (auto k : absent_keys(100)) ASSERT_FALSE(f.insert(k));
    EXPECT_EQ(f, snapshot);
    EXPECT_EQ(f.inserted(), accepted.size());
    // The stash survives a round trip through the file format.
    EXPECT_EQ(deserialize<cuckoo_filter>(serialize(f)), f);
    // Removing keys makes room again; the rest stay present throughout.
    for (std::size_t i = 0; i < accepted.size(); ++i) {
      ASSERT_TRUE(f.remove(accepted[i]));
      if (accepted.size() < 300 || i % (accepted.size() / 4) == 0) {
        for (std::size_t j = i + 1; j < accepted.size(); ++j)
          ASSERT_TRUE(f.may_contain(accepted[j]));
      }
    }
    EXPECT_FALSE(f.is_full());
    EXPECT_EQ(f.approximate_count(), 0u);
    EXPECT_EQ(f.occupied_slots(), 0u);
  }
}

// Filters sized for 1% and 0.1% take all `capacity` random keys, at about 95% load, and their
// measured false-positive rate matches the model.
struct capacity_case {
  std::uint64_t n;
  double p;
  bool plain = false;  // the same f and bucket count in plain buckets, from explicit parameters
};
class CuckooCapacity : public ::testing::TestWithParam<capacity_case> {};

TEST_P(CuckooCapacity, TakesEveryKeyAndMatchesTheModel) {
  const auto [n, p, plain] = GetParam();
  cuckoo_filter f = plain
                        ? cuckoo_filter({.fingerprint_bits = cuckoo_filter::fingerprint_bits_for(p),
                                         .buckets = cuckoo_filter::buckets_for(n)})
                        : cuckoo_filter({.capacity = n, .fpr = p});
  EXPECT_EQ(f.semi_sorted(), !plain);
  const auto keys = present_keys(n, n);
  std::uint64_t failed = 0;
  for (auto k : keys) failed += !f.insert(k);
  ASSERT_EQ(failed, 0u) << "n=" << n << " p=" << p;
  EXPECT_FALSE(f.is_full());
  EXPECT_EQ(f.approximate_count(), n);
  EXPECT_EQ(f.occupied_slots(), n);
  EXPECT_GE(f.load_factor(), 0.946);
  EXPECT_LE(f.load_factor(), 0.95);
  std::vector<bool> found(n);
  EXPECT_EQ(f.may_contain_many(keys, found), n);

  const std::uint64_t probes = 1'000'000;
  const double measured = test::measured_fpr(f, probes);
  const double model = detail::cuckoo_fpr_model(f.fingerprint_bits(), f.load_factor());
  EXPECT_DOUBLE_EQ(f.estimated_fpr(), model);
  EXPECT_NEAR(measured, model, cuckoo_tolerance(model, probes, f)) << "n=" << n << " p=" << p;
  EXPECT_LE(model, p);  // sizing reaches the target
  std::printf("n=%llu p=%g %s: f=%u, %.3f bits/key, load %.4f, fpr measured %.6f model %.6f\n",
              static_cast<unsigned long long>(n), p, plain ? "plain" : "semi-sorted",
              f.fingerprint_bits(),
              8.0 * static_cast<double>(f.size_in_bytes()) / static_cast<double>(n),
              f.load_factor(), measured, model);
}

INSTANTIATE_TEST_SUITE_P(
    Targets, CuckooCapacity,
    ::testing::Values(capacity_case{200'000, 0.01}, capacity_case{200'000, 0.001},
                      capacity_case{1'000'000, 0.01}, capacity_case{1'000'000, 0.001},
                      capacity_case{200'000, 0.01, true}, capacity_case{200'000, 0.001, true}));

// The model at small widths, where the textbook 1 - (1 - 1/(2^f - 1))^(8·load) would be off by
// 2.5% (f = 4): 1 - exp(-8·load / (2^f - 1)) counts stored keys with the query's fingerprint and
// bucket pair, whatever the table's arrangement.
class CuckooFpr : public ::testing::TestWithParam<double> {};

TEST_P(CuckooFpr, MeasuredRateMatchesTheModel) {
  const double p = GetParam();
  const std::uint64_t n = 50'000;
  cuckoo_filter f({.capacity = n, .fpr = p});
  for (auto k : present_keys(n)) ASSERT_TRUE(f.insert(k));
  const std::uint64_t probes = 400'000;
  const double measured = test::measured_fpr(f, probes);
  const double model = f.estimated_fpr();
  EXPECT_NEAR(measured, model, cuckoo_tolerance(model, probes, f))
      << "p=" << p << " f=" << f.fingerprint_bits();
  EXPECT_LE(model, p);
}

INSTANTIATE_TEST_SUITE_P(Widths, CuckooFpr, ::testing::Values(0.5, 0.2, 0.1, 0.03, 0.0003));

TEST(CuckooFilter, CountLoadAndEstimatedFprFollowTheContent) {
  const std::uint64_t n = 40'000;
  cuckoo_filter f({.capacity = n, .fpr = 0.01});
  const auto keys = present_keys(n);
  for (std::size_t i = 0; i < n / 2; ++i) ASSERT_TRUE(f.insert(keys[i]));
  EXPECT_EQ(f.approximate_count(), n / 2);
  EXPECT_DOUBLE_EQ(f.load_factor(), double(n / 2) / double(f.slot_count()));
  EXPECT_DOUBLE_EQ(f.estimated_fpr(), detail::cuckoo_fpr_model(10, f.load_factor()));
  const double half = f.estimated_fpr();
  for (std::size_t i = n / 2; i < n; ++i) ASSERT_TRUE(f.insert(keys[i]));
  EXPECT_NEAR(f.estimated_fpr(), 2 * half, 0.01 * half);  // about linear in the load
  EXPECT_LE(f.estimated_fpr(), 0.01);
  for (std::size_t i = 0; i < n / 4; ++i) ASSERT_TRUE(f.remove(keys[i]));
  EXPECT_EQ(f.approximate_count(), n - n / 4);
  EXPECT_EQ(f.occupied_slots(), n - n / 4);
}

TEST(CuckooFilter, MayContainManyAgreesWithMayContain) {
  for (cuckoo_filter f : {cuckoo_filter({.capacity = 50'000, .fpr = 0.05}), full_filter()}) {
    for (auto k : present_keys(40'000)) {
      if (!f.insert(k)) break;
    }
    std::vector<std::uint64_t> probe = absent_keys(20'000);
    const auto present = present_keys(20'000);
    probe.insert(probe.end(), present.begin(), present.end());
    probe.push_back(0);  // a size that is not a multiple of the block
    const std::size_t positives = test::expect_batched_matches_single(f, probe);
    EXPECT_GT(positives, 0u);
  }
  cuckoo_filter f({.capacity = 100, .fpr = 0.01});
  ASSERT_TRUE(f.insert("b"));
  EXPECT_EQ(test::expect_batched_output_checked(f), 1u);
}

// The same operations build the same table (eviction randomness comes from the keys' hashes).
TEST(CuckooFilter, DeterministicAndSeeded) {
  cuckoo_filter a({.capacity = 5'000, .fpr = 0.01}), b = a, c({.capacity = 5'000, .fpr = 0.01}, 1);
  for (auto k : present_keys(5'000)) {
    ASSERT_TRUE(a.insert(k));
    ASSERT_TRUE(b.insert(k));
    ASSERT_TRUE(c.insert(k));
  }
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);  // another seed, another table
  const secret_key key = random_key();
  cuckoo_filter d({.capacity = 100, .fpr = 0.01}, key);
  ASSERT_TRUE(d.insert("x"));
  EXPECT_TRUE(d.may_contain("x"));
  EXPECT_TRUE(d.hash().keyed());
}

TEST(CuckooFilter, InvalidParametersThrowWithUsefulMessages) {
  // Targets ({.capacity, .fpr}) are checked for every filter in test_filter_family.cpp.
  test::expect_invalid([] { cuckoo_filter({.capacity = 10, .fpr = 1e-5}); },
                       "allowed range is [0.000115");
  test::expect_invalid([] { cuckoo_filter({.capacity = 10, .fpr = 1e-5}); }, "reach no lower");
  test::expect_invalid([] { cuckoo_filter::plan({.capacity = 10, .fpr = 1e-5}); }, "fpr = 1");
  test::expect_invalid([] { cuckoo_filter({.capacity = (1ULL << 48) + 1, .fpr = 0.01}); },
                       "allowed range is [1, 2^48]");
  test::expect_invalid([] { cuckoo_filter({.capacity = 1ULL << 46, .fpr = 0.01}); },
                       "more than the maximum 2^48 bits");
  test::expect_invalid([] { cuckoo_filter({.fingerprint_bits = 3, .buckets = 10}); },
                       "fingerprint_bits = 3 is invalid; allowed range is [4, 16]");
  test::expect_invalid([] { cuckoo_filter({.fingerprint_bits = 17, .buckets = 10}); },
                       "fingerprint_bits = 17");
  test::expect_invalid([] { cuckoo_filter({.fingerprint_bits = 8, .buckets = 0}); }, "buckets = 0");
  test::expect_invalid([] { cuckoo_filter({.fingerprint_bits = 16, .buckets = 1ULL << 43}); },
                       "allowed range is [1, 4398046511103] for 16-bit fingerprints");
  test::expect_invalid(
      [] { cuckoo_filter({.fingerprint_bits = 8, .buckets = 10, .max_kicks = 1u << 21}); },
      "max_kicks = 2097152 is invalid; allowed range is [0, 1048576]");
}

// ---------------------------------------------------------------------------------------------
// File format
// ---------------------------------------------------------------------------------------------

TEST(CuckooFormat, LayoutIsDocumented) {
  // docs/cuckoo-filter.md: the 56-byte parameter block at offset 128, payload at 192.
  const cuckoo_filter f = full_filter();
  const auto bytes = serialize(f);
  const std::byte* p = bytes.data() + 128;
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 12), 4u);   // kind: cuckoo
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 20), 56u);  // parameter block size
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 64), f.inserted());
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 72), 192u);  // payload offset
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 80), f.size_in_bytes());
  EXPECT_EQ(detail::get<std::uint32_t>(p + 0), 6u);   // fingerprint bits
  EXPECT_EQ(detail::get<std::uint32_t>(p + 4), 20u);  // max kicks
  EXPECT_EQ(detail::get<std::uint64_t>(p + 8), 6u);   // buckets
  EXPECT_EQ(detail::get<std::uint64_t>(p + 16), f.capacity());
  EXPECT_EQ(detail::get<double>(p + 24), f.target_fpr());
  EXPECT_EQ(detail::get<std::uint64_t>(p + 32), 0u);  // removes
  EXPECT_EQ(detail::get<std::uint32_t>(p + 40), 1u);  // stash in use
  const auto stash_fp = detail::get<std::uint32_t>(p + 44);
  const auto stash_bucket = detail::get<std::uint64_t>(p + 48);
  EXPECT_GE(stash_fp, 1u);
  EXPECT_LT(stash_fp, 64u);
  EXPECT_LT(stash_bucket, 6u);
  // The payload is the packed table as in memory: bucket b at bit 24·b.
  EXPECT_EQ(std::memcmp(bytes.data() + 192, f.words().data(), f.size_in_bytes()), 0);
  EXPECT_EQ(bytes.size(), 192 + f.size_in_bytes());
}

TEST(CuckooFormat, OtherKindsAreRejected) {
  test::temp_dir dir;
  bloom_filter b({.capacity = 100, .fpr = 0.01});
  b.insert("x");
  save(b, dir / "b.bloom");
  EXPECT_TRUE(contains(format_error_of([&] { load<cuckoo_filter>(dir / "b.bloom"); }),
                       "holds a bloom filter, not a cuckoo filter"));
  EXPECT_THROW(map_file<cuckoo_filter>(dir / "b.bloom"), format_error);
  save(small_filter(), dir / "c.cuckoo");
  EXPECT_TRUE(contains(format_error_of([&] { load<bloom_filter>(dir / "c.cuckoo"); }),
                       "holds a cuckoo filter, not a bloom filter"));
}

// Writes `value` at `offset` of a good file, reseals its checksum and returns the load error; the
// mapped view must validate exactly as much (the same error).
template <class T>
std::string edited_error(const std::vector<std::byte>& good, std::size_t offset, T value) {
  const std::string loaded = test::edited_image_error<cuckoo_filter>(good, offset, value);
  auto b = good;
  detail::put(b.data() + offset, value);
  test::reseal(b);
  const std::string viewed = format_error_of([&] {
    const auto parsed = detail::parse(b);
    cuckoo_filter::view_of(parsed);
  });
  EXPECT_EQ(loaded, viewed);
  return loaded;
}

TEST(CuckooFormat, ValuesAreValidatedEvenWithAGoodChecksum) {
  const auto small = serialize(small_filter());  // stash empty; 32 buckets of 10 bits
  const auto full = serialize(full_filter());    // stash in use; 6 buckets of 6 bits
  const std::size_t P = 128;
  EXPECT_TRUE(
      contains(edited_error(small, P + 0, std::uint32_t{3}), "fingerprint bits out of range: 3"));
  EXPECT_TRUE(
      contains(edited_error(small, P + 0, std::uint32_t{17}), "fingerprint bits out of range"));
  EXPECT_TRUE(contains(edited_error(small, P + 0, std::uint32_t{16}), "payload has"));
  EXPECT_TRUE(
      contains(edited_error(small, P + 4, std::uint32_t{1u << 21}), "max kicks out of range"));
  EXPECT_TRUE(contains(edited_error(small, P + 8, std::uint64_t{0}), "bucket count out of range"));
  EXPECT_TRUE(
      contains(edited_error(small, P + 8, std::uint64_t{1} << 50), "bucket count out of range"));
  EXPECT_TRUE(contains(edited_error(small, P + 8, std::uint64_t{1000}), "payload has"));
  EXPECT_TRUE(contains(edited_error(small, P + 16, std::uint64_t{0}), "capacity is zero"));
  EXPECT_TRUE(contains(edited_error(small, P + 24, 1.5), "target fpr"));
  EXPECT_TRUE(contains(edited_error(small, P + 32, std::uint64_t{101}), "exceeds insert count"));
  EXPECT_TRUE(contains(edited_error(small, P + 32, std::uint64_t{1}), "the table holds 100"));
  EXPECT_TRUE(contains(edited_error(small, 64, std::uint64_t{99}), "99 inserts minus 0 removes"));
  EXPECT_TRUE(contains(edited_error(small, P + 40, std::uint32_t{2}), "stash state"));
  EXPECT_TRUE(contains(edited_error(small, P + 44, std::uint32_t{5}), "empty stash"));
  EXPECT_TRUE(contains(edited_error(small, P + 48, std::uint64_t{5}), "empty stash"));
  EXPECT_TRUE(
      contains(edited_error(small, P + 40, std::uint32_t{1}), "stash fingerprint out of range: 0"));
  EXPECT_TRUE(
      contains(edited_error(full, P + 44, std::uint32_t{0}), "stash fingerprint out of range"));
  EXPECT_TRUE(
      contains(edited_error(full, P + 44, std::uint32_t{64}), "stash fingerprint out of range"));
  EXPECT_TRUE(
      contains(edited_error(full, P + 48, std::uint64_t{6}), "stash bucket out of range: 6"));
  EXPECT_TRUE(contains(edited_error(full, P + 40, std::uint32_t{0}), "empty stash"));
  // The payload: a bit past the table (small: 1280 table bits), and a fingerprint too many.
  EXPECT_TRUE(
      contains(edited_error(small, 192 + 160, std::uint8_t{1}), "padding bits past the table"));
  EXPECT_TRUE(contains(edited_error(small, 192 + 184, std::uint8_t{0x80}), "padding bits"));
  auto one_more = small;
  const cuckoo_filter f = small_filter();
  const detail::cuckoo_lanes lanes(10);
  std::uint64_t b = 0;
  while (lanes.zero_slots(detail::read_bucket(f.words().data(), lanes, b)) == 0) ++b;
  std::vector<std::uint64_t> words(f.words().begin(), f.words().end());
  const std::uint64_t bucket = detail::read_bucket(words.data(), lanes, b);
  detail::write_bucket(words.data(), lanes, b,
                       lanes.set(bucket, lanes.first_slot(lanes.zero_slots(bucket)), 1));
  std::memcpy(one_more.data() + 192, words.data(), words.size() * 8);
  test::reseal(one_more);
  EXPECT_TRUE(
      contains(format_error_of([&] { deserialize<cuckoo_filter>(one_more); }),
               "the table holds 101 fingerprints, but 100 inserts minus 0 removes leave 100"));
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

// Small and odd shapes: collisions, evictions and full tables are where bugs hide.
rc::Gen<cuckoo_parameters> gen_params(std::uint64_t max_buckets, std::uint32_t max_bits) {
  return rc::gen::build<cuckoo_parameters>(
      rc::gen::set(&cuckoo_parameters::fingerprint_bits,
                   rc::gen::inRange<std::uint32_t>(4, max_bits + 1)),
      rc::gen::set(&cuckoo_parameters::buckets, rc::gen::inRange<std::uint64_t>(1, max_buckets)),
      rc::gen::set(&cuckoo_parameters::max_kicks, rc::gen::inRange<std::uint32_t>(0, 40)),
      rc::gen::set(&cuckoo_parameters::semi_sorted, rc::gen::arbitrary<bool>()));
}

}  // namespace

RC_GTEST_PROP(CuckooProperties, NoFalseNegativesOnRandomKeys, ()) {
  const auto p = *gen_params(80, 16);
  const bool keyed = *rc::gen::arbitrary<bool>();
  const auto keys = *rc::gen::container<std::vector<any_key>>(gen_key());
  cuckoo_filter f(p, keyed ? hasher(random_key()) : hasher(*rc::gen::arbitrary<std::uint64_t>()));
  std::vector<any_key> accepted;
  for (const auto& k : keys) {
    if (std::visit([&](const auto& v) { return f.insert(v); }, k)) accepted.push_back(k);
  }
  RC_ASSERT(f.approximate_count() == accepted.size());
  const auto bytes = serialize(f);
  const auto loaded = deserialize<cuckoo_filter>(bytes);
  RC_ASSERT(loaded == f);
  const auto parsed = detail::parse(bytes);
  const auto view = cuckoo_filter::view_of(parsed);
  for (const auto& k : accepted) {
    std::visit(
        [&](const auto& v) {
          RC_ASSERT(f.may_contain(v));
          RC_ASSERT(loaded.may_contain(v));
          RC_ASSERT(view.may_contain(v));
        },
        k);
  }
}

// Random sequences of inserts, removes and queries over a small key pool (so duplicates are
// common), on tiny tables (so they fill up and fail), checked against an exact multiset.
RC_GTEST_PROP(CuckooProperties, AgreesWithAnExactMultiset, ()) {
  const auto p = *gen_params(9, 8);
  cuckoo_filter f(p, *rc::gen::arbitrary<std::uint64_t>());
  const auto pool = *rc::gen::inRange<std::uint32_t>(1, 60);
  const auto ops =
      *rc::gen::container<std::vector<std::pair<std::uint8_t, std::uint32_t>>>(rc::gen::pair(
          rc::gen::inRange<std::uint8_t>(0, 4), rc::gen::inRange<std::uint32_t>(0, pool)));
  std::map<std::uint32_t, std::uint32_t> model;
  std::uint64_t total = 0;
  bool refused = false;
  for (const auto& [op, key] : ops) {
    if (op <= 1) {  // insert (half of all operations)
      const bool was_full = f.is_full();
      const cuckoo_filter before = f;
      if (f.insert(key)) {
        RC_ASSERT(!was_full);
        ++model[key];
        ++total;
      } else {
        RC_ASSERT(was_full);  // only a full table refuses, and then nothing changes
        RC_ASSERT(f == before);
        refused = true;
      }
    } else if (op == 2) {  // remove
      if (model[key] > 0) {
        RC_ASSERT(f.remove(key));
        --model[key];
        --total;
      } else if (!f.may_contain(key)) {
        const cuckoo_filter before = f;
        RC_ASSERT(!f.remove(key));  // certainly absent: false, unchanged
        RC_ASSERT(f == before);
      }
      // (Removing a key never inserted that collides with a stored one is misuse: skipped.)
    } else if (model[key] > 0) {  // query
      RC_ASSERT(f.may_contain(key));
    }
    RC_ASSERT(f.approximate_count() == total);
    RC_ASSERT(f.occupied_slots() + (f.is_full() ? 1 : 0) == total);
    for (const auto& [k, c] : model) {
      if (c == 0) continue;
      RC_ASSERT(f.may_contain(k));
      RC_ASSERT(f.count(k) >= c);  // colliding fingerprints can only add
    }
  }
  RC_CLASSIFY(refused, "an insert was refused");
  RC_CLASSIFY(f.is_full(), "ends full");
  std::vector<std::uint32_t> all(pool);
  for (std::uint32_t k = 0; k < pool; ++k) all[k] = k;
  std::vector<bool> out(pool);
  f.may_contain_many(all, out);
  for (std::uint32_t k = 0; k < pool; ++k) RC_ASSERT(out[k] == f.may_contain(k));
}

// The two layouts store the same (fingerprint, bucket pair) of every key, so while they accept
// the same inserts they answer may_contain and count alike for every key, whatever arrangement
// their eviction walks (which see slots in different orders) produced.
RC_GTEST_PROP(CuckooProperties, LayoutsGiveTheSameAnswers, ()) {
  auto p = *gen_params(9, 16);
  p.semi_sorted = false;
  cuckoo_filter plain(p, *rc::gen::arbitrary<std::uint64_t>());
  p.semi_sorted = true;
  cuckoo_filter semi(p, plain.hash());
  const auto pool = *rc::gen::inRange<std::uint32_t>(1, 60);
  const auto ops =
      *rc::gen::container<std::vector<std::pair<std::uint8_t, std::uint32_t>>>(rc::gen::pair(
          rc::gen::inRange<std::uint8_t>(0, 3), rc::gen::inRange<std::uint32_t>(0, pool)));
  std::map<std::uint32_t, std::uint32_t> model;
  for (const auto& [op, key] : ops) {
    if (op <= 1) {
      const bool a = plain.insert(key);
      const bool b = semi.insert(key);
      if (a != b) break;  // one table filled first: from here on they hold different keys
      if (a) ++model[key];
    } else if (model[key] > 0) {
      RC_ASSERT(plain.remove(key));
      RC_ASSERT(semi.remove(key));
      --model[key];
    }
    RC_ASSERT(plain.approximate_count() == semi.approximate_count());
    for (std::uint32_t k = 0; k < pool; ++k) {
      RC_ASSERT(plain.may_contain(k) == semi.may_contain(k));
      RC_ASSERT(plain.count(k) == semi.count(k));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Semi-sorted buckets in files
// ---------------------------------------------------------------------------------------------

namespace {

std::vector<std::byte> from_hex(const char* hex) {
  std::vector<std::byte> out;
  for (std::size_t i = 0; hex[i] != 0 && hex[i + 1] != 0; i += 2) {
    out.push_back(static_cast<std::byte>(std::stoi(std::string(hex + i, 2), nullptr, 16)));
  }
  return out;
}

// Files written before semi-sorted buckets existed (by the code of that time, unchanged since):
// the target-built filter {.capacity = 100, .fpr = 0.01} with seed 11 holding "key-0" .. "key-99"
// less "key-7", and {.fingerprint_bits = 6, .buckets = 6, .max_kicks = 20} with seed 3 holding the
// keys k · 0x9e3779b97f4a7c15, k = 0, 1, ..., up to its first refused insert (25 keys, stash in
// use).
const char* const golden_target =
    "424c4f4f4d455259010000000400000001000000380000000b00000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "6400000000000000c000000000000000c0000000000000008001000000000000"
    "0000000000000000000000000000000000000000000000008bb4d2a308538c7d"
    "0a000000d0070000200000000000000064000000000000007b14ae47e17a843f"
    "0100000000000000000000000000000000000000000000000000000000000000"
    "5e010000008cea9e3a4875c4591e00deb751ad1cc50300000013319c0b00bcb6"
    "0600009dfc5f6c9e0065ebf28f72476d3d00d484090000171e060000207ac435"
    "f464000000005f26c54c2aa4cb7dbdedeb05dc1f00f2824594b7c58fc62b7f23"
    "a41dc6d2c03fd1e32700ccb63fd60c412fbae09a5fd7fee4f6cea22d3a740100"
    "000049778f030058bc8f064d59b89c2600d7c958f1483edd050000b3a80b0000"
    "0000000000000000000000000000000000000000000000000000000000000000";
const char* const golden_full =
    "424c4f4f4d455259010000000400000001000000380000000300000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "1900000000000000c00000000000000040000000000000000001000000000000"
    "000000000000000000000000000000000000000000000000ee3ed8741a68ce08"
    "060000001400000006000000000000001600000000000000b60ef71f4721bc3f"
    "0000000000000000010000000400000005000000000000000000000000000000"
    "4dfe75244ef0db722aa018aa368be0d8a2b80000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000";

cuckoo_filter small_filter_in(bool semi_sorted) {
  cuckoo_filter f({.fingerprint_bits = 10, .buckets = 32, .semi_sorted = semi_sorted}, 4);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(f.insert("key-" + std::to_string(i)));
  return f;
}

cuckoo_filter full_filter_in(bool semi_sorted) {
  cuckoo_filter f(
      {.fingerprint_bits = 6, .buckets = 6, .max_kicks = 20, .semi_sorted = semi_sorted}, 3);
  fill_until_failure(f, 5);
  EXPECT_TRUE(f.is_full());
  return f;
}

}  // namespace

TEST(CuckooFormat, FilesFromBeforeSemiSortingLoadAsPlainBuckets) {
  const auto old_target = from_hex(golden_target);
  ASSERT_EQ(old_target.size(), 384u);
  const auto a = deserialize<cuckoo_filter>(old_target);
  EXPECT_FALSE(a.semi_sorted());
  EXPECT_EQ(a.fingerprint_bits(), 10u);
  EXPECT_EQ(a.bucket_count(), 32u);
  EXPECT_EQ(a.approximate_count(), 99u);
  for (int i = 0; i < 100; ++i) {
    if (i != 7) {
      EXPECT_TRUE(a.may_contain("key-" + std::to_string(i))) << i;
    }
  }
  EXPECT_EQ(serialize(a), old_target);  // written back byte for byte
  const auto parsed = detail::parse(old_target);
  const auto view = cuckoo_filter::view_of(parsed);
  EXPECT_FALSE(view.semi_sorted());
  EXPECT_EQ(view.occupied_slots(), 99u);

  // A plain filter built now writes exactly the bytes the old code wrote.
  const auto old_full = from_hex(golden_full);
  // The old code hashed integer keys as their bytes: the legacy seeded algorithm.
  cuckoo_filter b({.fingerprint_bits = 6, .buckets = 6, .max_kicks = 20},
                  hasher(3, hash_algorithm::xxh3_128_seeded));
  std::vector<std::uint64_t> keys;
  for (std::uint64_t k = 0;; ++k) {
    if (!b.insert(k * 0x9e3779b97f4a7c15ULL)) break;
    keys.push_back(k * 0x9e3779b97f4a7c15ULL);
  }
  EXPECT_EQ(keys.size(), 25u);
  EXPECT_EQ(serialize(b), old_full);
  const auto loaded = deserialize<cuckoo_filter>(old_full);
  EXPECT_EQ(loaded, b);
  EXPECT_TRUE(loaded.is_full());
  for (auto k : keys) EXPECT_TRUE(loaded.may_contain(k));
}

TEST(CuckooFormat, RoundTripsAreExact) {
  test::temp_dir dir;
  for (const cuckoo_filter& f :
       {small_filter(), small_filter(random_key()), full_filter(), small_filter_in(false),
        full_filter_in(false), small_filter_in(true), full_filter_in(true)}) {
    SCOPED_TRACE(std::string(f.semi_sorted() ? "semi-sorted" : "plain") +
                 (f.hash().keyed() ? ", keyed" : "") + (f.is_full() ? ", full" : ""));
    const auto loaded = test::expect_saved_copy(f, dir / "f.cuckoo");
    const auto copy = deserialize<cuckoo_filter>(serialize(f));
    for (const cuckoo_filter* g : {&loaded, &copy}) {
      test::expect_same_filter(*g, f);
      EXPECT_EQ(g->removed(), f.removed());
      EXPECT_EQ(g->max_kicks(), f.max_kicks());
      EXPECT_EQ(g->is_full(), f.is_full());
      EXPECT_EQ(g->semi_sorted(), f.semi_sorted());
    }
    const auto mapped = map_file<cuckoo_filter>(dir / "f.cuckoo");
    EXPECT_EQ(mapped->approximate_count(), f.approximate_count());
    EXPECT_EQ(mapped->occupied_slots(), f.occupied_slots());
    EXPECT_EQ(mapped->estimated_fpr(), f.estimated_fpr());
    EXPECT_EQ(mapped->is_full(), f.is_full());
    EXPECT_EQ(mapped->size_in_bytes(), f.size_in_bytes());
    EXPECT_EQ(mapped->semi_sorted(), f.semi_sorted());
    std::vector<std::uint64_t> probe = absent_keys(5'000);
    for (auto k : present_keys(200, 5)) probe.push_back(k);  // full_filter's keys
    std::vector<bool> a(probe.size()), b(probe.size()), c(probe.size());
    const std::size_t positives = f.may_contain_many(probe, a);
    EXPECT_EQ(mapped->may_contain_many(probe, b), positives);
    EXPECT_EQ(loaded.may_contain_many(probe, c), positives);
    EXPECT_EQ(a, b);
    EXPECT_EQ(a, c);
    for (auto k : probe) ASSERT_EQ(mapped->count(k), f.count(k));
    for (int i = 0; i < 100 && f.inserted() >= 100; ++i) {
      EXPECT_TRUE(mapped->may_contain("key-" + std::to_string(i)));
      EXPECT_TRUE(loaded.may_contain("key-" + std::to_string(i)));
    }
    // A loaded copy keeps working: removes and inserts as on the original.
    auto g = loaded;
    auto h = f;
    for (auto k : present_keys(10, 5)) EXPECT_EQ(g.remove(k), h.remove(k));
    for (auto k : absent_keys(10)) EXPECT_EQ(g.insert(k), h.insert(k));
    EXPECT_EQ(g, h);
  }
}

TEST(CuckooFormat, SemiSortedLayoutIsDocumented) {
  // docs/cuckoo-filter.md: the parameter block grows to 64 bytes (u32 layout = 1, u32 zero); the
  // payload still starts at 192 and holds buckets of 4f - 4 bits.
  const cuckoo_filter f = full_filter_in(true);
  const auto bytes = serialize(f);
  const std::byte* p = bytes.data() + 128;
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 20), 64u);   // parameter block size
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 72), 192u);  // payload offset
  EXPECT_EQ(detail::get<std::uint32_t>(p + 0), 6u);                // fingerprint bits
  EXPECT_EQ(detail::get<std::uint64_t>(p + 8), 6u);                // buckets
  EXPECT_EQ(detail::get<std::uint32_t>(p + 40), 1u);               // stash in use
  EXPECT_EQ(detail::get<std::uint32_t>(p + 56), 1u);               // layout: semi-sorted
  EXPECT_EQ(detail::get<std::uint32_t>(p + 60), 0u);               // reserved
  EXPECT_EQ(f.size_in_bytes(), 64u);  // 6 buckets of 20 bits + the zero word: one line
  // Bucket b at bit 20·b: a 12-bit code, then the low 2 bits of each fingerprint, ascending.
  const std::uint64_t w0 = detail::get<std::uint64_t>(bytes.data() + 192);
  const std::uint64_t w1 = detail::get<std::uint64_t>(bytes.data() + 200);
  std::uint64_t stored = 0;
  for (std::uint64_t b = 0; b < 6; ++b) {
    const std::uint64_t bit = 20 * b;
    const std::uint64_t both =
        bit >= 64 ? w1 >> (bit - 64) : (w0 >> bit) | (bit > 44 ? w1 << (64 - bit) : 0);
    const std::uint64_t raw = both & ((std::uint64_t{1} << 20) - 1);
    const std::uint64_t nibbles = detail::cuckoo_semisort.nibbles[raw & 0xfff];
    std::uint64_t previous = 0;
    for (std::uint32_t j = 0; j < 4; ++j) {
      const std::uint64_t fp = ((nibbles >> (4 * j)) & 15) << 2 | ((raw >> (12 + 2 * j)) & 3);
      EXPECT_GE(fp, previous);  // ascending
      previous = fp;
      stored += fp != 0;
    }
  }
  EXPECT_EQ(stored + 1, f.approximate_count());  // and one in the stash
  EXPECT_EQ(stored, f.occupied_slots());
  EXPECT_EQ(bytes.size(), 192 + f.size_in_bytes());
}

TEST(CuckooFormat, DamagedFilesAreRejected) {
  // Every truncation and flipped byte, plain and semi-sorted, with and without the stash in use;
  // then edits of the semi-sorted layout's own fields under a good checksum.
  for (const cuckoo_filter& f :
       {small_filter(), full_filter(), small_filter_in(true), full_filter_in(true)}) {
    test::expect_all_damage_rejected<cuckoo_filter>(serialize(f));
  }
  const cuckoo_filter f = small_filter_in(true);  // 32 buckets of 36 bits: 1152 table bits
  const auto small = serialize(f);
  const std::size_t P = 128;
  EXPECT_TRUE(contains(edited_error(small, P + 56, std::uint32_t{2}), "bucket layout field is 2"));
  EXPECT_TRUE(contains(edited_error(small, P + 60, std::uint32_t{1}), "reserved parameter field"));
  // An explicit layout 0 (plain): plain filters omit the field, so each filter has one file
  // (fuzz/regressions/deserialize_any/cuckoo_explicit_plain_layout re-serialized 8 bytes shorter).
  EXPECT_TRUE(contains(edited_error(small, P + 56, std::uint32_t{0}), "bucket layout field is 0"));
  EXPECT_TRUE(contains(edited_error(small, P + 0, std::uint32_t{16}), "payload has"));
  EXPECT_TRUE(
      contains(edited_error(small, 192 + 144, std::uint8_t{1}), "padding bits past the table"));
  // A 60-byte block (the reserved field cut off) is malformed.
  {
    auto cut = small;
    cut.erase(cut.begin() + 128 + 60, cut.begin() + 128 + 64);
    cut.insert(cut.begin() + 128 + 60, 4, std::byte{0});  // keep the payload offset
    detail::put(cut.data() + 20, std::uint32_t{60});
    test::reseal(cut);
    EXPECT_TRUE(contains(format_error_of([&] { deserialize<cuckoo_filter>(cut); }),
                         "parameter block too short"));
  }
  // Bucket encodings the writer never produces: a code >= 3876, and two fingerprints with the
  // same nibble whose low bits are out of order.
  const detail::cuckoo_lanes lanes(10, true);
  std::vector<std::uint64_t> words(f.words().begin(), f.words().end());
  const auto with_bucket = [&](std::uint64_t b, std::uint64_t raw) {
    auto w = words;
    const std::uint64_t bit = 36 * b;
    w[bit / 64] &= ~(lanes.stored << (bit % 64));
    w[bit / 64] |= raw << (bit % 64);
    if (bit % 64 + 36 > 64) {
      w[bit / 64 + 1] &= ~(lanes.stored >> (64 - bit % 64));
      w[bit / 64 + 1] |= raw >> (64 - bit % 64);
    }
    auto bytes = small;
    std::memcpy(bytes.data() + 192, w.data(), w.size() * 8);
    test::reseal(bytes);
    return format_error_of([&] { deserialize<cuckoo_filter>(bytes); });
  };
  const std::uint64_t b0 = detail::read_stored_bucket(words.data(), lanes, 0);
  EXPECT_TRUE(contains(with_bucket(0, (b0 & ~std::uint64_t{0xfff}) | 3876),
                       "semi-sorted bucket 0 is not validly encoded"));
  EXPECT_TRUE(contains(with_bucket(5, (b0 & ~std::uint64_t{0xfff}) | 4095),
                       "semi-sorted bucket 5 is not validly encoded"));
  // Nibbles {1, 1, 1, 1} (code C(1,1) + C(2,2) + C(3,3) + C(4,4) = 4) with low bits 5, 3, 0, 0:
  // the same four fingerprints as low bits 0, 0, 3, 5, but not sorted.
  const std::uint64_t unsorted = 4 | std::uint64_t{5} << 12 | std::uint64_t{3} << 18;
  ASSERT_EQ(detail::cuckoo_semisort.nibbles[4], 0x1111);
  ASSERT_FALSE(lanes.canonical(unsorted));
  EXPECT_TRUE(contains(with_bucket(7, unsorted), "semi-sorted bucket 7 is not validly encoded"));
}
