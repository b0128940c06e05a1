// The hard parts of the cuckoo filter, shared by the owning filter, its mapped view and the
// scalable cuckoo filter's sub-filters: the bit-packed bucket table, fingerprints, the
// alternate-bucket involution, probing and batched probing, and the table-writing verbs (place,
// remove). Nothing here owns memory. docs/cuckoo-filter.md explains every formula.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <ranges>
#include <utility>

#include "bloomery/bit_array.hpp"
#include "bloomery/detail/batched_queries.hpp"
#include "bloomery/detail/core_common.hpp"
#include "bloomery/hash.hpp"

namespace bloomery::detail {

// Fingerprints per bucket.
inline constexpr std::uint32_t cuckoo_bucket_slots = 4;
inline constexpr std::uint32_t cuckoo_min_fingerprint_bits = 4;
inline constexpr std::uint32_t cuckoo_max_fingerprint_bits = 16;
// Evictions an insert may make before its last victim goes to the stash. The eviction walk's
// length grows near the load threshold, and a table fails at its first walk longer than this, so
// the bound must grow with the number of inserts; 2000 keeps a table of 10^8 keys clear of the
// 95% target load (docs/cuckoo-filter.md, "Defaults and why").
inline constexpr std::uint32_t cuckoo_default_max_kicks = 2000;

// Semi-sorted buckets (Fan et al. 2014, section 5.2). The order of the 4 fingerprints in a bucket
// carries no information, so a bucket may store them sorted. Sorted, the top 4 bits ("nibbles") of
// the 4 fingerprints form a multiset of 4 values from 16 (an empty slot is fingerprint 0, nibble
// 0), and there are only C(16 + 4 - 1, 4) = C(19, 4) = 3876 such multisets: a 12-bit code names
// one instead of 16 bits of nibbles. The low f - 4 bits of each fingerprint follow as they are, in
// the same (ascending) order. A semi-sorted bucket takes 4f - 4 bits instead of 4f:
//   bits [0, 12)                         the code of the sorted nibbles
//   bits [12 + j·(f-4), 12 + (j+1)·(f-4)) the low f - 4 bits of the j-th smallest fingerprint
// The code of nibbles a <= b <= c <= d is the combinatorial number system's rank of the 4-subset
// {a, b+1, c+2, d+3} of [0, 19): C(a, 1) + C(b+1, 2) + C(c+2, 3) + C(d+3, 4). It is a bijection
// onto [0, 3876), and the empty bucket (all nibbles 0) has code 0, so an all-zero table is empty in
// both layouts. Codes 3876 .. 4095 are never written; the loader rejects them.
inline constexpr std::uint32_t cuckoo_semisort_code_bits = 12;
inline constexpr std::uint32_t cuckoo_semisort_codes = 3876;  // C(19, 4)

// The two lookup tables, built at compile time: `nibbles[code]` holds the 4 sorted nibbles of a
// code (the j-th smallest in bits [4j, 4j + 4); 0 for the unused codes >= 3876, so even an
// unvalidated table decodes without reading out of bounds), and `rank[j][v]` = C(v + j, j + 1), the
// code's term for nibble v in sorted position j.
struct cuckoo_semisort_tables {
  std::array<std::uint16_t, std::size_t{1} << cuckoo_semisort_code_bits> nibbles{};
  std::array<std::array<std::uint16_t, 16>, cuckoo_bucket_slots> rank{};
};

inline constexpr std::uint32_t cuckoo_binomial(std::uint32_t n, std::uint32_t k) noexcept {
  if (k > n) return 0;
  std::uint32_t r = 1;
  for (std::uint32_t i = 1; i <= k; ++i) r = r * (n - k + i) / i;  // exact at every step
  return r;
}

inline constexpr cuckoo_semisort_tables cuckoo_build_semisort_tables() noexcept {
  cuckoo_semisort_tables t;
  for (std::uint32_t j = 0; j < cuckoo_bucket_slots; ++j) {
    for (std::uint32_t v = 0; v < 16; ++v) {
      t.rank[j][v] = static_cast<std::uint16_t>(cuckoo_binomial(v + j, j + 1));
    }
  }
  for (std::uint32_t a = 0; a < 16; ++a)
    for (std::uint32_t b = a; b < 16; ++b)
      for (std::uint32_t c = b; c < 16; ++c)
        for (std::uint32_t d = c; d < 16; ++d) {
          const std::uint32_t code = t.rank[0][a] + t.rank[1][b] + t.rank[2][c] + t.rank[3][d];
          t.nibbles[code] = static_cast<std::uint16_t>(a | b << 4 | c << 8 | d << 12);
        }
  return t;
}

inline constexpr cuckoo_semisort_tables cuckoo_semisort = cuckoo_build_semisort_tables();
static_assert(cuckoo_binomial(19, 4) == cuckoo_semisort_codes);
static_assert(cuckoo_semisort.nibbles[cuckoo_semisort_codes - 1] == 0xffff);

// Bits one bucket takes in the table: 4f, or 4f - 4 when semi-sorted.
inline constexpr std::uint32_t cuckoo_bucket_bits(std::uint32_t f, bool semi_sorted) noexcept {
  return cuckoo_bucket_slots * f - (semi_sorted ? 4 : 0);
}

// Bits of a table of `buckets` buckets with f-bit fingerprints, and the bits allocated for it:
// one extra zero word past the last bucket, so that reading any bucket may always load the word
// after the one it starts in (see read_bucket) without leaving the allocation.
inline constexpr std::uint64_t cuckoo_table_bits(std::uint32_t f, std::uint64_t buckets,
                                                 bool semi_sorted = false) noexcept {
  return std::uint64_t{cuckoo_bucket_bits(f, semi_sorted)} * buckets;
}
inline constexpr std::uint64_t cuckoo_storage_bits(std::uint32_t f, std::uint64_t buckets,
                                                   bool semi_sorted = false) noexcept {
  return cuckoo_table_bits(f, buckets, semi_sorted) + 64;
}

// The constants of the SWAR tricks on one bucket: a bucket is a 4f-bit value (4f <= 64) whose
// slot j holds bits [j*f, (j+1)*f). Every verb works on this plain form; read_bucket and
// write_bucket convert semi-sorted buckets from and to it (decode and encode).
struct cuckoo_lanes {
  std::uint32_t f = 0;
  std::uint64_t field = 0;   // f ones: one slot
  std::uint64_t bucket = 0;  // 4f ones: one bucket
  std::uint64_t lows = 0;    // bit 0 of every slot
  std::uint64_t highs = 0;   // bit f-1 of every slot
  bool semi_sorted = false;
  std::uint32_t stored_bits = 0;  // bits of a bucket in the table: 4f, or 4f - 4 semi-sorted
  std::uint64_t stored = 0;       // stored_bits ones
  std::uint32_t low_bits = 0;     // f - 4: the bits of a fingerprint below its nibble
  std::uint64_t low_field = 0;    // low_bits ones

  explicit cuckoo_lanes(std::uint32_t bits, bool semi = false) noexcept
      : f(bits),
        semi_sorted(semi),
        stored_bits(cuckoo_bucket_bits(bits, semi)),
        low_bits(bits - 4) {
    field = (std::uint64_t{1} << f) - 1;
    bucket = 4 * f == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << (4 * f)) - 1;
    stored = stored_bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << stored_bits) - 1;
    low_field = (std::uint64_t{1} << low_bits) - 1;
    for (std::uint32_t j = 0; j < cuckoo_bucket_slots; ++j) {
      lows |= std::uint64_t{1} << (j * f);
      highs |= std::uint64_t{1} << (j * f + f - 1);
    }
  }

  // Bit f-1 of slot j is set in the result exactly when slot j of `x` is zero. Exact for every
  // slot (not only the lowest, unlike the subtract-and-borrow trick): per slot, adding 2^(f-1)-1
  // to the low f-1 bits carries into bit f-1 iff they are not all zero, and never out of the slot.
  std::uint64_t zero_slots(std::uint64_t x) const noexcept {
    const std::uint64_t low_bits_mask = highs - lows;  // f-1 ones in every slot
    return ~(((x & low_bits_mask) + low_bits_mask) | x | low_bits_mask) & highs;
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

  // A semi-sorted bucket (4f - 4 bits) to the plain form, its fingerprints in ascending order.
  // Spreads the 4 nibbles from stride 4 to stride f (then up by f - 4) and the 4 low parts from
  // stride f - 4 to stride f, each with 4 masks and 3 constant-per-filter shifts.
  std::uint64_t decode(std::uint64_t s) const noexcept {
    const std::uint64_t n = cuckoo_semisort.nibbles[s & 0xfff];
    const std::uint32_t l = low_bits;
    const std::uint64_t high =
        ((n & 0xf) | (n & 0xf0) << l | (n & 0xf00) << (2 * l) | (n & 0xf000) << (3 * l)) << l;
    const std::uint64_t t = s >> cuckoo_semisort_code_bits;
    const std::uint64_t low = (t & low_field) | (t & low_field << l) << 4 |
                              (t & low_field << (2 * l)) << 8 | (t & low_field << (3 * l)) << 12;
    return high | low;
  }
  // A plain bucket, slots in any order, to its semi-sorted form. decode(encode(x)) is x sorted.
  std::uint64_t encode(std::uint64_t x) const noexcept {
    std::uint64_t v[cuckoo_bucket_slots];
    for (std::uint32_t j = 0; j < cuckoo_bucket_slots; ++j) v[j] = get(x, j);
    const auto order = [&](std::uint32_t i, std::uint32_t j) {
      if (v[j] < v[i]) std::swap(v[i], v[j]);
    };
    order(0, 1);  // a sorting network for 4 values
    order(2, 3);
    order(0, 2);
    order(1, 3);
    order(1, 2);
    std::uint64_t s = 0;
    for (std::uint32_t j = 0; j < cuckoo_bucket_slots; ++j) {
      s += cuckoo_semisort.rank[j][v[j] >> low_bits];
      s |= (v[j] & low_field) << (cuckoo_semisort_code_bits + j * low_bits);
    }
    return s;
  }
  // Whether a stored semi-sorted bucket is one that encode() writes: a code below 3876, and the
  // low bits of equal nibbles in ascending order.
  bool canonical(std::uint64_t s) const noexcept { return encode(decode(s)) == s; }
};

// Bucket b in the plain form (4f bits, see cuckoo_lanes). In the table it starts at bit
// stored_bits·b and may straddle two 64-bit words; both words are always read (two aligned
// loads, no unaligned access), the second shifted by (64 - s) in two steps so that s = 0 shifts
// it out entirely instead of shifting by 64. The zero tail word (cuckoo_storage_bits) keeps the
// second load inside the allocation for the last bucket.
inline std::uint64_t read_stored_bucket(const std::uint64_t* words, const cuckoo_lanes& lanes,
                                        std::uint64_t b) noexcept {
  const std::uint64_t bit = std::uint64_t{lanes.stored_bits} * b;
  const std::uint64_t w = bit >> 6;
  const unsigned s = static_cast<unsigned>(bit & 63);
  const std::uint64_t lo = words[w] >> s;
  const std::uint64_t hi = (words[w + 1] << 1) << (63 - s);
  return (lo | hi) & lanes.stored;
}

inline std::uint64_t read_bucket(const std::uint64_t* words, const cuckoo_lanes& lanes,
                                 std::uint64_t b) noexcept {
  const std::uint64_t s = read_stored_bucket(words, lanes, b);
  return lanes.semi_sorted ? lanes.decode(s) : s;
}

// Writes bucket b from its plain form (semi-sorted buckets are sorted and encoded first).
inline void write_bucket(std::uint64_t* words, const cuckoo_lanes& lanes, std::uint64_t b,
                         std::uint64_t value) noexcept {
  if (lanes.semi_sorted) value = lanes.encode(value);
  const std::uint64_t bit = std::uint64_t{lanes.stored_bits} * b;
  const std::uint64_t w = bit >> 6;
  const unsigned s = static_cast<unsigned>(bit & 63);
  words[w] = (words[w] & ~(lanes.stored << s)) | (value << s);
  if (s + lanes.stored_bits > 64) {  // straddles: the high part goes to the next word (s > 0)
    words[w + 1] = (words[w + 1] & ~(lanes.stored >> (64 - s))) | (value >> (64 - s));
  }
}

// The word addresses a bucket touches, for prefetching.
[[gnu::always_inline]] inline void prefetch_bucket(const std::uint64_t* words,
                                                   const cuckoo_lanes& lanes,
                                                   std::uint64_t b) noexcept {
  const std::uint64_t bit = std::uint64_t{lanes.stored_bits} * b;
  prefetch(words + (bit >> 6));
  prefetch(words + ((bit + lanes.stored_bits - 1) >> 6));
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
//   fpr = 1 - (1 - 2 / (nb (2^f - 1)))^n
//       ~ 1 - exp(-8 · load / (2^f - 1))
//      <= 8 · load / (2^f - 1).
// (The stash holds a stored key like any slot, so it is covered.) Placement-independence is why
// this beats the textbook 1 - (1 - 1/(2^f - 1))^(8·load), which overstates the rate for small f.
inline double cuckoo_fpr_model(std::uint32_t f, double load) {
  const double values = std::ldexp(1.0, static_cast<int>(f)) - 1.0;
  return -std::expm1(-2.0 * cuckoo_bucket_slots * load / values);
}

// Keys hashed and prefetched per block of may_contain_many.
inline constexpr std::size_t cuckoo_batch_size = 128;

// Batched may_contain: prefetch both buckets of each key, then probe. Same answers as cuckoo_probe.
struct cuckoo_batch_probe {
  const std::uint64_t* words;
  const cuckoo_lanes& lanes;
  std::uint64_t buckets;
  const cuckoo_stash& stash;
  cuckoo_position locate(hash128 h) const noexcept { return cuckoo_locate(h, lanes.f, buckets); }
  [[gnu::always_inline]] void prefetch(const cuckoo_position& p) const noexcept {
    prefetch_bucket(words, lanes, p.i1);
    prefetch_bucket(words, lanes, p.i2);
  }
  bool probe(const cuckoo_position& p) const noexcept {
    return cuckoo_probe(words, lanes, stash, p);
  }
};

template <class Keys, class Out>
std::size_t cuckoo_probe_many(const hasher& hash, const std::uint64_t* words,
                              const cuckoo_lanes& lanes, std::uint64_t buckets,
                              const cuckoo_stash& stash, const Keys& keys, Out& out) {
  return batched_queries<cuckoo_batch_size>(hash, cuckoo_batch_probe{words, lanes, buckets, stash},
                                            true, keys, out);
}

// Everything a cuckoo filter is besides its table.
struct cuckoo_meta {
  std::uint32_t fingerprint_bits = 0;
  std::uint32_t max_kicks = 0;
  std::uint64_t buckets = 0;
  std::uint64_t capacity = 0;
  double target_fpr = 0.0;
  std::uint64_t inserted = 0;  // successful inserts
  std::uint64_t removed = 0;   // successful removes
  cuckoo_stash stash;
  hasher hash;
  bool semi_sorted = false;  // the table's bucket layout
};

// The writing verbs on a table and its metadata, shared by cuckoo_filter and the sub-filters of
// scalable_cuckoo_filter (which lie back to back in one allocation). `alt(b, fp)` is the table's
// pairing rule: the other bucket of fingerprint fp stored in bucket b, an involution.

// A cuckoo filter's pairing rule: cuckoo_alt_bucket over its bucket count.
struct cuckoo_pairing {
  std::uint64_t buckets;
  std::uint64_t operator()(std::uint64_t b, std::uint64_t fp) const noexcept {
    return cuckoo_alt_bucket(b, fp, buckets);
  }
};

// Puts fingerprint `fp`, whose buckets are i1 and i2, into the table: into a free slot of i1 or
// i2 if there is one, else by evicting a random resident of a random one of the two and moving it
// to its own other bucket, up to max_kicks times. A fingerprint left homeless after that goes
// to the (empty) stash, so nothing is ever lost. Randomness comes from `seed` (derived from the
// key's hash), so the same operations always build the same table.
template <class Pairing>
void cuckoo_place(std::uint64_t* words, cuckoo_meta& m, std::uint64_t fp, std::uint64_t i1,
                  std::uint64_t i2, std::uint64_t seed, const Pairing& alt) noexcept {
  const cuckoo_lanes lanes(m.fingerprint_bits, m.semi_sorted);
  const auto try_put = [&](std::uint64_t b) {
    const std::uint64_t bucket = read_bucket(words, lanes, b);
    const std::uint64_t free = lanes.zero_slots(bucket);
    if (free == 0) return false;
    write_bucket(words, lanes, b, lanes.set(bucket, lanes.first_slot(free), fp));
    return true;
  };
  if (try_put(i1) || try_put(i2)) return;
  std::uint64_t rng = seed;
  std::uint64_t b = (cuckoo_random(rng) & 1) ? i2 : i1;
  for (std::uint32_t kick = 0; kick < m.max_kicks; ++kick) {
    const auto slot = static_cast<std::uint32_t>(cuckoo_random(rng) & 3);
    const std::uint64_t bucket = read_bucket(words, lanes, b);
    const std::uint64_t evicted = lanes.get(bucket, slot);
    write_bucket(words, lanes, b, lanes.set(bucket, slot, fp));
    fp = evicted;
    b = alt(b, fp);
    if (try_put(b)) return;
  }
  m.stash = {true, static_cast<std::uint32_t>(fp), b};
}

// Stores the key of hash `h`, at position `p`, in a table whose stash is free.
template <class Pairing>
void cuckoo_place_hash(std::uint64_t* words, cuckoo_meta& m, hash128 h, const cuckoo_position& p,
                       const Pairing& alt) noexcept {
  cuckoo_place(words, m, p.fp, p.i1, p.i2, h.low ^ h.high, alt);
  ++m.inserted;
}

// Removes one copy of p's fingerprint from its buckets (or the stash); false, changing nothing,
// when no copy is there. A stashed fingerprint then moves back into the table when it can.
template <class Pairing>
bool cuckoo_remove(std::uint64_t* words, cuckoo_meta& m, const cuckoo_position& p,
                   const Pairing& alt) noexcept {
  const cuckoo_lanes lanes(m.fingerprint_bits, m.semi_sorted);
  for (const std::uint64_t b : {p.i1, p.i2}) {
    const std::uint64_t bucket = read_bucket(words, lanes, b);
    const std::uint64_t marks = lanes.matching_slots(bucket, p.fp);
    if (marks != 0) {
      write_bucket(words, lanes, b, lanes.set(bucket, lanes.first_slot(marks), 0));
      ++m.removed;
      if (m.stash.used) {
        const cuckoo_stash victim = std::exchange(m.stash, {});
        cuckoo_place(words, m, victim.fingerprint, victim.bucket,
                     alt(victim.bucket, victim.fingerprint), victim.bucket ^ m.removed, alt);
      }
      return true;
    }
  }
  if (m.stash.holds(p)) {
    m.stash = {};
    ++m.removed;
    return true;
  }
  return false;
}

}  // namespace bloomery::detail
