// The demo's keys, values and read sequence.
//
// Keys are 16 lowercase hex characters of a 64-bit splitmix64 output, values are 20 bytes
// ("val:" and the key's number in hex). Because the keys are hashed, every table's key range
// spans the whole key space, as in an LSM-tree's level 0 of overlapping tables: no min/max key
// pruning can stand in for the filters, and an absent read without a filter really reads one
// data block from every table. Present keys are outputs 0, 1, 2, ... of the generator, absent
// keys outputs 2^63, 2^63 + 1, ...; splitmix64 is a bijection of its position and the hex text a
// bijection of the number, so an absent key can never equal a present one.
#pragma once

#include <bloomery/support/keys.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>
#include <vector>

#include "options.hpp"

namespace bloomery_lsm_demo {

constexpr u64 key_seed = 0x1517'b100'3e72'0005ULL;

constexpr u64 present_key(u64 i) noexcept {
  return bloomery::support::splitmix64_at(key_seed, i);
}

// Fixed-size text of a number in lowercase hex, most significant digit first, so that bytewise
// order is numeric order and distinct numbers give distinct texts.
template <std::size_t Prefix>
class hex_text {
 public:
  hex_text(const char (&prefix)[Prefix + 1], u64 v) noexcept {
    std::copy_n(prefix, Prefix, c_.begin());
    for (std::size_t i = c_.size(); i-- > Prefix;) {
      c_[i] = "0123456789abcdef"[v & 15];
      v >>= 4;
    }
  }
  std::string_view view() const noexcept { return {c_.data(), c_.size()}; }

 private:
  std::array<char, Prefix + 16> c_;
};

constexpr std::size_t key_bytes = 16;
constexpr std::size_t value_bytes = 20;

inline hex_text<0> key_of(u64 key_number) noexcept {
  return hex_text<0>("", key_number);
}
// The value of present key number i names i, so a get() that returned another key's value (a
// wrong table, a wrong block) is caught, not only a missing one.
inline hex_text<4> value_of(u64 i) noexcept {
  return hex_text<4>("val:", i);
}
static_assert(sizeof(hex_text<0>) == key_bytes && sizeof(hex_text<4>) == value_bytes);

struct read_op {
  u64 key = 0;    // the key's number; key_of(key) is the key
  u64 index = 0;  // present reads: the key's position, which names its value
  bool absent = false;
};

// Exactly round(reads * absent_fraction) absent reads, each for a different absent key, and the
// rest for present keys drawn uniformly from all tables; then shuffled, so absent and present
// reads interleave as in a real workload. Fixed seeds: every filter kind gets the same sequence.
std::vector<read_op> make_workload(u64 reads, double absent_fraction, u64 total_keys);

}  // namespace bloomery_lsm_demo
