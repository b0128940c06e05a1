// The BIP37 filter (include/bloomery/bip37.hpp) against Bitcoin Core's published vectors, and its
// limits, parsing and no-false-negative guarantee.
#include <gtest/gtest.h>
#include <bloomery/bip37.hpp>
#include <bloomery/hash.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace bloomery;
using bloomery::test::expect_invalid;
using bloomery::test::expect_throw_with;

namespace {

std::vector<std::uint8_t> from_hex(const std::string& hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::uint32_t murmur(std::uint32_t seed, const std::string& hex) {
  return murmur3_32(from_hex(hex), seed);
}

void expect_format_error(const std::vector<std::uint8_t>& bytes, const std::string& needle) {
  expect_throw_with<format_error>([&] { (void)bip37_filter::deserialize(bytes); }, needle);
}

}  // namespace

// Bitcoin Core, src/test/hash_tests.cpp, test case `murmurhash3`: every vector.
TEST(Bip37, MurmurHash3MatchesBitcoinCoreVectors) {
  EXPECT_EQ(murmur(0x00000000, ""), 0x00000000u);
  EXPECT_EQ(murmur(0xFBA4C795, ""), 0x6a396f08u);
  EXPECT_EQ(murmur(0xffffffff, ""), 0x81f16f39u);
  EXPECT_EQ(murmur(0x00000000, "00"), 0x514e28b7u);
  EXPECT_EQ(murmur(0xFBA4C795, "00"), 0xea3f0b17u);
  EXPECT_EQ(murmur(0x00000000, "ff"), 0xfd6cf10du);
  EXPECT_EQ(murmur(0x00000000, "0011"), 0x16c6b7abu);
  EXPECT_EQ(murmur(0x00000000, "001122"), 0x8eb51c3du);
  EXPECT_EQ(murmur(0x00000000, "00112233"), 0xb4471bf8u);
  EXPECT_EQ(murmur(0x00000000, "0011223344"), 0xe2301fa8u);
  EXPECT_EQ(murmur(0x00000000, "001122334455"), 0xfc2e4a15u);
  EXPECT_EQ(murmur(0x00000000, "00112233445566"), 0xb074502cu);
  EXPECT_EQ(murmur(0x00000000, "0011223344556677"), 0x8034d2a0u);
  EXPECT_EQ(murmur(0x00000000, "001122334455667788"), 0xb4698defu);
}

TEST(Bip37, MurmurHash3IsConstexpr) {
  static constexpr std::uint8_t bytes[] = {0x00, 0x11};
  static_assert(murmur3_32(bytes, 0) == 0x16c6b7abu);
}

// BIP 37, "Bloom filter format": with a tweak of 5, hash function 1's seed is 4221880218.
TEST(Bip37, SeedScheduleOfTheBip) {
  EXPECT_EQ(bip37_hash_seed(1, 5), 4221880218u);
  EXPECT_EQ(bip37_hash_seed(0, 7), 7u);
  EXPECT_EQ(bip37_hash_seed(2, 0xFFFFFFFF), static_cast<std::uint32_t>(2ull * 0xFBA4C795 - 1));
}

// Bitcoin Core, src/test/bloom_tests.cpp, test case `bloom_create_insert_serialize`.
TEST(Bip37, CreateInsertSerialize) {
  bip37_filter f({.capacity = 3, .fpr = 0.01}, 0, bip37_update::all);
  f.insert(from_hex("99108ad8ed9bb6274d3980bab5a85c048f0950c8"));
  EXPECT_TRUE(f.may_contain(from_hex("99108ad8ed9bb6274d3980bab5a85c048f0950c8")));
  // One bit different in the first byte.
  EXPECT_FALSE(f.may_contain(from_hex("19108ad8ed9bb6274d3980bab5a85c048f0950c8")));
  f.insert(from_hex("b5a2c786d9ef4658287ced5914b37a1b4aa32eee"));
  EXPECT_TRUE(f.may_contain(from_hex("b5a2c786d9ef4658287ced5914b37a1b4aa32eee")));
  f.insert(from_hex("b9300670b4c5366e95b2699e8b18bc75e5f729c5"));
  EXPECT_TRUE(f.may_contain(from_hex("b9300670b4c5366e95b2699e8b18bc75e5f729c5")));

  EXPECT_EQ(to_hex(f.serialize()), "03614e9b050000000000000001");

  EXPECT_TRUE(f.may_contain(from_hex("99108ad8ed9bb6274d3980bab5a85c048f0950c8")));
  f.clear();
  EXPECT_FALSE(f.may_contain(from_hex("99108ad8ed9bb6274d3980bab5a85c048f0950c8")));
}

// Bitcoin Core, src/test/bloom_tests.cpp, test case `bloom_create_insert_serialize_with_tweak`.
TEST(Bip37, CreateInsertSerializeWithTweak) {
  bip37_filter f({.capacity = 3, .fpr = 0.01}, 2147483649u, bip37_update::all);
  f.insert(from_hex("99108ad8ed9bb6274d3980bab5a85c048f0950c8"));
  EXPECT_TRUE(f.may_contain(from_hex("99108ad8ed9bb6274d3980bab5a85c048f0950c8")));
  EXPECT_FALSE(f.may_contain(from_hex("19108ad8ed9bb6274d3980bab5a85c048f0950c8")));
  f.insert(from_hex("b5a2c786d9ef4658287ced5914b37a1b4aa32eee"));
  EXPECT_TRUE(f.may_contain(from_hex("b5a2c786d9ef4658287ced5914b37a1b4aa32eee")));
  f.insert(from_hex("b9300670b4c5366e95b2699e8b18bc75e5f729c5"));
  EXPECT_TRUE(f.may_contain(from_hex("b9300670b4c5366e95b2699e8b18bc75e5f729c5")));

  EXPECT_EQ(to_hex(f.serialize()), "03ce4299050000000100008001");
}

// Bitcoin Core, src/test/bloom_tests.cpp, test case `bloom_create_insert_key`. Core derives the
// public key from the WIF secret 5Kg1gnAjaLfKiwhhPpGS3QfRg2m6awQvaj98JCZBZQ5SuS2F15C; the bytes
// below are that key (uncompressed, 65 bytes) and its HASH160, computed once outside this project
// (secp256k1 point multiplication, then RIPEMD-160 of SHA-256), since bloomery has no secp256k1.
TEST(Bip37, CreateInsertKey) {
  const auto pubkey = from_hex(
      "045b81f0017e2091e2edcd5eecf10d5bdd120a5514cb3ee65b8447ec18bfc4575c6d5bf415e54e03b1067934a0f0"
      "ba76b01c6b9ab227142ee1d543764b69d901e0");
  const auto pubkey_hash = from_hex("477abbacd4113f2e6b100526222eedd953c26a64");
  ASSERT_EQ(pubkey.size(), 65u);
  bip37_filter f({.capacity = 2, .fpr = 0.001}, 0, bip37_update::all);
  f.insert(pubkey);
  f.insert(pubkey_hash);
  EXPECT_EQ(to_hex(f.serialize()), "038fc16b080000000000000001");
}

// The BIP's sizing with Bitcoin Core's integer truncations (src/common/bloom.cpp, the
// CBloomFilter constructor): bits = (unsigned)(-1 / ln2^2 * N * ln P), capped at 288,000, / 8;
// k = (unsigned)((bytes * 8 / N, an integer division) * ln 2), capped at 50.
TEST(Bip37, SizingFollowsBitcoinCore) {
  using P = bip37_parameters;
  EXPECT_EQ(bip37_filter::size_for({3, 0.01}), (P{3, 5}));        // 28.76 bits -> 3 bytes; 8 * ln2
  EXPECT_EQ(bip37_filter::size_for({2, 0.001}), (P{3, 8}));       // 12 bits/element * ln 2 = 8.3
  EXPECT_EQ(bip37_filter::size_for({10, 1e-6}), (P{35, 19}));     // 287.55 bits; 28 * ln 2 = 19.4
  EXPECT_EQ(bip37_filter::size_for({1000, 0.01}), (P{1198, 6}));  // 9585.1 bits; 9 * ln 2 = 6.2
  // The BIP's reason for 36,000 bytes: 20,000 elements at < 0.1% fit.
  EXPECT_EQ(bip37_filter::size_for({20'000, 0.001}), (P{35'943, 9}));
  // Capped at 36,000 bytes, and then fewer hash functions.
  EXPECT_EQ(bip37_filter::size_for({100'000, 1e-4}), (P{36'000, 1}));
  EXPECT_EQ(bip37_filter::size_for({1'000'000, 1e-9}), (P{36'000, 0}));
  // Capped at 50 hash functions: 1 element at 1e-30 wants 143 bits per element.
  EXPECT_EQ(bip37_filter::size_for({1, 1e-30}), (P{17, 50}));
  // Tiny filters: 4.79 bits -> 0 bytes; P = 0.5 leaves 1 bit per element, so k = 0.
  EXPECT_EQ(bip37_filter::size_for({1, 0.1}), (P{0, 0}));
  EXPECT_EQ(bip37_filter::size_for({1000, 0.5}), (P{180, 0}));
  EXPECT_EQ(bip37_filter::size_for({0xFFFFFFFFu, 0.01}), (P{36'000, 0}));
}

TEST(Bip37, SizingRejectsWhatCoreCannotRepresent) {
  expect_invalid(
      [] {
        (void)bip37_filter::size_for({0, 0.01});
      },
      "capacity = 0 is invalid; allowed range is [1, 4294967295]");
  expect_invalid(
      [] {
        (void)bip37_filter::size_for({4294967296u, 0.01});
      },
      "capacity = 4294967296 is invalid; allowed range is [1, 4294967295]");
  expect_invalid(
      [] {
        (void)bip37_filter::size_for({10, 0});
      },
      "fpr = 0 is invalid; allowed range is (0, 1)");
  expect_invalid(
      [] {
        (void)bip37_filter::size_for({10, 1});
      },
      "fpr = 1 is invalid; allowed range is (0, 1)");
  expect_invalid([] { (void)bip37_filter::size_for({10, std::nan("")}); }, "fpr = nan");
}

TEST(Bip37, ExplicitParametersWithinTheBipsLimits) {
  const bip37_filter f({.filter_bytes = 36'000, .hash_funcs = 50}, 7, bip37_update::p2pubkey_only);
  EXPECT_EQ(f.filter_bytes(), 36'000u);
  EXPECT_EQ(f.bit_count(), 288'000u);
  EXPECT_EQ(f.hash_funcs(), 50u);
  EXPECT_EQ(f.tweak(), 7u);
  EXPECT_EQ(f.flags(), bip37_update::p2pubkey_only);
  EXPECT_EQ(f.size_in_bytes(), 36'000u);
  EXPECT_EQ(std::string(to_string(f.flags())), "BLOOM_UPDATE_P2PUBKEY_ONLY");
  expect_invalid([] { bip37_filter g({.filter_bytes = 36'001, .hash_funcs = 1}); },
                 "filter_bytes = 36001 is invalid; allowed range is [0, 36000]");
  expect_invalid([] { bip37_filter g({.filter_bytes = 10, .hash_funcs = 51}); },
                 "hash_funcs = 51 is invalid; allowed range is [0, 50]");
  expect_invalid(
      [] { bip37_filter g({.filter_bytes = 10, .hash_funcs = 1}, 0, bip37_update{3}); },
      "flags = 3 is invalid; allowed are 0 (BLOOM_UPDATE_NONE), 1 (BLOOM_UPDATE_ALL) and 2");
}

TEST(Bip37, NoFalseNegativesAndTheTargetRate) {
  bip37_filter f({.capacity = 1000, .fpr = 0.01}, 12345, bip37_update::none);
  for (int i = 0; i < 1000; ++i) f.insert("element-" + std::to_string(i));
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(f.may_contain("element-" + std::to_string(i))) << i;
  int positives = 0;
  constexpr int probes = 100'000;
  for (int i = 0; i < probes; ++i) positives += f.may_contain("absent-" + std::to_string(i));
  // (1198 bytes, k = 6) models 1.01%; 5 standard deviations of 100,000 probes is 0.16%.
  EXPECT_LT(positives, probes * 0.0118);
  EXPECT_GT(positives, probes * 0.0085);
  EXPECT_NEAR(f.estimated_fpr(), 0.0101, 0.002);
  EXPECT_NEAR(static_cast<double>(f.approximate_count()), 1000, 50);
}

TEST(Bip37, KeysAreTheirBytes) {
  bip37_filter f({.capacity = 10, .fpr = 0.001});
  const std::string s = "\x01\x02key";
  f.insert(s);
  const std::vector<std::uint8_t> u(s.begin(), s.end());
  std::vector<std::byte> b;
  for (const char c : s) b.push_back(static_cast<std::byte>(c));
  EXPECT_TRUE(f.may_contain(u));
  EXPECT_TRUE(f.may_contain(b));
  EXPECT_TRUE(f.may_contain(std::span<const std::uint8_t>(u)));
  EXPECT_TRUE(f.may_contain(std::string_view(s)));
  std::vector<bool> hits(2);
  const std::vector<std::string> keys = {s, "absent"};
  EXPECT_EQ(f.may_contain_many(keys, hits), 1u);
  EXPECT_TRUE(hits[0]);
  EXPECT_FALSE(hits[1]);
}

// Bitcoin Core's "match-all" filters (CVE-2013-5700 made the empty one safe): 0 bytes, or 0 hash
// functions, answer "possibly present" to everything, and an insert changes nothing.
TEST(Bip37, EmptyFiltersMatchEverything) {
  bip37_filter empty({.capacity = 1, .fpr = 0.1});
  EXPECT_EQ(empty.filter_bytes(), 0u);
  EXPECT_TRUE(empty.matches_everything());
  empty.insert("x");
  EXPECT_TRUE(empty.may_contain("anything"));
  EXPECT_EQ(empty.estimated_fpr(), 1.0);
  EXPECT_EQ(empty.approximate_count(), 0u);
  EXPECT_EQ(to_hex(empty.serialize()), "00000000000000000000");
  EXPECT_EQ(bip37_filter::deserialize(empty.serialize()), empty);

  bip37_filter no_hashes({.filter_bytes = 4, .hash_funcs = 0});
  no_hashes.insert("x");
  EXPECT_EQ(no_hashes.set_bit_count(), 0u);
  EXPECT_TRUE(no_hashes.may_contain("anything"));
}

TEST(Bip37, RoundTrip) {
  std::uint64_t state = 1;
  for (const std::uint32_t bytes : {0u, 1u, 252u, 253u, 254u, 1000u, 36'000u}) {
    const auto k = static_cast<std::uint32_t>(support::splitmix64(state) % 51);
    const auto tweak = static_cast<std::uint32_t>(support::splitmix64(state));
    const auto flags = static_cast<bip37_update>(support::splitmix64(state) % 3);
    bip37_filter f({.filter_bytes = bytes, .hash_funcs = k}, tweak, flags);
    for (int i = 0; i < 50; ++i) f.insert(std::to_string(support::splitmix64(state)));
    const auto wire = f.serialize();
    const std::size_t length_bytes = bytes < 0xfd ? 1 : 3;
    ASSERT_EQ(wire.size(), length_bytes + bytes + 9);
    const bip37_filter g = bip37_filter::deserialize(wire);
    EXPECT_EQ(g, f);
    EXPECT_EQ(g.serialize(), wire);
    EXPECT_EQ(g.tweak(), tweak);
    EXPECT_EQ(g.flags(), flags);
    EXPECT_EQ(g.hash_funcs(), k);
  }
  // 36,000 = 0x8ca0: the compact size is fd a0 8c.
  const auto wire = bip37_filter({.filter_bytes = 36'000, .hash_funcs = 1}).serialize();
  EXPECT_EQ(to_hex({wire.data(), 3}), "fda08c");
  // The std::byte overload reads the same bytes.
  std::vector<std::byte> bytes;
  for (const std::uint8_t v : wire) bytes.push_back(static_cast<std::byte>(v));
  EXPECT_EQ(bip37_filter::deserialize(std::span<const std::byte>(bytes)).filter_bytes(), 36'000u);
}

TEST(Bip37, ParseErrorsNameTheField) {
  const auto good = from_hex("03614e9b050000000000000001");
  expect_format_error({}, "BIP37 filterload: empty input");
  for (std::size_t n = 1; n < good.size(); ++n) {  // every truncation is an error, never UB
    expect_format_error({good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n)},
                        "truncated: " + std::to_string(n) +
                            " bytes, but a filter of 3 bytes "
                            "makes a body of 13");
  }
  auto trailing = good;
  trailing.push_back(0);
  expect_format_error(trailing, "trailing bytes: 14 bytes, but a filter of 3 bytes makes a body");
  expect_format_error(from_hex("fd01"),
                      "truncated in the filter length: 2 bytes, the compact "
                      "size needs 3");
  expect_format_error(from_hex("fd0300614e9b050000000000000001"),
                      "non-canonical filter length: 3 written in 3 bytes");
  expect_format_error(from_hex("fe00000100"),
                      "filter of 65536 bytes is over the BIP37 maximum "
                      "of 36000");
  expect_format_error(from_hex("ffffffffffffffffff"),
                      "filter of 18446744073709551615 bytes is "
                      "over the BIP37 maximum of 36000");
  expect_format_error(from_hex("fda18c"), "filter of 36001 bytes is over the BIP37 maximum");
  expect_format_error(from_hex("03614e9b330000000000000001"),
                      "nHashFuncs = 51 is over the BIP37 maximum of 50");
  expect_format_error(from_hex("03614e9b050000000000000003"),
                      "nFlags = 3 is invalid; allowed are 0 (BLOOM_UPDATE_NONE)");
  expect_format_error(from_hex("03614e9bffffffff0000000001"), "nHashFuncs = 4294967295");
}

// Random bytes, and valid bodies with random bytes changed, parse or throw format_error, nothing
// else (under ASan and UBSan, nothing undefined either).
TEST(Bip37, ArbitraryBytesNeverCrashTheParser) {
  std::uint64_t state = 99;
  const auto good = bip37_filter({.capacity = 5, .fpr = 0.01}, 77, bip37_update::all).serialize();
  int parsed = 0;
  for (int round = 0; round < 20'000; ++round) {
    std::vector<std::uint8_t> bytes;
    if (round % 2 == 0) {
      bytes.resize(support::splitmix64(state) % 24);
      for (auto& b : bytes) b = static_cast<std::uint8_t>(support::splitmix64(state));
    } else {
      bytes = good;
      bytes.resize(bytes.size() + support::splitmix64(state) % 3 - 1);  // one less, as is, one more
      bytes[support::splitmix64(state) % bytes.size()] =
          static_cast<std::uint8_t>(support::splitmix64(state));
    }
    try {
      const bip37_filter f = bip37_filter::deserialize(bytes);
      EXPECT_EQ(f.serialize(), bytes);
      ++parsed;
    } catch (const format_error&) {
    }
  }
  EXPECT_GT(parsed, 1000);
}
