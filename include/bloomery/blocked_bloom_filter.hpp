// The cache-line-blocked Bloom filter: all k bits of a key sit in one 64-byte line, so a query
// costs one cache miss. Sized by its own FPR model so a filter asked for 1% delivers 1%.
// docs/blocked-bloom-filter.md has the pattern, the model, and the penalty against the classic
// filter at equal memory.
//
// Queries use AVX2 when the CPU has it (chosen at run time; one binary runs everywhere) and a
// portable path otherwise; both read the same bits and give the same answers. Inserts and thread
// safety are as for bloom_filter.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "bloomery/detail/bit_filter.hpp"
#include "bloomery/detail/blocked_core.hpp"
#include "bloomery/detail/bloom_core.hpp"
#include "bloomery/sizing.hpp"

namespace bloomery {
namespace detail {

// Batched queries work in chunks of this many keys, double-buffered: while the keys of one chunk
// are probed, the next chunk's keys have been hashed and their lines requested (the alternatives
// measured against it: docs/lookup-paths.md, "Tuned constants").
inline constexpr std::size_t block_chunk = 32;

// The batched query loop, shared by both probe paths. It is always inlined into each path's
// function, so on the AVX2 path the loop (hashing included) is compiled for AVX2 and the probe
// inlines into it. `fill` hashes a chunk's keys and requests their lines; it stays a local
// lambda because a separate function (a call per chunk) measured slower (docs/lookup-paths.md,
// "Tuned constants").
template <class Hash, class Keys, class Out, class Probe>
[[gnu::always_inline]] inline std::size_t probe_blocks(const Hash& hash, const std::uint64_t* w,
                                                       const bloom_meta& m, const Keys& keys,
                                                       Out& out, Probe probe) noexcept {
  const std::size_t n = std::ranges::size(keys);
  const std::uint64_t blocks = m.bits / block_bits;
  const std::uint32_t k = m.hashes;
  block_slot at[2][block_chunk];
  auto fill = [&](block_slot* a, std::size_t base) {
    for (std::size_t j = 0; j < std::min(block_chunk, n - base); ++j) {
      a[j] = locate(hash_key(hash, keys[base + j]), blocks);
      prefetch(w + a[j].block * words_per_line);
    }
  };
  if (n != 0) fill(at[0], 0);
  std::size_t positives = 0;
  for (std::size_t base = 0, cur = 0; base < n; base += block_chunk, cur ^= 1) {
    if (base + block_chunk < n) fill(at[cur ^ 1], base + block_chunk);
    for (std::size_t j = 0; j < std::min(block_chunk, n - base); ++j) {
      const bool hit = probe(w + at[cur][j].block * words_per_line, at[cur][j].seed, k);
      out[base + j] = hit;
      positives += hit;
    }
  }
  return positives;
}

struct portable_block_probe {
  bool operator()(const std::uint64_t* line, std::uint32_t seed, std::uint32_t k) const noexcept {
    return block_probe_portable(line, seed, k);
  }
};

// Both paths are flattened so XXH3 is inlined whatever the translation unit (see
// detail::ring_probe).
template <class Hash, class Keys, class Out>
[[gnu::flatten]] std::size_t probe_blocks_portable(const Hash& hash, const std::uint64_t* w,
                                                   const bloom_meta& m, const Keys& keys,
                                                   Out& out) noexcept {
  return probe_blocks(hash, w, m, keys, out, portable_block_probe{});
}

#if BLOOMERY_HAVE_AVX2_PATH
template <bool Shared>
struct avx2_block_probe {
  __attribute__((target("avx2"))) bool operator()(const std::uint64_t* line, std::uint32_t seed,
                                                  std::uint32_t k) const noexcept {
    return block_probe_avx2<Shared>(line, seed, k);
  }
};

template <bool Shared, class Hash, class Keys, class Out>
[[gnu::flatten]] __attribute__((target("avx2"))) std::size_t probe_blocks_avx2(
    const Hash& hash, const std::uint64_t* w, const bloom_meta& m, const Keys& keys,
    Out& out) noexcept {
  return probe_blocks(hash, w, m, keys, out, avx2_block_probe<Shared>{});
}

template <bool Shared>
struct avx512_block_probe {
  __attribute__((target("avx2,avx512f,avx512vl"))) bool operator()(const std::uint64_t* line,
                                                                   std::uint32_t seed,
                                                                   std::uint32_t k) const noexcept {
    return block_probe_avx512<Shared>(line, seed, k);
  }
};

template <bool Shared, class Hash, class Keys, class Out>
[[gnu::flatten]] __attribute__((target("avx2,avx512f,avx512vl"))) std::size_t probe_blocks_avx512(
    const Hash& hash, const std::uint64_t* w, const bloom_meta& m, const Keys& keys,
    Out& out) noexcept {
  return probe_blocks(hash, w, m, keys, out, avx512_block_probe<Shared>{});
}
#endif

struct blocked_layout {
  static constexpr filter_kind kind = filter_kind::blocked_bloom;
  static constexpr const char* name = "blocked bloom";

  // The fewest 512-bit blocks, over k = 1..16, whose modelled FPR (blocked_fpr) reaches the
  // target; ties go to the smaller k (fewer probes).
  static bloom_parameters size_for(target t) {
    check_capacity(t.capacity);
    check_fpr(t.fpr);
    const double n = static_cast<double>(t.capacity);
    const std::uint64_t max_blocks = max_bits / block_bits;
    bloom_parameters best{0, 0};
    for (std::uint32_t k = 1; k <= max_block_probes; ++k) {
      // A k that misses the target with one block fewer than the best so far cannot win (ties go
      // to the smaller k): one evaluation instead of a search of some 40 steps.
      if (best.hashes != 0 &&
          blocked_fpr(n, static_cast<double>(best.bits / block_bits - 1), k) > t.fpr) {
        continue;
      }
      // The classic filter's size as the first guess, capped before the conversion: for 2^64 keys
      // at a tiny rate it would not fit 64 bits, and a start past the cap could return it.
      std::uint64_t hi = std::max<std::uint64_t>(
          1, static_cast<std::uint64_t>(
                 std::min(static_cast<double>(max_blocks), n * bits_per_key(t.fpr) / block_bits)));
      while (blocked_fpr(n, static_cast<double>(hi), k) > t.fpr) {
        if (hi >= max_blocks) break;
        hi = std::min(max_blocks, hi * 2);
      }
      if (blocked_fpr(n, static_cast<double>(hi), k) > t.fpr) continue;
      std::uint64_t lo = 0;  // invariant: lo blocks miss the target, hi blocks reach it
      while (hi - lo > 1) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        (blocked_fpr(n, static_cast<double>(mid), k) <= t.fpr ? hi : lo) = mid;
      }
      if (best.hashes == 0 || hi * block_bits < best.bits) best = {hi * block_bits, k};
    }
    if (best.hashes == 0) {
      throw std::invalid_argument("bloomery: capacity = " + std::to_string(t.capacity) +
                                  " at fpr = " + format_value(t.fpr) +
                                  " needs more than the maximum 2^48 bits in a blocked filter");
    }
    return best;
  }
  static std::string check(std::uint64_t bits, std::uint32_t hashes) {
    if (bits == 0 || bits > max_bits || bits % block_bits != 0) {
      return "bits = " + std::to_string(bits) +
             " is invalid; a blocked filter needs a positive multiple of 512, at most 2^48";
    }
    if (hashes == 0 || hashes > max_block_probes) {
      return "hashes = " + std::to_string(hashes) + " is invalid; allowed range is [1, " +
             std::to_string(max_block_probes) + "]";
    }
    return {};
  }
  static double model_fpr(std::uint64_t n, std::uint64_t m, std::uint32_t k) {
    return blocked_fpr(static_cast<double>(n), static_cast<double>(m / block_bits), k);
  }
  static constexpr std::uint32_t max_probes = max_block_probes;
  static constexpr std::uint64_t bits_multiple = block_bits;
  // The key's line is copied to aligned storage first: the probes (AVX2 included) read whole
  // aligned words, and plain bytes are neither.
  static bool probe_bytes(const unsigned char* bytes, std::uint64_t m, std::uint32_t k,
                          hash128 h) noexcept {
    const block_slot at = locate(h, m / block_bits);
    alignas(cache_line_bytes) std::uint64_t copy[words_per_line];
    std::memcpy(copy, bytes + at.block * cache_line_bytes, cache_line_bytes);
    return block_probe(copy, at.seed, k);
  }

  static std::uint64_t* line(std::uint64_t* w, std::uint64_t block) noexcept {
    return w + block * words_per_line;
  }
  static void insert(std::uint64_t* w, const bloom_meta& m, hash128 h) noexcept {
    const block_slot at = locate(h, m.bits / block_bits);
    block_insert(line(w, at.block), at.seed, m.hashes);
  }
  static void insert_atomic(std::uint64_t* w, const bloom_meta& m, hash128 h) noexcept {
    const block_slot at = locate(h, m.bits / block_bits);
    block_insert_atomic(line(w, at.block), at.seed, m.hashes);
  }
  // Hash a batch of keys and prefetch each one's line, then set the bits.
  template <class Keys>
  static void insert_many(std::uint64_t* w, const bloom_meta& m, const Keys& keys) {
    constexpr std::size_t batch = 64;
    const std::size_t n = std::ranges::size(keys);
    const std::uint64_t blocks = m.bits / block_bits;
    block_slot at[batch];
    for (std::size_t base = 0; base < n; base += batch) {
      const std::size_t count = std::min(batch, n - base);
      for (std::size_t j = 0; j < count; ++j) {
        at[j] = locate(hash_key(m.hash, keys[base + j]), blocks);
        prefetch_for_write(line(w, at[j].block));
      }
      for (std::size_t j = 0; j < count; ++j)
        block_insert(line(w, at[j].block), at[j].seed, m.hashes);
    }
  }
  static bool probe(const std::uint64_t* w, const bloom_meta& m, hash128 h) noexcept {
    const block_slot at = locate(h, m.bits / block_bits);
    return block_probe(w + at.block * words_per_line, at.seed, m.hashes, m.shared);
  }

  // Batched: see block_chunk.
  template <class Keys, class Out>
  static std::size_t probe_many(const std::uint64_t* w, const bloom_meta& m, const Keys& keys,
                                Out& out) {
    check_batch_sizes(keys, out);
    return m.hash.with_mode([&](const auto& hash) {
#if BLOOMERY_HAVE_AVX2_PATH
      switch (current_probe_path()) {
        case probe_path::avx512:
          return m.shared ? probe_blocks_avx512<true>(hash, w, m, keys, out)
                          : probe_blocks_avx512<false>(hash, w, m, keys, out);
        case probe_path::avx2:
          return m.shared ? probe_blocks_avx2<true>(hash, w, m, keys, out)
                          : probe_blocks_avx2<false>(hash, w, m, keys, out);
        case probe_path::portable:
          break;
      }
#endif
      return probe_blocks_portable(hash, w, m, keys, out);
    });
  }

  // Sum over blocks of -(512/k) ln(1 - X_b/512); a full block counts as 511.5 set bits so the
  // estimate stays finite (it is then a lower bound).
  static double approximate_count(const std::uint64_t* w, const bloom_meta& m) noexcept {
    double n = 0;
    for_each_block_fill(w, m, [&](double set) {
      n += -static_cast<double>(block_bits) / m.hashes *
           std::log1p(-std::min(set, block_bits - 0.5) / block_bits);
    });
    return n;
  }
  // The mean over blocks of (X_b/512)^k: a random absent key picks a random block, then k bits.
  static double estimated_fpr(const std::uint64_t* w, const bloom_meta& m) noexcept {
    double sum = 0;
    for_each_block_fill(w, m,
                        [&](double set) { sum += fpr_from_fill(set / block_bits, m.hashes); });
    return sum / static_cast<double>(m.bits / block_bits);
  }

 private:
  template <class Fn>
  static void for_each_block_fill(const std::uint64_t* w, const bloom_meta& m, Fn&& fn) noexcept {
    const std::uint64_t blocks = m.bits / block_bits;
    for (std::uint64_t b = 0; b < blocks; ++b) {
      fn(static_cast<double>(count_set_bits({w + b * words_per_line, words_per_line})));
    }
  }
};

}  // namespace detail

// blocked_bloom_filter f({.capacity = n, .fpr = p}) or f({.bits = 512 * blocks, .hashes = k}).
using blocked_bloom_filter = detail::basic_bit_filter<detail::blocked_layout>;

// The SIMD paths the blocked filter's queries can take, slowest first; every path gives the same
// answers. The best one this CPU runs is chosen once, at start-up (or at compile time when the
// compiler already targets it).
using simd_path = detail::probe_path;

// The fastest path this CPU (and this build) runs: avx512 needs AVX-512F and AVX-512VL.
inline simd_path best_simd_path() noexcept {
  return detail::best_probe_path();
}
// The path queries take now.
inline simd_path simd_path_in_use() noexcept {
  return detail::current_probe_path();
}
// Makes queries take path `p` (process-wide; for tests and benchmarks comparing the paths);
// false, changing nothing, if this CPU cannot run it. Not thread-safe: set it before queries start.
inline bool select_simd_path(simd_path p) noexcept {
  return detail::select_probe_path(p);
}
// The name of a path: portable, avx2, avx512.
constexpr const char* to_string(simd_path p) noexcept {
  switch (p) {
    case simd_path::avx512:
      return "avx512";
    case simd_path::avx2:
      return "avx2";
    case simd_path::portable:
      break;
  }
  return "portable";
}

// Forces the portable query path even where SIMD is available, or (false) restores the best path.
// Not thread-safe: set it before queries start.
inline void force_portable_simd(bool forced) noexcept {
  detail::select_portable(forced);
}
// Whether this CPU runs a SIMD path (AVX2 or AVX-512VL).
inline bool simd_available() noexcept {
  return best_simd_path() != simd_path::portable;
}
// Whether queries take a SIMD path now: simd_available() unless the portable path was forced.
// Sanitizer builds take the same path as release builds, so ThreadSanitizer checks the one that
// ships.
inline bool simd_in_use() noexcept {
  return simd_path_in_use() != simd_path::portable;
}

}  // namespace bloomery
