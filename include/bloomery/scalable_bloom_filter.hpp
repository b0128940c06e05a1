// The scalable Bloom filter (Almeida, Baquero, Preguiça, Hutchison, "Scalable Bloom Filters",
// Information Processing Letters 101(6), 2007): a list of classic Bloom filters that grows as keys
// arrive, so it needs no capacity guess up front and never a rebuild, while its false-positive
// rate stays below a bound p chosen at construction.
//
// Sub-filter i is a classic filter for capacity n_i = ceil(n0 · s^i) keys at rate
// p_i = p · (1 − r) · r^i (growth s, tightening r). A query is positive when any sub-filter is, so
// the compound rate is 1 − Π(1 − p_i) ≤ Σ p_i = p (1 − r)(1 + r + r² + ...) < p, for any number of
// sub-filters. Keys go into the newest sub-filter; once it holds n_i keys the next is added.
//
// Storage: the sub-filters' bit arrays lie back to back in one allocation (each a whole number of
// 64-byte lines), exactly as in the file's payload, so save and map_file copy nothing and union is
// one word-wise OR. Growing copies the old arrays once into a larger allocation (amortized O(1)
// per key: each sub-filter is at least as large as the previous one). Sub-filter positions,
// probing and statistics are the classic filter's (bloom_core.hpp, bloom_filter::view).
//
// Thread safety: insert, clear and |= need exclusive access (growth moves the storage); the
// read-only verbs may run concurrently with each other, not beside a writer.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ranges>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bloomery/bit_array.hpp"
#include "bloomery/bloom_filter.hpp"
#include "bloomery/detail/bloom_core.hpp"
#include "bloomery/detail/filter_file.hpp"
#include "bloomery/detail/filter_view.hpp"
#include "bloomery/detail/sub_filter_chain.hpp"
#include "bloomery/format.hpp"
#include "bloomery/hash.hpp"
#include "bloomery/results.hpp"
#include "bloomery/sizing.hpp"
#include "bloomery/stats.hpp"

namespace bloomery {

// How a scalable filter grows. Defaults follow the paper's advice (s = 2 for moderate growth,
// s = 4 for fast growth; r between 0.8 and 0.9).
struct scalable_options {
  double growth = 2.0;       // s: each sub-filter holds s times the keys of the previous, [1, 16]
  double tightening = 0.85;  // r: each sub-filter's FPR is r times the previous one's, (0, 1)
};

namespace detail {

// One sub-filter inside the concatenated storage.
struct scalable_layer {
  std::uint64_t bits = 0;
  std::uint32_t hashes = 0;
  std::uint64_t capacity = 0;     // n_i
  double fpr = 0.0;               // p_i
  std::uint64_t inserted = 0;     // keys added to this sub-filter
  std::uint64_t word_offset = 0;  // where its words start in the storage
  std::uint64_t words() const noexcept { return words_for_bits(bits); }
  // The classic filter it is (sub_filter(i)'s view; a file's sub-filter is checked as its file).
  bloom_meta as_bloom(const hasher& h) const {
    return {bits, hashes, capacity, fpr, inserted, h, false};
  }
};

// Everything a scalable filter is besides its bits.
struct scalable_meta {
  scalable_options options;
  std::uint64_t initial_capacity = 0;  // n0
  double fpr = 0.0;                    // the overall bound p
  hasher hash;
  std::vector<scalable_layer> layers;  // oldest first
};

// 40 bytes of options plus 40 per sub-filter keep the parameter block at 2600 bytes, under the
// format's 4096. Growth 2 from one key reaches 2^64 keys before the cap bites.
inline constexpr std::uint32_t scalable_max_sub_filters = 64;

inline void check_scalable_options(const scalable_options& o) {
  if (!(o.growth >= 1.0 && o.growth <= 16.0)) {
    invalid("growth", format_value(o.growth), "allowed range is [1, 16]");
  }
  if (!(o.tightening > 0.0 && o.tightening < 1.0)) {
    invalid("tightening", format_value(o.tightening), "allowed range is (0, 1), exclusive");
  }
}

// Capacity and FPR of sub-filter i, n_i = ceil(n0 s^i) and p_i = p (1 - r) r^i, computed by
// repeated multiplication (exactly rounded in IEEE arithmetic, so every platform derives the same
// values; files are checked against them). Throws std::length_error past what can be represented.
inline target scalable_layer_target(const scalable_options& o, std::uint64_t n0, double p,
                                    std::size_t i) {
  double cap = static_cast<double>(n0);
  double fpr = p * (1.0 - o.tightening);
  for (std::size_t j = 0; j < i; ++j) {
    cap *= o.growth;
    fpr *= o.tightening;
  }
  // Sub-filter 0 is the caller's own target, which bloom sizing validates (invalid_argument).
  if (i > 0 && (!(cap < 9.2e18) || !(fpr > 0.0))) {
    throw std::length_error("bloomery: scalable filter: sub-filter " + std::to_string(i) +
                            " would need capacity " + format_value(cap) + " at fpr " +
                            format_value(fpr) + ", beyond what can be represented");
  }
  return {i == 0 ? n0 : static_cast<std::uint64_t>(std::ceil(cap)), fpr};
}

// Sub-filter i, sized as bloom_filter sizes itself for its target.
inline scalable_layer scalable_make_layer(const scalable_meta& m, std::size_t i,
                                          std::uint64_t word_offset) {
  const target t = scalable_layer_target(m.options, m.initial_capacity, m.fpr, i);
  const auto [bits, hashes] = classic_layout::size_for(t);
  return {bits, hashes, t.capacity, t.fpr, 0, word_offset};
}

// The read-only verbs, written once for the owning filter and its mapped view. Derived supplies
// `meta_` and `storage()` (the concatenated sub-filter words).
template <class Derived>
class scalable_queries {
 public:
  // Hashes the key once; probes the sub-filters newest first (the largest, holding the most keys).
  template <hashable_key K>
  bool may_contain(const K& key) const noexcept {
    return probe(hash_key(meta().hash, key));
  }

  // Answers for many keys at once: hashes a batch of keys once, then walks the sub-filters newest
  // first, prefetching each still-undecided key's first probe before testing it; keys found leave
  // the batch (chain_probe_many). `out[i]` receives may_contain(keys[i]); returns the number of
  // positives.
  template <std::ranges::random_access_range Keys, class Out>
  std::size_t may_contain_many(const Keys& keys, Out&& out) const {
    return chain_probe_many<batch_size>(meta().hash, meta().layers.size(), layer_probe_of(), keys,
                                        out);
  }

  std::size_t sub_filter_count() const noexcept { return meta().layers.size(); }
  // Sub-filter i (0 = oldest) as a read-only classic filter: its bits, hashes, capacity n_i,
  // target FPR p_i, inserted keys, fill and estimates. Valid until the next insert or clear.
  bloom_filter::view sub_filter(std::size_t i) const {
    const scalable_layer& l = meta().layers.at(i);
    return {l.as_bloom(meta().hash), words() + l.word_offset};
  }

  // The initial capacity n0 (the target's capacity); the filter holds more by growing.
  std::uint64_t capacity() const noexcept { return meta().initial_capacity; }
  // Keys the existing sub-filters hold at their rates: Σ n_i.
  std::uint64_t current_capacity() const noexcept {
    return chain_sum(meta().layers, [](const scalable_layer& l) { return l.capacity; });
  }
  // The bound p on the compound false-positive rate.
  double target_fpr() const noexcept { return meta().fpr; }
  // The compound rate the existing sub-filters are sized for when each holds its capacity,
  // 1 - prod(1 - p_i): below target_fpr(), and far below it while the filter is young (p (1 - r)
  // with one sub-filter).
  double current_fpr_bound() const noexcept {
    const auto& layers = meta().layers;
    return detail::compound_fpr(layers.size(), [&](std::size_t i) { return layers[i].fpr; });
  }
  const scalable_options& options() const noexcept { return meta().options; }
  // Keys added: inserts of keys the filter did not already answer "possibly present" for (those
  // are skipped); a union adds both counts.
  std::uint64_t inserted() const noexcept {
    return chain_sum(meta().layers, [](const scalable_layer& l) { return l.inserted; });
  }
  const hasher& hash() const noexcept { return meta().hash; }
  std::uint64_t size_in_bytes() const noexcept { return chain_words(meta().layers) * 8; }

  // Distinct keys, estimated as the sum of the sub-filters' estimates from their fills;
  // UINT64_MAX once a sub-filter is entirely set.
  std::uint64_t approximate_count() const noexcept {
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < sub_filter_count(); ++i) {
      const std::uint64_t c = sub_filter(i).approximate_count();
      if (c > std::numeric_limits<std::uint64_t>::max() - total) {
        return std::numeric_limits<std::uint64_t>::max();
      }
      total += c;
    }
    return total;
  }
  // The false-positive rate this filter has now: 1 − Π(1 − fpr_i), each fpr_i the sub-filter's
  // own estimate from its actual fill.
  double estimated_fpr() const noexcept {
    return detail::compound_fpr(sub_filter_count(),
                                [this](std::size_t i) { return sub_filter(i).estimated_fpr(); });
  }
  // Set bits over all sub-filters' bits.
  double fill_ratio() const noexcept {
    std::uint64_t bits = 0, set = 0;
    for (std::size_t i = 0; i < sub_filter_count(); ++i) {
      bits += sub_filter(i).bit_count();
      set += sub_filter(i).set_bit_count();
    }
    return static_cast<double>(set) / static_cast<double>(bits);
  }

  filter_stats stats() const {
    filter_stats s = common_stats(*this, filter_kind::scalable_bloom);
    for (const auto& l : meta().layers) s.bits += l.bits;
    s.hashes = meta().layers.front().hashes;
    s.fill_ratio = fill_ratio();
    s.params = {{"sub_filters", std::uint64_t{sub_filter_count()}},
                {"current_capacity", current_capacity()},
                {"growth", meta().options.growth},
                {"tightening", meta().options.tightening}};
    return s;
  }

 protected:
  bool probe(hash128 h) const noexcept {
    return chain_probe(meta().layers.size(), layer_probe_of(), h);
  }

 private:
  // A sub-filter as sub_filter_chain.hpp's Probe policy: the classic filter's probes.
  struct layer_probe {
    const std::uint64_t* words;
    const scalable_layer& layer;
    bool prefetching;
    hash128 locate(hash128 h) const noexcept { return h; }
    [[gnu::always_inline]] void prefetch(hash128 h) const noexcept {
      detail::prefetch(words + (reduce(h.low, layer.bits) >> 6));
    }
    bool probe(hash128 h) const noexcept { return probe_hash(words, layer.bits, layer.hashes, h); }
  };
  auto layer_probe_of() const noexcept {
    return [this](std::size_t i) {
      const scalable_layer& l = meta().layers[i];
      return layer_probe{words() + l.word_offset, l, l.words() * 8 >= batch_min_bytes};
    };
  }

  const scalable_meta& meta() const noexcept { return as_derived<Derived>(*this).meta_; }
  const std::uint64_t* words() const noexcept { return as_derived<Derived>(*this).storage(); }
};

using scalable_file = filter_file<scalable_bloom_filter, filter_kind::scalable_bloom,
                                  scalable_queries, scalable_meta>;
}  // namespace detail

class scalable_bloom_filter : public detail::scalable_queries<scalable_bloom_filter>,
                              public detail::scalable_file {
 public:
  static constexpr std::uint32_t max_sub_filters = detail::scalable_max_sub_filters;

  // Starts with one sub-filter for `t.capacity` keys; the compound FPR stays below `t.fpr` however
  // many keys arrive.
  explicit scalable_bloom_filter(target t, hasher h = {})
      : scalable_bloom_filter(t, scalable_options{}, std::move(h)) {}
  scalable_bloom_filter(target t, scalable_options o, hasher h = {}) {
    detail::check_capacity(t.capacity);
    detail::check_fpr(t.fpr);
    detail::check_scalable_options(o);
    meta_ = {o, t.capacity, t.fpr, std::move(h), {}};
    meta_.layers.push_back(detail::scalable_make_layer(meta_, 0, 0));
    storage_ = bit_array(meta_.layers[0].words() * 64);
  }

  // What scalable_bloom_filter(t, o) costs at first (its first sub-filter), without allocating it.
  // expected_fpr is the first sub-filter's rate at capacity t.capacity: p (1 - r), about.
  static filter_plan plan(target t, scalable_options o = {}) {
    detail::check_capacity(t.capacity);
    detail::check_fpr(t.fpr);
    detail::check_scalable_options(o);
    const detail::scalable_meta m{o, t.capacity, t.fpr, {}, {}};
    const detail::scalable_layer first = detail::scalable_make_layer(m, 0, 0);
    const std::uint64_t bytes = first.words() * 8;
    return {bytes, 8.0 * static_cast<double>(bytes) / static_cast<double>(t.capacity),
            false_positive_rate(t.capacity, first.bits, first.hashes),
            "s=" + detail::format_value(o.growth) + " r=" + detail::format_value(o.tightening) +
                " m0=" + std::to_string(first.bits) + " k0=" + std::to_string(first.hashes)};
  }

  // Adds a key unless the filter already answers "possibly present" for it; returns `inserted`.
  // Skipping keys already reported present costs nothing in correctness (their answer can only
  // stay "possibly") and keeps duplicates from using up capacity, so each sub-filter holds exactly
  // n_i distinct keys when the next one is added; check_and_insert says which keys were skipped.
  // Throws std::length_error when a new sub-filter is needed and none can be made
  // (max_sub_filters reached, or its size is beyond 2^48 bits or 255 hashes), std::bad_alloc
  // when memory runs out; the filter is then unchanged.
  template <hashable_key K>
  insert_result insert(const K& key) {
    (void)check_and_insert(key);
    return insert_result::inserted;
  }
  // As insert(), and says whether the key answered "possibly present" (and so was skipped).
  template <hashable_key K>
  [[nodiscard]] insert_result check_and_insert(const K& key) {
    const hash128 h = hash_key(meta_.hash, key);
    if (probe(h)) return insert_result::already_present;
    if (meta_.layers.back().inserted >= meta_.layers.back().capacity) grow();
    detail::scalable_layer& l = meta_.layers.back();
    detail::insert_hash(storage_.data() + l.word_offset, l.bits, l.hashes, h);
    ++l.inserted;
    return insert_result::inserted;
  }

  // Back to a single, empty sub-filter (memory of the others is released).
  void clear() {
    detail::chain_clear(storage_, meta_.layers);
    meta_.layers[0].inserted = 0;
  }

  // Union: sub-filter i becomes the OR of both sub-filters i. Needs the same layout: the same
  // options, hashing and number of sub-filters. Each sub-filter then holds the keys of both, so it
  // can be over its capacity and the compound rate above target (estimated_fpr() says by how much);
  // later inserts still open a new sub-filter.
  scalable_bloom_filter& operator|=(const scalable_bloom_filter& other) {
    const std::string why = incompatibility(other);
    if (!why.empty()) {
      throw std::invalid_argument("bloomery: cannot compute the union of scalable filters: " + why);
    }
    storage_.or_with(other.storage_);
    for (std::size_t i = 0; i < meta_.layers.size(); ++i) {
      meta_.layers[i].inserted += other.meta_.layers[i].inserted;
    }
    return *this;
  }
  friend scalable_bloom_filter operator|(scalable_bloom_filter a, const scalable_bloom_filter& b) {
    return a |= b;
  }

  // Same options, hashing, sub-filter shapes and bits (insert counts are not compared).
  friend bool operator==(const scalable_bloom_filter& a, const scalable_bloom_filter& b) noexcept {
    if (a.meta_.layers.size() != b.meta_.layers.size()) return false;
    for (std::size_t i = 0; i < a.meta_.layers.size(); ++i) {
      if (a.meta_.layers[i].bits != b.meta_.layers[i].bits ||
          a.meta_.layers[i].hashes != b.meta_.layers[i].hashes) {
        return false;
      }
    }
    return a.meta_.options.growth == b.meta_.options.growth &&
           a.meta_.options.tightening == b.meta_.options.tightening &&
           a.meta_.initial_capacity == b.meta_.initial_capacity && a.meta_.fpr == b.meta_.fpr &&
           a.meta_.hash == b.meta_.hash && a.storage_ == b.storage_;
  }

  // Why `other` cannot be merged with this filter; empty when it can.
  std::string incompatibility(const scalable_bloom_filter& other) const {
    const auto& a = meta_;
    const auto& b = other.meta_;
    const std::string why = detail::first_difference(
        {detail::differs("growth factors", a.options.growth, b.options.growth),
         detail::differs("tightening ratios", a.options.tightening, b.options.tightening),
         detail::differs("initial capacities", a.initial_capacity, b.initial_capacity),
         detail::differs("target fprs", a.fpr, b.fpr),
         detail::differs("sub-filter counts", a.layers.size(), b.layers.size())});
    if (!why.empty()) return why;
    for (std::size_t i = 0; i < a.layers.size(); ++i) {  // follow from the above; checked anyway
      if (a.layers[i].bits != b.layers[i].bits || a.layers[i].hashes != b.layers[i].hashes) {
        return "sub-filter " + std::to_string(i) + " shapes differ";
      }
    }
    return describe_difference(a.hash, b.hash);
  }

  // The concatenated sub-filter words (sub-filter i starts at sub_filter(i)'s offset), for tools.
  std::span<const std::uint64_t> words() const noexcept { return storage_.words(); }

 private:
  friend detail::scalable_queries<scalable_bloom_filter>;
  friend detail::scalable_file;
  scalable_bloom_filter(detail::scalable_meta m, bit_array storage)
      : storage_(std::move(storage)), meta_(std::move(m)) {}

  const std::uint64_t* storage() const noexcept { return storage_.data(); }

  // Adds the next sub-filter: a larger allocation, the old words copied over. Strong guarantee.
  void grow() {
    const std::size_t i = meta_.layers.size();
    if (i >= max_sub_filters) {
      throw std::length_error("bloomery: scalable filter cannot grow: it already has " +
                              std::to_string(max_sub_filters) + " sub-filters (the most a file " +
                              "can describe), holding " + std::to_string(current_capacity()) +
                              " keys");
    }
    detail::scalable_layer next;
    try {
      next = detail::scalable_make_layer(meta_, i, detail::chain_words(meta_.layers));
    } catch (const std::invalid_argument& e) {
      throw std::length_error("bloomery: scalable filter cannot add sub-filter " +
                              std::to_string(i) + ": " + e.what());
    }
    detail::chain_grow(storage_, meta_.layers, next);
  }

  static std::vector<std::byte> params(const detail::scalable_meta& m) {
    detail::params_writer w;
    w.add<double>(m.options.growth)
        .add<double>(m.options.tightening)
        .add<std::uint64_t>(m.initial_capacity)
        .add<double>(m.fpr)
        .add<std::uint32_t>(static_cast<std::uint32_t>(m.layers.size()))
        .add<std::uint32_t>(0);  // reserved
    for (const auto& l : m.layers) {
      w.add<std::uint64_t>(l.bits)
          .add<std::uint32_t>(l.hashes)
          .add<std::uint32_t>(0)  // reserved
          .add<std::uint64_t>(l.capacity)
          .add<double>(l.fpr)
          .add<std::uint64_t>(l.inserted);
    }
    return w.take();
  }

  // Validates the parameter block against the payload before anything trusts either. Each
  // sub-filter is then checked exactly as a classic filter file would be (bloom_filter::view_of on
  // its slice of the payload, with its kind-1 parameter block).
  static detail::scalable_meta read_meta(const detail::parsed_file& f) {
    detail::params_reader r(f.params);
    detail::scalable_meta m;
    m.options.growth = r.read<double>("growth");
    m.options.tightening = r.read<double>("tightening");
    m.initial_capacity = r.read<std::uint64_t>("initial capacity");
    m.fpr = r.read<double>("fpr");
    const auto count = r.read<std::uint32_t>("sub-filter count");
    const auto reserved = r.read<std::uint32_t>("reserved");
    if (count == 0 || count > max_sub_filters) {
      detail::fail("sub-filter count out of range: " + std::to_string(count) + " (allowed 1.." +
                   std::to_string(max_sub_filters) + ")");
    }
    std::vector<std::uint32_t> layer_reserved(count);
    m.layers.resize(count);
    for (std::uint32_t i = 0; i < count; ++i) {
      detail::scalable_layer& l = m.layers[i];
      l.bits = r.read<std::uint64_t>("sub-filter bits");
      l.hashes = r.read<std::uint32_t>("sub-filter hashes");
      layer_reserved[i] = r.read<std::uint32_t>("sub-filter reserved");
      l.capacity = r.read<std::uint64_t>("sub-filter capacity");
      l.fpr = r.read<double>("sub-filter fpr");
      l.inserted = r.read<std::uint64_t>("sub-filter inserted");
    }
    r.expect_end("scalable");
    m.hash = f.hash;
    if (!(m.options.growth >= 1.0 && m.options.growth <= 16.0)) {
      detail::fail("growth out of range [1, 16]: " + detail::format_value(m.options.growth));
    }
    if (!(m.options.tightening > 0.0 && m.options.tightening < 1.0)) {
      detail::fail("tightening outside (0, 1): " + detail::format_value(m.options.tightening));
    }
    if (m.initial_capacity == 0) detail::fail("initial capacity is zero");
    if (!(m.fpr > 0 && m.fpr < 1)) detail::fail("target fpr outside (0, 1)");
    if (reserved != 0) detail::fail("reserved parameter is not zero");
    std::uint64_t offset = 0;
    for (std::uint32_t i = 0; i < count; ++i) {
      detail::scalable_layer& l = m.layers[i];
      const std::string which = "sub-filter " + std::to_string(i) + ": ";
      if (layer_reserved[i] != 0) detail::fail(which + "reserved parameter is not zero");
      target expected;
      try {
        expected = detail::scalable_layer_target(m.options, m.initial_capacity, m.fpr, i);
      } catch (const std::length_error&) {
        detail::fail(which + "cannot exist with these growth parameters");
      }
      if (l.capacity != expected.capacity || l.fpr != expected.fpr) {
        detail::fail(which + "capacity " + std::to_string(l.capacity) + " and fpr " +
                     detail::format_value(l.fpr) + " do not follow from the growth parameters " +
                     "(expected " + std::to_string(expected.capacity) + " and " +
                     detail::format_value(expected.fpr) + ")");
      }
      if (const std::string why = detail::classic_layout::check(l.bits, l.hashes); !why.empty()) {
        detail::fail(which + why);
      }
      // Sized exactly as scalable_make_layer sizes it: a forged small layer for a huge capacity
      // would otherwise make the next grow() ask for the memory of the capacity the file claims,
      // without the payload to show for it (found by fuzz/deserialize_any).
      bloom_parameters sized{};
      try {
        sized = detail::classic_layout::size_for(expected);
      } catch (const std::invalid_argument&) {
        detail::fail(which + "capacity " + std::to_string(expected.capacity) + " cannot be sized");
      }
      if (l.bits != sized.bits || l.hashes != sized.hashes) {
        detail::fail(which + std::to_string(l.bits) + " bits and " + std::to_string(l.hashes) +
                     " hashes are not the sizing of its capacity and fpr (" +
                     std::to_string(sized.bits) + " bits, " + std::to_string(sized.hashes) +
                     " hashes)");
      }
      l.word_offset = offset;
      offset += l.words();
    }
    // Each sub-filter's slice is then checked as the classic filter's own file would be.
    detail::check_chain<bloom_filter>(
        f, m.layers, [](const detail::scalable_layer& l) { return l.inserted; },
        [&](std::size_t i) { return m.layers[i].as_bloom(f.hash); });
    return m;
  }

  bit_array storage_;
  detail::scalable_meta meta_;
};

}  // namespace bloomery
