// The hard parts of the static (binary fuse) filter, shared by the owning filter and its mapped
// view: the layout formulas, the per-attempt key hash, slot positions, fingerprints, the peeling
// construction and the (batched) probe. Nothing here owns the fingerprint array.
//
// A binary fuse filter (Graf & Lemire, "Binary Fuse Filters: Fast and Smaller Than Xor Filters",
// ACM JEA 2022) stores one r-bit fingerprint per slot. Each key owns `arity` slots (3 or 4), one in
// each of that many consecutive segments of `segment_length` slots, and the filter is built so
// that the XOR of a key's slots equals the key's fingerprint. A query recomputes the slots and the
// fingerprint: an absent key matches with probability 2^-r. docs/static-filter.md has the math.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bloomery/bit_array.hpp"
#include "bloomery/detail/batched_queries.hpp"
#include "bloomery/detail/core_common.hpp"
#include "bloomery/hash.hpp"

namespace bloomery::detail {

// Largest segment: 2^18 slots. Longer segments would not make peeling more likely to succeed, and
// this keeps each key's slots within a window of arity * 2^18 slots (good locality).
inline constexpr std::uint32_t fuse_max_segment_length = std::uint32_t{1} << 18;
// Construction attempts before giving up. One attempt fails with probability well below 1/2 (in
// practice a few percent at most), so 100 failures in a row do not happen.
inline constexpr std::uint32_t fuse_max_attempts = 100;
// The most keys a static filter accepts (2^40): far beyond any memory, and it keeps every slot
// index computation exact in 64-bit arithmetic.
inline constexpr std::uint64_t fuse_max_keys = std::uint64_t{1} << 40;
// Fingerprint widths: 1 to 32 bits (rates 1/2 to 2^-32).
inline constexpr std::uint32_t fuse_max_bits = 32;

// How the slots are arranged: `segment_count + arity - 1` segments of `segment_length` slots, so
// that a key whose first slot falls in any of the first `segment_count` segments has its other
// slots in the following ones.
struct fuse_layout {
  std::uint32_t segment_length = 0;  // a power of two; 0 only for the empty filter
  std::uint64_t segment_count = 0;   // segments a key's first slot may fall in; 0 when empty
  std::uint64_t array_length = 0;    // slots: (segment_count + arity - 1) * segment_length
  std::uint32_t arity = 3;           // slots per key: 3 or 4
  friend bool operator==(const fuse_layout&, const fuse_layout&) = default;
};

// The layout for n distinct keys and `arity` slots per key (Graf & Lemire's formulas):
//   three slots: L = 2^floor(ln n / ln 3.33 + 2.25),   s = max(1.125, 0.875 + 0.25 ln(10^6) / ln n)
//   four slots:  L = 2^floor(ln n / ln 2.91 - 0.5),    s = max(1.075, 0.77 + 0.305 ln(600000) / ln
//   n) L at most 2^18 (and at least 1);  segment_count = max(1, ceil(round(n s) / L) - (arity - 1))
//   array_length = (segment_count + arity - 1) * L
// For n = 1 (three slots) the formulas give L = 4 and one segment (12 slots); n = 0 is the empty
// layout.
inline fuse_layout fuse_layout_for(std::uint64_t n, std::uint32_t arity = 3) {
  if (n == 0) return {};
  const double dn = static_cast<double>(n);
  const double log_n = std::log(dn);
  const bool four = arity == 4;
  const double exponent =
      four ? std::floor(log_n / std::log(2.91) - 0.5) : std::floor(log_n / std::log(3.33) + 2.25);
  const std::uint32_t length = exponent >= 18  ? fuse_max_segment_length
                               : exponent <= 0 ? 1
                                               : std::uint32_t{1} << static_cast<int>(exponent);
  std::uint64_t capacity = 0;
  if (n >= 2) {
    const double factor = four ? std::max(1.075, 0.77 + 0.305 * std::log(600000.0) / log_n)
                               : std::max(1.125, 0.875 + 0.25 * std::log(1e6) / log_n);
    capacity = static_cast<std::uint64_t>(std::llround(dn * factor));
  }
  const std::uint64_t extra = four ? 3 : 2;                        // segments after the last first
  const std::uint64_t spanned = (capacity + length - 1) / length;  // segments the slots span
  const std::uint64_t count = spanned > extra + 1 ? spanned - extra : 1;
  return {length, count, (count + extra) * length, four ? 4u : 3u};
}

// The smaller of the two layouts for n keys (three slots on a tie: one memory access less per
// query): what a build from a target rate uses. Four slots are smaller at nearly every n (from 3
// keys on), and the more so the larger n: 1.08 slots per key at 10^6 against 1.13.
inline fuse_layout fuse_smallest_layout(std::uint64_t n) {
  const fuse_layout three = fuse_layout_for(n, 3);
  const fuse_layout four = fuse_layout_for(n, 4);
  return four.array_length < three.array_length ? four : three;
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
//   mixed  (algorithms 1 and 2): x = splitmix64(low ^ seed) ^ high; fingerprint = top r bits of
//          x times an odd constant. Both halves enter x.
//   folded (algorithm 3, the default): x = fold(high ^ seed, K), one folded multiply; the
//          fingerprint is the low r bits of x ^ (x >> 32), as binary fuse's reference takes it.
//          Three multiplies per integer-key query instead of seven, as many as binary fuse's
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

// A key's slots: the first uniformly in the first segment_count segments (multiply-shift of the
// whole hash, so its high bits decide), the others in the next segments at offsets XOR-ed with
// further independent groups of hash bits: bits 18..35, bits 0..17 and, for a fourth slot, the
// top bits of x times an odd constant (x's own top bits already placed the first slot).
template <std::uint32_t A>
struct fuse_slots {
  std::uint64_t at[A];
};
template <std::uint32_t A>
inline fuse_slots<A> fuse_positions(std::uint64_t x, const fuse_layout& l) noexcept {
  const std::uint64_t length = l.segment_length;
  const std::uint64_t mask = length - 1;
  const std::uint64_t first = reduce(x, l.segment_count * length);
  if constexpr (A == 3) {
    return {{first, (first + length) ^ ((x >> 18) & mask), (first + 2 * length) ^ (x & mask)}};
  } else {
    return {{first, (first + length) ^ ((x >> 18) & mask), (first + 2 * length) ^ (x & mask),
             (first + 3 * length) ^ (((x * 0x9e3779b97f4a7c15ULL) >> 46) & mask)}};
  }
}

// How slots are stored. W = 8 or 16: whole little-endian bytes, one plain load each, the layout of
// every three-slot 8- and 16-bit filter. W = 0: any width r packed back to back from bit 0
// (slot i at bits [i r, i r + r)), read as an unaligned 64-bit word, so the payload keeps 7 bytes
// after the last slot (fuse_payload_bytes).
template <std::uint32_t W>
struct fuse_codec {
  std::uint32_t width = W;  // r; the template argument when it is not 0
  std::uint32_t bits() const noexcept {
    if constexpr (W != 0) {
      return W;
    } else {
      return width;
    }
  }
  std::uint32_t mask() const noexcept {
    return static_cast<std::uint32_t>((std::uint64_t{1} << bits()) - 1);
  }
  std::uint32_t load(const unsigned char* slots, std::uint64_t i) const noexcept {
    if constexpr (W == 8) {
      return slots[i];
    } else if constexpr (W == 16) {
      std::uint16_t v;
      std::memcpy(&v, slots + 2 * i, 2);
      return v;
    } else {
      const std::uint64_t bit = i * width;
      std::uint64_t w;
      std::memcpy(&w, slots + (bit >> 3), 8);
      return static_cast<std::uint32_t>(w >> (bit & 7)) & mask();
    }
  }
  // Writes v (< 2^r) into slot i, which still holds zero.
  void store(unsigned char* slots, std::uint64_t i, std::uint32_t v) const noexcept {
    if constexpr (W == 8) {
      slots[i] = static_cast<unsigned char>(v);
    } else if constexpr (W == 16) {
      const auto s = static_cast<std::uint16_t>(v);
      std::memcpy(slots + 2 * i, &s, 2);
    } else {
      const std::uint64_t bit = i * width;
      std::uint64_t w;
      std::memcpy(&w, slots + (bit >> 3), 8);
      w |= std::uint64_t{v} << (bit & 7);
      std::memcpy(slots + (bit >> 3), &w, 8);
    }
  }
};

// Whether slots of this layout and width are whole bytes (fuse_codec<8> or <16>): the layout of
// every filter the 48-byte parameter block describes.
inline bool fuse_byte_slots(const fuse_layout& l, std::uint32_t bits) noexcept {
  return l.arity == 3 && (bits == 8 || bits == 16);
}

// The payload: the slots, 7 more bytes when they are packed (the last slot's 64-bit read), rounded
// up to whole 64-byte lines.
inline std::uint64_t fuse_payload_bytes(const fuse_layout& l, std::uint32_t bits) noexcept {
  if (l.array_length == 0) return 0;
  const std::uint64_t used = (l.array_length * bits + 7) / 8;
  return align_up(used + (fuse_byte_slots(l, bits) ? 0 : 7), payload_alignment);
}

// The key's r-bit fingerprint (see fuse_scheme).
template <std::uint32_t W, fuse_scheme S>
inline std::uint32_t fuse_fingerprint(std::uint64_t x, fuse_codec<W> c) noexcept {
  if constexpr (S == fuse_scheme::mixed) {
    return static_cast<std::uint32_t>((x * 0x9e3779b97f4a7c15ULL) >> (64 - c.bits()));
  } else {
    return static_cast<std::uint32_t>(x ^ (x >> 32)) & c.mask();
  }
}

template <std::uint32_t W, fuse_scheme S, std::uint32_t A>
inline bool fuse_probe(const unsigned char* slots, const fuse_layout& l, fuse_codec<W> c,
                       std::uint64_t x) noexcept {
  const fuse_slots<A> p = fuse_positions<A>(x, l);
  std::uint32_t v = fuse_fingerprint<W, S>(x, c);
  for (std::uint32_t j = 0; j < A; ++j) v ^= c.load(slots, p.at[j]);
  return v == 0;
}

// Calls fn.template operator()<W, S, A>() for a filter's slot storage, scheme and arity: the
// per-key loops are compiled once per combination, with no test inside them.
template <class Fn>
decltype(auto) with_fuse_types(const fuse_layout& l, std::uint32_t bits, fuse_scheme s, Fn&& fn) {
  const bool folded = s == fuse_scheme::folded;
  if (l.arity == 3) {
    if (bits == 8) {
      return folded ? fn.template operator()<8, fuse_scheme::folded, 3>()
                    : fn.template operator()<8, fuse_scheme::mixed, 3>();
    }
    if (bits == 16) {
      return folded ? fn.template operator()<16, fuse_scheme::folded, 3>()
                    : fn.template operator()<16, fuse_scheme::mixed, 3>();
    }
    return folded ? fn.template operator()<0, fuse_scheme::folded, 3>()
                  : fn.template operator()<0, fuse_scheme::mixed, 3>();
  }
  return folded ? fn.template operator()<0, fuse_scheme::folded, 4>()
                : fn.template operator()<0, fuse_scheme::mixed, 4>();
}

// Sorts 64-bit values ascending. An LSD radix sort over only the top `passes` bytes, enough of
// them that the values sharing those bytes form runs of about one (ceil(log2(n) / 8) bytes),
// then each run is sorted whole: the same order as a full sort at a half to a third of the
// passes of 8 bits (docs/lookup-paths.md). Passes whose digit is the same for every value
// are skipped; a long run (crafted keys) falls back to std::sort, so the sort stays O(n log n).
// Small inputs use std::sort.
inline void sort_hashes(std::span<std::uint64_t> v, std::vector<std::uint64_t>& tmp) {
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

// Allocator of the construction's scratch arrays: huge_page_alloc's memory (the construction
// touches every page once, and faulting in a 4 KiB page costs more than the work done on it), and
// resize() leaves new elements uninitialised, since every array is written before it is read (or
// assigned zeros explicitly).
template <class T>
struct fuse_allocator {
  using value_type = T;
  fuse_allocator() = default;
  template <class U>
  fuse_allocator(const fuse_allocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
  T* allocate(std::size_t n) {
    return static_cast<T*>(huge_page_alloc(n * sizeof(T), "a static filter's construction"));
  }
  void deallocate(T* p, std::size_t) noexcept { std::free(p); }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0) {
      ::new (static_cast<void*>(p)) U;
    } else {
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
  }
  friend bool operator==(const fuse_allocator&, const fuse_allocator&) = default;
};
template <class T>
using fuse_vector = std::vector<T, fuse_allocator<T>>;

// Working memory of the construction, reused across attempts.
struct fuse_scratch {
  fuse_vector<std::uint64_t> hashes;      // per-attempt key hashes, grouped by first segment
  std::vector<std::uint64_t> sort_tmp;    // sort buffer (only when an attempt fails)
  fuse_vector<std::uint8_t> degree;       // per slot: (keys on it) << 2 | XOR of their index
  fuse_vector<std::uint64_t> xor_hash;    // per slot: XOR of the hashes of its keys
  std::vector<std::uint64_t> stack;       // slots holding exactly one key, to peel
  fuse_vector<std::uint64_t> order;       // peeled key hashes, in peeling order
  fuse_vector<std::uint8_t> order_index;  // which of its slots each peeled key owns

  std::uint64_t capacity_bytes() const noexcept {
    const std::uint64_t words = hashes.capacity() + sort_tmp.capacity() + xor_hash.capacity() +
                                stack.capacity() + order.capacity();
    return words * sizeof(std::uint64_t) + degree.capacity() + order_index.capacity();
  }
};

// The most scratch memory a thread keeps between builds: about 28 bytes a key, so the scratch of
// builds up to about a million keys. Faulting in fresh pages costs more than the construction's
// own work on them (docs/static-filter.md, "Build cost"), and a program that builds filters
// builds many (an LSM store: one per table). Larger scratch is freed when its build ends.
inline constexpr std::uint64_t fuse_kept_scratch_bytes = std::uint64_t{32} << 20;

// The calling thread's scratch for one build, kept for its next build when within
// fuse_kept_scratch_bytes. A build started while another runs on the thread (a key hash that
// builds a filter) gets a scratch of its own.
class fuse_scratch_lease {
 public:
  fuse_scratch_lease() : kept_(!slot().in_use) {
    if (kept_) slot().in_use = true;
  }
  ~fuse_scratch_lease() {
    if (!kept_) return;
    if (slot().scratch.capacity_bytes() > fuse_kept_scratch_bytes) slot().scratch = {};
    slot().in_use = false;
  }
  fuse_scratch_lease(const fuse_scratch_lease&) = delete;
  fuse_scratch_lease& operator=(const fuse_scratch_lease&) = delete;
  fuse_scratch& get() noexcept { return kept_ ? slot().scratch : own_; }

  // The calling thread's kept scratch, in bytes of capacity.
  static std::uint64_t kept_bytes() noexcept { return slot().scratch.capacity_bytes(); }
  // Frees the calling thread's kept scratch, unless a build on this thread is using it (a key
  // hash that releases from inside a build): that build's lease decides when it ends.
  static void release() noexcept {
    if (!slot().in_use) slot().scratch = {};
  }

 private:
  struct thread_slot {
    fuse_scratch scratch;
    bool in_use = false;
  };
  static thread_slot& slot() noexcept {
    thread_local thread_slot s;
    return s;
  }
  bool kept_;
  fuse_scratch own_;
};

// Hashes the n keys under `seed` into s.hashes, grouped by the top bits of x, i.e. by where their
// first slot falls (a counting sort on at least as many groups as segments, at most 1024): the
// count pass then walks the slot arrays nearly in order, at two passes over the keys instead of a
// full sort's. s.order holds the hashes in key order meanwhile (the peel overwrites it).
template <fuse_scheme S, class KeyHash>
void fuse_hash_grouped(std::uint64_t n, KeyHash& key_hash, std::uint64_t seed, const fuse_layout& l,
                       fuse_scratch& s) {
  s.hashes.resize(n);
  s.order.resize(n);
  const unsigned bits = std::min(10u, static_cast<unsigned>(std::bit_width(l.segment_count - 1)));
  if (bits == 0) {
    for (std::uint64_t i = 0; i < n; ++i) s.hashes[i] = fuse_hash<S>(key_hash(i), seed);
    return;
  }
  const unsigned shift = 64 - bits;
  std::array<std::uint64_t, 1024> start{};
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t x = fuse_hash<S>(key_hash(i), seed);
    s.order[i] = x;
    ++start[x >> shift];
  }
  std::uint64_t sum = 0;
  for (auto& c : start) sum += std::exchange(c, sum);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t x = s.order[i];
    s.hashes[start[x >> shift]++] = x;
  }
}

// One construction attempt over the hashes, in any order (the per-slot counts and XORs do not
// depend on it). Peeling: a slot that exactly one key touches can be given to that key (its value
// can be chosen last, to make that key's XOR come out right); remove the key, which may leave
// other slots with one key, and repeat. If every key is removed, assign slots in reverse peeling
// order. Returns false (and leaves `slots` untouched) when some keys cannot be peeled, which is
// certain when two hashes are equal (neither of the pair is ever alone on a slot); the caller then
// looks for duplicates or retries with another seed.
template <std::uint32_t W, fuse_scheme S, std::uint32_t A>
bool fuse_try_build(std::span<const std::uint64_t> hashes, const fuse_layout& l, fuse_codec<W> c,
                    unsigned char* slots, fuse_scratch& s) {
  const std::uint64_t n = hashes.size();
  const std::uint64_t m = l.array_length;
  s.degree.assign(m, 0);
  s.xor_hash.assign(m, 0);
  // Plain pointers: through the vectors every byte store would make the compiler reload them.
  std::uint8_t* const degree = s.degree.data();
  std::uint64_t* const xor_hash = s.xor_hash.data();
  // Count. Hashes grouped by first slot make this pass walk memory almost in order.
  for (const std::uint64_t x : hashes) {
    const fuse_slots<A> p = fuse_positions<A>(x, l);
    for (std::uint8_t j = 0; j < A; ++j) {
      const std::uint8_t d = static_cast<std::uint8_t>(degree[p.at[j]] + 4);
      if (d < 4) return false;  // more than 63 keys on one slot: the 8-bit counter would wrap
      degree[p.at[j]] = d ^ j;
      xor_hash[p.at[j]] ^= x;
      // Two keys on a slot and a zero XOR: their hashes are equal and can never be peeled, so
      // fail now rather than after the peel (the caller then removes the duplicates).
      if (xor_hash[p.at[j]] == 0 && (d >> 2) == 2) [[unlikely]] {
        return false;
      }
    }
  }
  // Peel, scanning the slots in order and following each chain of newly single-key slots at once
  // (depth first, on a stack): a key's slots lie within consecutive segments, so the chain stays
  // in memory that the scan has just touched.
  s.stack.resize(std::max<std::size_t>(s.stack.size(), 1024));
  s.order.resize(n);
  s.order_index.resize(n);
  std::uint64_t* stack = s.stack.data();
  std::uint64_t* const order = s.order.data();
  std::uint8_t* const order_index = s.order_index.data();
  std::uint64_t peeled = 0;
  for (std::uint64_t start = 0; start < m; ++start) {
    if ((degree[start] >> 2) != 1) continue;
    std::uint64_t depth = 0;
    stack[depth++] = start;
    while (depth != 0) {
      const std::uint64_t i = stack[--depth];
      if ((degree[i] >> 2) != 1) continue;  // emptied since it was pushed
      if (depth + A > s.stack.size()) {     // room for the writes below
        s.stack.resize(2 * s.stack.size());
        stack = s.stack.data();
      }
      const std::uint64_t x = xor_hash[i];
      const std::uint8_t owned = degree[i] & 3;
      order[peeled] = x;
      order_index[peeled] = owned;
      ++peeled;
      const fuse_slots<A> p = fuse_positions<A>(x, l);
      for (std::uint8_t j = 0; j < A; ++j) {
        const std::uint64_t q = p.at[j];
        degree[q] = static_cast<std::uint8_t>((degree[q] - 4) ^ j);
        xor_hash[q] ^= x;
        // Written always, kept only if q now holds one key: a branch here is a coin toss.
        stack[depth] = q;
        depth += (degree[q] >> 2) == 1 ? 1 : 0;
      }
    }
  }
  if (peeled != n) return false;
  // Assign, last peeled first. When a key is assigned its other slots are final (a slot is only
  // ever owned by a key peeled after every other key on it, so those owners came earlier in this
  // loop), and its owned slot is written by it alone and never again.
  for (std::uint64_t k = n; k-- > 0;) {
    const std::uint64_t x = order[k];
    const fuse_slots<A> p = fuse_positions<A>(x, l);
    const std::uint8_t owned = order_index[k];
    std::uint32_t v = fuse_fingerprint<W, S>(x, c);
    for (std::uint32_t j = 0; j < A; ++j) {
      if (j != owned) v ^= c.load(slots, p.at[j]);
    }
    c.store(slots, p.at[owned], v);
  }
  return true;
}

// What a successful construction found.
struct fuse_result {
  fuse_layout layout;
  std::uint64_t seed = 0;
  std::uint64_t distinct = 0;  // distinct keys (by their 64-bit hash under `seed`)
};

// Which layouts a build may use: three slots per key only (8- and 16-bit filters built with an
// explicit width, as they always were), or the smaller of three and four (fuse_smallest_layout).
enum class fuse_arity : std::uint8_t { three, smallest };

inline fuse_layout fuse_layout_of(std::uint64_t n, fuse_arity arity) {
  return arity == fuse_arity::three ? fuse_layout_for(n, 3) : fuse_smallest_layout(n);
}

// One attempt over s.hashes (distinct or not) with layout l, in l's slot storage and arity.
template <fuse_scheme S>
bool fuse_try_layout(std::span<const std::uint64_t> hashes, const fuse_layout& l,
                     std::uint32_t bits, unsigned char* slots, fuse_scratch& s) {
  return with_fuse_types(l, bits, S, [&]<std::uint32_t W, fuse_scheme, std::uint32_t A>() {
    return fuse_try_build<W, S, A>(hashes, l, fuse_codec<W>{bits}, slots, s);
  });
}

// Builds the fingerprint array of r = `bits` bits for n keys, key_hash(i) being the 128-bit hash
// of key i, trying seeds fuse_attempt_seed(0), (1), ... until one peels. `allocate(layout)`
// returns zeroed storage of fuse_payload_bytes(layout, bits). Duplicates are not looked for
// first: an attempt that peels all n hashes has proved them distinct. When one fails, the hashes
// are sorted and equal ones removed; if any were, the same seed is tried again on the distinct
// hashes with their layout (and later attempts dedup first), so the result is exactly that of a
// build over the distinct hashes. Throws std::runtime_error when `max_attempts` attempts all fail.
template <fuse_scheme S, class KeyHash, class Allocate>
fuse_result fuse_build(std::uint64_t n, KeyHash&& key_hash, std::uint32_t bits, fuse_arity arity,
                       Allocate&& allocate, std::uint32_t max_attempts = fuse_max_attempts) {
  fuse_scratch_lease lease;
  fuse_scratch& s = lease.get();
  bool duplicates = false;  // an earlier attempt found equal hashes: sort and dedup every attempt
  for (std::uint32_t attempt = 0; attempt < max_attempts; ++attempt) {
    const std::uint64_t seed = fuse_attempt_seed(attempt);
    fuse_layout l = fuse_layout_of(n, arity);
    if (l.array_length == 0) return {l, 0, 0};
    fuse_hash_grouped<S>(n, key_hash, seed, l, s);
    if (!duplicates && fuse_try_layout<S>(s.hashes, l, bits, allocate(l), s)) return {l, seed, n};
    // Failed: equal hashes (duplicate keys) or a bad seed. The distinct hashes decide the layout.
    sort_hashes(s.hashes, s.sort_tmp);
    s.hashes.erase(std::unique(s.hashes.begin(), s.hashes.end()), s.hashes.end());
    if (s.hashes.size() == n && !duplicates) continue;  // the same keys just failed
    duplicates = true;
    l = fuse_layout_of(s.hashes.size(), arity);
    if (fuse_try_layout<S>(s.hashes, l, bits, allocate(l), s)) {
      return {l, seed, s.hashes.size()};
    }
  }
  throw std::runtime_error("bloomery: static_filter construction failed in all " +
                           std::to_string(max_attempts) + " attempts (seeds) for " +
                           std::to_string(n) +
                           " keys; each attempt succeeds with high probability, so this should "
                           "not happen: please report it");
}

// The same over the keys' 128-bit hashes.
template <fuse_scheme S, class Allocate>
fuse_result fuse_build(std::span<const hash128> keys, std::uint32_t bits, fuse_arity arity,
                       Allocate&& allocate, std::uint32_t max_attempts = fuse_max_attempts) {
  return fuse_build<S>(
      keys.size(), [&](std::uint64_t i) { return keys[i]; }, bits, arity, allocate, max_attempts);
}

// Keys per batch in may_contain_many: each key's slots are prefetched, so a batch keeps up to
// 4 * 64 independent loads in flight while its hashes are computed.
inline constexpr std::size_t fuse_batch_size = 64;

// Batched probe: prefetch each key's slots, then check them. Same answers as fuse_probe.
template <std::uint32_t W, fuse_scheme S, std::uint32_t A>
struct fuse_batch_probe {
  std::uint64_t seed;
  const unsigned char* slots;
  const fuse_layout& l;
  fuse_codec<W> c;
  std::uint64_t locate(hash128 h) const noexcept { return fuse_hash<S>(h, seed); }
  [[gnu::always_inline]] void prefetch(std::uint64_t x) const noexcept {
    for (const std::uint64_t at : fuse_positions<A>(x, l).at) {
      detail::prefetch(slots + (W == 0 ? at * c.bits() / 8 : at * (W / 8)));
    }
  }
  bool probe(std::uint64_t x) const noexcept { return fuse_probe<W, S, A>(slots, l, c, x); }
};

template <std::uint32_t W, fuse_scheme S, std::uint32_t A, class Keys, class Out>
std::size_t fuse_probe_many(const hasher& hash, std::uint64_t seed, const unsigned char* slots,
                            const fuse_layout& l, fuse_codec<W> c, const Keys& keys, Out& out) {
  return batched_queries<fuse_batch_size>(hash, fuse_batch_probe<W, S, A>{seed, slots, l, c},
                                          fuse_payload_bytes(l, c.bits()) >= batch_min_bytes, keys,
                                          out);
}

}  // namespace bloomery::detail
