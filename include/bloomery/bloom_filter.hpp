// The classic Bloom filter: m bits, k probes per key from one 128-bit hash (double hashing).
//
// Thread safety: `insert` and `clear` need exclusive access. `insert_concurrent` may run from any
// number of threads at once, and, once the filter is shared (share_for_concurrent_inserts), the
// queries and statistics may run beside it (README "Thread safety").
#pragma once

#include <algorithm>
#include <cstdint>
#include <ranges>
#include <string>

#include "bloomery/detail/bit_filter.hpp"
#include "bloomery/detail/bloom_core.hpp"
#include "bloomery/sizing.hpp"

namespace bloomery {
namespace detail {

// Where the classic filter puts a key's bits: k positions anywhere in m bits (bloom_core.hpp).
struct classic_layout {
  static constexpr filter_kind kind = filter_kind::bloom;
  static constexpr const char* name = "bloom";

  // m = ceil(-n ln p / (ln 2)^2), k = round((m/n) ln 2).
  static bloom_parameters size_for(target t) {
    const std::uint64_t m = optimal_bits(t.capacity, t.fpr);
    return {m, optimal_hashes(m, t.capacity)};
  }
  static std::string check(std::uint64_t bits, std::uint32_t hashes) {
    if (bits == 0 || bits > max_bits) {
      return "bits = " + std::to_string(bits) + " is invalid; allowed range is [1, 2^48]";
    }
    if (hashes == 0 || hashes > max_hashes) {
      return "hashes = " + std::to_string(hashes) + " is invalid; allowed range is [1, " +
             std::to_string(max_hashes) + "]";
    }
    return {};
  }
  static double model_fpr(std::uint64_t n, std::uint64_t m, std::uint32_t k) {
    return false_positive_rate(n, m, k);
  }
  static constexpr std::uint32_t max_probes = max_hashes;
  static constexpr std::uint64_t bits_multiple = 1;
  // The same positions as probe(); only the bit lookup differs (bytes, not aligned words). All k
  // are computed, with no early exit: the byte filters this serves are small (LevelDB's ~50).
  static bool probe_bytes(const unsigned char* bytes, std::uint64_t m, std::uint32_t k,
                          hash128 h) noexcept {
    bool all_set = true;
    for_each_position(
        h, m, k, [&](std::uint64_t pos) { all_set &= ((bytes[pos >> 3] >> (pos & 7)) & 1) != 0; });
    return all_set;
  }

  static void insert(std::uint64_t* w, const bloom_meta& m, hash128 h) noexcept {
    insert_hash(w, m.bits, m.hashes, h);
  }
  static void insert_atomic(std::uint64_t* w, const bloom_meta& m, hash128 h) noexcept {
    insert_hash_atomic(w, m.bits, m.hashes, h);
  }
  // Hash a batch of keys and prefetch every line they will write, then set the bits.
  template <class Keys>
  static void insert_many(std::uint64_t* w, const bloom_meta& m, const Keys& keys) {
    constexpr std::size_t batch = 32;
    const std::size_t n = std::ranges::size(keys);
    hash128 hs[batch];
    for (std::size_t base = 0; base < n; base += batch) {
      const std::size_t count = std::min(batch, n - base);
      for (std::size_t j = 0; j < count; ++j) {
        hs[j] = hash_key(m.hash, keys[base + j]);
        for_each_position(hs[j], m.bits, m.hashes,
                          [&](std::uint64_t pos) { prefetch_for_write(w + (pos >> 6)); });
      }
      for (std::size_t j = 0; j < count; ++j) insert_hash(w, m.bits, m.hashes, hs[j]);
    }
  }
  static bool probe(const std::uint64_t* w, const bloom_meta& m, hash128 h) noexcept {
    return probe_hash(w, m.bits, m.hashes, h);
  }
  template <class Keys, class Out>
  static std::size_t probe_many(const std::uint64_t* w, const bloom_meta& m, const Keys& keys,
                                Out& out) {
    return detail::probe_many(m.hash, w, m.bits, m.hashes, keys, out);
  }

  // -(m/k) ln(1 - X/m) from the X set bits (docs/formulas.md).
  static double approximate_count(const std::uint64_t* w, const bloom_meta& m) noexcept {
    return count_from_fill(count_set_bits({w, words_for_bits(m.bits)}), m.bits, m.hashes);
  }
  // fill^k: a random absent key's k independent probes all land on set bits.
  static double estimated_fpr(const std::uint64_t* w, const bloom_meta& m) noexcept {
    const auto set = count_set_bits({w, words_for_bits(m.bits)});
    return fpr_from_fill(static_cast<double>(set) / static_cast<double>(m.bits), m.hashes);
  }
};

}  // namespace detail

// bloom_filter f({.capacity = n, .fpr = p}) or f({.bits = m, .hashes = k}, seed_or_key).
// Verbs and thread safety: see detail/bit_filter.hpp and the README.
using bloom_filter = detail::basic_bit_filter<detail::classic_layout>;

}  // namespace bloomery
