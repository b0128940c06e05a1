// The hard parts of the classic Bloom filter, shared by the owning filter and its mapped view:
// position derivation, probing, batched probing. Nothing here owns memory.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ranges>
#include <stdexcept>

#include "bloomery/bit_array.hpp"
#include "bloomery/hash.hpp"

namespace bloomery::detail {

// Maps a uniform 64-bit value onto [0, m) by multiply-shift: floor(x * m / 2^64). Unlike x % m it
// costs one multiply instead of a division, works for any m (no power of two needed), and its
// bias is below m / 2^64 — immeasurable for the filters we allow (m <= 2^48).
inline std::uint64_t reduce(std::uint64_t x, std::uint64_t m) noexcept {
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(x) * m) >> 64);
}

// Kirsch–Mitzenmacher double hashing: probe i sits at reduce(h1 + i*h2, m). All arithmetic is
// 64-bit before the reduction, so positions stay uniform even for m far above 2^32.
template <class Fn>
inline void for_each_position(hash128 h, std::uint64_t m, std::uint32_t k, Fn&& fn) noexcept {
  std::uint64_t g = h.low;
  for (std::uint32_t i = 0; i < k; ++i, g += h.high) fn(reduce(g, m));
}

inline void insert_hash(std::uint64_t* words, std::uint64_t m, std::uint32_t k,
                        hash128 h) noexcept {
  for_each_position(h, m, k,
                    [&](std::uint64_t pos) { words[pos >> 6] |= std::uint64_t{1} << (pos & 63); });
}

inline void insert_hash_atomic(std::uint64_t* words, std::uint64_t m, std::uint32_t k,
                               hash128 h) noexcept {
  for_each_position(h, m, k, [&](std::uint64_t pos) {
    or_word_atomic(words + (pos >> 6), std::uint64_t{1} << (pos & 63));
  });
}

// True when every probed bit is set. Stops at the first clear bit: an absent key costs about two
// probes on average in a filter filled to capacity (each probe is set with probability ~1/2).
inline bool probe_hash(const std::uint64_t* words, std::uint64_t m, std::uint32_t k,
                       hash128 h) noexcept {
  std::uint64_t g = h.low;
  for (std::uint32_t i = 0; i < k; ++i, g += h.high) {
    if (!test_bit(words, reduce(g, m))) return false;
  }
  return true;
}

// How many keys a batch hashes and prefetches before it probes. 16 keys keep enough independent
// cache misses in flight to saturate a core's line-fill buffers without evicting the prefetched
// lines before they are used.
inline constexpr std::size_t batch_size = 16;
// Probes prefetched per key. An absent key stops after ~2 probes on average, so fetching all k
// lines would mostly waste memory bandwidth; later probes of present keys are rarer and just miss.
inline constexpr std::uint32_t prefetched_probes = 3;

template <class Keys, class Out>
void check_batch_sizes(const Keys& keys, const Out& out) {
  if (std::ranges::size(out) < std::ranges::size(keys)) {
    throw std::invalid_argument("bloomery: may_contain_many: output has " +
                                std::to_string(std::ranges::size(out)) + " slots for " +
                                std::to_string(std::ranges::size(keys)) + " keys");
  }
}

// Batched may_contain: hash a block of keys, prefetch their first probes, then probe. Gives the
// same answers as probe_hash on each key; returns how many keys answered "possibly present".
template <class Keys, class Out>
std::size_t probe_many(const hasher& hash, const std::uint64_t* words, std::uint64_t m,
                       std::uint32_t k, const Keys& keys, Out& out) {
  check_batch_sizes(keys, out);
  const std::size_t n = std::ranges::size(keys);
  const std::uint32_t pre = std::min(k, prefetched_probes);
  std::size_t positives = 0;
  hash128 hs[batch_size];
  for (std::size_t base = 0; base < n; base += batch_size) {
    const std::size_t count = std::min(batch_size, n - base);
    for (std::size_t j = 0; j < count; ++j) {
      hs[j] = hash_key(hash, keys[base + j]);
      std::uint64_t g = hs[j].low;
      for (std::uint32_t i = 0; i < pre; ++i, g += hs[j].high) {
        prefetch(words + (reduce(g, m) >> 6));
      }
    }
    for (std::size_t j = 0; j < count; ++j) {
      const bool hit = probe_hash(words, m, k, hs[j]);
      out[base + j] = hit;
      positives += hit;
    }
  }
  return positives;
}

}  // namespace bloomery::detail
