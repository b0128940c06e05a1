// The hard parts of the cuckoo filter, shared by the owning filter and its mapped view: the
// bit-packed bucket table, fingerprints, the alternate-bucket involution, probing and batched
// probing. Nothing here owns memory. docs/cuckoo-filter.md explains every formula.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <ranges>

#include "bloomery/bit_array.hpp"
#include "bloomery/detail/bloom_core.hpp"
#include "bloomery/hash.hpp"

namespace bloomery::detail {

// Fingerprints per bucket.
inline constexpr std::uint32_t cuckoo_bucket_slots = 4;
inline constexpr std::uint32_t cuckoo_min_fingerprint_bits = 4;
inline constexpr std::uint32_t cuckoo_max_fingerprint_bits = 16;
// Evictions an insert may make before its last victim goes to the stash. The eviction walk's
// length grows near the load threshold, and a table fails at its first walk longer than this, so
// the bound must grow with the number of inserts: measured with 500, a table of 10^8 keys first
// failed at 95.2% load (too close to the 95% target); with 2000 at 96.9%.
inline constexpr std::uint32_t cuckoo_default_max_kicks = 2000;

// Bits of a table of `buckets` buckets with f-bit fingerprints, and the bits allocated for it:
// one extra zero word past the last bucket, so that reading any bucket may always load the word
// after the one it starts in (see read_bucket) without leaving the allocation.
inline constexpr std::uint64_t cuckoo_table_bits(std::uint32_t f, std::uint64_t buckets) noexcept {
  return std::uint64_t{cuckoo_bucket_slots} * f * buckets;
}
inline constexpr std::uint64_t cuckoo_storage_bits(std::uint32_t f,
                                                   std::uint64_t buckets) noexcept {
  return cuckoo_table_bits(f, buckets) + 64;
}

// The constants of the SWAR tricks on one bucket: a bucket is a 4f-bit value (4f <= 64) whose
// slot j holds bits [j*f, (j+1)*f).
struct cuckoo_lanes {
  std::uint32_t f = 0;
  std::uint64_t field = 0;   // f ones: one slot
  std::uint64_t bucket = 0;  // 4f ones: one bucket
  std::uint64_t lows = 0;    // bit 0 of every slot
  std::uint64_t highs = 0;   // bit f-1 of every slot

  explicit cuckoo_lanes(std::uint32_t bits) noexcept : f(bits) {
    field = (std::uint64_t{1} << f) - 1;
    bucket = 4 * f == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << (4 * f)) - 1;
    for (std::uint32_t j = 0; j < cuckoo_bucket_slots; ++j) {
      lows |= std::uint64_t{1} << (j * f);
      highs |= std::uint64_t{1} << (j * f + f - 1);
    }
  }

  // Bit f-1 of slot j is set in the result exactly when slot j of `x` is zero. Exact for every
  // slot (not only the lowest, unlike the subtract-and-borrow trick): per slot, adding 2^(f-1)-1
  // to the low f-1 bits carries into bit f-1 iff they are not all zero, and never out of the slot.
  std::uint64_t zero_slots(std::uint64_t x) const noexcept {
    const std::uint64_t low_bits = highs - lows;  // f-1 ones in every slot
    return ~(((x & low_bits) + low_bits) | x | low_bits) & highs;
  }
  // Marks the slots of bucket `x` that hold fingerprint `fp` (bit f-1 of each matching slot).
  std::uint64_t matching_slots(std::uint64_t x, std::uint64_t fp) const noexcept {
    return zero_slots(x ^ (fp * lows));
  }
  // The index of the slot marked by the lowest bit of a non-zero `marks`.
  std::uint32_t first_slot(std::uint64_t marks) const noexcept {
    return static_cast<std::uint32_t>(std::countr_zero(marks)) / f;
  }
  std::uint64_t get(std::uint64_t x, std::uint32_t slot) const noexcept {
    return (x >> (slot * f)) & field;
  }
  std::uint64_t set(std::uint64_t x, std::uint32_t slot, std::uint64_t fp) const noexcept {
    return (x & ~(field << (slot * f))) | (fp << (slot * f));
  }
};

// Bucket b as a 4f-bit value. The bucket starts at bit 4f*b and may straddle two 64-bit words;
// both words are always read (two aligned loads, no unaligned access), the second shifted by
// (64 - s) in two steps so that s = 0 shifts it out entirely instead of shifting by 64. The zero
// tail word (cuckoo_storage_bits) keeps the second load inside the allocation for the last bucket.
inline std::uint64_t read_bucket(const std::uint64_t* words, const cuckoo_lanes& lanes,
                                 std::uint64_t b) noexcept {
  const std::uint64_t bit = std::uint64_t{cuckoo_bucket_slots} * lanes.f * b;
  const std::uint64_t w = bit >> 6;
  const unsigned s = static_cast<unsigned>(bit & 63);
  const std::uint64_t lo = words[w] >> s;
  const std::uint64_t hi = (words[w + 1] << 1) << (63 - s);
  return (lo | hi) & lanes.bucket;
}

inline void write_bucket(std::uint64_t* words, const cuckoo_lanes& lanes, std::uint64_t b,
                         std::uint64_t value) noexcept {
  const std::uint64_t bit = std::uint64_t{cuckoo_bucket_slots} * lanes.f * b;
  const std::uint64_t w = bit >> 6;
  const unsigned s = static_cast<unsigned>(bit & 63);
  words[w] = (words[w] & ~(lanes.bucket << s)) | (value << s);
  if (s + 4 * lanes.f > 64) {  // straddles: the high part goes to the next word (s > 0 here)
    words[w + 1] = (words[w + 1] & ~(lanes.bucket >> (64 - s))) | (value >> (64 - s));
  }
}

// The word addresses a bucket touches, for prefetching.
inline void prefetch_bucket(const std::uint64_t* words, const cuckoo_lanes& lanes,
                            std::uint64_t b) noexcept {
  const std::uint64_t bit = std::uint64_t{cuckoo_bucket_slots} * lanes.f * b;
  prefetch(words + (bit >> 6));
  prefetch(words + ((bit + 4 * lanes.f - 1) >> 6));
}

// H(fp): the 64-bit mix of a fingerprint that defines its bucket pairing (the splitmix64
// finalizer of fp times the golden-ratio constant). Part of the file format: never change it.
inline std::uint64_t cuckoo_fingerprint_mix(std::uint64_t fp) noexcept {
  std::uint64_t z = fp * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The alternate bucket: alt(i, fp) = (t - i) mod nb with t = reduce(H(fp), nb). It is an
// involution for every nb, power of two or not: alt(alt(i)) = t - (t - i) = i (mod nb). So a
// fingerprint and either one of its buckets determine its other bucket, which is all that
// eviction and removal know about a stored fingerprint.
// A fixed point (2i = t mod nb) would leave a key a single bucket. When nb is even, the fixed
// points of t come in a pair, i and i + nb/2, and are mapped to each other instead, which keeps
// alt an involution without fixed points (filters sized from a target always have an even nb).
// When nb is odd, one fixed point per t remains: a key has one bucket with probability 1/nb.
inline std::uint64_t cuckoo_alt_bucket(std::uint64_t i, std::uint64_t fp,
                                       std::uint64_t buckets) noexcept {
  const std::uint64_t t = reduce(cuckoo_fingerprint_mix(fp), buckets);
  const std::uint64_t j = t >= i ? t - i : t + buckets - i;
  if (j != i || buckets % 2 != 0) return j;
  const std::uint64_t half = buckets / 2;
  return i >= half ? i - half : i + half;
}

// The eviction walk's random numbers: splitmix64, seeded from the key's hash so that the same
// operations always build the same table.
inline std::uint64_t cuckoo_random(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Where a key lives: its fingerprint (never 0: 0 marks an empty slot) and its two buckets.
struct cuckoo_position {
  std::uint64_t i1 = 0;
  std::uint64_t i2 = 0;
  std::uint64_t fp = 0;
};

// fp = 1 + reduce(h.high, 2^f - 1), uniform on the 2^f - 1 non-zero values; i1 = reduce(h.low,
// nb); i2 = alt(i1, fp). The two halves of the hash are independent, so fingerprint and bucket
// are too.
inline cuckoo_position cuckoo_locate(hash128 h, std::uint32_t f, std::uint64_t buckets) noexcept {
  cuckoo_position p;
  p.fp = 1 + reduce(h.high, (std::uint64_t{1} << f) - 1);
  p.i1 = reduce(h.low, buckets);
  p.i2 = cuckoo_alt_bucket(p.i1, p.fp, buckets);
  return p;
}

// The one-entry victim stash: the fingerprint an insert could not place after max_kicks
// evictions, with one of its two buckets (the other follows from alt()).
struct cuckoo_stash {
  bool used = false;
  std::uint32_t fingerprint = 0;
  std::uint64_t bucket = 0;
  friend bool operator==(const cuckoo_stash&, const cuckoo_stash&) = default;

  bool holds(const cuckoo_position& p) const noexcept {
    return used && fingerprint == p.fp && (bucket == p.i1 || bucket == p.i2);
  }
};

// How many copies of p.fp sit in p's two buckets and the stash.
inline std::uint32_t cuckoo_count(const std::uint64_t* words, const cuckoo_lanes& lanes,
                                  const cuckoo_stash& stash, const cuckoo_position& p) noexcept {
  std::uint32_t n = static_cast<std::uint32_t>(
      std::popcount(lanes.matching_slots(read_bucket(words, lanes, p.i1), p.fp)));
  if (p.i2 != p.i1) {
    n += static_cast<std::uint32_t>(
        std::popcount(lanes.matching_slots(read_bucket(words, lanes, p.i2), p.fp)));
  }
  return n + (stash.holds(p) ? 1 : 0);
}

inline bool cuckoo_probe(const std::uint64_t* words, const cuckoo_lanes& lanes,
                         const cuckoo_stash& stash, const cuckoo_position& p) noexcept {
  const std::uint64_t hits = lanes.matching_slots(read_bucket(words, lanes, p.i1), p.fp) |
                             lanes.matching_slots(read_bucket(words, lanes, p.i2), p.fp);
  return hits != 0 || stash.holds(p);
}

// Fingerprints stored in the table (the stash not included).
inline std::uint64_t cuckoo_occupied_slots(const std::uint64_t* words, const cuckoo_lanes& lanes,
                                           std::uint64_t buckets) noexcept {
  std::uint64_t n = 0;
  for (std::uint64_t b = 0; b < buckets; ++b) {
    n += cuckoo_bucket_slots -
         static_cast<std::uint64_t>(std::popcount(lanes.zero_slots(read_bucket(words, lanes, b))));
  }
  return n;
}

// The FPR model. A query for an absent key with fingerprint v and buckets {i1, i2} is positive
// exactly when a stored key with the same fingerprint has the same bucket pair: any fingerprint v
// found in i1 or i2 belongs to a key whose pair is {i, alt(i, v)} = {i1, i2}, wherever eviction
// put it. Each of the n stored keys matches with probability 2 / (nb · (2^f - 1)) (fingerprint
// equal, and primary bucket i1 or i2), independently of placement, so with load = n / (4 nb):
//   fpr = 1 - (1 - 2 / (nb (2^f - 1)))^n  ~  1 - exp(-8 · load / (2^f - 1))  <=  8 · load / (2^f -
//   1).
// (The stash holds a stored key like any slot, so it is covered.) Placement-independence is why
// this beats the textbook 1 - (1 - 1/(2^f - 1))^(8·load), which overstates the rate for small f.
inline double cuckoo_fpr_model(std::uint32_t f, double load) {
  const double values = std::ldexp(1.0, static_cast<int>(f)) - 1.0;
  return -std::expm1(-2.0 * cuckoo_bucket_slots * load / values);
}

// Keys hashed and prefetched per block of may_contain_many.
inline constexpr std::size_t cuckoo_batch_size = 128;

// Batched may_contain: hash a block of keys, prefetch both buckets of each, then probe them all,
// so the block's cache misses overlap. Same answers as cuckoo_probe on each key.
template <class Keys, class Out>
std::size_t cuckoo_probe_many(const hasher& hash, const std::uint64_t* words,
                              const cuckoo_lanes& lanes, std::uint64_t buckets,
                              const cuckoo_stash& stash, const Keys& keys, Out& out) {
  check_batch_sizes(keys, out);
  const std::size_t n = std::ranges::size(keys);
  std::size_t positives = 0;
  cuckoo_position pos[cuckoo_batch_size];
  for (std::size_t base = 0; base < n; base += cuckoo_batch_size) {
    const std::size_t count = std::min(cuckoo_batch_size, n - base);
    for (std::size_t j = 0; j < count; ++j) {
      pos[j] = cuckoo_locate(hash_key(hash, keys[base + j]), lanes.f, buckets);
      prefetch_bucket(words, lanes, pos[j].i1);
      prefetch_bucket(words, lanes, pos[j].i2);
    }
    for (std::size_t j = 0; j < count; ++j) {
      const bool hit = cuckoo_probe(words, lanes, stash, pos[j]);
      out[base + j] = hit;
      positives += hit;
    }
  }
  return positives;
}

}  // namespace bloomery::detail
