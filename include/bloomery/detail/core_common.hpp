// What every filter core shares, whatever its layout: mapping a hash onto a range, and the batched
// queries' size threshold and argument check. Kept apart so that one family's core (cuckoo, static)
// does not include another's (the classic filter's bloom_core.hpp).
#pragma once

#include <cstdint>
#include <ranges>
#include <stdexcept>
#include <string>

namespace bloomery::detail {

// Maps a uniform 64-bit value onto [0, m) by multiply-shift: floor(x * m / 2^64). Unlike x % m it
// costs one multiply instead of a division, works for any m (no power of two needed), and its
// bias is below m / 2^64 — immeasurable for the filters we allow (m <= 2^48).
inline std::uint64_t reduce(std::uint64_t x, std::uint64_t m) noexcept {
  __extension__ const auto p = static_cast<unsigned __int128>(x) * m;  // quiet under -Wpedantic
  return static_cast<std::uint64_t>(p >> 64);
}

// Filters smaller than this sit in L1/L2, where the plain loop wins: batching only adds overhead.
inline constexpr std::uint64_t batch_min_bytes = std::uint64_t{1} << 20;

template <class Keys, class Out>
void check_batch_sizes(const Keys& keys, const Out& out) {
  if (std::ranges::size(out) < std::ranges::size(keys)) {
    throw std::invalid_argument("bloomery: may_contain_many: output has " +
                                std::to_string(std::ranges::size(out)) + " slots for " +
                                std::to_string(std::ranges::size(keys)) + " keys");
  }
}

}  // namespace bloomery::detail
