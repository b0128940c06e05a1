// The hard parts of the cache-line-blocked Bloom filter: the bit pattern, its FPR model, and the
// portable and AVX2 probes. Nothing here owns memory.
//
// Pattern: a key picks one 512-bit block (one 64-byte cache line) with the low hash half, then
// sets k bits anywhere in that block. Probe i sits at bit (s * c_i mod 2^32) >> 23 of the block,
// where s is 32 bits of the high hash half and c_i a fixed odd constant: nine well-mixed bits per
// probe from one multiply, which 8 AVX2 lanes compute at once. Letting each probe land anywhere
// in the line (rather than one bit per 64-bit word or per 32-bit word of a split block) keeps the
// FPR closest to the classic filter's at equal memory (docs/blocked-bloom-filter.md has the rates).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "bloomery/bit_array.hpp"
#include "bloomery/detail/bloom_core.hpp"
#include "bloomery/hash.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define BLOOMERY_HAVE_AVX2_PATH 1
#else
#define BLOOMERY_HAVE_AVX2_PATH 0
#endif

namespace bloomery::detail {

inline constexpr std::uint32_t block_bits = 512;
inline constexpr std::uint32_t max_block_probes = 16;

// Odd multipliers, one per probe (drawn at random once; any distinct odd constants work).
alignas(64) inline constexpr std::uint32_t block_multipliers[max_block_probes] = {
    0x52e6b439, 0xf2a74de5, 0x269e0d37, 0x6513270f, 0xa6a3a451, 0x0c5c7fd1, 0x128b2f33, 0xd23f0825,
    0x892f902b, 0x1818e811, 0x5d9dc9f9, 0x9531985d, 0x0ed90475, 0xe8e25d95, 0x81e74ef5, 0x36f675cd};

// Where a key lives: its block and the 32-bit seed of its in-block probes.
struct block_slot {
  std::uint64_t block;
  std::uint32_t seed;
};

inline block_slot locate(hash128 h, std::uint64_t blocks) noexcept {
  return {reduce(h.low, blocks), static_cast<std::uint32_t>(h.high ^ (h.high >> 32))};
}

inline std::uint32_t bit_in_block(std::uint32_t seed, std::uint32_t i) noexcept {
  return (seed * block_multipliers[i]) >> 23;  // top 9 bits: 0..511
}

inline void block_insert(std::uint64_t* line, std::uint32_t seed, std::uint32_t k) noexcept {
  for (std::uint32_t i = 0; i < k; ++i) {
    const std::uint32_t b = bit_in_block(seed, i);
    line[b >> 6] |= std::uint64_t{1} << (b & 63);
  }
}

inline void block_insert_atomic(std::uint64_t* line, std::uint32_t seed, std::uint32_t k) noexcept {
  for (std::uint32_t i = 0; i < k; ++i) {
    const std::uint32_t b = bit_in_block(seed, i);
    or_word_atomic(line + (b >> 6), std::uint64_t{1} << (b & 63));
  }
}

// Portable probe: tests the key's bits one by one and stops at the first clear one (an absent
// key stops after about two); the line is in L1 after the first load.
inline bool block_probe_portable(const std::uint64_t* line, std::uint32_t seed,
                                 std::uint32_t k) noexcept {
  for (std::uint32_t i = 0; i < k; ++i) {
    const std::uint32_t b = bit_in_block(seed, i);
    if (!((load_word(line + (b >> 6)) >> (b & 63)) & 1)) return false;
  }
  return true;
}

#if BLOOMERY_HAVE_AVX2_PATH
// Row r holds 1 in its first r lanes: an AVX2 step tests bit 0 of those lanes only.
alignas(32) inline constexpr std::int32_t first_lanes[9][8] = {
    {0, 0, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 0}, {1, 1, 0, 0, 0, 0, 0, 0},
    {1, 1, 1, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 0, 0, 0},
    {1, 1, 1, 1, 1, 1, 0, 0}, {1, 1, 1, 1, 1, 1, 1, 0}, {1, 1, 1, 1, 1, 1, 1, 1}};

// One AVX2 step: probes first .. first + lanes - 1 (lanes <= 8) of the key whose line is lo:hi.
// Lane i holds the product x = seed * c_i; its bit b = x >> 23 lies in 32-bit word b >> 5 of the
// line. Both halves of the line are permuted by that word's low three bits (x >> 28), and x's own
// sign bit (bit 8 of b) picks the half. Shifting each word right by b & 31 brings the probed bit
// to bit 0, and one test checks bit 0 of every active lane. No constant but the two tables is
// needed, which keeps the one-at-a-time query short.
__attribute__((target("avx2"))) inline bool block_step_avx2(__m256i lo, __m256i hi, __m256i seed,
                                                            std::uint32_t first,
                                                            std::uint32_t lanes) noexcept {
  const __m256i x = _mm256_mullo_epi32(
      seed, _mm256_load_si256(reinterpret_cast<const __m256i*>(block_multipliers + first)));
  const __m256i half_word = _mm256_srli_epi32(x, 28);
  const __m256i w = _mm256_castps_si256(_mm256_blendv_ps(
      _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(lo, half_word)),
      _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(hi, half_word)), _mm256_castsi256_ps(x)));
  const __m256i shift = _mm256_srli_epi32(_mm256_slli_epi32(x, 4), 27);  // bits 23..27 of x
  const __m256i bits = _mm256_srlv_epi32(w, shift);
  return _mm256_testc_si256(
      bits, _mm256_load_si256(reinterpret_cast<const __m256i*>(first_lanes[lanes])));
}

// Half a line as one vector. A shared filter (queries beside insert_concurrent) reads it word by
// word with relaxed atomic loads, race-free like the portable probe; otherwise one vector load,
// which is a data race beside atomic ORs but costs several times fewer instructions
// (BENCHMARKS.md, "Concurrent queries").
template <bool Shared>
__attribute__((target("avx2"))) inline __m256i load_half_line(const std::uint64_t* w) noexcept {
  if constexpr (Shared) {
    return _mm256_set_epi64x(
        static_cast<long long>(load_word(w + 3)), static_cast<long long>(load_word(w + 2)),
        static_cast<long long>(load_word(w + 1)), static_cast<long long>(load_word(w)));
  } else {
    // Unaligned form: as fast on an aligned line, and a view's payload need only be word-aligned.
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
  }
}

// AVX2 probe: one step for k <= 8, two for k <= 16. Pure, like every probe here (they only read
// memory): where it cannot inline (a caller not compiled for AVX2) the call then clobbers nothing,
// and the caller's loop keeps the filter's fields in registers.
template <bool Shared>
__attribute__((target("avx2"), pure)) inline bool block_probe_avx2(const std::uint64_t* line,
                                                                   std::uint32_t seed,
                                                                   std::uint32_t k) noexcept {
  const __m256i lo = load_half_line<Shared>(line);
  const __m256i hi = load_half_line<Shared>(line + 4);
  const __m256i s = _mm256_set1_epi32(static_cast<int>(seed));
  if (!block_step_avx2(lo, hi, s, 0, std::min<std::uint32_t>(k, 8))) return false;
  return k <= 8 || block_step_avx2(lo, hi, s, 8, k - 8);
}

// AVX-512VL probe: the same bits as block_probe_avx2 in fewer instructions. vpermt2d picks any of
// the line's 16 words by x >> 28 in one step (AVX2 needs two permutes and a blend), and rotating
// the word right by (x >> 23) mod 32 brings the probed bit to bit 0 without masking the count.
__attribute__((target("avx2,avx512f,avx512vl"))) inline bool block_step_avx512(
    __m256i lo, __m256i hi, __m256i seed, std::uint32_t first, std::uint32_t lanes) noexcept {
  const __m256i x = _mm256_mullo_epi32(
      seed, _mm256_load_si256(reinterpret_cast<const __m256i*>(block_multipliers + first)));
  const __m256i w = _mm256_permutex2var_epi32(lo, _mm256_srli_epi32(x, 28), hi);
  const __m256i bits = _mm256_rorv_epi32(w, _mm256_srli_epi32(x, 23));
  return _mm256_testc_si256(
      bits, _mm256_load_si256(reinterpret_cast<const __m256i*>(first_lanes[lanes])));
}

template <bool Shared>
__attribute__((target("avx2,avx512f,avx512vl"), pure)) inline bool block_probe_avx512(
    const std::uint64_t* line, std::uint32_t seed, std::uint32_t k) noexcept {
  const __m256i lo = load_half_line<Shared>(line);
  const __m256i hi = load_half_line<Shared>(line + 4);
  const __m256i s = _mm256_set1_epi32(static_cast<int>(seed));
  if (!block_step_avx512(lo, hi, s, 0, std::min<std::uint32_t>(k, 8))) return false;
  return k <= 8 || block_step_avx512(lo, hi, s, 8, k - 8);
}
#endif

// The probe paths, slowest first; the numbering is only this build's, never stored.
enum class probe_path : std::uint8_t { portable = 0, avx2 = 1, avx512 = 2 };

#if BLOOMERY_HAVE_AVX2_PATH && defined(__AVX512F__) && defined(__AVX512VL__)
// The compiler targets AVX-512VL (-march=native on such a CPU): nothing to check at run time.
inline constexpr probe_path best_probe_path() noexcept {
  return probe_path::avx512;
}
#elif BLOOMERY_HAVE_AVX2_PATH
// The fastest path this CPU runs. __builtin_cpu_supports also checks that the OS saves the
// vector state the path needs.
inline probe_path best_probe_path() noexcept {
  static const probe_path best = [] {
    __builtin_cpu_init();  // safe to call early, e.g. from another static initializer
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
      return probe_path::avx512;
    }
#if defined(__AVX2__)
    return probe_path::avx2;  // the compiler already targets AVX2
#else
    return __builtin_cpu_supports("avx2") ? probe_path::avx2 : probe_path::portable;
#endif
  }();
  return best;
}
#else
inline constexpr probe_path best_probe_path() noexcept {
  return probe_path::portable;
}
#endif

inline bool cpu_has_avx2() noexcept {
  return best_probe_path() != probe_path::portable;
}

// The path queries take. A plain global rather than a function-local static, so each query reads
// one byte and checks no initialization guard. Read before its initializer has run (only possible
// from another static initializer) it is portable, which gives the same answers. Constant-
// initialized when the compiler targets the best path.
#if BLOOMERY_HAVE_AVX2_PATH && defined(__AVX512F__) && defined(__AVX512VL__)
inline constinit probe_path selected_probe_path = probe_path::avx512;
#else
inline probe_path selected_probe_path = best_probe_path();
#endif

// Selects `p` if this CPU runs it (tests and benchmarks comparing the paths); false otherwise.
inline bool select_probe_path(probe_path p) noexcept {
  if (p > best_probe_path()) return false;
  selected_probe_path = p;
  return true;
}

// Forces the portable path even where SIMD exists, or restores the best one.
inline void select_portable(bool forced) noexcept {
  selected_probe_path = forced ? probe_path::portable : best_probe_path();
}

inline probe_path current_probe_path() noexcept {
  return selected_probe_path;
}

inline bool use_avx2() noexcept {
  return selected_probe_path != probe_path::portable;
}

// Every path, chosen by the current selection; `shared`: inserts may run beside this probe (see
// load_half_line).
inline bool block_probe_any_path(const std::uint64_t* line, std::uint32_t seed, std::uint32_t k,
                                 bool shared) noexcept {
#if BLOOMERY_HAVE_AVX2_PATH
  switch (selected_probe_path) {
    case probe_path::avx512:
      return shared ? block_probe_avx512<true>(line, seed, k)
                    : block_probe_avx512<false>(line, seed, k);
    case probe_path::avx2:
      return shared ? block_probe_avx2<true>(line, seed, k)
                    : block_probe_avx2<false>(line, seed, k);
    case probe_path::portable:
      break;
  }
#endif
  return block_probe_portable(line, seed, k);
}

// The path whose probe the compiler may inline into any caller: the one it already targets.
#if BLOOMERY_HAVE_AVX2_PATH && defined(__AVX512F__) && defined(__AVX512VL__)
inline constexpr probe_path inline_probe_path = probe_path::avx512;
#elif BLOOMERY_HAVE_AVX2_PATH && defined(__AVX2__)
inline constexpr probe_path inline_probe_path = probe_path::avx2;
#else
inline constexpr probe_path inline_probe_path = probe_path::portable;
#endif

// Kept out of line so the common case below stays a short loop body in the caller's code: a
// per-key switch over paths and the shared flag costs more than the probe itself
// (docs/lookup-paths.md). Pure (it only reads memory), so a caller's loop keeps the filter's
// fields in registers across the call and tests the path and shared flag once, before the loop.
[[gnu::noinline, gnu::pure]] inline bool block_probe_out_of_line(const std::uint64_t* line,
                                                                 std::uint32_t seed,
                                                                 std::uint32_t k,
                                                                 bool shared) noexcept {
  return block_probe_any_path(line, seed, k, shared);
}

inline bool block_probe(const std::uint64_t* line, std::uint32_t seed, std::uint32_t k,
                        bool shared = false) noexcept {
  if constexpr (inline_probe_path == probe_path::portable) {
    return block_probe_any_path(line, seed, k, shared);
  } else {
    // An unshared filter on the path the compiler targets: one test, then the inlined probe.
    if (selected_probe_path == inline_probe_path && !shared) [[likely]] {
#if BLOOMERY_HAVE_AVX2_PATH
      if constexpr (inline_probe_path == probe_path::avx512) {
        return block_probe_avx512<false>(line, seed, k);
      } else {
        return block_probe_avx2<false>(line, seed, k);
      }
#endif
    }
    return block_probe_out_of_line(line, seed, k, shared);
  }
}

// FPR model of the blocked filter: keys per block is Poisson with mean λ = n / blocks. A block
// holding j keys has t = k·j bits thrown at it; its fill F has mean f = 1 - (1 - 1/512)^t and a
// variance that matters in a block this small, and it answers a random absent key "yes" with
// probability E[F^k] ≈ f^k + C(k,2) f^(k-2) Var(F) (second-order expansion). The expected FPR is
// the Poisson mixture of that. docs/blocked-bloom-filter.md derives it.
//
// The sum runs over about 12·sqrt(λ) terms, each the exp of a difference of numbers near λ·ln λ:
// at high loads it is slow (2·10^8 terms at λ = 2^48; sizing for 2^48 keys took minutes, issue
// 26 D5) and too imprecise to tell the rate from 1 (it came out below 1 - 10^-10 at λ = 2·10^5).
// So past blocked_saturated_load keys per block the rate is returned as 1 without summing.
inline constexpr double blocked_saturated_load = 32768;

inline double blocked_fpr(double n, double blocks, std::uint32_t k) {
  const double lambda = n / blocks;
  if (lambda <= 0) return 0.0;
  // Past this load 1 - rate is about k·e^(-k·λ/512) < 10^-27 at any k, far below the gap from 1
  // to the double under it (1.1·10^-16): 1 is the rate rounded to a double.
  if (lambda > blocked_saturated_load) return 1.0;
  const double B = block_bits;
  const double log_keep1 = std::log1p(-1.0 / B), log_keep2 = std::log1p(-2.0 / B);
  const double kd = k;
  const double spread = 12 * std::sqrt(lambda) + 40;
  const auto lo = static_cast<std::int64_t>(std::max(0.0, std::floor(lambda - spread)));
  const auto hi = static_cast<std::int64_t>(std::ceil(lambda + spread));
  double sum = 0;
  for (std::int64_t j = lo; j <= hi; ++j) {
    const double jd = static_cast<double>(j), t = kd * jd;
    const double log_p = -lambda + jd * std::log(lambda) - std::lgamma(jd + 1);
    const double e1 = std::exp(log_keep1 * t), e2 = std::exp(log_keep2 * t);
    const double f = 1 - e1;
    const double var = std::max(0.0, (B - 1) / B * e2 + e1 / B - e1 * e1);
    const double fk = std::pow(f, kd);
    const double correction = k >= 2 ? kd * (kd - 1) / 2 * std::pow(f, kd - 2) * var : 0.0;
    sum += std::exp(log_p) * (fk + correction);
  }
  return sum;
}

}  // namespace bloomery::detail
