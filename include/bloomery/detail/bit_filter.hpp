// One implementation for every filter that is "k bits per key in a bit array": the classic Bloom
// filter and the cache-line-blocked one differ only in where a key's k bits go (the Layout
// policy); storage, statistics, merges, concurrency and the file format are written once here.
//
// A Layout provides (all static):
//   kind, name                      file-format tag and the word used in messages
//   bloom_parameters size_for(target)  bits and hashes for a capacity and FPR
//   std::string check(bits, hashes) why explicit parameters are invalid ("" when valid)
//   double model_fpr(n, bits, k)    the expected FPR after n keys (the sizing model)
//   insert / insert_atomic / probe  one key's bits, from its hash
//   insert_many                     batched insert with prefetching
//   probe_many                      batched probe with prefetching
//   approximate_count, estimated_fpr   from the actual bits
//   max_probes, bits_multiple       the largest k; what every explicit m is a multiple of
//   probe_bytes                     probe() over the filter's bits stored as plain bytes
#pragma once

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
#include "bloomery/detail/filter_file.hpp"
#include "bloomery/detail/filter_view.hpp"
#include "bloomery/format.hpp"
#include "bloomery/hash.hpp"
#include "bloomery/results.hpp"
#include "bloomery/sizing.hpp"
#include "bloomery/stats.hpp"

namespace bloomery {

// Explicit bit-array filter parameters: `bloom_filter f({.bits = m, .hashes = k});`.
struct bloom_parameters {
  std::uint64_t bits = 0;
  std::uint32_t hashes = 0;
};

namespace detail {

// Everything a bit-array filter is besides its bits.
struct bloom_meta {
  std::uint64_t bits = 0;
  std::uint32_t hashes = 0;
  std::uint64_t capacity = 0;
  double target_fpr = 0.0;
  std::uint64_t inserted = 0;  // insert calls, duplicates included (merges add them up)
  hasher hash;
  bool shared = false;  // share_for_concurrent_inserts(); a property of this object, never saved
};

inline std::uint64_t saturating_count(double n) noexcept {
  if (!(n < 1.8e19)) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(std::llround(n));
}

// The read-only verbs, written once for the owning filter and its mapped view. Derived supplies
// `meta_` and `storage()`.
template <class Layout, class Derived>
class bit_filter_queries {
 public:
  template <hashable_key K>
  bool may_contain(const K& key) const noexcept {
    return Layout::probe(storage_words(), meta(), hash_key(meta().hash, key));
  }

  // Answers for many keys at once, hashing and prefetching ahead (faster on filters larger than
  // the cache). `out[i]` receives may_contain(keys[i]); returns the number of positives.
  template <std::ranges::random_access_range Keys, class Out>
  std::size_t may_contain_many(const Keys& keys, Out&& out) const {
    return Layout::probe_many(storage_words(), meta(), keys, out);
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
  // The raw words, for tests and tools (bit i is bit i%64 of word i/64).
  std::span<const std::uint64_t> words() const noexcept {
    return {storage_words(), words_for_bits(meta().bits)};
  }
  std::uint64_t size_in_bytes() const noexcept { return words_for_bits(meta().bits) * 8; }

  // Set bits (padding bits beyond m are never set).
  std::uint64_t set_bit_count() const noexcept { return count_set_bits(words()); }
  double fill_ratio() const noexcept {
    return static_cast<double>(set_bit_count()) / static_cast<double>(meta().bits);
  }
  // Distinct keys estimated from the bits; saturates at UINT64_MAX when they are all set.
  std::uint64_t approximate_count() const noexcept {
    return saturating_count(Layout::approximate_count(storage_words(), meta()));
  }
  // The false-positive rate this filter has now, computed from its actual bits.
  double estimated_fpr() const noexcept { return Layout::estimated_fpr(storage_words(), meta()); }
  // True once the estimated count is past capacity (past_capacity: by more than 1%); the FPR is
  // then above target.
  bool is_over_capacity() const noexcept {
    return past_capacity(approximate_count(), meta().capacity);
  }

  filter_stats stats() const {
    filter_stats s = common_stats(*this, Layout::kind);
    const std::uint64_t set = set_bit_count();
    s.bits = meta().bits;
    s.hashes = meta().hashes;
    s.fill_ratio = static_cast<double>(set) / static_cast<double>(meta().bits);
    s.over_capacity = past_capacity(s.approximate_count, s.capacity);  // no second count
    s.params = {{"set_bits", set}};
    return s;
  }

 private:
  const bloom_meta& meta() const noexcept { return as_derived<Derived>(*this).meta_; }
  const std::uint64_t* storage_words() const noexcept {
    return as_derived<Derived>(*this).storage();
  }
};

// The queries base of a layout, as the one-parameter template filter_view takes.
template <class Layout>
struct bit_queries_of {
  template <class Derived>
  using type = bit_filter_queries<Layout, Derived>;
};

template <class Layout>
using bit_file = filter_file<basic_bit_filter<Layout>, Layout::kind,
                             bit_queries_of<Layout>::template type, bloom_meta>;

template <class Layout>
class basic_bit_filter : public bit_filter_queries<Layout, basic_bit_filter<Layout>>,
                         public bit_file<Layout> {
 public:
  using view = typename bit_file<Layout>::view;

  // Sized for `t.capacity` keys at false-positive rate `t.fpr` by the layout's own FPR model.
  explicit basic_bit_filter(target t, hasher h = {}) {
    const auto [m, k] = Layout::size_for(t);
    init(m, k, t.capacity, t.fpr, std::move(h));
  }
  // Explicit m and k. The capacity becomes the n for which k is optimal, floor(m ln 2 / k), and
  // the target FPR the layout's model at that n.
  explicit basic_bit_filter(bloom_parameters p, hasher h = {}) {
    if (const std::string why = Layout::check(p.bits, p.hashes); !why.empty()) {
      throw std::invalid_argument("bloomery: " + why);
    }
    const auto cap = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(static_cast<double>(p.bits) * ln2 / p.hashes));
    init(p.bits, p.hashes, cap, as_target_fpr(Layout::model_fpr(cap, p.bits, p.hashes)),
         std::move(h));
  }

  // The most hashes (probes per key) this kind takes, and what an explicit bit count must be a
  // multiple of (1 for the classic filter; 512, one cache line, for the blocked one).
  static constexpr std::uint32_t max_hash_count = Layout::max_probes;
  static constexpr std::uint64_t bits_multiple = Layout::bits_multiple;

  // may_contain for a filter kept outside bloomery's storage, as plain bytes (LevelDB's filter
  // blocks): `bytes` holds the bits of a filter of m = 8 · bytes.size() bits and `hashes` probes
  // as words() lays them out (bit i is bit i % 8 of byte i / 8), at any alignment, and `h` is the
  // key's hash under that filter's hasher. The same answer as the filter's may_contain. The caller
  // checks the shape first: `hashes` in [1, max_hash_count], m a multiple of bits_multiple.
  static bool may_contain_bytes(std::span<const unsigned char> bytes, std::uint32_t hashes,
                                hash128 h) noexcept {
    return Layout::probe_bytes(bytes.data(), std::uint64_t{bytes.size()} * 8, hashes, h);
  }

  // What the filter sized for `t` would cost, without allocating it.
  static filter_plan plan(target t) {
    const auto [m, k] = Layout::size_for(t);
    const std::uint64_t bytes = words_for_bits(m) * 8;
    return {bytes, 8.0 * static_cast<double>(bytes) / static_cast<double>(t.capacity),
            Layout::model_fpr(t.capacity, m, k),
            "m=" + std::to_string(m) + " k=" + std::to_string(k)};
  }

  // Always `inserted`: a bit array never fills up (its FPR rises instead; see stats()).
  template <hashable_key K>
  insert_result insert(const K& key) noexcept {
    Layout::insert(bits_.data(), meta_, hash_key(meta_.hash, key));
    ++meta_.inserted;
    return insert_result::inserted;
  }
  // Inserts the key and says whether it answered "possibly present" before (a crawler's
  // seen-check).
  template <hashable_key K>
  [[nodiscard]] insert_result check_and_insert(const K& key) noexcept {
    const hash128 h = hash_key(meta_.hash, key);
    const bool present = Layout::probe(bits_.data(), meta_, h);
    Layout::insert(bits_.data(), meta_, h);
    ++meta_.inserted;
    return present ? insert_result::already_present : insert_result::inserted;
  }
  // Inserts every key of a random-access range, hashing a batch ahead and prefetching the lines
  // it will write: faster than insert() key by key on filters larger than the cache, and the
  // same bits.
  template <std::ranges::random_access_range Keys>
  void insert_many(const Keys& keys) {
    Layout::insert_many(bits_.data(), meta_, keys);
    meta_.inserted += std::ranges::size(keys);
  }
  // Declares that queries will run beside insert_concurrent calls (until share(false)). Needs
  // exclusive access, like insert: call it before the threads start. Shared, every query path
  // reads with relaxed atomic loads, race-free beside the atomic ORs; unshared, the blocked
  // filter's AVX2 probe reads a line with plain vector loads, which is faster but a data race
  // beside insert_concurrent (BENCHMARKS.md, "Concurrent queries").
  void share_for_concurrent_inserts(bool shared = true) noexcept { meta_.shared = shared; }
  bool shared_for_concurrent_inserts() const noexcept { return meta_.shared; }

  // Thread-safe insert: atomic OR of each word. Safe beside other insert_concurrent calls, and
  // beside queries once the filter is shared (share_for_concurrent_inserts); not beside
  // insert/clear/merges.
  template <hashable_key K>
  void insert_concurrent(const K& key) noexcept {
    Layout::insert_atomic(bits_.data(), meta_, hash_key(meta_.hash, key));
    __atomic_fetch_add(&meta_.inserted, 1, __ATOMIC_RELAXED);
  }

  void clear() noexcept {
    bits_.clear();
    meta_.inserted = 0;
  }

  // Union: afterwards the filter answers "possibly" for every key either filter held; it is
  // bit-identical to one filter built from both key sets.
  basic_bit_filter& operator|=(const basic_bit_filter& other) {
    check_compatible(other, "union");
    bits_.or_with(other.bits_);
    meta_.inserted += other.meta_.inserted;
    return *this;
  }
  // Intersection: answers "possibly" for every key both filters held (and possibly others:
  // bits set by different keys in each filter can survive the AND).
  basic_bit_filter& operator&=(const basic_bit_filter& other) {
    check_compatible(other, "intersection");
    bits_.and_with(other.bits_);
    meta_.inserted = std::min(meta_.inserted, other.meta_.inserted);
    return *this;
  }
  friend basic_bit_filter operator|(basic_bit_filter a, const basic_bit_filter& b) {
    return a |= b;
  }
  friend basic_bit_filter operator&(basic_bit_filter a, const basic_bit_filter& b) {
    return a &= b;
  }

  // Same shape, same hashing and the same bits (capacity and insert counts are not compared).
  friend bool operator==(const basic_bit_filter& a, const basic_bit_filter& b) noexcept {
    return a.meta_.bits == b.meta_.bits && a.meta_.hashes == b.meta_.hashes &&
           a.meta_.hash == b.meta_.hash && a.bits_ == b.bits_;
  }

  // Why `other` cannot be merged with this filter; empty when it can.
  std::string incompatibility(const basic_bit_filter& other) const {
    return first_difference({differs("bits", meta_.bits, other.meta_.bits),
                             differs("hashes", meta_.hashes, other.meta_.hashes),
                             describe_difference(meta_.hash, other.meta_.hash)});
  }

 private:
  friend bit_filter_queries<Layout, basic_bit_filter>;
  friend bit_file<Layout>;
  basic_bit_filter(bloom_meta m, bit_array bits) : bits_(std::move(bits)), meta_(std::move(m)) {}

  void init(std::uint64_t m, std::uint32_t k, std::uint64_t cap, double fpr, hasher h) {
    bits_ = bit_array(m);
    meta_ = {m, k, cap, fpr, 0, std::move(h), false};
  }
  void check_compatible(const basic_bit_filter& other, const char* op) const {
    const std::string why = incompatibility(other);
    if (!why.empty()) {
      throw std::invalid_argument(std::string("bloomery: cannot compute the ") + op + " of " +
                                  Layout::name + " filters: " + why);
    }
  }
  const std::uint64_t* storage() const noexcept { return bits_.data(); }

  // Parameter block (docs/file-format.md): bits u64, hashes u32, reserved u32, capacity u64,
  // target fpr f64.
  static std::vector<std::byte> params(const bloom_meta& m) {
    return params_writer()
        .add<std::uint64_t>(m.bits)
        .add<std::uint32_t>(m.hashes)
        .add<std::uint32_t>(0)  // reserved
        .add<std::uint64_t>(m.capacity)
        .add<double>(m.target_fpr)
        .take();
  }
  // Validates the parameter block against the payload before anything trusts either.
  static bloom_meta read_meta(const parsed_file& f) {
    params_reader r(f.params);
    bloom_meta m;
    m.bits = r.read<std::uint64_t>("bits");
    m.hashes = r.read<std::uint32_t>("hashes");
    const auto reserved = r.read<std::uint32_t>("reserved");
    m.capacity = r.read<std::uint64_t>("capacity");
    m.target_fpr = r.read<double>("target fpr");
    r.expect_end(Layout::name);
    m.inserted = f.element_count;
    m.hash = f.hash;
    if (const std::string why = Layout::check(m.bits, m.hashes); !why.empty()) fail(why);
    if (reserved != 0) fail("reserved parameter is not zero");
    if (m.capacity == 0) fail("capacity is zero");
    if (!(m.target_fpr > 0 && m.target_fpr < 1)) fail("target fpr outside (0, 1)");
    if (f.payload.size() != words_for_bits(m.bits) * 8) {
      fail("payload has " + std::to_string(f.payload.size()) + " bytes, " + std::to_string(m.bits) +
           " bits need " + std::to_string(words_for_bits(m.bits) * 8));
    }
    // Bits past m are never set by insert; a set one means the payload does not belong to m.
    const auto* words = reinterpret_cast<const std::uint64_t*>(f.payload.data());
    for (std::uint64_t i = m.bits; i < words_for_bits(m.bits) * 64; ++i) {
      if (test_bit(words, i)) fail("padding bits past m are set");
    }
    return m;
  }

  bit_array bits_;
  bloom_meta meta_;
};

}  // namespace detail
}  // namespace bloomery
