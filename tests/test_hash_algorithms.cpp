// The seeded hash algorithms side by side: xxh3_128_seeded (every key's bytes through XXH3, what
// files written before xxh3_128_seeded_intmix hold) and xxh3_128_seeded_intmix (the default:
// integer keys through mix_integer). Files of the old algorithm must load and answer exactly as
// when they were written; filters merge only with filters of the same algorithm.
#include <gtest/gtest.h>

#include <bloomery/bloomery.hpp>

#include "test_support.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using namespace bloomery;

const hasher legacy(default_seed, hash_algorithm::xxh3_128_seeded);

// The keys tests/data/legacy/*.bf were built from (by bloomery at commit 69a312b, the last one
// before xxh3_128_seeded_intmix; tests/data/legacy/README.md says how).
std::vector<std::uint64_t> legacy_keys() {
  std::vector<std::uint64_t> keys;
  for (std::uint64_t i = 0; i < 1000; ++i) keys.push_back(i * 7919 + 1);
  return keys;
}

std::vector<std::byte> read_bytes(const std::string& name) {
  const std::filesystem::path path =
      std::filesystem::path(BLOOMERY_TEST_DATA_DIR) / "legacy" / name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

// A filter of `F` built today the way the legacy file was built then, with the legacy algorithm.
template <class F>
F rebuild_legacy() {
  const auto keys = legacy_keys();
  if constexpr (std::is_same_v<F, static_filter>) {
    // The file was built at 0.01, which then meant 8-bit fingerprints in three slots: today an
    // explicit width builds that layout (a rate now picks 7 bits in four).
    return static_filter::build(keys, fingerprint_width::bits8, legacy);
  } else {
    F f(target{.capacity = std::is_same_v<F, scalable_bloom_filter> ? 300u : 1000u, .fpr = 0.01},
        legacy);
    for (const auto key : keys) {
      if constexpr (std::is_same_v<F, cuckoo_filter>) {
        EXPECT_EQ(f.insert(key), insert_result::inserted);
      } else {
        f.insert(key);
      }
    }
    return f;
  }
}

template <class F>
struct LegacyFile : ::testing::Test {};
using legacy_kinds = ::testing::Types<bloom_filter, blocked_bloom_filter, counting_bloom_filter,
                                      cuckoo_filter, scalable_bloom_filter, static_filter>;
TYPED_TEST_SUITE(LegacyFile, legacy_kinds);

std::string file_of(filter_kind kind) {
  switch (kind) {
    case filter_kind::bloom:
      return "bloom.bf";
    case filter_kind::blocked_bloom:
      return "blocked.bf";
    case filter_kind::counting_bloom:
      return "counting.bf";
    case filter_kind::cuckoo:
      return "cuckoo.bf";
    case filter_kind::scalable_bloom:
      return "scalable.bf";
    case filter_kind::static_filter:
      return "static.bf";
    case filter_kind::scalable_cuckoo:
      break;  // a kind newer than the legacy files
  }
  return "?";
}

TYPED_TEST(LegacyFile, LoadsAndAnswersExactlyAsWhenItWasWritten) {
  const auto bytes = read_bytes(file_of(TypeParam::kind));
  const auto f = deserialize<TypeParam>(bytes);
  EXPECT_EQ(f.hash().algorithm(), hash_algorithm::xxh3_128_seeded);
  for (const auto key : legacy_keys()) ASSERT_TRUE(f.may_contain(key)) << key;
  // Re-encoding gives the file back, and the same keys hashed today with the legacy algorithm
  // give the same bytes: every answer, for every key, is what it was.
  EXPECT_EQ(serialize(f), bytes);
  if constexpr (std::is_same_v<TypeParam, static_filter>) {
    EXPECT_TRUE(rebuild_legacy<TypeParam>() == f);  // all but the target rate the file records
  } else {
    EXPECT_EQ(serialize(rebuild_legacy<TypeParam>()), bytes);
  }
  // The default algorithm hashes integer keys differently, so its filter is a different one.
  const auto keys = legacy_keys();
  if constexpr (std::is_same_v<TypeParam, static_filter>) {
    EXPECT_NE(serialize(static_filter::build(keys, 0.01)), bytes);
  } else {
    TypeParam fresh(target{
        .capacity = std::is_same_v<TypeParam, scalable_bloom_filter> ? 300u : 1000u, .fpr = 0.01});
    for (const auto key : keys) (void)fresh.insert(key);
    EXPECT_EQ(fresh.hash().algorithm(), hash_algorithm::xxh3_128_seeded_intmix);
    EXPECT_NE(serialize(fresh), bytes);
  }
}

TEST(HashAlgorithms, NewFiltersUseIntmixAndKeepItThroughAFile) {
  bloom_filter f({.capacity = 1000, .fpr = 0.01});
  EXPECT_EQ(f.hash().algorithm(), hash_algorithm::xxh3_128_seeded_intmix);
  EXPECT_STREQ(to_string(f.hash().algorithm()), "xxh3-128-seeded-intmix");
  EXPECT_EQ(f.stats().hash, hash_algorithm::xxh3_128_seeded_intmix);
  for (std::uint64_t i = 0; i < 1000; ++i) f.insert(i);
  const auto back = deserialize<bloom_filter>(serialize(f));
  EXPECT_EQ(back.hash(), f.hash());
  EXPECT_EQ(back, f);
  const auto any = deserialize_any(serialize(f));
  EXPECT_EQ(any.stats().hash, hash_algorithm::xxh3_128_seeded_intmix);
}

TEST(HashAlgorithms, FiltersOfDifferentAlgorithmsDoNotMerge) {
  bloom_filter modern({.capacity = 1000, .fpr = 0.01});
  bloom_filter old({.capacity = 1000, .fpr = 0.01}, legacy);
  try {
    modern |= old;
    FAIL() << "merged filters of two hash algorithms";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("hash algorithm differs"), std::string::npos) << e.what();
  }
  EXPECT_THROW(old &= modern, std::invalid_argument);
  blocked_bloom_filter a({.capacity = 1000, .fpr = 0.01});
  blocked_bloom_filter b({.capacity = 1000, .fpr = 0.01}, legacy);
  EXPECT_THROW(a |= b, std::invalid_argument);
  counting_bloom_filter c({.capacity = 1000, .fpr = 0.01});
  counting_bloom_filter d({.capacity = 1000, .fpr = 0.01}, legacy);
  EXPECT_THROW(c |= d, std::invalid_argument);
}

TEST(HashAlgorithms, ByteKeysHashAlikeInBothSeededAlgorithms) {
  const hasher modern(1234);
  const hasher old(1234, hash_algorithm::xxh3_128_seeded);
  for (const std::string& key :
       std::vector<std::string>{"", "a", "http://example.com/x", std::string(100, 'x')}) {
    EXPECT_EQ(hash_key(modern, key), hash_key(old, key)) << key;
  }
  // So a filter of strings holds the same bits under either; only the recorded algorithm differs.
  bloom_filter f({.capacity = 500, .fpr = 0.01}, modern);
  bloom_filter g({.capacity = 500, .fpr = 0.01}, old);
  for (int i = 0; i < 500; ++i) {
    f.insert("key-" + std::to_string(i));
    g.insert("key-" + std::to_string(i));
  }
  EXPECT_TRUE(std::equal(f.words().begin(), f.words().end(), g.words().begin(), g.words().end()));
}

TEST(HashAlgorithms, SeedStillChangesIntegerHashes) {
  EXPECT_NE(hash_key(hasher(1), std::uint64_t{42}), hash_key(hasher(2), std::uint64_t{42}));
  EXPECT_NE(hash_key(hasher(1), std::uint64_t{42}), hash_key(hasher(1), std::uint64_t{43}));
  // An integer's value is the key, whatever its type.
  EXPECT_EQ(hash_key(hasher(), std::int32_t{-7}), hash_key(hasher(), std::int64_t{-7}));
  EXPECT_EQ(hash_key(hasher(), std::uint8_t{200}), hash_key(hasher(), std::uint64_t{200}));
}

TEST(HashAlgorithms, AKeyedAlgorithmNeedsAKey) {
  EXPECT_THROW(hasher(1, hash_algorithm::xxh3_128_keyed), std::invalid_argument);
  EXPECT_THROW(hasher(1, static_cast<hash_algorithm>(9)), std::invalid_argument);
  EXPECT_NO_THROW(hasher(1, hash_algorithm::xxh3_128_seeded));
  EXPECT_NO_THROW(hasher(1, hash_algorithm::xxh3_128_seeded_intmix));
}

TEST(HashAlgorithms, UnknownAlgorithmInAFileIsRefused) {
  bloom_filter f({.capacity = 100, .fpr = 0.01});
  auto bytes = serialize(f);
  bytes[16] = std::byte{4};  // u32 hash algorithm at offset 16: 4 is not defined
  test::reseal(bytes);       // so the checksum passes and the algorithm field itself is judged
  try {
    (void)deserialize<bloom_filter>(bytes);
    FAIL() << "loaded a file of hash algorithm 4";
  } catch (const format_error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown hash algorithm 4"), std::string::npos)
        << e.what();
  }
  // Algorithm 3 with a key in the key field is as malformed as algorithm 1 with one.
  bytes = serialize(f);
  bytes[40] = std::byte{1};
  test::reseal(bytes);
  EXPECT_THROW((void)deserialize<bloom_filter>(bytes), format_error);
}

}  // namespace
