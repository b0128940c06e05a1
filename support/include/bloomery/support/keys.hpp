// Deterministic key streams for the tests, benchmarks and demos: splitmix64 and the key sets
// drawn from it. Every stream here is fixed forever, since expected numbers in tests, benchmark
// tables and docs depend on the exact keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bloomery::support {

// The splitmix64 increment (2^64 / golden ratio, odd).
inline constexpr std::uint64_t splitmix64_gamma = 0x9e3779b97f4a7c15ULL;

// The splitmix64 finalizer: a bijection of 64-bit values, so distinct inputs give distinct keys.
constexpr std::uint64_t splitmix64_mix(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The next output of the splitmix64 stream whose state is `state` (advanced by one step).
constexpr std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  return splitmix64_mix(state += splitmix64_gamma);
}

// Output number `i` of the stream seeded with `seed`, by random access: the same value as the
// (i + 1)-th call of splitmix64(state) with state = seed. The state seed + (i + 1) * gamma is a
// bijection of i (gamma is odd), so distinct positions give distinct outputs, and disjoint
// position ranges give disjoint key sets.
constexpr std::uint64_t splitmix64_at(std::uint64_t seed, std::uint64_t i) noexcept {
  return splitmix64_mix(seed + (i + 1) * splitmix64_gamma);
}

// Outputs first, first + 1, ..., first + count - 1 of the stream seeded with `seed`.
inline std::vector<std::uint64_t> keys_at(std::uint64_t seed, std::uint64_t first,
                                          std::size_t count) {
  std::vector<std::uint64_t> keys(count);
  for (std::size_t i = 0; i < count; ++i) keys[i] = splitmix64_at(seed, first + i);
  return keys;
}

// Demos split one stream by position: present keys below this position, absent ones at and
// above it, so the two sets can never share a key.
inline constexpr std::uint64_t absent_offset = std::uint64_t{1} << 63;

// The tests' key sets: the first n outputs of a stream with the top bit cleared (present) or set
// (absent), so a present key never equals an absent one whatever the seeds.
inline constexpr std::uint64_t top_bit = std::uint64_t{1} << 63;
inline std::vector<std::uint64_t> present_keys(std::size_t n, std::uint64_t seed = 1) {
  std::vector<std::uint64_t> keys(n);
  for (auto& k : keys) k = splitmix64(seed) & ~top_bit;
  return keys;
}
inline std::vector<std::uint64_t> absent_keys(std::size_t n, std::uint64_t seed = 2) {
  std::vector<std::uint64_t> keys(n);
  for (auto& k : keys) k = splitmix64(seed) | top_bit;
  return keys;
}

}  // namespace bloomery::support
