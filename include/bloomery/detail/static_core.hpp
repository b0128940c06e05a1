// The hard parts of the static (binary fuse) filter, shared by the owning filter and its mapped
// view: the layout formulas, the per-attempt key hash, slot positions, fingerprints, the peeling
// construction and the (batched) probe. Nothing here owns the fingerprint array.
//
// A binary fuse filter (Graf & Lemire, "Binary Fuse Filters: Fast and Smaller Than Xor Filters",
// ACM JEA 2022) stores one f-bit fingerprint per slot. Each key owns three slots, one in each of
// three consecutive segments of `segment_length` slots, and the filter is built so that the XOR
// of a key's three slots equals the key's fingerprint. A query recomputes the three slots and the
// fingerprint: an absent key matches with probability 2^-f. docs/static-filter.md has the math.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomery/bit_array.hpp"
#include "bloomery/detail/batched_queries.hpp"
#include "bloomery/detail/core_common.hpp"
#include "bloomery/hash.hpp"

namespace bloomery::detail {

// Largest segment: 2^18 slots. Longer segments would not make peeling more likely to succeed, and
// this keeps each key's three slots within a window of 3 * 2^18 slots (good locality).
inline constexpr std::uint32_t fuse_max_segment_length = std::uint32_t{1} << 18;
// Construction attempts before giving up. One attempt fails with probability well below 1/2 (in
// practice a few percent at most), so 100 failures in a row do not happen.
inline constexpr std::uint32_t fuse_max_attempts = 100;
// The most keys a static filter accepts (2^40): far beyond any memory, and it keeps every slot
// index computation exact in 64-bit arithmetic.
inline constexpr std::uint64_t fuse_max_keys = std::uint64_t{1} << 40;

// How the slots are arranged: `segment_count + 2` segments of `segment_length` slots, so that a key
// whose first slot falls in any of the first `segment_count` segments has its other two slots in
// the following two.
struct fuse_layout {
  std::uint32_t segment_length = 0;  // a power of two; 0 only for the empty filter
  std::uint64_t segment_count = 0;   // segments a key's first slot may fall in; 0 when empty
  std::uint64_t array_length = 0;    // slots: (segment_count + 2) * segment_length; 0 when empty
  friend bool operator==(const fuse_layout&, const fuse_layout&) = default;
};

// The layout for n distinct keys (Graf & Lemire's formulas for three slots per key):
//   segment_length L = 2^floor(ln n / ln 3.33 + 2.25), at most 2^18
//   size factor    s = max(1.125, 0.875 + 0.25 * ln(10^6) / ln n)       (n >= 2)
//   segment_count    = max(1, ceil(round(n * s) / L) - 2)
//   array_length     = (segment_count + 2) * L
// For n = 1 the formulas give L = 4 and one segment (12 slots); n = 0 is the empty layout.
inline fuse_layout fuse_layout_for(std::uint64_t n) {
  if (n == 0) return {};
  const double dn = static_cast<double>(n);
  const double log_n = std::log(dn);
  const double exponent = std::floor(log_n / std::log(3.33) + 2.25);
  const std::uint32_t length =
      exponent >= 18 ? fuse_max_segment_length : std::uint32_t{1} << static_cast<int>(exponent);
  std::uint64_t capacity = 0;
  if (n >= 2) {
    const double factor = std::max(1.125, 0.875 + 0.25 * std::log(1e6) / log_n);
    capacity = static_cast<std::uint64_t>(std::llround(dn * factor));
  }
  const std::uint64_t spanned = (capacity + length - 1) / length;  // segments the slots span
  const std::uint64_t count = spanned > 3 ? spanned - 2 : 1;
  return {length, count, (count + 2) * length};
}

// A well-mixing bijection on 64 bits (the splitmix64 finalizer).
inline constexpr std::uint64_t fuse_mix(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The seed of construction attempt i. Deterministic, so the same keys and hasher always build the
// same filter; the seed that succeeded is stored in the file.
inline constexpr std::uint64_t fuse_attempt_seed(std::uint32_t attempt) noexcept {
  return fuse_mix(0x6675736566696c74ULL + attempt * 0x9e3779b97f4a7c15ULL);  // "tlifesuf"
}

// How a key's 128-bit hash becomes its 64-bit value x under construction seed `seed`, and x its
// fingerprint. Two schemes, fixed by the filter's hash algorithm (fuse_scheme_of), so files of
// either load and answer as built:
//   mixed  (algorithms 1 and 2): x = splitmix64(low ^ seed) ^ high; fingerprint = top f bits of
//          x times an odd constant. Both halves enter x.
//   folded (algorithm 3, the default): x = fold(high ^ seed, K), one folded multiply; the
//          fingerprint is x ^ (x >> 32), as binary fuse's reference takes it. Three multiplies
//          per integer-key query instead of seven, as many as binary fuse's
//          (docs/lookup-paths.md).
// A collision of x (a 2^-64 accident) is treated as a duplicate key by the construction: such keys
// get the same slots and fingerprint, so deduplicating them loses nothing.
enum class fuse_scheme : std::uint8_t { mixed, folded };

inline fuse_scheme fuse_scheme_of(hash_algorithm a) noexcept {
  return a == hash_algorithm::xxh3_128_seeded_intmix ? fuse_scheme::folded : fuse_scheme::mixed;
}

template <fuse_scheme S>
inline std::uint64_t fuse_hash(hash128 h, std::uint64_t seed) noexcept {
  if constexpr (S == fuse_scheme::mixed) {
    return fuse_mix(h.low ^ seed) ^ h.high;
  } else {
    // The high half: for an integer key that is mix_integer's first round, so its second round
    // (the low half, which nothing here reads) is never computed.
    return fold_multiply(h.high ^ seed, 0xd6e8feb86659fd93ULL);
  }
}

// A key's three slots: the first uniformly in the first segment_count segments (multiply-shift of
// the whole hash, so its high bits decide), the other two in the next two segments at offsets
// XOR-ed with two further independent groups of hash bits (bits 18..35 and 0..17).
struct fuse_slots {
  std::uint64_t at[3];
};
inline fuse_slots fuse_positions(std::uint64_t x, const fuse_layout& l) noexcept {
  const std::uint64_t length = l.segment_length;
  const std::uint64_t mask = length - 1;
  const std::uint64_t first = reduce(x, l.segment_count * length);
  return {{first, (first + length) ^ ((x >> 18) & mask), (first + 2 * length) ^ (x & mask)}};
}

// The key's f-bit fingerprint (see fuse_scheme).
template <class Slot, fuse_scheme S>
inline Slot fuse_fingerprint(std::uint64_t x) noexcept {
  if constexpr (S == fuse_scheme::mixed) {
    return static_cast<Slot>((x * 0x9e3779b97f4a7c15ULL) >> (64 - 8 * sizeof(Slot)));
  } else {
    return static_cast<Slot>(x ^ (x >> 32));
  }
}

// Slots are little-endian and accessed through memcpy: the storage is plain bytes (owned, or a
// mapped file), and memcpy of 1 or 2 bytes compiles to a single load or store.
template <class Slot>
inline Slot load_slot(const unsigned char* slots, std::uint64_t i) noexcept {
  Slot v;
  std::memcpy(&v, slots + i * sizeof(Slot), sizeof(Slot));
  return v;
}
template <class Slot>
inline void store_slot(unsigned char* slots, std::uint64_t i, Slot v) noexcept {
  std::memcpy(slots + i * sizeof(Slot), &v, sizeof(Slot));
}

template <class Slot, fuse_scheme S>
inline bool fuse_probe(const unsigned char* slots, const fuse_layout& l, std::uint64_t x) noexcept {
  const fuse_slots p = fuse_positions(x, l);
  const Slot v =
      static_cast<Slot>(fuse_fingerprint<Slot, S>(x) ^ load_slot<Slot>(slots, p.at[0]) ^
                        load_slot<Slot>(slots, p.at[1]) ^ load_slot<Slot>(slots, p.at[2]));
  return v == 0;
}

// Sorts 64-bit values ascending. An LSD radix sort over only the top `passes` bytes, enough of
// them that the values sharing those bytes form runs of about one (ceil(log2(n) / 8) bytes),
// then each run is sorted whole: the same order as a full sort at a half to a third of the
// passes of 8 bits (docs/lookup-paths.md). Passes whose digit is the same for every value
// are skipped; a long run (crafted keys) falls back to std::sort, so the sort stays O(n log n).
// Small inputs use std::sort.
inline void sort_hashes(std::vector<std::uint64_t>& v, std::vector<std::uint64_t>& tmp) {
  const std::size_t n = v.size();
  if (n < 2048) {
    std::sort(v.begin(), v.end());
    return;
  }
  const unsigned passes = std::min(8u, (static_cast<unsigned>(std::bit_width(n)) + 7) / 8);
  const unsigned low_byte = 8 - passes;
  std::array<std::array<std::size_t, 256>, 8> counts{};
  for (const std::uint64_t x : v) {
    for (unsigned b = low_byte; b < 8; ++b) ++counts[b][(x >> (8 * b)) & 255];
  }
  tmp.resize(n);
  std::uint64_t* src = v.data();
  std::uint64_t* dst = tmp.data();
  for (unsigned b = low_byte; b < 8; ++b) {
    auto& c = counts[b];
    const unsigned shift = 8 * b;
    if (c[(src[0] >> shift) & 255] == n) continue;  // one digit value for all: nothing to do
    std::size_t sum = 0;
    for (auto& slot : c) sum += std::exchange(slot, sum);
    for (std::size_t i = 0; i < n; ++i) dst[c[(src[i] >> shift) & 255]++] = src[i];
    std::swap(src, dst);
  }
  if (src != v.data()) std::memcpy(v.data(), src, n * sizeof(std::uint64_t));
  if (passes == 8) return;
  // Runs of equal top bytes: insertion sort for the short ones (nearly all), std::sort beyond.
  const unsigned top_shift = 8 * low_byte;
  for (std::size_t start = 0; start < n;) {
    const std::uint64_t top = v[start] >> top_shift;
    std::size_t end = start + 1;
    while (end < n && (v[end] >> top_shift) == top) ++end;
    if (end - start > 16) {
      std::sort(v.begin() + static_cast<std::ptrdiff_t>(start),
                v.begin() + static_cast<std::ptrdiff_t>(end));
    } else {
      for (std::size_t i = start + 1; i < end; ++i) {
        const std::uint64_t x = v[i];
        std::size_t j = i;
        for (; j > start && v[j - 1] > x; --j) v[j] = v[j - 1];
        v[j] = x;
      }
    }
    start = end;
  }
}

// Working memory of the construction, reused across attempts.
struct fuse_scratch {
  std::vector<std::uint64_t> hashes, sort_tmp;  // per-attempt key hashes, sort buffer
  std::vector<std::uint8_t> degree;             // per slot: (keys on it) << 2 | XOR of their index
  std::vector<std::uint64_t> xor_hash;          // per slot: XOR of the hashes of its keys
  std::vector<std::uint64_t> stack;             // slots holding exactly one key, to peel
  std::vector<std::uint64_t> order;             // peeled key hashes, in peeling order
  std::vector<std::uint8_t> order_index;        // which of its 3 slots each peeled key owns
};

// One construction attempt over sorted, distinct hashes. Peeling: a slot that exactly one key
// touches can be given to that key (its value can be chosen last, to make that key's XOR come
// out right); remove the key, which may leave other slots with one key, and repeat. If every key
// is removed, assign slots in reverse peeling order. Returns false (and leaves `slots` untouched)
// when some keys cannot be peeled; the caller retries with another seed.
template <class Slot, fuse_scheme S>
bool fuse_try_build(std::span<const std::uint64_t> hashes, const fuse_layout& l,
                    unsigned char* slots, fuse_scratch& s) {
  const std::uint64_t n = hashes.size();
  const std::uint64_t m = l.array_length;
  s.degree.assign(m, 0);
  s.xor_hash.assign(m, 0);
  // Count. Sorted hashes make the first slots ascend, so this pass walks memory almost in order.
  for (const std::uint64_t x : hashes) {
    const fuse_slots p = fuse_positions(x, l);
    for (std::uint8_t j = 0; j < 3; ++j) {
      const std::uint8_t d = static_cast<std::uint8_t>(s.degree[p.at[j]] + 4);
      if (d < 4) return false;  // more than 63 keys on one slot: the 8-bit counter would wrap
      s.degree[p.at[j]] = d ^ j;
      s.xor_hash[p.at[j]] ^= x;
    }
  }
  // Peel, scanning the slots in order and following each chain of newly single-key slots at once
  // (depth first, on a stack): a key's slots lie within three consecutive segments, so the chain
  // stays in memory that the scan has just touched.
  s.stack.clear();
  s.order.resize(n);
  s.order_index.resize(n);
  std::uint64_t peeled = 0;
  for (std::uint64_t start = 0; start < m; ++start) {
    if ((s.degree[start] >> 2) != 1) continue;
    s.stack.push_back(start);
    while (!s.stack.empty()) {
      const std::uint64_t i = s.stack.back();
      s.stack.pop_back();
      if ((s.degree[i] >> 2) != 1) continue;  // emptied since it was pushed
      const std::uint64_t x = s.xor_hash[i];
      const std::uint8_t owned = s.degree[i] & 3;
      s.order[peeled] = x;
      s.order_index[peeled] = owned;
      ++peeled;
      const fuse_slots p = fuse_positions(x, l);
      for (std::uint8_t j = 0; j < 3; ++j) {
        const std::uint64_t q = p.at[j];
        s.degree[q] = static_cast<std::uint8_t>((s.degree[q] - 4) ^ j);
        s.xor_hash[q] ^= x;
        if ((s.degree[q] >> 2) == 1) s.stack.push_back(q);
      }
    }
  }
  if (peeled != n) return false;
  // Assign, last peeled first. When a key is assigned its two other slots are final (a slot is
  // only ever owned by a key peeled after every other key on it, so those owners came earlier in
  // this loop), and its owned slot is written by it alone and never again.
  for (std::uint64_t k = n; k-- > 0;) {
    const std::uint64_t x = s.order[k];
    const fuse_slots p = fuse_positions(x, l);
    const std::uint8_t owned = s.order_index[k];
    const Slot v = static_cast<Slot>(fuse_fingerprint<Slot, S>(x) ^
                                     load_slot<Slot>(slots, p.at[(owned + 1) % 3]) ^
                                     load_slot<Slot>(slots, p.at[(owned + 2) % 3]));
    store_slot<Slot>(slots, p.at[owned], v);
  }
  return true;
}

// What a successful construction found.
struct fuse_result {
  fuse_layout layout;
  std::uint64_t seed = 0;
  std::uint64_t distinct = 0;  // distinct keys (by their 64-bit hash under `seed`)
};

// Calls fn.template operator()<Slot, S>() for the filter's fingerprint width and scheme: the
// per-key loops are compiled once per combination, with no test inside them.
template <class Fn>
decltype(auto) with_fuse_types(std::uint32_t fingerprint_bits, fuse_scheme s, Fn&& fn) {
  if (fingerprint_bits == 8) {
    return s == fuse_scheme::folded ? fn.template operator()<std::uint8_t, fuse_scheme::folded>()
                                    : fn.template operator()<std::uint8_t, fuse_scheme::mixed>();
  }
  return s == fuse_scheme::folded ? fn.template operator()<std::uint16_t, fuse_scheme::folded>()
                                  : fn.template operator()<std::uint16_t, fuse_scheme::mixed>();
}

// Builds the fingerprint array for the keys' 128-bit hashes, trying seeds fuse_attempt_seed(0),
// (1), ... until one peels. `allocate(layout)` returns zeroed storage for that layout's slots.
// Throws std::runtime_error when `max_attempts` attempts all fail.
template <class Slot, fuse_scheme S, class Allocate>
fuse_result fuse_build(std::span<const hash128> keys, Allocate&& allocate,
                       std::uint32_t max_attempts = fuse_max_attempts) {
  fuse_scratch s;
  s.hashes.resize(keys.size());
  for (std::uint32_t attempt = 0; attempt < max_attempts; ++attempt) {
    const std::uint64_t seed = fuse_attempt_seed(attempt);
    s.hashes.resize(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) s.hashes[i] = fuse_hash<S>(keys[i], seed);
    sort_hashes(s.hashes, s.sort_tmp);
    s.hashes.erase(std::unique(s.hashes.begin(), s.hashes.end()), s.hashes.end());
    const fuse_layout l = fuse_layout_for(s.hashes.size());
    if (l.array_length == 0) return {l, 0, 0};
    unsigned char* slots = allocate(l);
    if (fuse_try_build<Slot, S>(s.hashes, l, slots, s)) return {l, seed, s.hashes.size()};
  }
  throw std::runtime_error("bloomery: static_filter construction failed in all " +
                           std::to_string(max_attempts) + " attempts (seeds) for " +
                           std::to_string(keys.size()) +
                           " keys; each attempt succeeds with high probability, so this should "
                           "not happen: please report it");
}

// Keys per batch in may_contain_many: each key's 3 slots are prefetched, so a batch keeps up to
// 3 * 64 independent loads in flight while its hashes are computed.
inline constexpr std::size_t fuse_batch_size = 64;

// Batched probe: prefetch each key's three slots, then check them. Same answers as fuse_probe.
template <class Slot, fuse_scheme S>
struct fuse_batch_probe {
  std::uint64_t seed;
  const unsigned char* slots;
  const fuse_layout& l;
  std::uint64_t locate(hash128 h) const noexcept { return fuse_hash<S>(h, seed); }
  [[gnu::always_inline]] void prefetch(std::uint64_t x) const noexcept {
    for (const std::uint64_t at : fuse_positions(x, l).at)
      detail::prefetch(slots + at * sizeof(Slot));
  }
  bool probe(std::uint64_t x) const noexcept { return fuse_probe<Slot, S>(slots, l, x); }
};

template <class Slot, fuse_scheme S, class Keys, class Out>
std::size_t fuse_probe_many(const hasher& hash, std::uint64_t seed, const unsigned char* slots,
                            const fuse_layout& l, const Keys& keys, Out& out) {
  return batched_queries<fuse_batch_size>(hash, fuse_batch_probe<Slot, S>{seed, slots, l},
                                          l.array_length * sizeof(Slot) >= batch_min_bytes, keys,
                                          out);
}

}  // namespace bloomery::detail
