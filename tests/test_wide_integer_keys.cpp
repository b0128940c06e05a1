// Integer keys wider than 64 bits are rejected at compile time. Built with GNU extensions on
// (-std=gnu++20, the default of a consumer's cxx_std_20 target), where __int128 counts as
// std::integral: bloomery once took it as a key and hashed only its low 64 bits, so 2^64 + 5 and
// 5 were the same key.
#include <gtest/gtest.h>
#include <bloomery/bloomery.hpp>

#include <concepts>
#include <cstdint>

using namespace bloomery;

namespace {

template <class F, class K>
concept queryable_with = requires(const F& f, const K& k) {
  f.may_contain(k);
};
template <class F, class K>
concept insertable_with = requires(F& f, const K& k) {
  f.insert(k);
};

static_assert(std::integral<__int128>, "this file must be built with GNU extensions");
static_assert(!hashable_key<__int128> && !hashable_key<unsigned __int128>);
static_assert(!queryable_with<bloom_filter, __int128>);
static_assert(!insertable_with<bloom_filter, unsigned __int128>);
static_assert(!queryable_with<blocked_bloom_filter, unsigned __int128>);
static_assert(!insertable_with<cuckoo_filter, __int128>);
static_assert(!queryable_with<static_filter, __int128>);
static_assert(!queryable_with<any_filter, __int128>);
static_assert(hashable_key<std::int64_t> && queryable_with<bloom_filter, std::uint64_t>);

TEST(WideIntegerKeys, SixtyFourBitKeysStillWorkWithExtensionsOn) {
  bloom_filter f({.capacity = 100, .fpr = 0.001});
  f.insert(std::uint64_t{5});
  EXPECT_TRUE(f.may_contain(5));
  // The caller decides how to narrow a wide value, explicitly.
  const unsigned __int128 wide = (static_cast<unsigned __int128>(1) << 64) + 5;
  EXPECT_TRUE(f.may_contain(static_cast<std::uint64_t>(wide)));
}

}  // namespace
