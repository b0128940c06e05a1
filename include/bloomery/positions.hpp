// Where a key goes in each kind of filter: the bits, block, counters, buckets or slots its hash
// maps to, computed by the same functions the filters probe with. For teaching (`bloomery
// explain`), debugging and tests; a filter's own verbs never need them.
//
//   positions(bloom, key)     the k bit indexes in [0, bit_count())
//   positions(blocked, key)   the 512-bit block and the k bit offsets inside it
//   positions(counting, key)  the k counter indexes in [0, counter_count())
//   positions(cuckoo, key)    the fingerprint, the two buckets, and how i2 follows from i1
//   positions(scalable, key)  each sub-filter's k bit indexes
//   positions(static, key)    the fingerprint and the three or four slot indexes
//   positions(scalable_cuckoo, key)  the fingerprint and its two buckets in each sub-filter
//
// Each accepts the owning filter or its read-only view (a mapped file, a scalable sub-filter).
// Indexes are in probe order and may repeat (two probes can land on the same bit or counter).
#pragma once

#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "bloomery/blocked_bloom_filter.hpp"
#include "bloomery/bloom_filter.hpp"
#include "bloomery/counting_bloom_filter.hpp"
#include "bloomery/cuckoo_filter.hpp"
#include "bloomery/hash.hpp"
#include "bloomery/scalable_bloom_filter.hpp"
#include "bloomery/scalable_cuckoo_filter.hpp"
#include "bloomery/static_filter.hpp"

namespace bloomery {

// F is the filter type X or its read-only view X::view.
template <class F, class X>
concept filter_or_view_of = std::same_as<F, X> || std::same_as<F, typename X::view>;

// Classic Bloom filter: bit i of words() is bit i % 64 of word i / 64.
struct bloom_positions {
  std::vector<std::uint64_t> bits;  // k indexes in [0, bit_count())
  friend bool operator==(const bloom_positions&, const bloom_positions&) = default;
};

// Blocked Bloom filter: one block (a 64-byte cache line) and k bits inside it.
struct blocked_positions {
  static constexpr std::uint32_t block_bits = detail::block_bits;
  std::uint64_t block = 0;          // in [0, bit_count() / block_bits)
  std::vector<std::uint32_t> bits;  // k offsets in [0, block_bits) within the block
  // The index in the filter's whole bit array (as for bloom_positions) of probe i's bit.
  std::uint64_t bit_index(std::size_t i) const { return block * block_bits + bits.at(i); }
  friend bool operator==(const blocked_positions&, const blocked_positions&) = default;
};

// Counting Bloom filter: the classic filter's k positions, each a counter.
struct counting_positions {
  std::vector<std::uint64_t> counters;  // k indexes in [0, counter_count())
  friend bool operator==(const counting_positions&, const counting_positions&) = default;
};

// Cuckoo filter: a fingerprint that lives in bucket i1 or i2 (or the stash). The pairing rule is
// alt(i) = (t - i) mod buckets with t = pairing_target; it maps i2 back to i1, so a stored
// fingerprint and either bucket give the other. When (t - i1) mod buckets is i1 itself in a table
// of even bucket count, the rule pairs i1 with i1 +- buckets / 2 instead (so a key always has two
// buckets); in a table of odd bucket count i2 may equal i1.
struct cuckoo_positions {
  std::uint64_t fingerprint = 0;     // fingerprint_bits() bits, never 0 (0 marks an empty slot)
  std::uint64_t i1 = 0;              // the key's hash mapped onto the buckets
  std::uint64_t i2 = 0;              // alt(i1)
  std::uint64_t pairing_target = 0;  // t: H(fingerprint) mapped onto the buckets
  bool partner = false;              // i2 is i1 +- buckets / 2, not (t - i1) mod buckets
  friend bool operator==(const cuckoo_positions&, const cuckoo_positions&) = default;
};

// Scalable Bloom filter: sub_filters[i] is the key's positions in sub_filter(i).
struct scalable_positions {
  std::vector<bloom_positions> sub_filters;
  friend bool operator==(const scalable_positions&, const scalable_positions&) = default;
};

// Scalable cuckoo filter: the key's fingerprint, the same in every sub-filter, and its two buckets
// in each (sub_filters[i], in [0, sub_filter(i).buckets)). Dropping the low log2(e^i / e^j) bits
// of sub-filter i's buckets gives sub-filter j's (docs/scalable-cuckoo-filter.md, "Nested
// positions"); sub-filter 0's are positions(cuckoo_filter)'s i1 and i2 for the same table.
struct scalable_cuckoo_positions {
  struct buckets {
    std::uint64_t i1 = 0;  // the key's hash mapped onto the sub-filter's buckets
    std::uint64_t i2 = 0;  // the other bucket, by the sub-filter's pairing rule
    friend bool operator==(const buckets&, const buckets&) = default;
  };
  std::uint64_t fingerprint = 0;  // fingerprint_bits() bits, never 0
  std::vector<buckets> sub_filters;
  friend bool operator==(const scalable_cuckoo_positions&,
                         const scalable_cuckoo_positions&) = default;
};

// Static (binary fuse) filter: the filter answers "possibly present" exactly when the XOR of the
// slots' values (slot_value) equals the fingerprint.
struct static_positions {
  std::uint64_t fingerprint = 0;     // fingerprint_bits() bits (0 is a valid fingerprint)
  std::vector<std::uint64_t> slots;  // arity() indexes in [0, array_length()), one in each of
                                     // that many consecutive segments; none for the empty filter
  friend bool operator==(const static_positions&, const static_positions&) = default;
};

namespace detail {
// The k positions in [0, m) of the classic and counting filters (and each scalable sub-filter).
inline std::vector<std::uint64_t> double_hash_positions(hash128 h, std::uint64_t m,
                                                        std::uint32_t k) {
  std::vector<std::uint64_t> out;
  out.reserve(k);
  for_each_position(h, m, k, [&](std::uint64_t i) { out.push_back(i); });
  return out;
}
}  // namespace detail

template <filter_or_view_of<bloom_filter> F, hashable_key K>
bloom_positions positions(const F& f, const K& key) {
  return {detail::double_hash_positions(hash_key(f.hash(), key), f.bit_count(), f.hash_count())};
}

template <filter_or_view_of<blocked_bloom_filter> F, hashable_key K>
blocked_positions positions(const F& f, const K& key) {
  const detail::block_slot at =
      detail::locate(hash_key(f.hash(), key), f.bit_count() / detail::block_bits);
  blocked_positions p;
  p.block = at.block;
  p.bits.reserve(f.hash_count());
  for (std::uint32_t i = 0; i < f.hash_count(); ++i) {
    p.bits.push_back(detail::bit_in_block(at.seed, i));
  }
  return p;
}

template <filter_or_view_of<counting_bloom_filter> F, hashable_key K>
counting_positions positions(const F& f, const K& key) {
  return {
      detail::double_hash_positions(hash_key(f.hash(), key), f.counter_count(), f.hash_count())};
}

template <filter_or_view_of<cuckoo_filter> F, hashable_key K>
cuckoo_positions positions(const F& f, const K& key) {
  const std::uint64_t buckets = f.bucket_count();
  const detail::cuckoo_position at =
      detail::cuckoo_locate(hash_key(f.hash(), key), f.fingerprint_bits(), buckets);
  cuckoo_positions p;
  p.fingerprint = at.fp;
  p.i1 = at.i1;
  p.i2 = at.i2;
  p.pairing_target = detail::reduce(detail::cuckoo_fingerprint_mix(at.fp), buckets);
  const std::uint64_t unfolded =
      p.pairing_target >= at.i1 ? p.pairing_target - at.i1 : p.pairing_target + buckets - at.i1;
  p.partner = unfolded != at.i2;
  return p;
}

template <filter_or_view_of<scalable_bloom_filter> F, hashable_key K>
scalable_positions positions(const F& f, const K& key) {
  scalable_positions p;
  p.sub_filters.reserve(f.sub_filter_count());
  for (std::size_t i = 0; i < f.sub_filter_count(); ++i) {
    p.sub_filters.push_back(positions(f.sub_filter(i), key));
  }
  return p;
}

template <filter_or_view_of<scalable_cuckoo_filter> F, hashable_key K>
scalable_cuckoo_positions positions(const F& f, const K& key) {
  const hash128 h = hash_key(f.hash(), key);
  const std::uint64_t base = f.sub_filter(0).buckets;
  const auto step = static_cast<std::uint32_t>(std::countr_zero(f.expansion()));
  scalable_cuckoo_positions p;
  for (std::size_t i = 0; i < f.sub_filter_count(); ++i) {
    // The fingerprint and i1 as a cuckoo table of this size has them; i2 by the nested rule.
    const detail::cuckoo_position at =
        detail::cuckoo_locate(h, f.fingerprint_bits(), f.sub_filter(i).buckets);
    const detail::scalable_cuckoo_pairing alt{base, step * static_cast<std::uint32_t>(i)};
    p.fingerprint = at.fp;
    p.sub_filters.push_back({at.i1, alt(at.i1, at.fp)});
  }
  return p;
}

template <filter_or_view_of<static_filter> F, hashable_key K>
static_positions positions(const F& f, const K& key) {
  static_positions p;
  const detail::fuse_layout layout{f.segment_length(), f.segment_count(), f.array_length(),
                                   f.arity()};
  const std::uint32_t bits = f.fingerprint_bits();
  detail::with_fuse_types(layout, bits, detail::fuse_scheme_of(f.hash().algorithm()),
                          [&]<std::uint32_t W, detail::fuse_scheme S, std::uint32_t A>() {
                            const std::uint64_t x = detail::fuse_hash<S>(hash_key(f.hash(), key),
                                                                         f.construction_seed());
                            p.fingerprint =
                                detail::fuse_fingerprint<W, S>(x, detail::fuse_codec<W>{bits});
                            if (f.array_length() == 0) return;  // the empty filter has no slots
                            const auto at = detail::fuse_positions<A>(x, layout);
                            p.slots.assign(std::begin(at.at), std::end(at.at));
                          });
  return p;
}

// The cuckoo pairing rule alt() of cuckoo_positions: the other bucket of a fingerprint stored in
// `bucket`.
template <filter_or_view_of<cuckoo_filter> F>
std::uint64_t alternate_bucket(const F& f, std::uint64_t bucket, std::uint64_t fingerprint) {
  return detail::cuckoo_alt_bucket(bucket, fingerprint, f.bucket_count());
}

// The four slots of a cuckoo filter's bucket b (< bucket_count()), 0 for an empty slot; decoded
// when the buckets are semi-sorted (then in ascending order).
inline std::array<std::uint64_t, cuckoo_filter::bucket_slots> bucket_fingerprints(
    const cuckoo_filter& f, std::uint64_t b) {
  const detail::cuckoo_lanes lanes(f.fingerprint_bits(), f.semi_sorted());
  const std::uint64_t bucket = detail::read_bucket(f.words().data(), lanes, b);
  std::array<std::uint64_t, cuckoo_filter::bucket_slots> slots{};
  for (std::uint32_t j = 0; j < slots.size(); ++j) slots[j] = lanes.get(bucket, j);
  return slots;
}

// Whether the cuckoo filter's stash holds the key of `p` (its fingerprint, for one of its buckets).
template <filter_or_view_of<cuckoo_filter> F>
bool stash_holds(const F& f, const cuckoo_positions& p) {
  return f.stash().holds(detail::cuckoo_position{p.i1, p.i2, p.fingerprint});
}

// The value in slot i (< array_length()) of a static filter.
template <filter_or_view_of<static_filter> F>
std::uint64_t slot_value(const F& f, std::uint64_t i) {
  const auto* slots = reinterpret_cast<const unsigned char*>(f.fingerprint_bytes().data());
  const detail::fuse_layout layout{f.segment_length(), f.segment_count(), f.array_length(),
                                   f.arity()};
  const std::uint32_t bits = f.fingerprint_bits();
  return detail::with_fuse_types(layout, bits, detail::fuse_scheme::folded,
                                 [&]<std::uint32_t W, detail::fuse_scheme, std::uint32_t>() {
                                   return std::uint64_t{detail::fuse_codec<W>{bits}.load(slots, i)};
                                 });
}

}  // namespace bloomery
