// The hash functions RedisBloom's filters are built on, fixed by its data as BIP37's MurmurHash3
// is by the BIP (docs/redisbloom-format.md §3.4): MurmurHash64A (Austin Appleby's 64-bit
// MurmurHash2) for every filter RedisBloom 2.x creates, and the 32-bit MurmurHash2 for Bloom
// filters written by versions before 64-bit hashing. Both read the item's bytes exactly as stored,
// little-endian words first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace bloomery::interop::redisbloom {

// MurmurHash64A of `item` with `seed`.
constexpr std::uint64_t murmur64a(std::span<const std::byte> item, std::uint64_t seed) noexcept {
  constexpr std::uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  const std::size_t n = item.size();
  std::uint64_t h = seed ^ (static_cast<std::uint64_t>(n) * m);
  const std::size_t whole = n / 8 * 8;
  for (std::size_t i = 0; i < whole; i += 8) {
    std::uint64_t k = 0;
    for (std::size_t b = 0; b < 8; ++b) {
      k |= static_cast<std::uint64_t>(item[i + b]) << (8 * b);
    }
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  // The 1-7 tail bytes enter as one little-endian value, then one multiply.
  if (n != whole) {
    for (std::size_t b = 0; whole + b < n; ++b) {
      h ^= static_cast<std::uint64_t>(item[whole + b]) << (8 * b);
    }
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

// MurmurHash2 (32-bit) of `item` with `seed`.
constexpr std::uint32_t murmur2(std::span<const std::byte> item, std::uint32_t seed) noexcept {
  constexpr std::uint32_t m = 0x5bd1e995U;
  constexpr int r = 24;
  const std::size_t n = item.size();
  std::uint32_t h = seed ^ static_cast<std::uint32_t>(n);
  const std::size_t whole = n / 4 * 4;
  for (std::size_t i = 0; i < whole; i += 4) {
    std::uint32_t k = 0;
    for (std::size_t b = 0; b < 4; ++b) {
      k |= static_cast<std::uint32_t>(item[i + b]) << (8 * b);
    }
    k *= m;
    k ^= k >> r;
    k *= m;
    h *= m;
    h ^= k;
  }
  if (n != whole) {
    for (std::size_t b = 0; whole + b < n; ++b) {
      h ^= static_cast<std::uint32_t>(item[whole + b]) << (8 * b);
    }
    h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return h;
}

// The item's bytes, for callers holding text.
inline std::span<const std::byte> bytes_of(std::string_view s) noexcept {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

}  // namespace bloomery::interop::redisbloom
