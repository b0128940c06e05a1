// The counting Bloom filter (Fan, Cao, Almeida, Broder, "Summary Cache", 2000): a classic Bloom
// filter whose bits are small counters, so keys can be removed again. Sizing and probe positions
// are exactly the classic filter's (m = optimal_bits(n, p) counters, k = optimal_hashes(m, n),
// positions from detail::for_each_position), so its false-positive rate is the classic formula;
// it costs b times the memory, b = 4 bits per counter by default (8 on request).
//
// Saturation: a counter that reaches its maximum (15 or 255) is never incremented past it nor
// decremented again; it stays nonzero until clear(). That is what keeps the filter sound: a counter
// that overflowed no longer knows how many keys hit it, so it must never reach zero. The price is a
// little permanent fill (with 4-bit counters and optimal k a counter reaches 16 with probability
// about 1.37e-15 per counter, per Fan et al., so in practice only deliberate duplicates saturate).
//
// Thread safety: insert, remove, clear and |= need exclusive access; the read-only verbs may run
// concurrently with each other (not beside a writer).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ranges>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bloomery/bit_array.hpp"
#include "bloomery/detail/batched_queries.hpp"
#include "bloomery/detail/bloom_core.hpp"
#include "bloomery/detail/counter_array.hpp"
#include "bloomery/detail/filter_file.hpp"
#include "bloomery/detail/filter_view.hpp"
#include "bloomery/format.hpp"
#include "bloomery/hash.hpp"
#include "bloomery/results.hpp"
#include "bloomery/sizing.hpp"
#include "bloomery/stats.hpp"

namespace bloomery {

// Options for a counting filter built from a target.
struct counting_options {
  std::uint32_t counter_bits = 4;  // 4 (default: ~4x a classic filter) or 8 (~8x, saturates later)
};

// Explicit parameters: `counting_bloom_filter f({.counters = m, .hashes = k, .counter_bits = 8});`.
struct counting_parameters {
  std::uint64_t counters = 0;
  std::uint32_t hashes = 0;
  std::uint32_t counter_bits = 4;
};

namespace detail {

inline std::string counter_bits_problem(std::uint32_t b) {
  if (b != 4 && b != 8)
    return "counter_bits = " + std::to_string(b) + " is invalid; allowed values are 4 and 8";
  return {};
}
inline void check_counter_bits(std::uint32_t b) {
  if (const std::string why = counter_bits_problem(b); !why.empty()) {
    throw std::invalid_argument("bloomery: " + why);
  }
}
// Why explicit counting parameters are invalid ("" when valid); the constructor throws it as
// std::invalid_argument, the loader as format_error.
inline std::string counting_problem(std::uint64_t m, std::uint32_t k, std::uint32_t b) {
  if (m == 0 || m > max_bits) {
    return "counters = " + std::to_string(m) + " is invalid; allowed range is [1, 2^48]";
  }
  if (k == 0 || k > max_hashes) {
    return "hashes = " + std::to_string(k) + " is invalid; allowed range is [1, " +
           std::to_string(max_hashes) + "]";
  }
  return counter_bits_problem(b);
}

// Everything a counting filter is besides its counters.
struct counting_meta {
  std::uint64_t counters = 0;  // m
  std::uint32_t hashes = 0;    // k
  counter_layout layout;
  std::uint64_t capacity = 0;
  double target_fpr = 0.0;
  std::uint64_t inserted = 0;  // inserts minus successful removes (merges add them up)
  hasher hash;
};

// True when every one of the key's k counters is nonzero. After the first zero counter the
// remaining positions are still derived (a multiply each) but no more memory is touched.
inline bool counting_probe(const std::uint64_t* words, const counting_meta& m, hash128 h) noexcept {
  bool all = true;
  for_each_position(h, m.counters, m.hashes, [&](std::uint64_t pos) {
    all = all && counter_get(words, m.layout, pos) != 0;
  });
  return all;
}

// Batched counting_probe: prefetch the lines of each key's first two counters (an absent key is
// decided by about two probes in a filter at capacity), then probe.
struct counting_batch_probe {
  const std::uint64_t* words;
  const counting_meta& m;
  hash128 locate(hash128 h) const noexcept { return h; }
  [[gnu::always_inline]] void prefetch(hash128 h) const noexcept {
    for_each_position(h, m.counters, std::min<std::uint32_t>(2, m.hashes),
                      [&](std::uint64_t pos) { detail::prefetch(words + m.layout.word_of(pos)); });
  }
  bool probe(hash128 h) const noexcept { return counting_probe(words, m, h); }
};

template <class Keys, class Out>
std::size_t counting_probe_many(const std::uint64_t* words, const counting_meta& m,
                                const Keys& keys, Out& out) {
  return batched_queries<batch_size>(m.hash, counting_batch_probe{words, m},
                                     m.layout.words_for(m.counters) * 8 >= batch_min_bytes, keys,
                                     out);
}

// The read-only verbs, written once for the owning filter and its mapped view. Derived supplies
// `meta_` and `storage()`.
template <class Derived>
class counting_queries {
 public:
  template <hashable_key K>
  bool may_contain(const K& key) const noexcept {
    return counting_probe(words(), meta(), hash_key(meta().hash, key));
  }

  // Answers for many keys at once, hashing and prefetching ahead. `out[i]` receives
  // may_contain(keys[i]); returns the number of positives.
  template <std::ranges::random_access_range Keys, class Out>
  std::size_t may_contain_many(const Keys& keys, Out&& out) const {
    return counting_probe_many(words(), meta(), keys, out);
  }

  std::uint64_t counter_count() const noexcept { return meta().counters; }
  std::uint32_t hash_count() const noexcept { return meta().hashes; }
  std::uint32_t counter_bits() const noexcept { return meta().layout.bits; }
  std::uint64_t counter_max() const noexcept { return meta().layout.max; }
  std::uint64_t capacity() const noexcept { return meta().capacity; }
  double target_fpr() const noexcept { return meta().target_fpr; }
  // Inserts minus successful removes (a union adds both counts).
  std::uint64_t inserted() const noexcept { return meta().inserted; }
  const hasher& hash() const noexcept { return meta().hash; }
  std::uint64_t size_in_bytes() const noexcept {
    return meta().layout.words_for(meta().counters) * 8;
  }

  // The value of counter i (i < counter_count()), for tests and tools.
  std::uint64_t counter(std::uint64_t i) const noexcept {
    return counter_get(words(), meta().layout, i);
  }
  // Counters that are not zero (padding counters past m are always zero).
  std::uint64_t nonzero_count() const noexcept {
    return count_lanes(
        [](std::uint64_t w, const counter_layout& c) { return counter_nonzero_lanes(w, c); });
  }
  // Counters stuck at their maximum: they stay set until clear().
  std::uint64_t saturated_count() const noexcept {
    return count_lanes(
        [](std::uint64_t w, const counter_layout& c) { return counter_saturated_lanes(w, c); });
  }
  double fill_ratio() const noexcept {
    return static_cast<double>(nonzero_count()) / static_cast<double>(meta().counters);
  }
  // Distinct keys present, estimated from the nonzero counters exactly as the classic filter does
  // from its set bits; saturates at UINT64_MAX when every counter is nonzero.
  std::uint64_t approximate_count() const noexcept {
    const double n = count_from_fill(nonzero_count(), meta().counters, meta().hashes);
    if (!(n < 1.8e19)) return std::numeric_limits<std::uint64_t>::max();
    return static_cast<std::uint64_t>(std::llround(n));
  }
  // The false-positive rate this filter has now: (nonzero fraction)^k.
  double estimated_fpr() const noexcept { return fpr_from_fill(fill_ratio(), meta().hashes); }
  // True once the estimated count exceeds capacity by more than 1% (as the classic filter).
  bool is_over_capacity() const noexcept {
    return past_capacity(approximate_count(), meta().capacity);
  }

  filter_stats stats() const {
    filter_stats s = common_stats(*this, filter_kind::counting_bloom);
    s.bits = meta().counters * meta().layout.bits;
    s.hashes = meta().hashes;
    s.fill_ratio = fill_ratio();
    s.over_capacity = past_capacity(s.approximate_count, s.capacity);  // no second count
    s.params = {{"counters", meta().counters},
                {"counter_bits", std::uint64_t{meta().layout.bits}},
                {"saturated_counters", saturated_count()}};
    return s;
  }

 private:
  const counting_meta& meta() const noexcept { return as_derived<Derived>(*this).meta_; }
  const std::uint64_t* words() const noexcept { return as_derived<Derived>(*this).storage(); }
  template <class Lanes>
  std::uint64_t count_lanes(Lanes lanes) const noexcept {
    const std::uint64_t* w = words();
    const std::uint64_t n = meta().layout.words_for(meta().counters);
    std::uint64_t total = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      total += static_cast<std::uint64_t>(std::popcount(lanes(w[i], meta().layout)));
    }
    return total;
  }
};

using counting_file = filter_file<counting_bloom_filter, filter_kind::counting_bloom,
                                  counting_queries, counting_meta>;
}  // namespace detail

class counting_bloom_filter : public detail::counting_queries<counting_bloom_filter>,
                              public detail::counting_file {
 public:
  // What remove() did: removed (the key's counters were decremented; saturated ones stay put) or
  // not_present (a counter is zero, or lower than the number of the key's probes that land on it:
  // the key is certainly absent, and nothing changed).
  using remove_result = bloomery::remove_result;

  // Sized like the classic filter for `t.capacity` keys at rate `t.fpr`, with 4-bit counters.
  explicit counting_bloom_filter(target t, hasher h = {})
      : counting_bloom_filter(t, counting_options{}, std::move(h)) {}
  counting_bloom_filter(target t, counting_options o, hasher h = {}) {
    detail::check_counter_bits(o.counter_bits);
    const std::uint64_t m = optimal_bits(t.capacity, t.fpr);
    init(m, optimal_hashes(m, t.capacity), o.counter_bits, t.capacity, t.fpr, std::move(h));
  }
  // Explicit m, k and counter width. As for the classic filter, the capacity becomes
  // floor(m ln 2 / k) and the target FPR the formula's value there.
  explicit counting_bloom_filter(counting_parameters p, hasher h = {}) {
    if (const std::string why = detail::counting_problem(p.counters, p.hashes, p.counter_bits);
        !why.empty()) {
      throw std::invalid_argument("bloomery: " + why);
    }
    const auto cap = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(static_cast<double>(p.counters) * detail::ln2 / p.hashes));
    init(p.counters, p.hashes, p.counter_bits, cap,
         detail::as_target_fpr(false_positive_rate(cap, p.counters, p.hashes)), std::move(h));
  }

  // What counting_bloom_filter(t, o) would cost, without allocating it.
  static filter_plan plan(target t, counting_options o = {}) {
    detail::check_counter_bits(o.counter_bits);
    const std::uint64_t m = optimal_bits(t.capacity, t.fpr);
    const std::uint32_t k = optimal_hashes(m, t.capacity);
    const std::uint64_t bytes = detail::counter_layout(o.counter_bits).words_for(m) * 8;
    return {bytes, 8.0 * static_cast<double>(bytes) / static_cast<double>(t.capacity),
            false_positive_rate(t.capacity, m, k),
            "m=" + std::to_string(m) + " k=" + std::to_string(k) +
                " counter_bits=" + std::to_string(o.counter_bits)};
  }

  // Always `inserted`: saturated counters stay put instead of filling up (stats() warns).
  template <hashable_key K>
  insert_result insert(const K& key) noexcept {
    insert_hash(hash_key(meta_.hash, key));
    return insert_result::inserted;
  }
  // Inserts the key and says whether it answered "possibly present" before (a crawler's
  // seen-check).
  template <hashable_key K>
  [[nodiscard]] insert_result check_and_insert(const K& key) noexcept {
    const hash128 h = hash_key(meta_.hash, key);
    const bool present = detail::counting_probe(counters_.data(), meta_, h);
    insert_hash(h);
    return present ? insert_result::already_present : insert_result::inserted;
  }

  // Removes one occurrence of a key inserted before. A key that is certainly absent is refused
  // (not_present) and nothing changes. Only remove keys you inserted: removing a key that was never
  // inserted but answers "possibly present" (a false positive) decrements other keys' counters and
  // can make them false negatives; no filter can tell such a key from a present one.
  template <hashable_key K>
  [[nodiscard]] remove_result remove(const K& key) noexcept {
    std::array<std::uint64_t, max_hashes> pos;
    std::uint32_t k = 0;
    detail::for_each_position(hash_key(meta_.hash, key), meta_.counters, meta_.hashes,
                              [&](std::uint64_t p) { pos[k++] = p; });
    // Two probes of one key can land on the same counter; an inserted key then added 2 there. So a
    // counter below the number of the key's probes on it (unless saturated) proves absence.
    std::sort(pos.begin(), pos.begin() + k);
    for (std::uint32_t i = 0; i < k;) {
      std::uint32_t j = i + 1;
      while (j < k && pos[j] == pos[i]) ++j;
      const std::uint64_t v = detail::counter_get(counters_.data(), meta_.layout, pos[i]);
      if (v != meta_.layout.max && v < j - i) return remove_result::not_present;
      i = j;
    }
    for (std::uint32_t i = 0; i < k; ++i) {
      detail::counter_decrement(counters_.data(), meta_.layout, pos[i]);
    }
    if (meta_.inserted != 0) --meta_.inserted;
    return remove_result::removed;
  }

  void clear() noexcept {
    counters_.clear();
    meta_.inserted = 0;
  }

  // Union of the two multisets: counters add, saturating at the maximum. The result equals one
  // filter that received the inserts of both (and their removes too, unless a counter saturated:
  // a saturated counter keeps no count, so the order of inserts and removes then matters).
  counting_bloom_filter& operator|=(const counting_bloom_filter& other) {
    const std::string why = incompatibility(other);
    if (!why.empty()) {
      throw std::invalid_argument("bloomery: cannot compute the union of counting filters: " + why);
    }
    std::uint64_t* a = counters_.data();
    const std::uint64_t* b = other.counters_.data();
    for (std::uint64_t i = 0; i < counters_.word_count(); ++i) {
      a[i] = detail::counter_add_saturating(a[i], b[i], meta_.layout);
    }
    meta_.inserted += other.meta_.inserted;
    return *this;
  }
  friend counting_bloom_filter operator|(counting_bloom_filter a, const counting_bloom_filter& b) {
    return a |= b;
  }

  // Same shape, same hashing and the same counters (capacity and insert counts are not compared).
  friend bool operator==(const counting_bloom_filter& a, const counting_bloom_filter& b) noexcept {
    return a.meta_.counters == b.meta_.counters && a.meta_.hashes == b.meta_.hashes &&
           a.meta_.layout.bits == b.meta_.layout.bits && a.meta_.hash == b.meta_.hash &&
           a.counters_ == b.counters_;
  }

  // Why `other` cannot be merged with this filter; empty when it can.
  std::string incompatibility(const counting_bloom_filter& other) const {
    return detail::first_difference(
        {detail::differs("counters", meta_.counters, other.meta_.counters),
         detail::differs("hashes", meta_.hashes, other.meta_.hashes),
         detail::differs("counter bits", meta_.layout.bits, other.meta_.layout.bits),
         describe_difference(meta_.hash, other.meta_.hash)});
  }

  // The raw words (layout in detail/counter_array.hpp), for tests and tools.
  std::span<const std::uint64_t> words() const noexcept { return counters_.words(); }

 private:
  friend detail::counting_queries<counting_bloom_filter>;
  friend detail::counting_file;

  void insert_hash(hash128 h) noexcept {
    detail::for_each_position(h, meta_.counters, meta_.hashes, [&](std::uint64_t pos) {
      detail::counter_increment(counters_.data(), meta_.layout, pos);
    });
    ++meta_.inserted;
  }
  counting_bloom_filter(detail::counting_meta m, bit_array counters)
      : counters_(std::move(counters)), meta_(std::move(m)) {}

  void init(std::uint64_t m, std::uint32_t k, std::uint32_t b, std::uint64_t cap, double fpr,
            hasher h) {
    const detail::counter_layout layout(b);
    counters_ = bit_array(m << layout.log2_bits);
    meta_ = {m, k, layout, cap, fpr, 0, std::move(h)};
  }
  const std::uint64_t* storage() const noexcept { return counters_.data(); }

  static std::vector<std::byte> params(const detail::counting_meta& m) {
    return detail::params_writer()
        .add<std::uint64_t>(m.counters)
        .add<std::uint32_t>(m.hashes)
        .add<std::uint32_t>(m.layout.bits)
        .add<std::uint64_t>(m.capacity)
        .add<double>(m.target_fpr)
        .take();
  }
  // Validates the parameter block against the payload before anything trusts either.
  static detail::counting_meta read_meta(const detail::parsed_file& f) {
    detail::params_reader r(f.params);
    detail::counting_meta m;
    m.counters = r.read<std::uint64_t>("counters");
    m.hashes = r.read<std::uint32_t>("hashes");
    const auto bits = r.read<std::uint32_t>("counter bits");
    m.capacity = r.read<std::uint64_t>("capacity");
    m.target_fpr = r.read<double>("target fpr");
    r.expect_end("counting");
    m.inserted = f.element_count;
    m.hash = f.hash;
    if (const std::string why = detail::counting_problem(m.counters, m.hashes, bits);
        !why.empty()) {
      detail::fail(why);
    }
    m.layout = detail::counter_layout(bits);
    if (m.capacity == 0) detail::fail("capacity is zero");
    if (!(m.target_fpr > 0 && m.target_fpr < 1)) detail::fail("target fpr outside (0, 1)");
    const std::uint64_t words = m.layout.words_for(m.counters);
    if (f.payload.size() != words * 8) {
      detail::fail("payload has " + std::to_string(f.payload.size()) + " bytes, " +
                   std::to_string(m.counters) + " counters of " + std::to_string(bits) +
                   " bits need " + std::to_string(words * 8));
    }
    // Counters past m are never touched by insert; a nonzero one means the payload is not ours.
    const auto* w = reinterpret_cast<const std::uint64_t*>(f.payload.data());
    const std::uint64_t slots = words << m.layout.per_word_log2;
    for (std::uint64_t i = m.counters; i < slots; ++i) {
      if (detail::counter_get(w, m.layout, i) != 0) detail::fail("padding counters past m are set");
    }
    return m;
  }

  bit_array counters_;
  detail::counting_meta meta_;
};

}  // namespace bloomery
