// The static (binary fuse) filter: construction, sizing, measured FPR, batching, the file format,
// and a rapidcheck property over random key sets with duplicates.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <bloomery/bloom_filter.hpp>
#include <bloomery/positions.hpp>
#include <bloomery/static_filter.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "test_support.hpp"

// A key whose hash builds a static filter of its own: a build started inside another build on the
// same thread (the construction's kept scratch must not be shared between the two).
struct nesting_key {
  std::uint64_t id;
};
template <>
struct bloomery::key_hash<nesting_key> {
  std::uint64_t operator()(const nesting_key& k) const {
    const std::vector<std::uint64_t> inner = {k.id, k.id + 1, k.id + 2};
    const auto f = bloomery::static_filter::build(inner, 0.01);
    return f.may_contain(k.id) ? k.id : ~std::uint64_t{0};  // always k.id: no false negatives
  }
};

// A key whose hash asks to free the thread's kept scratch in the middle of a build.
struct releasing_key {
  std::uint64_t id;
};
template <>
struct bloomery::key_hash<releasing_key> {
  std::uint64_t operator()(const releasing_key& k) const {
    bloomery::static_filter::release_build_scratch();
    return k.id;  // hashed as the integer itself, as nesting_key is
  }
};

using namespace bloomery;
using namespace bloomery::support;

namespace {

// The structure cannot take an insert, be cleared or merged: none of these verbs exist.
template <class F>
concept has_insert = requires(F& f) {
  f.insert(std::uint64_t{1});
};
template <class F>
concept has_clear = requires(F& f) {
  f.clear();
};
template <class F>
concept has_union = requires(F& a, const F& b) {
  a |= b;
};
static_assert(!has_insert<static_filter> && !has_clear<static_filter> && !has_union<static_filter>);
static_assert(!has_insert<static_filter::view> && !has_clear<static_filter::view>);
static_assert(has_insert<bloom_filter> && has_clear<bloom_filter> && has_union<bloom_filter>,
              "the concepts above must be able to detect the verbs");

// Which construction attempt produced the filter (0 = the first seed worked).
template <class F>
std::uint32_t attempt_of(const F& f) {
  for (std::uint32_t i = 0; i < detail::fuse_max_attempts; ++i) {
    if (detail::fuse_attempt_seed(i) == f.construction_seed()) return i;
  }
  return detail::fuse_max_attempts;
}

// Binomial 5-sigma tolerance around the model rate p = 2^-r. A binary fuse filter's rate for an
// absent key is exactly the chance that a uniform r-bit fingerprint equals the XOR of its slots,
// 2^-r, whatever the slots hold: there is no per-filter spread to add.
double fpr_tolerance(double p, std::uint64_t probes) {
  return 5 * std::sqrt(p * (1 - p) / static_cast<double>(probes));
}

std::string invalid_argument_of(auto&& fn) {
  return test::message_of<std::invalid_argument>(fn);
}

std::string format_error_of(auto&& fn) {
  return test::message_of<format_error>(fn);
}

std::vector<std::string> string_keys(std::size_t n, const std::string& prefix = "key-") {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < n; ++i) keys.push_back(prefix + std::to_string(i));
  return keys;
}

// Built once and shared: the 10^6-key filters of the size and rate tests.
const std::vector<std::uint64_t>& million_keys() {
  static const auto keys = present_keys(1'000'000);
  return keys;
}
// At 1%: 7-bit fingerprints, four slots per key.
const static_filter& million7() {
  static const auto f = static_filter::build(million_keys(), 0.01);
  return f;
}
const static_filter& million16() {
  static const auto f = static_filter::build(million_keys(), fingerprint_width::bits16);
  return f;
}

}  // namespace

// The construction's sort orders by the top bytes only, then each run of equal top bytes: it must
// give exactly std::sort's order (the built filter depends on it), also when keys are crafted so
// that many share their top bytes, and with duplicates.
TEST(StaticFilter, HashSortMatchesAFullSort) {
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> tmp;
  for (const std::size_t n : {2047u, 2048u, 5000u, 65536u, 70001u, 300000u}) {
    for (int shape = 0; shape < 4; ++shape) {
      std::vector<std::uint64_t> v(n);
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t r = rng();
        switch (shape) {
          case 0:
            v[i] = r;
            break;  // random
          case 1:
            v[i] = (r & 0xffff) | 0xabcd000000000000ULL;
            break;  // one long run
          case 2:
            v[i] = (r % 64) << 40 | (r >> 58);
            break;  // runs of ~n/64
          default:
            v[i] = i % 3 == 0 ? v[i / 2] : r;
            break;  // duplicates
        }
      }
      auto expected = v;
      std::sort(expected.begin(), expected.end());
      detail::sort_hashes(v, tmp);
      ASSERT_EQ(v, expected) << "n = " << n << ", shape " << shape;
    }
  }
}

TEST(StaticFilter, BuildsFromIntegersAndFindsEveryKey) {
  const auto keys = present_keys(50'000);
  const auto f = static_filter::build(keys, 0.01);
  for (auto k : keys) ASSERT_TRUE(f.may_contain(k)) << k;
  EXPECT_EQ(f.fingerprint_bits(), 7u);
  EXPECT_EQ(f.arity(), 4u);
  EXPECT_EQ(f.key_count(), 50'000u);
  EXPECT_EQ(f.approximate_count(), 50'000u);
  EXPECT_EQ(f.capacity(), 50'000u);
  EXPECT_EQ(f.inserted(), 50'000u);
  EXPECT_DOUBLE_EQ(f.target_fpr(), 0.01);
  EXPECT_DOUBLE_EQ(f.estimated_fpr(), 1.0 / 128);
  EXPECT_EQ(f.hash(), hasher{});
  EXPECT_EQ(f.array_length(), (f.segment_count() + 3) * f.segment_length());
  // Packed 7-bit slots, the 7 bytes the last slot's 64-bit read needs, whole 64-byte lines.
  EXPECT_EQ(f.size_in_bytes(), ((f.array_length() * 7 + 7) / 8 + 7 + 63) / 64 * 64);
  EXPECT_EQ(f.fingerprint_bytes().size(), f.size_in_bytes());
}

TEST(StaticFilter, KeysOfEveryShape) {
  const std::array<const char*, 3> c_strings = {"alpha", "beta", ""};
  const auto f1 = static_filter::build(c_strings, 0.01);
  EXPECT_TRUE(f1.may_contain("alpha"));
  EXPECT_TRUE(f1.may_contain(std::string("beta")));
  EXPECT_TRUE(f1.may_contain(std::string_view()));

  const std::vector<std::vector<std::uint8_t>> blobs = {{0, 1, 2}, {255}, {}};
  const auto f2 = static_filter::build(blobs, 0.01);
  for (const auto& b : blobs) EXPECT_TRUE(f2.may_contain(std::span<const std::uint8_t>(b)));

  // Integers are keys by value: int16_t{-3} and int64_t{-3} are the same key.
  const std::vector<std::int16_t> small = {-3, 7, 1000};
  const auto f3 = static_filter::build(small, 0.01);
  EXPECT_TRUE(f3.may_contain(std::int64_t{-3}));
  EXPECT_TRUE(f3.may_contain(1000ULL));
  // A span is a random-access range too.
  const std::vector<std::uint64_t> wide = present_keys(100);
  const auto f4 = static_filter::build(std::span(wide).first(60), fingerprint_width::bits16);
  for (std::size_t i = 0; i < 60; ++i) EXPECT_TRUE(f4.may_contain(wide[i]));
  EXPECT_EQ(f4.key_count(), 60u);
}

TEST(StaticFilter, FingerprintWidthFollowsTheTargetFpr) {
  const auto keys = string_keys(1000);
  // The fewest bits r with 2^-r <= fpr.
  EXPECT_EQ(static_filter::build(keys, 0.9).fingerprint_bits(), 1u);
  EXPECT_EQ(static_filter::build(keys, 0.5).fingerprint_bits(), 1u);
  EXPECT_EQ(static_filter::build(keys, 0.4999).fingerprint_bits(), 2u);
  EXPECT_EQ(static_filter::build(keys, 0.05).fingerprint_bits(), 5u);
  EXPECT_EQ(static_filter::build(keys, 0.01).fingerprint_bits(), 7u);
  EXPECT_EQ(static_filter::build(keys, 1.0 / 256).fingerprint_bits(), 8u);  // exactly 2^-8: 8 bits
  EXPECT_EQ(static_filter::build(keys, 0.0039).fingerprint_bits(), 9u);     // just below 2^-8
  EXPECT_EQ(static_filter::build(keys, 0.0001).fingerprint_bits(), 14u);
  EXPECT_EQ(static_filter::build(keys, 1e-5 * 1.6).fingerprint_bits(), 16u);
  EXPECT_EQ(static_filter::build(keys, 1e-6).fingerprint_bits(), 20u);
  EXPECT_EQ(static_filter::build(keys, static_filter_min_fpr).fingerprint_bits(), 32u);
  // Every width through plan(), which sizes as build() does: the rate it promises is 2^-r.
  const auto bits_for = [](double fpr) {
    const double promised = static_filter::plan({.capacity = 1000, .fpr = fpr}).expected_fpr;
    return static_cast<std::uint32_t>(std::lround(-std::log2(promised)));
  };
  for (std::uint32_t r = 1; r <= 32; ++r) {
    EXPECT_EQ(bits_for(std::ldexp(1.0, -static_cast<int>(r))), r);
    EXPECT_EQ(bits_for(std::ldexp(1.0, -static_cast<int>(r)) * 1.0001), r);
    if (r < 32) {
      EXPECT_EQ(bits_for(std::ldexp(0.9999, -static_cast<int>(r))), r + 1) << r;
    }
  }
  const auto f10 = static_filter::build(keys, 0.001);
  EXPECT_DOUBLE_EQ(f10.target_fpr(), 0.001);
  EXPECT_DOUBLE_EQ(f10.estimated_fpr(), 1.0 / 1024);
  // Explicit widths: the target becomes the delivered rate.
  const auto e8 = static_filter::build(keys, fingerprint_width::bits8);
  const auto e16 = static_filter::build(keys, fingerprint_width::bits16);
  EXPECT_EQ(e8.fingerprint_bits(), 8u);
  EXPECT_EQ(e16.fingerprint_bits(), 16u);
  EXPECT_DOUBLE_EQ(e8.target_fpr(), 1.0 / 256);
  EXPECT_DOUBLE_EQ(e16.target_fpr(), 1.0 / 65536);
  EXPECT_EQ(e16.size_in_bytes(), (2 * e16.array_length() + 63) / 64 * 64);
  for (const auto& k : keys) ASSERT_TRUE(e8.may_contain(k) && e16.may_contain(k)) << k;
}

TEST(StaticFilter, InvalidParametersThrowWithUsefulMessages) {
  const auto keys = string_keys(10);
  test::expect_invalid([&] { static_filter::build(keys, 0.0); }, "fpr = 0 is invalid");
  test::expect_invalid([&] { static_filter::build(keys, 1.0); }, "allowed range is (0, 1)");
  test::expect_invalid([&] { static_filter::build(keys, std::nan("")); }, "fpr = nan");
  test::expect_invalid([&] { static_filter::build(keys, 1e-10); }, "fpr = 1e-10 is invalid");
  test::expect_invalid([&] { static_filter::build(keys, 1e-10); }, "allowed range is [2^-32");
  test::expect_invalid([&] { static_filter::build(keys, static_filter_min_fpr * 0.999); }, "2^-32");
  test::expect_invalid([&] { static_filter::build(keys, static_cast<fingerprint_width>(12)); },
                       "fingerprint bits = 12 is invalid; allowed values are 8 and 16");
  test::expect_invalid([] { static_filter::plan({.capacity = 0, .fpr = 0.01}); }, "capacity = 0");
  test::expect_invalid([] { static_filter::plan({.capacity = 10, .fpr = 1e-10}); }, "[2^-32");
  test::expect_invalid(
      [] { static_filter::plan({.capacity = std::uint64_t{1} << 41, .fpr = 0.01}); },
      "allowed range is [0, 2^40]");
}

TEST(StaticFilter, EmptyKeySetAnswersNoToEverything) {
  const std::vector<std::string> none;
  for (const static_filter& f :
       {static_filter::build(none, 0.01), static_filter::build(none, fingerprint_width::bits16),
        static_filter()}) {
    EXPECT_EQ(f.key_count(), 0u);
    EXPECT_EQ(f.size_in_bytes(), 0u);
    EXPECT_EQ(f.estimated_fpr(), 0.0);
    const auto probes = absent_keys(100'000);
    for (auto k : probes) ASSERT_FALSE(f.may_contain(k));
    EXPECT_FALSE(f.may_contain(""));
    std::vector<bool> out(probes.size(), true);
    EXPECT_EQ(f.may_contain_many(probes, out), 0u);
    EXPECT_EQ(std::count(out.begin(), out.end(), true), 0);
    // It survives the file format, and its mapped view answers "no" as well.
    temp_dir dir;
    save(f, dir / "empty.static");
    const auto loaded = load<static_filter>(dir / "empty.static");
    EXPECT_EQ(loaded, f);
    EXPECT_EQ(deserialize<static_filter>(serialize(f)), f);
    const auto mapped = map_file<static_filter>(dir / "empty.static");
    EXPECT_EQ(mapped->key_count(), 0u);
    for (std::size_t i = 0; i < 1000; ++i) {
      ASSERT_FALSE(loaded.may_contain(probes[i]));
      ASSERT_FALSE(mapped->may_contain(probes[i]));
    }
  }
}

TEST(StaticFilter, DuplicatesAreRemovedBeforeConstruction) {
  const auto distinct = present_keys(20'000, 5);
  std::vector<std::uint64_t> with_dups;
  for (int copy = 0; copy < 3; ++copy) {
    with_dups.insert(with_dups.end(), distinct.begin(), distinct.end());
  }
  std::shuffle(with_dups.begin(), with_dups.end(), std::mt19937_64(7));
  const auto f = static_filter::build(with_dups, 0.01);
  EXPECT_EQ(f.key_count(), 20'000u);
  EXPECT_EQ(f.approximate_count(), 20'000u);
  EXPECT_EQ(f.inserted(), 60'000u);
  for (auto k : distinct) ASSERT_TRUE(f.may_contain(k));
  // The filter depends on the set only: duplicates and order change nothing.
  EXPECT_EQ(f, static_filter::build(distinct, 0.01));
  // A set that is one key many times is a one-key filter.
  const std::vector<std::string> same(1000, "only");
  const auto one = static_filter::build(same, 0.01);
  EXPECT_EQ(one.key_count(), 1u);
  EXPECT_EQ(one.inserted(), 1000u);
  EXPECT_TRUE(one.may_contain("only"));
}

TEST(StaticFilter, HasherIsTheFiltersIdentity) {
  const auto keys = string_keys(5000);
  const auto a = static_filter::build(keys, 0.01, 42);
  const auto b = static_filter::build(keys, 0.01, 43);
  EXPECT_EQ(a.hash().seed(), 42u);
  EXPECT_NE(a, b);
  const secret_key key = random_key();
  const auto k = static_filter::build(keys, 0.01, key);
  EXPECT_TRUE(k.hash().keyed());
  EXPECT_EQ(k.hash(), hasher(key));
  for (const auto& s : keys) ASSERT_TRUE(a.may_contain(s) && b.may_contain(s) && k.may_contain(s));
  // The construction seed is separate from the hasher: it changes per attempt, the hasher never.
  EXPECT_EQ(a.construction_seed(), detail::fuse_attempt_seed(attempt_of(a)));
}

// The documented layout formulas (docs/static-filter.md), at sizes where each clause matters.
TEST(StaticFilter, LayoutFollowsTheDocumentedFormulas) {
  struct row {
    std::uint64_t n;
    std::uint32_t length;
    std::uint64_t segments, slots;
  };
  for (const row r :
       {row{1, 4, 1, 12}, row{2, 4, 1, 12}, row{10, 16, 1, 48}, row{100, 64, 1, 192},
        row{1000, 128, 9, 1408}, row{10'000, 512, 23, 12'800}, row{1'000'000, 8192, 136, 1'130'496},
        row{1'000'000'000, 262'144, 4290, 1'125'122'048}}) {
    const auto l = detail::fuse_layout_for(r.n);
    EXPECT_EQ(l.segment_length, r.length) << r.n;
    EXPECT_EQ(l.segment_count, r.segments) << r.n;
    EXPECT_EQ(l.array_length, r.slots) << r.n;
  }
  EXPECT_EQ(detail::fuse_layout_for(0), detail::fuse_layout{});
  // Four slots per key: (segment_count + 3) * L slots.
  for (const row r :
       {row{1, 1, 1, 4}, row{2, 1, 10, 13}, row{100, 8, 18, 168}, row{1000, 32, 40, 1376},
        row{10'000, 256, 45, 12'288}, row{500'000, 2048, 261, 540'672},
        row{1'000'000, 4096, 260, 1'077'248}, row{100'000'000, 65'536, 1638, 107'544'576},
        row{1'000'000'000, 262'144, 4098, 1'075'052'544}}) {
    const auto l = detail::fuse_layout_for(r.n, 4);
    EXPECT_EQ(l.segment_length, r.length) << r.n;
    EXPECT_EQ(l.segment_count, r.segments) << r.n;
    EXPECT_EQ(l.array_length, r.slots) << r.n;
    EXPECT_EQ(l.arity, 4u);
  }
  // A build from a rate takes the smaller layout: four slots except where three are fewer.
  EXPECT_EQ(detail::fuse_smallest_layout(2).arity, 3u);  // 12 slots against 13
  EXPECT_EQ(detail::fuse_smallest_layout(1).arity, 4u);
  for (const std::uint64_t n : {3u, 100u, 1000u, 10'000u, 1'000'000u}) {
    EXPECT_EQ(detail::fuse_smallest_layout(n), detail::fuse_layout_for(n, 4)) << n;
  }
  // plan() reports what build() allocates.
  const auto keys = present_keys(12'345);
  const auto f = static_filter::build(keys, 0.001);
  const auto p = static_filter::plan({.capacity = 12'345, .fpr = 0.001});
  EXPECT_EQ(p.bytes, f.size_in_bytes());
  EXPECT_DOUBLE_EQ(p.bits_per_key, 8.0 * f.size_in_bytes() / 12'345);
  EXPECT_DOUBLE_EQ(p.expected_fpr, 1.0 / 1024);
  EXPECT_EQ(p.parameters,
            "fingerprint=10 arity=4 segment_length=" + std::to_string(f.segment_length()) +
                " segments=" + std::to_string(f.segment_count()) +
                " slots=" + std::to_string(f.array_length()));
}

// At 10^6 keys a build from a rate takes within 1.10x of log2(1/fpr) bits per key (four slots:
// 1.077 slots per key), 7.54 at 1%; an explicit 16-bit width (three slots) within 1.15x.
TEST(StaticFilter, BitsPerKeyAtAMillionKeys) {
  const double n = 1e6;
  const double bpk7 = 8.0 * static_cast<double>(million7().size_in_bytes()) / n;
  const double bpk16 = 8.0 * static_cast<double>(million16().size_in_bytes()) / n;
  EXPECT_LE(bpk7, 7.6);
  EXPECT_LE(bpk16, 18.4);
  EXPECT_LE(bpk7, 1.10 * std::log2(1 / million7().estimated_fpr()));
  EXPECT_LE(bpk16, 1.15 * std::log2(1 / million16().estimated_fpr()));
  EXPECT_GE(bpk7, 7.0);  // the slots cannot hold fewer than one fingerprint per key
  RecordProperty("bits_per_key_7", std::to_string(bpk7));
  RecordProperty("bits_per_key_16", std::to_string(bpk16));
  for (auto k : million_keys()) ASSERT_TRUE(million7().may_contain(k));
  // Every width from a rate: the layout's slots times r, within 1.10x of r.
  for (const std::uint32_t r : {1u, 5u, 10u, 14u, 23u, 32u}) {
    const auto p = static_filter::plan({.capacity = 1'000'000, .fpr = std::ldexp(1.0, -int(r))});
    EXPECT_LE(p.bits_per_key, 1.10 * r) << r;
    EXPECT_GE(p.bits_per_key, 1.0 * r) << r;
  }
}

TEST(StaticFilter, MeasuredFprMatchesTwoToTheMinusR) {
  // 10^6 absent probes: at 2^-8 (3906 expected positives) 5 sigma is +-8% of the rate. Packed
  // widths of both layouts, explicit 8-bit ones, small filters (one segment) and large ones.
  const std::uint64_t probes = 1'000'000;
  const auto absent = absent_keys(probes);
  std::vector<bool> out(probes);
  const auto small_keys = present_keys(1000);
  const auto mid_keys = present_keys(100'000, 9);
  const std::vector<static_filter> filters = {
      static_filter::build(small_keys, fingerprint_width::bits8),
      static_filter::build(small_keys, 0.3),      // r = 2
      static_filter::build(mid_keys, 0.05),       // r = 5
      static_filter::build(mid_keys, 1.0 / 256),  // r = 8, packed, four slots
      static_filter::build(mid_keys, 0.001),      // r = 10
      static_filter::build(small_keys, 2e-3),     // r = 9, few keys
  };
  for (const static_filter* f : {&million7(), &filters[0], &filters[1], &filters[2], &filters[3],
                                 &filters[4], &filters[5]}) {
    const double p = std::ldexp(1.0, -static_cast<int>(f->fingerprint_bits()));
    const double measured = static_cast<double>(f->may_contain_many(absent, out)) / probes;
    EXPECT_NEAR(measured, p, fpr_tolerance(p, probes))
        << "n=" << f->key_count() << " r=" << f->fingerprint_bits() << " arity=" << f->arity();
    EXPECT_DOUBLE_EQ(f->estimated_fpr(), p);
    RecordProperty(
        "fpr" + std::to_string(f->fingerprint_bits()) + "_n" + std::to_string(f->key_count()),
        std::to_string(measured));
  }
}

TEST(StaticFilter, MeasuredFprMatchesTwoToTheMinus16) {
  // 10^7 absent probes: about 153 expected positives, so 5 sigma is +-40% of the rate.
  const std::uint64_t probes = 10'000'000;
  const double p = 1.0 / 65536;
  std::uint64_t state = 99, positives = 0;
  std::vector<std::uint64_t> chunk(100'000);
  std::vector<unsigned char> out(chunk.size());
  for (std::uint64_t done = 0; done < probes; done += chunk.size()) {
    for (auto& k : chunk) k = test::splitmix64(state) | (std::uint64_t{1} << 63);  // absent
    positives += million16().may_contain_many(chunk, out);
  }
  const double measured = static_cast<double>(positives) / probes;
  EXPECT_NEAR(measured, p, fpr_tolerance(p, probes));
  EXPECT_GT(positives, 0u);  // a broken fingerprint check that always says "no" would pass above
  RecordProperty("fpr16_positives", std::to_string(positives));
}

TEST(StaticFilter, MayContainManyAgreesWithMayContain) {
  // Large filters (past detail::batch_min_bytes) take the prefetching path, small ones the plain
  // loop; whole-byte and packed slots, three and four per key.
  const auto big14 = static_filter::build(million_keys(), 0.0001);
  ASSERT_GT(million16().size_in_bytes(), detail::batch_min_bytes);
  ASSERT_GT(big14.size_in_bytes(), detail::batch_min_bytes);
  ASSERT_EQ(big14.arity(), 4u);
  const auto small_keys = present_keys(5000);
  const auto small8 = static_filter::build(small_keys, fingerprint_width::bits8);
  const auto small16 = static_filter::build(small_keys, 0.0001);
  // may_contain inlines only 8-bit three-slot filters of the default hash; the others, the older
  // hash algorithm's among them, take its out-of-line path.
  const auto small16x3 = static_filter::build(small_keys, fingerprint_width::bits16);
  const auto small8_xxh = static_filter::build(small_keys, fingerprint_width::bits8,
                                               hasher(5, hash_algorithm::xxh3_128_seeded));
  const auto small8_keyed =
      static_filter::build(small_keys, fingerprint_width::bits8, hasher(random_key()));
  std::vector<std::uint64_t> probe = absent_keys(30'000);
  probe.insert(probe.end(), million_keys().begin(), million_keys().begin() + 20'000);
  probe.insert(probe.end(), small_keys.begin(), small_keys.end());
  probe.push_back(42);  // an odd count: the last batch is partial
  for (const static_filter* f : {&million7(), &big14, &million16(), &small8, &small16, &small16x3,
                                 &small8_xxh, &small8_keyed}) {
    std::vector<bool> out(probe.size());
    const std::size_t positives = f->may_contain_many(probe, out);
    std::size_t expected = 0;
    for (std::size_t i = 0; i < probe.size(); ++i) {
      ASSERT_EQ(out[i], f->may_contain(probe[i])) << i;
      expected += out[i];
    }
    EXPECT_EQ(positives, expected);
    EXPECT_GE(positives, f->key_count() >= 1'000'000 ? 20'000u : 5000u);
  }
  // Strings through the same path; an output too small is an error, not an overflow.
  const std::vector<std::string> words = {"a", "b", "c"};
  const auto fw = static_filter::build(std::vector<std::string>{"b"}, 0.01);
  std::vector<unsigned char> small(2);
  EXPECT_THROW(fw.may_contain_many(words, small), std::invalid_argument);
  std::vector<unsigned char> out3(3);
  fw.may_contain_many(words, out3);
  EXPECT_EQ(out3[1], 1);
}

// Construction failure is retried with the next seed: the filter records the seed that worked and
// is still exact for its keys; with no attempts left, a clear runtime_error.
TEST(StaticFilter, FailedAttemptsAreRetriedWithAnotherSeed) {
  hasher h;
  std::vector<std::uint64_t> keys;
  static_filter retried;
  for (std::uint64_t base = 0; base < 20'000; ++base) {
    keys = present_keys(200, base);
    retried = static_filter::build(keys, 0.01, h);
    if (attempt_of(retried) != 0) break;
  }
  ASSERT_GT(attempt_of(retried), 0u) << "no key set needing a retry found";
  ASSERT_LT(attempt_of(retried), detail::fuse_max_attempts);
  for (auto k : keys) ASSERT_TRUE(retried.may_contain(k));
  // The seed travels with the file, so the loaded and mapped filters answer alike.
  temp_dir dir;
  save(retried, dir / "r.static");
  const auto loaded = load<static_filter>(dir / "r.static");
  const auto mapped = map_file<static_filter>(dir / "r.static");
  EXPECT_EQ(loaded.construction_seed(), retried.construction_seed());
  EXPECT_EQ(mapped->construction_seed(), retried.construction_seed());
  for (auto k : keys) ASSERT_TRUE(loaded.may_contain(k) && mapped->may_contain(k));

  // The same keys with one attempt allowed: the first seed fails, so the build must throw.
  std::vector<hash128> hashes;
  for (auto k : keys) hashes.push_back(hash_key(h, k));
  std::vector<unsigned char> storage;
  const auto allocate = [&](const detail::fuse_layout& l) {
    storage.assign(detail::fuse_payload_bytes(l, 7), 0);
    return storage.data();
  };
  const auto smallest = detail::fuse_arity::smallest;
  try {
    detail::fuse_build<detail::fuse_scheme::folded>(hashes, 7, smallest, allocate, 1);
    ADD_FAILURE() << "expected runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("construction failed in all 1 attempts"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW((detail::fuse_build<detail::fuse_scheme::folded>(hashes, 7, smallest, allocate,
                                                                   attempt_of(retried) + 1)));
}

// A build whose key hashing builds filters itself gets scratch of its own: the same filter as over
// the plain integers.
TEST(StaticFilter, ABuildInsideABuildIsIndependent) {
  std::vector<nesting_key> keys;
  const auto ids = present_keys(3000, 8);
  for (const auto id : ids) keys.push_back({id});
  const auto nested = static_filter::build(keys, 0.01);
  const auto plain = static_filter::build(ids, 0.01);
  EXPECT_EQ(nested, plain);
  for (const auto& k : keys) ASSERT_TRUE(nested.may_contain(k));
}

// A thread's kept scratch can be given back; what a build holds is never freed under it, even when
// a key's hash asks from inside the build (a freed array would be used after free: ASan's stage).
TEST(StaticFilter, KeptBuildScratchCanBeReleased) {
  std::thread([] {
    EXPECT_EQ(static_filter::kept_build_scratch_bytes(), 0u);
    const auto ids = present_keys(100'000, 12);
    const auto first = static_filter::build(ids, 0.01);
    const std::uint64_t kept = static_filter::kept_build_scratch_bytes();
    EXPECT_GT(kept, 100'000u * 20);  // about 27 bytes a key
    EXPECT_LE(kept, std::uint64_t{32} << 20);

    static_filter::release_build_scratch();
    EXPECT_EQ(static_filter::kept_build_scratch_bytes(), 0u);
    EXPECT_EQ(static_filter::build(ids, 0.01), first);
    EXPECT_EQ(static_filter::kept_build_scratch_bytes(), kept);

    std::vector<releasing_key> keys;
    for (const auto id : ids) keys.push_back({id});
    EXPECT_EQ(static_filter::build(keys, 0.01), first);
    EXPECT_EQ(static_filter::kept_build_scratch_bytes(), kept);
  }).join();
}

// A user's key_hash may have effects, so every query hashes the key (no call is merged away),
// whichever probe the filter takes.
TEST(StaticFilter, EveryQueryHashesAUserKey) {
  std::vector<test::counted_key> keys;
  for (std::uint64_t i = 0; i < 1000; ++i) keys.push_back({i});
  const auto inline8 = static_filter::build(keys, fingerprint_width::bits8);
  const auto packed = static_filter::build(keys, 0.01);
  ASSERT_EQ(packed.arity(), 4u);
  for (const static_filter* f : {&inline8, &packed}) {
    const test::counted_key k{7};
    test::counted_key_hashes = 0;
    const bool a = f->may_contain(k);
    const bool b = f->may_contain(k);
    EXPECT_TRUE(a && b);
    EXPECT_EQ(test::counted_key_hashes, 2u);
  }
}

// A thread keeps its construction scratch for its next build: what one build leaves there never
// changes another's result. Each build here equals the same build on a fresh thread.
TEST(StaticFilter, BuildsOnOneThreadEqualBuildsOnFreshThreads) {
  std::vector<std::uint64_t> with_duplicates = present_keys(40'000, 9);
  with_duplicates.insert(with_duplicates.end(), with_duplicates.begin(),
                         with_duplicates.begin() + 5000);
  const std::vector<std::function<static_filter()>> builds = {
      [] { return static_filter::build(present_keys(300'000, 1), 0.01); },
      [] { return static_filter::build(present_keys(1000, 2), fingerprint_width::bits8); },
      [&] { return static_filter::build(with_duplicates, 0.001); },
      [] { return static_filter::build(string_keys(500), fingerprint_width::bits16); },
      // About 27 bytes of scratch a key: 1.4 million keys take more than the 32 MiB a thread keeps.
      [] { return static_filter::build(present_keys(1'400'000, 3), fingerprint_width::bits8); },
      [] { return static_filter::build(present_keys(7, 4), 0.3); },
  };
  for (std::size_t i = 0; i < builds.size(); ++i) {
    const static_filter here = builds[i]();
    const std::uint64_t kept = static_filter::kept_build_scratch_bytes();
    EXPECT_LE(kept, std::uint64_t{32} << 20) << "build " << i;
    if (here.key_count() > 1'000'000) {
      EXPECT_EQ(kept, 0u) << "scratch past the cap is freed when its build ends";
    }
    static_filter fresh;
    std::thread([&] { fresh = builds[i](); }).join();
    EXPECT_EQ(here, fresh) << "build " << i;
    EXPECT_GT(here.key_count(), 0u);
  }
}

// ---------------------------------------------------------------------------------------------
// File format
// ---------------------------------------------------------------------------------------------

namespace {

// 10 keys: 48 slots, so 8-bit payloads carry 16 bytes of padding and 16-bit ones 32.
static_filter tiny_filter(fingerprint_width w = fingerprint_width::bits8, hasher h = {}) {
  return static_filter::build(string_keys(10), w, std::move(h));
}

void write_bytes(const std::filesystem::path& p, std::span<const std::byte> bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST(StaticFilterFormat, LayoutIsDocumented) {
  const auto keys = string_keys(1000);
  // From a rate: 10-bit fingerprints, four slots per key, the 56-byte parameter block.
  const auto f = static_filter::build(keys, 0.001, 5);
  ASSERT_EQ(f.fingerprint_bits(), 10u);
  ASSERT_EQ(f.arity(), 4u);
  const auto bytes = serialize(f);
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 12), 6u);     // kind: static
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 20), 56u);    // parameter block size
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 24), 5u);     // seed
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 64), 1000u);  // element count
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 72), 192u);   // payload offset
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 80), f.size_in_bytes());
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 128), 10u);  // fingerprint bits
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 132), f.segment_length());
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 136), f.segment_count());
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 144), f.array_length());
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 152), f.construction_seed());
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 160), 1000u);  // distinct keys
  EXPECT_EQ(detail::get<double>(bytes.data() + 168), 0.001);
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 176), 2u);  // block version
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 180), 4u);  // arity
  ASSERT_EQ(bytes.size(), 192 + f.size_in_bytes());
  EXPECT_EQ(f.size_in_bytes(), (f.array_length() * 10 / 8 + 7 + 63) / 64 * 64);
  EXPECT_TRUE(std::equal(bytes.begin() + 192, bytes.end(), f.fingerprint_bytes().begin()));
  // The payload is the slots packed from bit 0: key k satisfies fp == XOR of its four slots,
  // slot i read as bits [10 i, 10 i + 10) of the little-endian bytes.
  const auto* payload = reinterpret_cast<const unsigned char*>(bytes.data() + 192);
  const auto slot = [&](std::uint64_t i) {
    std::uint32_t v = 0;
    for (std::uint32_t b = 0; b < 10; ++b) {
      const std::uint64_t bit = i * 10 + b;
      v |= static_cast<std::uint32_t>((payload[bit / 8] >> (bit % 8)) & 1) << b;
    }
    return v;
  };
  for (const auto& k : keys) {
    const std::uint64_t x = detail::fuse_hash<detail::fuse_scheme::folded>(hash_key(f.hash(), k),
                                                                           f.construction_seed());
    const auto p = positions(f, k);
    ASSERT_EQ(p.slots.size(), 4u);
    ASSERT_EQ(p.fingerprint, (x ^ (x >> 32)) & 1023);
    ASSERT_EQ(slot(p.slots[0]) ^ slot(p.slots[1]) ^ slot(p.slots[2]) ^ slot(p.slots[3]),
              p.fingerprint);
  }
  // An explicit width: the 48-byte block of three 16-bit slots, as every older reader knows it.
  const auto g = static_filter::build(keys, fingerprint_width::bits16, 5);
  const auto old = serialize(g);
  EXPECT_EQ(detail::get<std::uint32_t>(old.data() + 20), 48u);
  EXPECT_EQ(detail::get<std::uint32_t>(old.data() + 128), 16u);
  EXPECT_EQ(detail::get<double>(old.data() + 168), 1.0 / 65536);
  EXPECT_EQ(g.arity(), 3u);
  EXPECT_EQ(g.size_in_bytes(), (2 * g.array_length() + 63) / 64 * 64);
  const auto* slots16 = reinterpret_cast<const unsigned char*>(old.data() + 192);
  for (const auto& k : keys) {
    const auto p = positions(g, k);
    ASSERT_EQ(p.slots.size(), 3u);
    std::uint32_t v = 0;
    for (const auto i : p.slots) v ^= slots16[2 * i] | (slots16[2 * i + 1] << 8);
    ASSERT_EQ(v, p.fingerprint);
  }
}

TEST(StaticFilterFormat, SaveLoadSerializeAndMapRoundTrip) {
  temp_dir dir;
  for (const auto w : {fingerprint_width::bits8, fingerprint_width::bits16}) {
    for (const hasher& h : {hasher(), hasher(77), hasher(random_key())}) {
      const auto keys = present_keys(30'000, 3);
      const auto f = static_filter::build(keys, w, h);
      const auto loaded = test::expect_saved_copy(f, dir / "f.static");
      EXPECT_EQ(loaded.hash(), h);
      const auto mapped = map_file<static_filter>(dir / "f.static");
      EXPECT_EQ(mapped->key_count(), f.key_count());
      EXPECT_EQ(mapped->fingerprint_bits(), f.fingerprint_bits());
      EXPECT_EQ(mapped->size_in_bytes(), f.size_in_bytes());
      EXPECT_EQ(mapped->estimated_fpr(), f.estimated_fpr());
      EXPECT_EQ(mapped->hash(), h);
      for (auto k : keys) ASSERT_TRUE(loaded.may_contain(k) && mapped->may_contain(k));
      for (auto k : absent_keys(20'000)) {
        ASSERT_EQ(loaded.may_contain(k), f.may_contain(k));
        ASSERT_EQ(mapped->may_contain(k), f.may_contain(k));
      }
      // Zero copy: the view reads the mapped payload in place, 64-byte aligned.
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(mapped->fingerprint_bytes().data()) % 64, 0u);
      EXPECT_TRUE(std::ranges::equal(mapped->fingerprint_bytes(), f.fingerprint_bytes()));
      const auto absent = absent_keys(20'000);
      std::vector<bool> a(absent.size()), b(absent.size());
      EXPECT_EQ(mapped->may_contain_many(absent, a), f.may_contain_many(absent, b));
      EXPECT_EQ(a, b);
    }
  }
}

TEST(StaticFilterFormat, EveryTruncationAndFlippedByteIsRejected) {
  for (const auto w : {fingerprint_width::bits8, fingerprint_width::bits16}) {
    const auto good = serialize(tiny_filter(w));
    ASSERT_EQ(deserialize<static_filter>(good), tiny_filter(w));
    test::expect_all_damage_rejected<static_filter>(good);
  }
}

TEST(StaticFilterFormat, OtherKindsAreRejected) {
  bloom_filter b({.capacity = 100, .fpr = 0.01});
  b.insert("x");
  EXPECT_NE(format_error_of([&] {
              deserialize<static_filter>(serialize(b));
            }).find("holds a bloom filter, not a static filter"),
            std::string::npos);
  EXPECT_NE(format_error_of([&] {
              deserialize<bloom_filter>(serialize(tiny_filter()));
            }).find("holds a static filter, not a bloom filter"),
            std::string::npos);
  temp_dir dir;
  save(b, dir / "b.bloom");
  EXPECT_THROW(load<static_filter>(dir / "b.bloom"), format_error);
  EXPECT_THROW(map_file<static_filter>(dir / "b.bloom"), format_error);
}

TEST(StaticFilterFormat, ValuesAreValidatedEvenWithAGoodChecksum) {
  const auto good8 = serialize(tiny_filter(fingerprint_width::bits8));
  const auto good16 = serialize(tiny_filter(fingerprint_width::bits16));
  const auto empty = serialize(static_filter());
  const auto with = [](const std::vector<std::byte>& good, std::size_t offset, auto value) {
    const std::string msg = test::edited_image_error<static_filter>(good, offset, value);
    // The mapped view validates the same way.
    auto b = good;
    detail::put(b.data() + offset, value);
    test::reseal(b);
    temp_dir dir;
    write_bytes(dir / "v.static", b);
    EXPECT_EQ(format_error_of([&] { map_file<static_filter>(dir / "v.static"); }).find(msg), 0u);
    return msg;
  };
  const auto has = [](const std::string& msg, const std::string& needle) {
    return msg.find(needle) != std::string::npos;
  };
  // Parameter block: 128 bits, 132 segment length, 136 segments, 144 slots, 152 seed,
  // 160 key count, 168 target fpr.
  EXPECT_TRUE(has(with(good8, 128, std::uint32_t{12}), "fingerprint bits must be 8 or 16, not 12"));
  EXPECT_TRUE(has(with(good8, 128, std::uint32_t{16}), "target fpr"));  // 2^-8 is not a 16-bit rate
  EXPECT_TRUE(has(with(good16, 128, std::uint32_t{8}), "target fpr"));
  EXPECT_TRUE(has(with(good8, 132, std::uint32_t{24}), "segment length 24 is not a power of two"));
  EXPECT_TRUE(has(with(good8, 132, std::uint32_t{1} << 19), "is not a power of two in [1, 2^18]"));
  EXPECT_TRUE(has(with(good8, 132, std::uint32_t{0}), "segment length 0"));
  EXPECT_TRUE(has(with(good8, 136, std::uint64_t{0}), "segment count out of range"));
  EXPECT_TRUE(has(with(good8, 136, std::uint64_t{1} << 50), "segment count out of range"));
  EXPECT_TRUE(has(with(good8, 136, std::uint64_t{2}), "is not (segment count 2 + 2)"));
  EXPECT_TRUE(has(with(good8, 144, std::uint64_t{47}), "array length 47"));
  EXPECT_TRUE(has(with(good8, 160, std::uint64_t{0}), "key count 0 does not fit"));
  EXPECT_TRUE(has(with(good8, 160, std::uint64_t{49}), "key count 49 does not fit 48 slots"));
  EXPECT_TRUE(has(with(good8, 64, std::uint64_t{9}), "element count 9 is below"));
  EXPECT_TRUE(has(with(good8, 168, 1.0), "target fpr 1 does not match 8-bit"));
  EXPECT_TRUE(has(with(good8, 168, 0.001), "target fpr"));
  EXPECT_TRUE(has(with(good16, 168, 0.01), "target fpr 0.01 does not match 16-bit"));
  EXPECT_TRUE(has(with(good16, 168, 1e-6), "target fpr"));
  EXPECT_TRUE(has(with(good8, 168, std::nan("")), "target fpr"));
  // Padding after the 48 fingerprint bytes (16-bit: 96) must be zero.
  EXPECT_TRUE(has(with(good8, 192 + 48, std::uint8_t{1}), "padding bytes"));
  EXPECT_TRUE(has(with(good8, 192 + 63, std::uint8_t{0x80}), "padding bytes"));
  EXPECT_TRUE(has(with(good16, 192 + 96, std::uint8_t{1}), "padding bytes"));
  EXPECT_EQ(with(good8, 192 + 47, std::uint8_t{0x5a}), "no exception");  // a slot: any value
  // The payload must be exactly the slots rounded up to 64 bytes: claim a second segment count
  // whose array is larger than the payload.
  {
    auto b = good8;
    detail::put(b.data() + 136, std::uint64_t{3});
    detail::put(b.data() + 144, std::uint64_t{80});
    test::reseal(b);
    EXPECT_TRUE(has(format_error_of([&] { deserialize<static_filter>(b); }), "payload has 64"));
  }
  // The empty filter: all-zero layout and key count.
  EXPECT_EQ(format_error_of([&] { deserialize<static_filter>(empty); }), "no exception");
  EXPECT_TRUE(has(with(empty, 160, std::uint64_t{1}), "an empty static filter"));
  EXPECT_TRUE(has(with(empty, 132, std::uint32_t{4}), "an empty static filter"));
  EXPECT_TRUE(has(with(empty, 136, std::uint64_t{1}), "an empty static filter"));
  // The 56-byte block (any width, three or four slots): 176 block version, 180 arity. Ten keys
  // at 1%: 7-bit fingerprints, four slots, 26 slots of 2 segments: 182 bits, so the 23rd byte
  // holds 2 padding bits, then 7 padding bytes the last slot's 64-bit read covers.
  const auto any = serialize(static_filter::build(string_keys(10), 0.01));
  ASSERT_EQ(detail::get<std::uint32_t>(any.data() + 20), 56u);
  ASSERT_EQ(detail::get<std::uint64_t>(any.data() + 144), 26u);
  EXPECT_TRUE(has(with(any, 128, std::uint32_t{0}), "fingerprint bits must lie in [1, 32], not 0"));
  EXPECT_TRUE(has(with(any, 128, std::uint32_t{33}), "not 33"));
  EXPECT_TRUE(has(with(any, 128, std::uint32_t{6}), "target fpr 0.01 does not match 6-bit"));
  EXPECT_TRUE(has(with(any, 168, 0.02), "target fpr 0.02 does not match 7-bit"));
  EXPECT_TRUE(has(with(any, 176, std::uint32_t{3}), "block version 3 is unknown"));
  EXPECT_TRUE(has(with(any, 176, std::uint32_t{1}), "block version 1 is unknown"));
  EXPECT_TRUE(has(with(any, 180, std::uint32_t{5}), "arity must be 3 or 4, not 5"));
  EXPECT_TRUE(has(with(any, 180, std::uint32_t{3}), "is not (segment count 10 + 2)"));
  EXPECT_TRUE(has(with(any, 192 + 22, std::uint8_t{0xc0}), "padding bits"));
  EXPECT_EQ(with(any, 192 + 22, std::uint8_t{0x3f}), "no exception");  // slot bits: any value
  EXPECT_TRUE(has(with(any, 192 + 23, std::uint8_t{1}), "padding bytes"));
  EXPECT_TRUE(has(with(any, 192 + 29, std::uint8_t{1}), "padding bytes"));
  {
    // One encoding per filter: three 8-bit slots must take the 48-byte block.
    auto b = any;
    detail::put(b.data() + 128, std::uint32_t{8});
    detail::put(b.data() + 168, 1.0 / 256);
    detail::put(b.data() + 180, std::uint32_t{3});
    test::reseal(b);
    EXPECT_TRUE(has(format_error_of([&] { deserialize<static_filter>(b); }),
                    "three slots of 8 or 16 bits take the 48-byte parameter block"));
  }
  const auto empty7 = serialize(static_filter::build(std::vector<std::string>(), 0.01));
  ASSERT_EQ(detail::get<std::uint32_t>(empty7.data() + 20), 56u);
  EXPECT_EQ(format_error_of([&] { deserialize<static_filter>(empty7); }), "no exception");
  EXPECT_TRUE(has(with(empty7, 180, std::uint32_t{4}), "(and arity 3)"));
  test::expect_all_damage_rejected<static_filter>(any);
  // A short parameter block (params size 40): the layout no longer adds up, or reads run short.
  {
    auto b = good8;
    detail::put(b.data() + detail::offs::params_size, std::uint32_t{40});
    test::reseal(b);
    EXPECT_THROW(deserialize<static_filter>(b), format_error);
  }
}

// ---------------------------------------------------------------------------------------------
// Property: random key sets (strings and integers, with duplicates, 0..2000 keys) have no false
// negatives after build, after save/load, and through map_file.
// ---------------------------------------------------------------------------------------------

namespace {

// width 0: an explicit 8-bit width; 33: an explicit 16-bit one; else a rate just above 2^-width.
template <class Key>
void check_no_false_negatives(const std::vector<Key>& keys, bool keyed, std::uint32_t width) {
  const hasher h = keyed ? hasher(random_key()) : hasher(*rc::gen::arbitrary<std::uint64_t>());
  const auto f = width == 0    ? static_filter::build(keys, fingerprint_width::bits8, h)
                 : width == 33 ? static_filter::build(keys, fingerprint_width::bits16, h)
                               : static_filter::build(keys, std::ldexp(1.1, -int(width)), h);
  if (width >= 1 && width <= 32) RC_ASSERT(f.fingerprint_bits() == width);
  RC_ASSERT(f.inserted() == keys.size());
  RC_ASSERT(f.key_count() <= keys.size());
  RC_ASSERT(f.key_count() >= std::min<std::size_t>(keys.size(), 1));
  for (const auto& k : keys) RC_ASSERT(f.may_contain(k));
  RC_ASSERT(test::files_keep_every_key(
      f, keys, [](const auto& g, const Key& k) { return g.may_contain(k); }));
}

// n keys from `gen`, then copies of random ones among them appended and everything shuffled.
template <class Key>
std::vector<Key> keys_with_duplicates(rc::Gen<Key> gen) {
  const auto n = *rc::gen::inRange<std::size_t>(0, 2001);
  auto keys = *rc::gen::container<std::vector<Key>>(n, std::move(gen));
  if (n != 0) {
    const auto picks =
        *rc::gen::container<std::vector<std::size_t>>(rc::gen::inRange<std::size_t>(0, n));
    for (const std::size_t i : picks) keys.push_back(keys[i]);
  }
  std::shuffle(keys.begin(), keys.end(), std::mt19937_64(*rc::gen::arbitrary<std::uint64_t>()));
  return keys;
}

}  // namespace

RC_GTEST_PROP(StaticFilterProperties, NoFalseNegativesForIntegerKeys, ()) {
  // Narrow ranges make duplicates common on their own, besides the appended copies.
  const auto narrow = *rc::gen::arbitrary<bool>();
  const auto keys = keys_with_duplicates<std::int64_t>(
      narrow ? rc::gen::inRange<std::int64_t>(-500, 500) : rc::gen::arbitrary<std::int64_t>());
  check_no_false_negatives(keys, *rc::gen::arbitrary<bool>(),
                           *rc::gen::inRange<std::uint32_t>(0, 34));
}

RC_GTEST_PROP(StaticFilterProperties, NoFalseNegativesForStringKeys, ()) {
  const auto keys = keys_with_duplicates<std::string>(rc::gen::string<std::string>());
  check_no_false_negatives(keys, *rc::gen::arbitrary<bool>(),
                           *rc::gen::inRange<std::uint32_t>(0, 34));
}

// ---------------------------------------------------------------------------------------------
// Every width and both layouts: no false negative, and the measured rate within a Poisson bound
// of n_probes * 2^-r. CI runs the subset below (n up to 10^4 at ten widths, 10^5 at three); the
// full matrix (every width 1..32, n up to 10^6) is the long run `BLOOMERY_STATIC_MATRIX=full
// build/tests/test_static_filter --gtest_filter='StaticFilterMatrix*'` (docs/static-filter.md).
// ---------------------------------------------------------------------------------------------

namespace {

bool full_matrix() {
  const char* v = std::getenv("BLOOMERY_STATIC_MATRIX");
  return v != nullptr && std::string_view(v) == "full";
}

// Positives among `probes` absent keys: within mean +- (5 sqrt(mean) + 5), mean = probes 2^-r
// (the +5 keeps the bound sound where the mean is below 1).
void expect_rate(std::uint64_t positives, std::uint64_t probes, std::uint32_t r,
                 const std::string& what) {
  const double mean = static_cast<double>(probes) * std::ldexp(1.0, -static_cast<int>(r));
  const double slack = 5 * std::sqrt(mean) + 5;
  EXPECT_LE(static_cast<double>(positives), mean + slack) << what;
  EXPECT_GE(static_cast<double>(positives), mean - slack) << what;
}

}  // namespace

TEST(StaticFilterMatrix, EveryWidthAndLayoutFindsItsKeysAtItsRate) {
  const bool full = full_matrix();
  std::vector<std::uint64_t> sizes = {1, 2, 3, 7, 100, 1000, 10'000, 100'000};
  std::vector<std::uint32_t> widths = {1, 2, 5, 7, 8, 9, 13, 16, 24, 32};
  if (full) {
    sizes.push_back(1'000'000);
    widths.clear();
    for (std::uint32_t r = 1; r <= 32; ++r) widths.push_back(r);
  }
  const std::uint64_t probes = full ? 1'000'000 : 100'000;
  const auto absent = absent_keys(probes);
  std::vector<unsigned char> out(probes);
  for (const std::uint64_t n : sizes) {
    const auto keys = present_keys(n, n);
    auto with_dups = keys;
    with_dups.insert(with_dups.end(), keys.begin(), keys.begin() + static_cast<long>(n / 3));
    for (const std::uint32_t r : widths) {
      // The largest set at three widths only: it costs the most, under the sanitizers above all.
      if (!full && n >= 100'000 && r != 7 && r != 8 && r != 13) continue;
      const std::string what = "n=" + std::to_string(n) + " r=" + std::to_string(r);
      // From a rate: the smaller layout (four slots nearly always).
      const auto f = static_filter::build(with_dups, std::ldexp(1.0, -static_cast<int>(r)));
      ASSERT_EQ(f.fingerprint_bits(), r) << what;
      ASSERT_EQ(f.key_count(), n) << what;
      for (const auto k : keys) ASSERT_TRUE(f.may_contain(k)) << what << " key " << k;
      const std::size_t positives = f.may_contain_many(absent, out);
      expect_rate(positives, probes, r, what + " arity " + std::to_string(f.arity()));
      EXPECT_TRUE(deserialize<static_filter>(serialize(f)) == f) << what;
      // Three slots at the same width, built through the construction directly (a rate picks
      // them only where they are smaller).
      std::vector<hash128> hashes;
      for (const auto k : keys) hashes.push_back(hash_key(hasher{}, k));
      std::vector<unsigned char> storage;
      const auto allocate = [&](const detail::fuse_layout& l) {
        storage.assign(detail::fuse_payload_bytes(l, r), 0);
        return storage.data();
      };
      const auto built = detail::fuse_build<detail::fuse_scheme::folded>(
          hashes, r, detail::fuse_arity::three, allocate);
      ASSERT_EQ(built.layout.arity, 3u);
      const auto probe = [&](std::uint64_t key) {
        const std::uint64_t x =
            detail::fuse_hash<detail::fuse_scheme::folded>(hash_key(hasher{}, key), built.seed);
        return detail::with_fuse_types(
            built.layout, r, detail::fuse_scheme::folded,
            [&]<std::uint32_t W, detail::fuse_scheme S, std::uint32_t A>() {
              return detail::fuse_probe<W, S, A>(storage.data(), built.layout,
                                                 detail::fuse_codec<W>{r}, x);
            });
      };
      for (const auto k : keys) ASSERT_TRUE(probe(k)) << what << " three slots, key " << k;
      std::uint64_t three_positives = 0;
      for (const auto k : absent) three_positives += probe(k);
      expect_rate(three_positives, probes, r, what + " three slots");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Files of the 48-byte parameter block (tests/data/static-v1/README.md): 8- and 16-bit
// fingerprints, three slots per key, as every static filter was written before any width.
// ---------------------------------------------------------------------------------------------

namespace {

std::filesystem::path golden_path(const std::string& name) {
  return std::filesystem::path(BLOOMERY_TEST_DATA_DIR) / "static-v1" / name;
}

std::vector<std::byte> golden_bytes(const std::string& name) {
  std::ifstream in(golden_path(name), std::ios::binary);
  EXPECT_TRUE(in.good()) << golden_path(name);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

// The probe indices answers.txt lists as "maybe" for `name`.
std::vector<std::uint64_t> golden_positives(const std::string& name) {
  std::ifstream in(golden_path("answers.txt"));
  std::vector<std::uint64_t> out;
  std::string file;
  std::uint64_t i = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    if (fields >> file >> i && file == name) out.push_back(i);
  }
  return out;
}

template <class Key>
void expect_golden(const std::string& name, const std::vector<Key>& keys, std::uint32_t bits,
                   auto&& probe_key, const static_filter& rebuilt) {
  SCOPED_TRACE(name);
  const auto bytes = golden_bytes(name);
  const auto f = deserialize<static_filter>(bytes);
  const auto mapped = map_file<static_filter>(golden_path(name));
  EXPECT_EQ(f.fingerprint_bits(), bits);
  EXPECT_EQ(f.key_count(), keys.size());
  EXPECT_EQ(serialize(f), bytes);  // written back byte for byte
  // Built the same from the same keys with an explicit width: the same slots, seed and layout
  // (== leaves out the target rate, which the files of 0.01 and 0.0001 record as asked).
  EXPECT_TRUE(f == rebuilt);
  for (const auto& k : keys) ASSERT_TRUE(f.may_contain(k) && mapped->may_contain(k));
  const auto positives = golden_positives(name);
  ASSERT_GT(positives.size(), 0u);
  std::size_t next = 0;
  for (std::uint64_t i = 0; i < 200'000; ++i) {
    const bool expected = next < positives.size() && positives[next] == i;
    next += expected;
    const auto k = probe_key(i);
    ASSERT_EQ(f.may_contain(k), expected) << i;
    ASSERT_EQ(mapped->may_contain(k), expected) << i;
  }
  EXPECT_EQ(next, positives.size());
}

}  // namespace

TEST(StaticFilterGolden, FilesOfBothWidthsLoadAndAnswerAsWhenWritten) {
  std::vector<std::uint64_t> ints;
  for (std::uint64_t i = 0; i < 10'000; ++i) ints.push_back(i * 7919 + 1);
  std::vector<std::string> urls;
  for (int i = 0; i < 10'000; ++i) urls.push_back("https://example.com/page/" + std::to_string(i));
  const auto int_probe = [](std::uint64_t i) { return i * 7919 + 2; };
  const auto url_probe = [](std::uint64_t i) {
    return "https://example.com/absent/" + std::to_string(i);
  };
  expect_golden("static8.bf", ints, 8, int_probe,
                static_filter::build(ints, fingerprint_width::bits8));
  expect_golden("static16.bf", ints, 16, int_probe,
                static_filter::build(ints, fingerprint_width::bits16));
  expect_golden("static8_strings.bf", urls, 8, url_probe,
                static_filter::build(urls, fingerprint_width::bits8));
}
