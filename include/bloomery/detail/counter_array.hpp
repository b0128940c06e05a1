// Packed small counters (4 or 8 bits) in 64-bit words, for the counting Bloom filter. Counter i of
// width b lives in word i / (64/b) at bits [(i % (64/b)) * b, + b). On a little-endian host this is
// plain byte order: with b = 8 counter i is byte i; with b = 4 it is byte i/2, low nibble for even
// i. Counters saturate: a counter at its maximum 2^b - 1 is never changed again (see
// counting_bloom_filter.hpp for why that keeps every answer sound). Nothing here owns memory.
#pragma once

#include <bit>
#include <cstdint>

#include "bloomery/bit_array.hpp"

namespace bloomery::detail {

// Where counter i sits for one counter width (4 or 8 bits).
struct counter_layout {
  std::uint32_t bits = 4;           // counter width b
  std::uint32_t log2_bits = 2;      // log2(b)
  std::uint32_t per_word_log2 = 4;  // log2(64 / b): counters per word is 1 << this
  std::uint64_t max = 15;           // 2^b - 1, the saturated value

  constexpr counter_layout() = default;
  explicit constexpr counter_layout(std::uint32_t counter_bits) noexcept
      : bits(counter_bits),
        log2_bits(static_cast<std::uint32_t>(std::countr_zero(counter_bits))),
        per_word_log2(6 - static_cast<std::uint32_t>(std::countr_zero(counter_bits))),
        max((std::uint64_t{1} << counter_bits) - 1) {}

  constexpr std::uint64_t word_of(std::uint64_t i) const noexcept { return i >> per_word_log2; }
  constexpr std::uint32_t shift_of(std::uint64_t i) const noexcept {
    return static_cast<std::uint32_t>((i & ((std::uint64_t{1} << per_word_log2) - 1)) << log2_bits);
  }
  // Words (a whole number of cache lines) holding m counters.
  constexpr std::uint64_t words_for(std::uint64_t m) const noexcept {
    return words_for_bits(m << log2_bits);
  }

  // A word with the low bit of every counter lane set (0x1111... or 0x0101...).
  constexpr std::uint64_t lane_low() const noexcept {
    return bits == 4 ? 0x1111111111111111ULL : 0x0101010101010101ULL;
  }
  // A word with the high bit of every counter lane set (0x8888... or 0x8080...).
  constexpr std::uint64_t lane_high() const noexcept { return lane_low() << (bits - 1); }
};

inline std::uint64_t counter_get(const std::uint64_t* words, const counter_layout& c,
                                 std::uint64_t i) noexcept {
  return (words[c.word_of(i)] >> c.shift_of(i)) & c.max;
}

// +1 unless saturated. Returns the new value.
inline std::uint64_t counter_increment(std::uint64_t* words, const counter_layout& c,
                                       std::uint64_t i) noexcept {
  std::uint64_t& w = words[c.word_of(i)];
  const std::uint32_t shift = c.shift_of(i);
  const std::uint64_t v = (w >> shift) & c.max;
  if (v == c.max) return v;
  w += std::uint64_t{1} << shift;  // no carry out of the lane: v < max
  return v + 1;
}

// -1 unless saturated or zero. Returns the new value.
inline std::uint64_t counter_decrement(std::uint64_t* words, const counter_layout& c,
                                       std::uint64_t i) noexcept {
  std::uint64_t& w = words[c.word_of(i)];
  const std::uint32_t shift = c.shift_of(i);
  const std::uint64_t v = (w >> shift) & c.max;
  if (v == c.max || v == 0) return v;
  w -= std::uint64_t{1} << shift;  // no borrow: v > 0
  return v - 1;
}

// One bit per nonzero counter lane, at the lane's low bit.
inline std::uint64_t counter_nonzero_lanes(std::uint64_t w, const counter_layout& c) noexcept {
  w |= w >> 1;
  w |= w >> 2;
  if (c.bits == 8) w |= w >> 4;
  return w & c.lane_low();
}

// One bit per saturated counter lane, at the lane's low bit.
inline std::uint64_t counter_saturated_lanes(std::uint64_t w, const counter_layout& c) noexcept {
  w &= w >> 1;
  w &= w >> 2;
  if (c.bits == 8) w &= w >> 4;
  return w & c.lane_low();
}

// Lane-wise saturating addition of two words of counters: each lane becomes min(max, a + b).
// The low bits of each lane add without crossing into the next lane; the lane's top bit is added
// by XOR, and a lane whose true sum overflowed (carry out of its top bit) is forced to max.
inline std::uint64_t counter_add_saturating(std::uint64_t a, std::uint64_t b,
                                            const counter_layout& c) noexcept {
  const std::uint64_t high = c.lane_high();
  const std::uint64_t sum = ((a & ~high) + (b & ~high)) ^ ((a ^ b) & high);
  const std::uint64_t carry = ((a & b) | ((a | b) & ~sum)) & high;
  return sum | ((carry >> (c.bits - 1)) * c.max);
}

}  // namespace bloomery::detail
