// The static filter: a binary fuse filter (Graf & Lemire 2022) for sets that never change, such as
// the keys of an SSTable. Built once from the complete key set at any rate 2^-r (r = 1..32) with
// about 1.08 r bits per key from 10^5 keys on (four slots per key): 7.5 bits per key at 1%, where
// a classic Bloom filter takes 9.6. Three or four memory accesses per query.
//
// There is no insert, clear or merge: the structure is solved for its key set as a whole, and a
// new set means a new build. docs/static-filter.md documents the construction and the numbers.
//
// Thread safety: a built filter is immutable; any number of threads may query it (or its mapped
// view) at once.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ranges>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bloomery/bit_array.hpp"
#include "bloomery/detail/core_common.hpp"
#include "bloomery/detail/filter_file.hpp"
#include "bloomery/detail/filter_view.hpp"
#include "bloomery/detail/static_core.hpp"
#include "bloomery/format.hpp"
#include "bloomery/hash.hpp"
#include "bloomery/sizing.hpp"
#include "bloomery/stats.hpp"

namespace bloomery {

// An explicit fingerprint width: three slots per key of whole bytes, the fastest queries (one
// plain load per slot) for about 1.13 times the bits of the width; its false-positive rate is
// 2^-bits. build(keys, fpr) picks any width and the smaller layout instead.
enum class fingerprint_width : std::uint32_t {
  bits8 = 8,    // FPR 2^-8  = 0.390625%, about 9 bits per key
  bits16 = 16,  // FPR 2^-16 = 0.0015259%, about 18 bits per key
};

// The lowest false-positive rate a static filter delivers: 2^-32 (32-bit fingerprints).
inline constexpr double static_filter_min_fpr = 0x1p-32;

namespace detail {

// Everything a static filter is besides its fingerprints.
struct static_meta {
  std::uint32_t fingerprint_bits = 8;
  fuse_layout layout;
  std::uint64_t seed = 0;       // the construction seed that succeeded
  std::uint64_t key_count = 0;  // distinct keys built from
  double target_fpr = 1.0 / 256.0;
  std::uint64_t inserted = 0;  // keys handed to build, duplicates included
  hasher hash;
  // Three 8-bit slots under the default (intmix) hash, binary fuse 8's layout: decided once (at
  // build and load), so may_contain tests this flag instead of four fields.
  bool inline_bytes8 = false;
};

inline void set_query_path(static_meta& m) noexcept {
  m.inline_bytes8 = m.layout.array_length != 0 && m.layout.arity == 3 && m.fingerprint_bits == 8 &&
                    fuse_scheme_of(m.hash.algorithm()) == fuse_scheme::folded;
}

// Fingerprint width for a target FPR: the fewest bits r with 2^-r <= fpr; below 2^-32 is invalid.
inline std::uint32_t static_bits_for(double fpr) {
  check_fpr(fpr);
  if (fpr < static_filter_min_fpr) {
    invalid("fpr", format_value(fpr),
            "a static_filter delivers 2^-r for r = 1..32, so the allowed range is [2^-32 "
            "(2.3283064365386963e-10), 1)");
  }
  std::uint32_t bits = 1;
  while (std::ldexp(1.0, -static_cast<int>(bits)) > fpr) ++bits;
  return bits;
}

inline std::uint32_t static_bits_of(fingerprint_width w) {
  const auto bits = static_cast<std::uint32_t>(w);
  if (bits != 8 && bits != 16) {
    invalid("fingerprint bits", std::to_string(bits), "allowed values are 8 and 16");
  }
  return bits;
}

// The read-only verbs, written once for the owning filter and its mapped view. Derived supplies
// `meta_` and `storage()`.
template <class Derived>
class static_queries {
 public:
  template <hashable_key K>
  bool may_contain(const K& key) const noexcept {
    const static_meta& m = meta();
    // Inline only for binary fuse 8's layout, behind one flag; every other layout is one pure
    // call (a second inline layout slows the first). The fields are read before the test, on
    // every path, so that with the call pure a caller's loop reads them once, before the loop:
    // reloaded per key, the query was 20-40% slower beyond the cache (docs/static-filter.md).
    const fuse_layout l = m.layout;
    const std::uint64_t seed = m.seed, key_seed = m.hash.seed();
    const unsigned char* const s = slots();
    if (m.inline_bytes8) [[likely]] {
      return fuse_probe<8, fuse_scheme::folded, 3>(
          s, l, fuse_codec<8>{},
          fuse_hash<fuse_scheme::folded>(hash_key(hasher::intmix_fn{key_seed}, key), seed));
    }
    if constexpr (builtin_key<K>) {
      return may_contain_pure<K>(key);
    } else {
      return may_contain_out_of_line<K>(key);
    }
  }

  // Answers for many keys at once: hashes a batch, prefetches each key's three slots, then
  // probes (faster on filters larger than the cache). `out[i]` receives may_contain(keys[i]);
  // returns the number of positives. Throws std::invalid_argument if `out` is shorter than `keys`.
  template <std::ranges::random_access_range Keys, class Out>
  std::size_t may_contain_many(const Keys& keys, Out&& out) const {
    check_batch_sizes(keys, out);
    const static_meta& m = meta();
    if (m.layout.array_length == 0) {
      for (std::size_t i = 0; i < std::ranges::size(keys); ++i) out[i] = false;
      return 0;
    }
    return with_fuse_types(m.layout, m.fingerprint_bits, fuse_scheme_of(m.hash.algorithm()),
                           [&]<std::uint32_t W, fuse_scheme S, std::uint32_t A>() {
                             return fuse_probe_many<W, S, A>(m.hash, m.seed, slots(), m.layout,
                                                             fuse_codec<W>{m.fingerprint_bits},
                                                             keys, out);
                           });
  }

  // Distinct keys the filter was built from (duplicates removed). A static filter holds exactly
  // its key set, so its capacity and its count are both this number.
  std::uint64_t key_count() const noexcept { return meta().key_count; }
  std::uint64_t approximate_count() const noexcept { return meta().key_count; }
  std::uint64_t capacity() const noexcept { return meta().key_count; }
  // Keys handed to build, duplicates included.
  std::uint64_t inserted() const noexcept { return meta().inserted; }
  // The FPR asked for at build time (2^-f when the width was given explicitly).
  double target_fpr() const noexcept { return meta().target_fpr; }
  // The rate this filter delivers: 2^-r for an absent key (0 for the empty filter, which answers
  // "no" to everything).
  double estimated_fpr() const noexcept {
    if (meta().layout.array_length == 0) return 0.0;
    return std::ldexp(1.0, -static_cast<int>(meta().fingerprint_bits));
  }
  // r: 1 to 32 (8 or 16 for an explicit fingerprint_width).
  std::uint32_t fingerprint_bits() const noexcept { return meta().fingerprint_bits; }
  // Slots per key: 3, or 4 (built from a target rate wherever four take fewer slots: at nearly
  // every key count).
  std::uint32_t arity() const noexcept { return meta().layout.arity; }
  std::uint32_t segment_length() const noexcept { return meta().layout.segment_length; }
  std::uint64_t segment_count() const noexcept { return meta().layout.segment_count; }
  // Fingerprint slots: (segment_count + arity - 1) * segment_length.
  std::uint64_t array_length() const noexcept { return meta().layout.array_length; }
  std::uint64_t construction_seed() const noexcept { return meta().seed; }
  const hasher& hash() const noexcept { return meta().hash; }
  // The fingerprint array rounded up to whole 64-byte lines (the file's payload).
  std::uint64_t size_in_bytes() const noexcept {
    return fuse_payload_bytes(meta().layout, meta().fingerprint_bits);
  }
  // The fingerprint array as stored: slots packed from bit 0 (little-endian bytes), then zero
  // padding.
  std::span<const std::byte> fingerprint_bytes() const noexcept {
    return {reinterpret_cast<const std::byte*>(slots()), size_in_bytes()};
  }

  filter_stats stats() const {
    filter_stats s = common_stats(*this, filter_kind::static_filter);
    s.bits = meta().layout.array_length * meta().fingerprint_bits;
    s.params = {{"fingerprint_bits", std::uint64_t{meta().fingerprint_bits}},
                {"arity", std::uint64_t{meta().layout.arity}},
                {"segment_length", std::uint64_t{meta().layout.segment_length}},
                {"segment_count", std::uint64_t{meta().layout.segment_count}},
                {"array_length", std::uint64_t{meta().layout.array_length}}};
    return s;
  }

 private:
  const static_meta& meta() const noexcept { return as_derived<Derived>(*this).meta_; }
  const unsigned char* slots() const noexcept { return as_derived<Derived>(*this).storage(); }

  // Integers by value: a reference would make the caller store each key to memory.
  template <class K>
  using key_arg = std::conditional_t<std::is_arithmetic_v<K>, K, const K&>;

  // Every filter but may_contain's inline one, empty included: one call, then the probe inline.
  // Pure for bloomery's own key types (their hashing only reads), so a caller's loop need not
  // reload the filter's fields around it; not for a user's key_hash, which may count its calls.
  template <hashable_key K>
  [[gnu::noinline, gnu::pure]] bool may_contain_pure(key_arg<K> key) const noexcept {
    return probe_any<K>(key);
  }
  template <hashable_key K>
  [[gnu::noinline]] bool may_contain_out_of_line(const K& key) const noexcept {
    return probe_any<K>(key);
  }
  template <hashable_key K>
  bool probe_any(key_arg<K> key) const noexcept {
    const static_meta& m = meta();
    if (m.layout.array_length == 0) return false;  // the empty set
    return with_fuse_types(m.layout, m.fingerprint_bits, fuse_scheme_of(m.hash.algorithm()),
                           [&]<std::uint32_t W, fuse_scheme S, std::uint32_t A>() {
                             // Folded means the intmix algorithm (fuse_scheme_of): hash with its
                             // function object, and the hasher's own test of its mode is saved.
                             const hash128 h = S == fuse_scheme::folded
                                                   ? hash_key(hasher::intmix_fn{m.hash.seed()}, key)
                                                   : hash_key(m.hash, key);
                             return fuse_probe<W, S, A>(slots(), m.layout,
                                                        fuse_codec<W>{m.fingerprint_bits},
                                                        fuse_hash<S>(h, m.seed));
                           });
  }
};

using static_file = filter_file<static_filter, filter_kind::static_filter, static_queries,
                                static_meta, unsigned char>;
}  // namespace detail

class static_filter : public detail::static_queries<static_filter>, public detail::static_file {
 public:
  // The empty filter: answers "no" to every key.
  static_filter() = default;

  // Builds the filter for `keys` (any random-access range of hashable keys; duplicates are fine)
  // at false-positive rate `fpr`: r-bit fingerprints for the fewest r with 2^-r <= fpr (the filter
  // then delivers 2^-r), in the smaller of the three- and four-slot layouts. fpr must lie in
  // [2^-32, 1). Throws std::runtime_error only if 100 construction attempts fail in a row
  // (practically never). The calling thread keeps the construction's scratch memory, up to
  // 32 MiB, for its next build (docs/static-filter.md, "Build cost").
  template <std::ranges::random_access_range Keys>
  requires std::ranges::sized_range<Keys> && hashable_key<std::ranges::range_value_t<Keys>>
  static static_filter build(const Keys& keys, double fpr, hasher h = {}) {
    const std::uint32_t bits = detail::static_bits_for(fpr);
    return build_keys(keys, bits, detail::fuse_arity::smallest, fpr, std::move(h));
  }
  // Builds with an explicit fingerprint width, three slots per key of whole bytes (the fastest
  // queries); the target FPR is then 2^-bits.
  template <std::ranges::random_access_range Keys>
  requires std::ranges::sized_range<Keys> && hashable_key<std::ranges::range_value_t<Keys>>
  static static_filter build(const Keys& keys, fingerprint_width width, hasher h = {}) {
    const std::uint32_t bits = detail::static_bits_of(width);
    return build_keys(keys, bits, detail::fuse_arity::three,
                      std::ldexp(1.0, -static_cast<int>(bits)), std::move(h));
  }

  // The construction scratch the calling thread keeps for its next build, in bytes: 0 before
  // its first build and after release_build_scratch(), at most 32 MiB after a build returns.
  static std::uint64_t kept_build_scratch_bytes() noexcept {
    return detail::fuse_scratch_lease::kept_bytes();
  }
  // Frees that scratch, for a thread done building filters for a while; its next build
  // allocates afresh. From inside a build on the same thread (a key hash), it frees nothing.
  static void release_build_scratch() noexcept { detail::fuse_scratch_lease::release(); }

  // What build() would cost for `t.capacity` distinct keys at `t.fpr`, without building.
  static filter_plan plan(target t) {
    detail::check_capacity(t.capacity);
    check_key_count(t.capacity);
    const std::uint32_t bits = detail::static_bits_for(t.fpr);
    const detail::fuse_layout l = detail::fuse_smallest_layout(t.capacity);
    const std::uint64_t bytes = detail::fuse_payload_bytes(l, bits);
    return {bytes, 8.0 * static_cast<double>(bytes) / static_cast<double>(t.capacity),
            std::ldexp(1.0, -static_cast<int>(bits)),
            "fingerprint=" + std::to_string(bits) + " arity=" + std::to_string(l.arity) +
                " segment_length=" + std::to_string(l.segment_length) + " segments=" +
                std::to_string(l.segment_count) + " slots=" + std::to_string(l.array_length)};
  }

  // Same shape, construction seed, hashing and fingerprints: the two answer every query alike.
  // (target_fpr and inserted are not compared.)
  // The payload as whole words (the fingerprint slots, then zero padding), as every filter's.
  std::span<const std::uint64_t> words() const noexcept { return slots_.words(); }

  friend bool operator==(const static_filter& a, const static_filter& b) noexcept {
    return a.meta_.fingerprint_bits == b.meta_.fingerprint_bits &&
           a.meta_.layout == b.meta_.layout && a.meta_.seed == b.meta_.seed &&
           a.meta_.key_count == b.meta_.key_count && a.meta_.hash == b.meta_.hash &&
           a.slots_ == b.slots_;
  }

 private:
  friend detail::static_queries<static_filter>;
  friend detail::static_file;
  static_filter(detail::static_meta m, bit_array slots)
      : slots_(std::move(slots)), meta_(std::move(m)) {}

  const unsigned char* storage() const noexcept {
    return reinterpret_cast<const unsigned char*>(slots_.data());
  }

  static void check_key_count(std::uint64_t n) {
    if (n > detail::fuse_max_keys) {
      detail::invalid("key count", std::to_string(n), "allowed range is [0, 2^40]");
    }
  }

  // The construction hashes the keys itself, once per attempt, so no array of their 128-bit
  // hashes (16 bytes a key) is ever written.
  template <class Keys>
  static static_filter build_keys(const Keys& keys, std::uint32_t bits, detail::fuse_arity arity,
                                  double target_fpr, hasher h) {
    const std::uint64_t inserted = std::ranges::size(keys);
    check_key_count(inserted);
    static_filter s;
    // Zeroed storage for an attempt's layout; a failed attempt leaves it untouched, so it is
    // reused while the layout stays the same.
    const auto allocate = [&](const detail::fuse_layout& l) {
      const std::uint64_t bytes = detail::fuse_payload_bytes(l, bits);
      if (s.slots_.size_in_bytes() != bytes) s.slots_ = bit_array(bytes * 8);
      return reinterpret_cast<unsigned char*>(s.slots_.data());
    };
    const auto key = [first = std::ranges::begin(keys)](std::uint64_t i) -> decltype(auto) {
      return first[static_cast<std::ranges::range_difference_t<Keys>>(i)];
    };
    // Folded means the intmix algorithm (fuse_scheme_of): hash with its function object, and the
    // hasher's own test of its mode is saved.
    const detail::fuse_result r =
        detail::fuse_scheme_of(h.algorithm()) == detail::fuse_scheme::folded
            ? detail::fuse_build<detail::fuse_scheme::folded>(
                  inserted,
                  [&, fn = hasher::intmix_fn{h.seed()}](std::uint64_t i) {
                    return hash_key(fn, key(i));
                  },
                  bits, arity, allocate)
            : detail::fuse_build<detail::fuse_scheme::mixed>(
                  inserted, [&](std::uint64_t i) { return hash_key(h, key(i)); }, bits, arity,
                  allocate);
    if (r.layout.array_length == 0) s.slots_ = bit_array();
    s.meta_ = {bits, r.layout, r.seed, r.distinct, target_fpr, inserted, std::move(h)};
    detail::set_query_path(s.meta_);
    return s;
  }

  // Parameter block, see docs/static-filter.md: 48 bytes for three slots of 8 or 16 bits (the
  // layout every older reader knows); any other layout appends u32 block version 2 and u32 arity
  // (56 bytes), which older readers refuse by its size rather than misread.
  static constexpr std::uint32_t block_any_width = 2;
  static std::vector<std::byte> params(const detail::static_meta& m) {
    detail::params_writer w;
    w.add<std::uint32_t>(m.fingerprint_bits)
        .add<std::uint32_t>(m.layout.segment_length)
        .add<std::uint64_t>(m.layout.segment_count)
        .add<std::uint64_t>(m.layout.array_length)
        .add<std::uint64_t>(m.seed)
        .add<std::uint64_t>(m.key_count)
        .add<double>(m.target_fpr);
    if (!detail::fuse_byte_slots(m.layout, m.fingerprint_bits)) {
      w.add<std::uint32_t>(block_any_width).add<std::uint32_t>(m.layout.arity);
    }
    return w.take();
  }

  // Validates the parameter block against the payload before anything trusts either.
  static detail::static_meta read_meta(const detail::parsed_file& f) {
    using detail::fail;
    detail::params_reader r(f.params);
    detail::static_meta m;
    m.fingerprint_bits = r.read<std::uint32_t>("fingerprint bits");
    m.layout.segment_length = r.read<std::uint32_t>("segment length");
    m.layout.segment_count = r.read<std::uint64_t>("segment count");
    m.layout.array_length = r.read<std::uint64_t>("array length");
    m.seed = r.read<std::uint64_t>("construction seed");
    m.key_count = r.read<std::uint64_t>("key count");
    m.target_fpr = r.read<double>("target fpr");
    const bool any_width = !r.at_end();
    if (any_width) {
      const auto version = r.read<std::uint32_t>("block version");
      if (version != block_any_width) {
        fail("static parameter block version " + std::to_string(version) +
             " is unknown (this build reads 2)");
      }
      m.layout.arity = r.read<std::uint32_t>("arity");
    }
    r.expect_end("static");
    m.inserted = f.element_count;
    m.hash = f.hash;
    const std::uint32_t bits = m.fingerprint_bits;
    auto& l = m.layout;
    if (!any_width) {
      if (bits != 8 && bits != 16) {
        fail("fingerprint bits must be 8 or 16, not " + std::to_string(bits));
      }
    } else {
      if (bits < 1 || bits > detail::fuse_max_bits) {
        fail("fingerprint bits must lie in [1, 32], not " + std::to_string(bits));
      }
      if (l.arity != 3 && l.arity != 4)
        fail("arity must be 3 or 4, not " + std::to_string(l.arity));
      if (detail::fuse_byte_slots(l, bits)) {
        fail("three slots of 8 or 16 bits take the 48-byte parameter block");
      }
    }
    if (l.array_length == 0) {
      if (l.segment_length != 0 || l.segment_count != 0 || m.key_count != 0 || l.arity != 3) {
        fail(
            "an empty static filter must have zero segments, segment length and key count "
            "(and arity 3)");
      }
    } else {
      if (l.segment_length == 0 || l.segment_length > detail::fuse_max_segment_length ||
          !std::has_single_bit(l.segment_length)) {
        fail("segment length " + std::to_string(l.segment_length) +
             " is not a power of two in [1, 2^18]");
      }
      if (l.segment_count == 0 || l.segment_count > detail::fuse_max_keys) {
        fail("segment count out of range: " + std::to_string(l.segment_count));
      }
      if (l.array_length != (l.segment_count + l.arity - 1) * l.segment_length) {
        fail("array length " + std::to_string(l.array_length) + " is not (segment count " +
             std::to_string(l.segment_count) + " + " + std::to_string(l.arity - 1) +
             ") * segment length " + std::to_string(l.segment_length));
      }
      if (m.key_count == 0 || m.key_count > l.array_length) {
        fail("key count " + std::to_string(m.key_count) + " does not fit " +
             std::to_string(l.array_length) + " slots");
      }
    }
    if (m.inserted < m.key_count) {
      fail("element count " + std::to_string(m.inserted) + " is below the distinct key count " +
           std::to_string(m.key_count));
    }
    // The target lies in [2^-r, 2^-(r-1)): the rate asked for, or 2^-r for an explicit width. The
    // 48-byte block's 16-bit filters keep their old range, [2^-16, 2^-8).
    const double low = std::ldexp(1.0, -static_cast<int>(bits));
    const double high = !any_width ? (bits == 8 ? 1.0 : 1.0 / 256.0) : 2 * low;
    if (!(m.target_fpr >= low && m.target_fpr < std::min(high, 1.0))) {
      fail("target fpr " + detail::format_value(m.target_fpr) + " does not match " +
           std::to_string(bits) + "-bit fingerprints");
    }
    const std::uint64_t used = (l.array_length * bits + 7) / 8;
    const std::uint64_t expected = detail::fuse_payload_bytes(l, bits);
    if (f.payload.size() != expected) {
      fail("payload has " + std::to_string(f.payload.size()) + " bytes, " +
           std::to_string(l.array_length) + " slots of " + std::to_string(bits) + " bits need " +
           std::to_string(expected));
    }
    const unsigned tail_bits = static_cast<unsigned>((l.array_length * bits) % 8);
    if (tail_bits != 0 && (std::to_integer<unsigned>(f.payload[used - 1]) >> tail_bits) != 0) {
      fail("padding bits after the fingerprints are not zero");
    }
    for (std::uint64_t i = used; i < expected; ++i) {
      if (f.payload[i] != std::byte{0}) fail("padding bytes after the fingerprints are not zero");
    }
    detail::set_query_path(m);
    return m;
  }

  bit_array slots_;
  detail::static_meta meta_;
};

}  // namespace bloomery
