// The classic Bloom filter: m bits, k probes per key from one 128-bit hash (double hashing).
//
// Thread safety: `insert` and `clear` need exclusive access. `insert_concurrent` may run from any
// number of threads at once, and `may_contain` / `may_contain_many` / the statistics may run beside
// either concurrent verb (they use relaxed atomic loads, which are plain loads on x86-64/AArch64).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "bloomery/bit_array.hpp"
#include "bloomery/detail/bloom_core.hpp"
#include "bloomery/format.hpp"
#include "bloomery/hash.hpp"
#include "bloomery/sizing.hpp"

namespace bloomery {

// Explicit classic-filter parameters: `bloom_filter f({.bits = m, .hashes = k});`.
struct bloom_parameters {
  std::uint64_t bits = 0;
  std::uint32_t hashes = 0;
};

namespace detail {

// Everything a classic filter is besides its bits.
struct bloom_meta {
  std::uint64_t bits = 0;
  std::uint32_t hashes = 0;
  std::uint64_t capacity = 0;
  double target_fpr = 0.0;
  std::uint64_t inserted = 0;  // insert calls, duplicates included (merges add them up)
  hasher hash;
};

// The read-only verbs, written once for the owning filter and its mapped view. Derived supplies
// `meta_` and `words_data()`.
template <class Derived>
class bloom_queries {
 public:
  template <hashable_key K>
  bool may_contain(const K& key) const noexcept {
    return probe_hash(words(), meta().bits, meta().hashes, hash_key(meta().hash, key));
  }

  // Answers for many keys at once, hashing and prefetching ahead (faster on filters larger than
  // the cache). `out[i]` receives may_contain(keys[i]); returns the number of positives.
  template <std::ranges::random_access_range Keys, class Out>
  std::size_t may_contain_many(const Keys& keys, Out&& out) const {
    return probe_many(meta().hash, words(), meta().bits, meta().hashes, keys, out);
  }

  std::uint64_t bit_count() const noexcept { return meta().bits; }
  std::uint32_t hash_count() const noexcept { return meta().hashes; }
  std::uint64_t capacity() const noexcept { return meta().capacity; }
  double target_fpr() const noexcept { return meta().target_fpr; }
  // Insert calls so far (duplicates included; a union adds both counts).
  std::uint64_t inserted() const noexcept {
    return __atomic_load_n(&meta().inserted, __ATOMIC_RELAXED);  // insert_concurrent may run
  }
  const hasher& hash() const noexcept { return meta().hash; }
  std::uint64_t size_in_bytes() const noexcept { return words_for_bits(meta().bits) * 8; }

  // Set bits (padding bits beyond m are never set).
  std::uint64_t set_bit_count() const noexcept {
    return count_set_bits({words(), words_for_bits(meta().bits)});
  }
  double fill_ratio() const noexcept {
    return static_cast<double>(set_bit_count()) / static_cast<double>(meta().bits);
  }
  // Distinct keys estimated from the fill; saturates at UINT64_MAX when every bit is set.
  std::uint64_t approximate_count() const noexcept {
    const double n = count_from_fill(set_bit_count(), meta().bits, meta().hashes);
    if (!(n < 1.8e19)) return std::numeric_limits<std::uint64_t>::max();
    return static_cast<std::uint64_t>(std::llround(n));
  }
  // The false-positive rate this filter has now, from its actual fill: fill^k.
  double estimated_fpr() const noexcept { return fpr_from_fill(fill_ratio(), meta().hashes); }
  // True once the estimated count exceeds capacity by more than 1% (so a filter filled exactly to
  // capacity, whose estimate wobbles around it, does not warn). Its FPR is then above target.
  bool is_over_capacity() const noexcept {
    return static_cast<double>(approximate_count()) > 1.01 * static_cast<double>(meta().capacity);
  }

 private:
  const bloom_meta& meta() const noexcept { return static_cast<const Derived&>(*this).meta_; }
  const std::uint64_t* words() const noexcept {
    return static_cast<const Derived&>(*this).words_data();
  }
};

}  // namespace detail

class bloom_filter : public detail::bloom_queries<bloom_filter> {
 public:
  static constexpr filter_kind kind = filter_kind::bloom;
  class view;

  // Sized for `t.capacity` keys at false-positive rate `t.fpr`:
  // m = ceil(-n ln p / (ln 2)^2), k = round((m/n) ln 2).
  explicit bloom_filter(target t, hasher h = {}) {
    const std::uint64_t m = optimal_bits(t.capacity, t.fpr);
    init(m, optimal_hashes(m, t.capacity), t.capacity, t.fpr, std::move(h));
  }
  // Explicit m and k. The capacity becomes the n for which k is optimal, floor(m ln 2 / k), and
  // the target FPR the formula's value at that n.
  explicit bloom_filter(bloom_parameters p, hasher h = {}) {
    detail::check_bits(p.bits);
    detail::check_hashes(p.hashes);
    const auto cap = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(static_cast<double>(p.bits) * detail::ln2 / p.hashes));
    init(p.bits, p.hashes, cap, false_positive_rate(cap, p.bits, p.hashes), std::move(h));
  }

  // What bloom_filter(t) would cost, without allocating it.
  static filter_plan plan(target t) {
    const std::uint64_t m = optimal_bits(t.capacity, t.fpr);
    const std::uint32_t k = optimal_hashes(m, t.capacity);
    const std::uint64_t bytes = detail::words_for_bits(m) * 8;
    return {bytes, 8.0 * static_cast<double>(bytes) / static_cast<double>(t.capacity),
            false_positive_rate(t.capacity, m, k),
            "m=" + std::to_string(m) + " k=" + std::to_string(k)};
  }

  template <hashable_key K>
  void insert(const K& key) noexcept {
    detail::insert_hash(bits_.data(), meta_.bits, meta_.hashes, hash_key(meta_.hash, key));
    ++meta_.inserted;
  }
  // Thread-safe insert: atomic OR of each word. Safe beside other insert_concurrent calls and
  // beside queries; not beside insert/clear/merges.
  template <hashable_key K>
  void insert_concurrent(const K& key) noexcept {
    detail::insert_hash_atomic(bits_.data(), meta_.bits, meta_.hashes, hash_key(meta_.hash, key));
    __atomic_fetch_add(&meta_.inserted, 1, __ATOMIC_RELAXED);
  }

  void clear() noexcept {
    bits_.clear();
    meta_.inserted = 0;
  }

  // Union: afterwards the filter answers "possibly" for every key either filter held; it is
  // bit-identical to one filter built from both key sets.
  bloom_filter& operator|=(const bloom_filter& other) {
    check_compatible(other, "union");
    bits_.or_with(other.bits_);
    meta_.inserted += other.meta_.inserted;
    return *this;
  }
  // Intersection: answers "possibly" for every key both filters held (and possibly others:
  // bits set by different keys in each filter can survive the AND).
  bloom_filter& operator&=(const bloom_filter& other) {
    check_compatible(other, "intersection");
    bits_.and_with(other.bits_);
    meta_.inserted = std::min(meta_.inserted, other.meta_.inserted);
    return *this;
  }
  friend bloom_filter operator|(bloom_filter a, const bloom_filter& b) { return a |= b; }
  friend bloom_filter operator&(bloom_filter a, const bloom_filter& b) { return a &= b; }

  // Same shape, same hashing and the same bits (capacity and insert counts are not compared).
  friend bool operator==(const bloom_filter& a, const bloom_filter& b) noexcept {
    return a.meta_.bits == b.meta_.bits && a.meta_.hashes == b.meta_.hashes &&
           a.meta_.hash == b.meta_.hash && a.bits_ == b.bits_;
  }

  // Why `other` cannot be merged with this filter; empty when it can.
  std::string incompatibility(const bloom_filter& other) const {
    if (meta_.bits != other.meta_.bits) {
      return "bits differ (" + std::to_string(meta_.bits) + " vs " +
             std::to_string(other.meta_.bits) + ")";
    }
    if (meta_.hashes != other.meta_.hashes) {
      return "hashes differ (" + std::to_string(meta_.hashes) + " vs " +
             std::to_string(other.meta_.hashes) + ")";
    }
    return describe_difference(meta_.hash, other.meta_.hash);
  }

  // The raw words, for tests and tools (bit i is bit i%64 of word i/64).
  std::span<const std::uint64_t> words() const noexcept { return bits_.words(); }

  // --- file format plumbing (see format.hpp) ---
  detail::file_image image() const {
    return {kind, meta_.hash, meta_.inserted, params(meta_),
            std::as_bytes(std::span(bits_.words()))};
  }
  static bloom_filter from_image(const detail::parsed_file& f) {
    bloom_filter b(from_meta_tag{}, read_meta(f));
    std::memcpy(b.bits_.data(), f.payload.data(), f.payload.size());
    return b;
  }
  static view view_of(const detail::parsed_file& f);

 private:
  friend class detail::bloom_queries<bloom_filter>;
  struct from_meta_tag {};
  bloom_filter(from_meta_tag, detail::bloom_meta m) : bits_(m.bits), meta_(std::move(m)) {}

  void init(std::uint64_t m, std::uint32_t k, std::uint64_t cap, double fpr, hasher h) {
    bits_ = bit_array(m);
    meta_ = {m, k, cap, fpr, 0, std::move(h)};
  }
  void check_compatible(const bloom_filter& other, const char* op) const {
    const std::string why = incompatibility(other);
    if (!why.empty()) {
      throw std::invalid_argument(std::string("bloomery: cannot compute the ") + op +
                                  " of bloom filters: " + why);
    }
  }
  const std::uint64_t* words_data() const noexcept { return bits_.data(); }

  static std::vector<std::byte> params(const detail::bloom_meta& m) {
    return detail::params_writer()
        .add<std::uint64_t>(m.bits)
        .add<std::uint32_t>(m.hashes)
        .add<std::uint32_t>(0)  // reserved
        .add<std::uint64_t>(m.capacity)
        .add<double>(m.target_fpr)
        .take();
  }
  // Validates the parameter block against the payload before anything trusts either.
  static detail::bloom_meta read_meta(const detail::parsed_file& f) {
    detail::params_reader r(f.params);
    detail::bloom_meta m;
    m.bits = r.read<std::uint64_t>("bits");
    m.hashes = r.read<std::uint32_t>("hashes");
    const auto reserved = r.read<std::uint32_t>("reserved");
    m.capacity = r.read<std::uint64_t>("capacity");
    m.target_fpr = r.read<double>("target fpr");
    r.expect_end("bloom");
    m.inserted = f.element_count;
    m.hash = f.hash;
    if (m.bits == 0 || m.bits > max_bits)
      detail::fail("bits out of range: " + std::to_string(m.bits));
    if (m.hashes == 0 || m.hashes > max_hashes) {
      detail::fail("hashes out of range: " + std::to_string(m.hashes));
    }
    if (reserved != 0) detail::fail("reserved parameter is not zero");
    if (m.capacity == 0) detail::fail("capacity is zero");
    if (!(m.target_fpr > 0 && m.target_fpr < 1)) detail::fail("target fpr outside (0, 1)");
    if (f.payload.size() != detail::words_for_bits(m.bits) * 8) {
      detail::fail("payload has " + std::to_string(f.payload.size()) + " bytes, " +
                   std::to_string(m.bits) + " bits need " +
                   std::to_string(detail::words_for_bits(m.bits) * 8));
    }
    // Bits past m are never set by insert; a set one means the payload does not belong to m.
    const auto* words = reinterpret_cast<const std::uint64_t*>(f.payload.data());
    for (std::uint64_t i = m.bits; i < detail::words_for_bits(m.bits) * 64; ++i) {
      if (detail::test_bit(words, i)) detail::fail("padding bits past m are set");
    }
    return m;
  }

  bit_array bits_;
  detail::bloom_meta meta_;
};

// A read-only classic filter over storage it does not own (a memory-mapped file).
class bloom_filter::view : public detail::bloom_queries<view> {
 public:
  view(detail::bloom_meta meta, const std::uint64_t* words)
      : meta_(std::move(meta)), words_(words) {}

 private:
  friend class detail::bloom_queries<view>;
  const std::uint64_t* words_data() const noexcept { return words_; }
  detail::bloom_meta meta_;
  const std::uint64_t* words_;
};

inline bloom_filter::view bloom_filter::view_of(const detail::parsed_file& f) {
  return view(read_meta(f), reinterpret_cast<const std::uint64_t*>(f.payload.data()));
}

}  // namespace bloomery
