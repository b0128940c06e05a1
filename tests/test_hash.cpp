#include <gtest/gtest.h>
#include <bloomery/hash.hpp>

#include <array>
#include <cstring>
#include <set>
#include <string>
#include <vector>

using namespace bloomery;

TEST(Hash, IntegersAreTheirValueWidenedTo64BitsLittleEndian) {
  const hasher h;
  EXPECT_EQ(hash_key(h, std::int32_t{-7}), hash_key(h, std::int64_t{-7}));
  EXPECT_EQ(hash_key(h, std::int8_t{-7}), hash_key(h, std::int64_t{-7}));
  EXPECT_EQ(hash_key(h, std::uint16_t{500}), hash_key(h, std::uint64_t{500}));
  EXPECT_EQ(hash_key(h, 42), hash_key(h, 42ULL));
  // Sign extension, not zero extension: -1 as int32 is 0xFFFF...FF as 64 bits.
  EXPECT_EQ(hash_key(h, std::int32_t{-1}), hash_key(h, ~std::uint64_t{0}));
  EXPECT_NE(hash_key(h, std::uint32_t{0xFFFFFFFF}), hash_key(h, std::int32_t{-1}));
  // The default algorithm hashes the value with mix_integer, not its bytes.
  const unsigned char le[8] = {0xF9, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};  // -7
  EXPECT_EQ(hash_key(h, std::int16_t{-7}), mix_integer(~std::uint64_t{6}, default_seed));
  EXPECT_NE(hash_key(h, std::int16_t{-7}), h(le, sizeof le));
  // The legacy and keyed algorithms hash exactly the 8 little-endian bytes of the value.
  const hasher legacy(default_seed, hash_algorithm::xxh3_128_seeded);
  EXPECT_EQ(hash_key(legacy, std::int16_t{-7}), legacy(le, sizeof le));
  EXPECT_EQ(hash_key(legacy, std::int16_t{-7}), hash_key(legacy, std::int64_t{-7}));
  const hasher keyed(secret_key{});
  EXPECT_EQ(hash_key(keyed, std::int16_t{-7}), keyed(le, sizeof le));
}

TEST(Hash, StringsAndByteSpansHashTheirBytes) {
  const hasher h;
  const std::string s = "example.com";
  const std::vector<std::uint8_t> bytes(s.begin(), s.end());
  const std::vector<std::byte> raw(reinterpret_cast<const std::byte*>(s.data()),
                                   reinterpret_cast<const std::byte*>(s.data()) + s.size());
  EXPECT_EQ(hash_key(h, s), hash_key(h, std::string_view(s)));
  EXPECT_EQ(hash_key(h, s), hash_key(h, "example.com"));
  EXPECT_EQ(hash_key(h, s), hash_key(h, bytes));
  EXPECT_EQ(hash_key(h, s), hash_key(h, std::span<const std::byte>(raw)));
  EXPECT_NE(hash_key(h, s), hash_key(h, "example.org"));
  EXPECT_EQ(hash_key(h, ""), h(nullptr, 0));
}

TEST(Hash, MatchesXxh3Reference) {
  // The seeded mode is plain XXH3-128 with the seed: anyone can recompute positions from the docs.
  const hasher h(1234);
  const XXH128_hash_t ref = XXH3_128bits_withSeed("abc", 3, 1234);
  EXPECT_EQ(h("abc", 3), (hash128{ref.low64, ref.high64}));
  EXPECT_EQ(hasher().seed(), default_seed);
}

TEST(Hash, SeedsAndKeysChangeTheHash) {
  EXPECT_NE(hash_key(hasher(1), "k"), hash_key(hasher(2), "k"));
  const secret_key a = random_key(), b = random_key();
  EXPECT_NE(a, b);
  EXPECT_NE(a, secret_key{});
  EXPECT_NE(hash_key(hasher(a), "k"), hash_key(hasher(b), "k"));
  EXPECT_NE(hash_key(hasher(a), "k"), hash_key(hasher(), "k"));
  EXPECT_EQ(hash_key(hasher(a), "k"), hash_key(hasher(a), "k"));
  EXPECT_TRUE(hasher(a).keyed());
  EXPECT_FALSE(hasher(7).keyed());
}

TEST(Hash, DescribeDifferenceNamesTheParameter) {
  EXPECT_EQ(describe_difference(hasher(1), hasher(1)), "");
  EXPECT_NE(describe_difference(hasher(1), hasher(2)).find("seed differs (1 vs 2)"),
            std::string::npos);
  EXPECT_NE(describe_difference(hasher(1), hasher(random_key())).find("hash algorithm differs"),
            std::string::npos);
  EXPECT_NE(describe_difference(hasher(random_key()), hasher(random_key())).find("key differs"),
            std::string::npos);
}

namespace demo {
struct point {
  std::int32_t x, y;
};
}  // namespace demo

// A user type becomes a key through a key_hash specialization that projects it onto a built-in
// key; here, its 8 bytes.
template <>
struct bloomery::key_hash<demo::point> {
  std::uint64_t operator()(const demo::point& p) const {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(p.x)) << 32) |
           static_cast<std::uint32_t>(p.y);
  }
};

TEST(Hash, UserTypesThroughKeyHash) {
  static_assert(hashable_key<demo::point>);
  static_assert(!hashable_key<std::vector<int>>);  // not bytes: no silent reinterpretation
  static_assert(!hashable_key<double>);
  const hasher h;
  EXPECT_EQ(hash_key(h, demo::point{1, 2}), hash_key(h, (std::uint64_t{1} << 32) | 2));
  EXPECT_NE(hash_key(h, demo::point{1, 2}), hash_key(h, demo::point{2, 1}));
}

TEST(Hash, NoCollisionsAmongManyKeys) {
  const hasher h;
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
  for (std::uint64_t i = 0; i < 100'000; ++i) {
    const hash128 v = hash_key(h, i);
    EXPECT_TRUE(seen.emplace(v.low, v.high).second);
  }
}
