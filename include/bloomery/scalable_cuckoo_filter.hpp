// The scalable cuckoo filter: a chain of cuckoo tables (cuckoo_filter.hpp) that grows by adding
// sub-filters, as RedisBloom's CF does, so it needs no final capacity up front, deletes keys, and
// never loses one. docs/scalable-cuckoo-filter.md has the model, the sizing and the file layout.
//
// Sub-filter i is a cuckoo table of nb_i = nb0 · e^i buckets of 4 fingerprints, nb0 =
// cuckoo_filter::buckets_for(n0), so it holds n_i = n0 · e^i keys at 95% load or less (n0 the
// initial capacity, e the expansion, a power of two; e = 1: every sub-filter the size of the
// first). All share one hasher and one fingerprint width f: a key is hashed once, and its
// fingerprint is the same in every sub-filter. Inserts go to the newest sub-filter; when it refuses
// one (its eviction walk ran out and filled its stash: see cuckoo_filter::insert) the next
// sub-filter is added and takes the key. At the maximum number of sub-filters, or when the next one
// would pass 2^48 keys or bits, insert returns `full` and changes nothing. Queries are positive
// when any sub-filter's are; count() sums the copies over the sub-filters; remove() takes one copy
// from the newest sub-filter that holds one, as RedisBloom's CF.DEL does.
//
// Nested positions. A key's bucket i1 in sub-filter i is its hash mapped onto nb_i buckets, so
// dropping the low log2(e^i) bits of it gives its bucket in sub-filter 0; the pairing rule keeps
// that split: the high part pairs as in sub-filter 0 (cuckoo_alt_bucket over nb0), the low bits
// are flipped by bits of a mix of the fingerprint. So two keys that share a fingerprint and a
// bucket pair in a sub-filter share them in every older one, and a remove that takes another
// key's copy from a newer sub-filter (the two collide there) leaves the remover's own copy in an
// older one, where that other key finds it: no false negative ever follows from removing keys
// that were inserted (with unrelated bucket counts it would: docs/scalable-cuckoo-filter.md).
// RedisBloom gets the same from its power-of-two tables; sub-filter 0 is exactly a cuckoo_filter.
//
// Each sub-filter adds its own false-positive rate: with s sub-filters at loads a_i, the rate is
// 1 - prod(1 - r_i), r_i = 1 - exp(-8 a_i / (2^f - 1)) (cuckoo_fpr_model), about s times one
// sub-filter's. Unlike the scalable Bloom filter, nothing tightens as the chain grows (RedisBloom
// does not either), so the rate rises with every sub-filter; estimated_fpr() reports it.
//
// What RedisBloom's CF.INFO reports, from this filter (as the Redis module does): Size =
// size_in_bytes(), Number of buckets = sub_filter(0).buckets (RedisBloom's meaning: the first
// sub-filter's; bucket_count() sums them all), Number of filters = sub_filter_count(), Number of
// items inserted = approximate_count() (RedisBloom's count drops on delete; inserted() here does
// not), Number of items deleted = removed(), Bucket size = the BUCKETSIZE the client gave (this
// filter's buckets always hold bucket_size = 4), Expansion rate = expansion(), Max iterations =
// max_kicks().
//
// Storage: the sub-filters' tables lie back to back in one allocation, each a whole number of
// 64-byte lines, exactly as in the file's payload, so save and map_file copy nothing. Growing
// copies the old tables once into a larger allocation (at most max_sub_filters times).
//
// Thread safety: insert, remove and clear need exclusive access (growth moves the storage); the
// read-only verbs may run concurrently with each other, not beside a writer.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <ranges>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bloomery/bit_array.hpp"
#include "bloomery/cuckoo_filter.hpp"
#include "bloomery/detail/core_common.hpp"
#include "bloomery/detail/cuckoo_core.hpp"
#include "bloomery/detail/filter_file.hpp"
#include "bloomery/detail/filter_view.hpp"
#include "bloomery/detail/sub_filter_chain.hpp"
#include "bloomery/format.hpp"
#include "bloomery/hash.hpp"
#include "bloomery/results.hpp"
#include "bloomery/sizing.hpp"
#include "bloomery/stats.hpp"

namespace bloomery {

// Explicit parameters: `scalable_cuckoo_filter f({.initial_capacity = 1000});`. The defaults are
// RedisBloom 2.4's CF (8-bit fingerprints, MAXITERATIONS 20, EXPANSION 1, 32 sub-filters); its
// BUCKETSIZE has no counterpart, bloomery's buckets always hold 4 fingerprints.
struct scalable_cuckoo_parameters {
  std::uint64_t initial_capacity = 0;  // n0: keys sub-filter 0 is sized for, [1, 2^48]
  std::uint32_t fingerprint_bits = 8;  // f of every sub-filter, [4, 16]
  std::uint32_t max_kicks = 20;        // evictions an insert may make in a sub-filter, [1, 65535]
  std::uint32_t expansion = 1;         // e: sub-filter i holds n0 · e^i keys; 1, 2, 4 .. 32768
  std::uint32_t max_sub_filters = 32;  // the chain's length limit, [1, 64]
  // Semi-sorted buckets (4f - 4 bits instead of 4f, the same answers: docs/cuckoo-filter.md):
  // 1/8 less memory at f = 8 for a decode per bucket access.
  bool semi_sorted = true;
};

// One sub-filter of a scalable cuckoo filter (scalable_cuckoo_filter::sub_filter(i)).
struct scalable_cuckoo_sub_filter {
  std::uint64_t capacity = 0;       // n_i = n0 · e^i keys, at 95% load or less
  std::uint64_t buckets = 0;        // nb0 · e^i
  std::uint64_t inserted = 0;       // the inserts it took
  std::uint64_t removed = 0;        // the removes that took a copy from it
  bool full = false;                // its stash is in use: it refuses inserts
  std::uint64_t size_in_bytes = 0;  // its table, a whole number of 64-byte lines
  std::uint64_t word_offset = 0;    // where its table starts in the filter's words()
  double load_factor = 0;           // fraction of its slots in use (its stash excluded)
  double target_fpr = 0;            // the model's rate at n_i keys (sub-filter 0: target_fpr())
  double estimated_fpr = 0;         // the model's rate at its actual occupancy
};

namespace detail {

inline constexpr std::uint32_t scalable_cuckoo_max_kicks = 65535;
inline constexpr std::uint32_t scalable_cuckoo_max_expansion = 32768;
// 40 bytes of parameters plus 48 per sub-filter keep the parameter block at 3112 bytes, under the
// format's 4096.
inline constexpr std::uint32_t scalable_cuckoo_max_sub_filters = 64;

// One sub-filter: a cuckoo filter's metadata (its own counts and stash) and where its table
// starts in the concatenated storage.
struct scalable_cuckoo_layer {
  cuckoo_meta table;
  std::uint64_t word_offset = 0;
  std::uint32_t shift = 0;  // log2(e^i): the low bits of a bucket index that sub-filter 0 lacks
  std::uint64_t words() const noexcept {
    return words_for_bits(
        cuckoo_storage_bits(table.fingerprint_bits, table.buckets, table.semi_sorted));
  }
};

// Everything a scalable cuckoo filter is besides its tables.
struct scalable_cuckoo_meta {
  scalable_cuckoo_parameters params;
  double fpr = 0.0;  // the target of sub-filter 0 (its model rate at n0 keys, or the caller's)
  hasher hash;
  std::vector<scalable_cuckoo_layer> layers;  // oldest first
};

inline void check_scalable_cuckoo_parameters(const scalable_cuckoo_parameters& p) {
  check_capacity(p.initial_capacity, "initial_capacity");
  if (p.initial_capacity > max_bits) {
    invalid("initial_capacity", std::to_string(p.initial_capacity), "allowed range is [1, 2^48]");
  }
  if (p.fingerprint_bits < cuckoo_min_fingerprint_bits ||
      p.fingerprint_bits > cuckoo_max_fingerprint_bits) {
    invalid("fingerprint_bits", std::to_string(p.fingerprint_bits), "allowed range is [4, 16]");
  }
  if (p.max_kicks < 1 || p.max_kicks > scalable_cuckoo_max_kicks) {
    invalid("max_kicks", std::to_string(p.max_kicks), "allowed range is [1, 65535]");
  }
  if (p.expansion < 1 || p.expansion > scalable_cuckoo_max_expansion ||
      !std::has_single_bit(p.expansion)) {
    invalid("expansion", std::to_string(p.expansion),
            "allowed: a power of two in [1, 32768] (1: every sub-filter the size of the first; "
            "RedisBloom rounds other values up to a power of two; a filter that never grows has "
            "max_sub_filters = 1)");
  }
  if (p.max_sub_filters < 1 || p.max_sub_filters > scalable_cuckoo_max_sub_filters) {
    invalid("max_sub_filters", std::to_string(p.max_sub_filters), "allowed range is [1, 64]");
  }
}

// The model rate of a cuckoo table of `buckets` buckets holding `keys` fingerprints.
inline double scalable_cuckoo_model(std::uint32_t f, std::uint64_t buckets, std::uint64_t keys) {
  return cuckoo_fpr_model(
      f, static_cast<double>(keys) / static_cast<double>(buckets * cuckoo_bucket_slots));
}

// The pairing rule of a sub-filter of nb0 · 2^shift buckets (see "Nested positions" above): the
// high part of a bucket index pairs as in sub-filter 0, its low `shift` bits are flipped by the
// top bits of H'(fp) = cuckoo_fingerprint_mix(fp + 2^16), another mix of the fingerprint than the
// one cuckoo_alt_bucket uses. An involution without fixed points (nb0 is even). Part of the file
// format: never change it.
struct scalable_cuckoo_pairing {
  std::uint64_t base_buckets;  // nb0
  std::uint32_t shift;
  std::uint64_t operator()(std::uint64_t b, std::uint64_t fp) const noexcept {
    if (shift == 0) return cuckoo_alt_bucket(b, fp, base_buckets);
    const std::uint64_t low = (std::uint64_t{1} << shift) - 1;
    const std::uint64_t flip =
        cuckoo_fingerprint_mix(fp | (std::uint64_t{1} << 16)) >> (64 - shift);
    return cuckoo_alt_bucket(b >> shift, fp, base_buckets) << shift | ((b ^ flip) & low);
  }
};

// Sub-filter l's pairing rule in the chain `m` (whose sub-filter 0 has nb0 buckets).
inline scalable_cuckoo_pairing scalable_cuckoo_pairing_of(const scalable_cuckoo_meta& m,
                                                          const scalable_cuckoo_layer& l) noexcept {
  return {m.layers.front().table.buckets, l.shift};
}

// A key's fingerprint and buckets in sub-filter l: i1 its hash mapped onto the sub-filter's
// buckets, as in cuckoo_locate, and i2 by the sub-filter's pairing rule.
inline cuckoo_position scalable_cuckoo_locate(hash128 h, const scalable_cuckoo_meta& m,
                                              const scalable_cuckoo_layer& l) noexcept {
  cuckoo_position p;
  p.fp = 1 + reduce(h.high, (std::uint64_t{1} << l.table.fingerprint_bits) - 1);
  p.i1 = reduce(h.low, l.table.buckets);
  p.i2 = scalable_cuckoo_pairing_of(m, l)(p.i1, p.fp);
  return p;
}

// Sub-filter i of a chain: n0 · e^i keys in nb0 · e^i buckets (exact integer arithmetic, so every
// platform derives the same shapes; files are checked against them), its table starting at
// `word_offset`. None when it cannot exist: past 2^48 keys, or a table past 2^48 bits.
inline std::optional<scalable_cuckoo_layer> scalable_cuckoo_make_layer(
    const scalable_cuckoo_meta& m, std::size_t i, std::uint64_t word_offset) {
  const scalable_cuckoo_parameters& p = m.params;
  const std::uint64_t shift = static_cast<std::uint64_t>(std::countr_zero(p.expansion)) * i;
  if (shift > 48 || p.initial_capacity > (max_bits >> shift)) return std::nullopt;
  const std::uint64_t capacity = p.initial_capacity << shift;
  const std::uint64_t base = cuckoo_filter::buckets_for(p.initial_capacity);
  if (base > (max_bits >> shift)) return std::nullopt;
  const std::uint64_t buckets = base << shift;
  if (buckets > (max_bits - 64) / cuckoo_bucket_bits(p.fingerprint_bits, p.semi_sorted)) {
    return std::nullopt;
  }
  const double fpr =
      i == 0 ? m.fpr : as_target_fpr(scalable_cuckoo_model(p.fingerprint_bits, buckets, capacity));
  scalable_cuckoo_layer l;
  l.table = {p.fingerprint_bits, p.max_kicks, buckets, capacity, fpr, 0, 0, {}, m.hash,
             p.semi_sorted};
  l.word_offset = word_offset;
  l.shift = static_cast<std::uint32_t>(shift);
  return l;
}

// The read-only verbs, written once for the owning filter and its mapped view. Derived supplies
// `meta_` and `storage()` (the concatenated sub-filter tables).
template <class Derived>
class scalable_cuckoo_queries {
 public:
  // Fingerprints per bucket (RedisBloom's "Bucket size"); fixed.
  static constexpr std::uint32_t bucket_size = cuckoo_bucket_slots;

  // Hashes the key once; probes the sub-filters newest first (the largest, holding the most keys).
  template <hashable_key K>
  bool may_contain(const K& key) const noexcept {
    return probe(hash_key(meta().hash, key));
  }

  // Answers for many keys at once: hashes a block of keys once, then walks the sub-filters newest
  // first, prefetching both buckets of each still-undecided key before probing it (in sub-filters
  // too large for the cache); keys found leave the block (chain_probe_many). `out[i]` receives
  // may_contain(keys[i]); returns the number of positives.
  template <std::ranges::random_access_range Keys, class Out>
  std::size_t may_contain_many(const Keys& keys, Out&& out) const {
    return chain_probe_many<cuckoo_batch_size>(meta().hash, meta().layers.size(), layer_probe_of(),
                                               keys, out);
  }

  // Copies of the key's fingerprint in its buckets and the stashes of every sub-filter: at least
  // the number of times the key was inserted and not removed (other keys' equal fingerprints can
  // only add).
  template <hashable_key K>
  std::uint64_t count(const K& key) const noexcept {
    const hash128 h = hash_key(meta().hash, key);
    const cuckoo_lanes lanes = this->lanes();
    std::uint64_t n = 0;
    for (const scalable_cuckoo_layer& l : meta().layers) {
      n += cuckoo_count(words() + l.word_offset, lanes, l.table.stash,
                        scalable_cuckoo_locate(h, meta(), l));
    }
    return n;
  }

  std::size_t sub_filter_count() const noexcept { return meta().layers.size(); }
  // Sub-filter i (0 = oldest): its shape, counts and estimates.
  scalable_cuckoo_sub_filter sub_filter(std::size_t i) const {
    const scalable_cuckoo_layer& l = meta().layers.at(i);
    const cuckoo_meta& t = l.table;
    const std::uint64_t stored = t.inserted - t.removed;
    return {t.capacity,
            t.buckets,
            t.inserted,
            t.removed,
            t.stash.used,
            l.words() * 8,
            l.word_offset,
            static_cast<double>(stored - (t.stash.used ? 1 : 0)) /
                static_cast<double>(t.buckets * cuckoo_bucket_slots),
            t.target_fpr,
            scalable_cuckoo_model(t.fingerprint_bits, t.buckets, stored)};
  }
  // Copies of the key's fingerprint in sub-filter i: in its two buckets there and its stash.
  template <hashable_key K>
  std::uint32_t count_in(std::size_t i, const K& key) const {
    const scalable_cuckoo_layer& l = meta().layers.at(i);
    return cuckoo_count(words() + l.word_offset, lanes(), l.table.stash,
                        scalable_cuckoo_locate(hash_key(meta().hash, key), meta(), l));
  }

  // The initial capacity n0 (sub-filter 0's); the filter holds more by growing.
  std::uint64_t capacity() const noexcept { return meta().params.initial_capacity; }
  // Keys the existing sub-filters are sized for: sum of n_i.
  std::uint64_t total_capacity() const noexcept {
    return chain_sum(meta().layers,
                     [](const scalable_cuckoo_layer& l) { return l.table.capacity; });
  }
  // Sub-filter 0's target rate: the caller's target, or (explicit parameters) the model's rate at
  // n0 keys. The filter's rate passes it as sub-filters are added.
  double target_fpr() const noexcept { return meta().fpr; }
  const scalable_cuckoo_parameters& parameters() const noexcept { return meta().params; }
  std::uint32_t fingerprint_bits() const noexcept { return meta().params.fingerprint_bits; }
  std::uint32_t max_kicks() const noexcept { return meta().params.max_kicks; }
  std::uint32_t expansion() const noexcept { return meta().params.expansion; }
  std::uint32_t max_sub_filters() const noexcept { return meta().params.max_sub_filters; }
  bool semi_sorted() const noexcept { return meta().params.semi_sorted; }
  // Buckets and slots of all sub-filters together.
  std::uint64_t bucket_count() const noexcept {
    return chain_sum(meta().layers, [](const scalable_cuckoo_layer& l) { return l.table.buckets; });
  }
  std::uint64_t slot_count() const noexcept { return bucket_count() * cuckoo_bucket_slots; }
  // Successful inserts so far (failed ones are not counted), and successful removes.
  std::uint64_t inserted() const noexcept {
    return chain_sum(meta().layers,
                     [](const scalable_cuckoo_layer& l) { return l.table.inserted; });
  }
  std::uint64_t removed() const noexcept {
    return chain_sum(meta().layers, [](const scalable_cuckoo_layer& l) { return l.table.removed; });
  }
  const hasher& hash() const noexcept { return meta().hash; }
  std::uint64_t size_in_bytes() const noexcept { return chain_words(meta().layers) * 8; }

  // The bytes the next sub-filter would add (growing allocates size_in_bytes() plus these, then
  // frees the old storage); 0 when none can be added: max_sub_filters reached, or the next would
  // pass 2^48 keys or bits. A server can refuse a growth it cannot afford before it happens.
  std::uint64_t next_sub_filter_bytes() const noexcept {
    const auto& m = meta();
    if (m.layers.size() >= m.params.max_sub_filters) return 0;
    const std::optional<scalable_cuckoo_layer> next =
        scalable_cuckoo_make_layer(m, m.layers.size(), 0);
    return next ? next->words() * 8 : 0;
  }
  // True when the next insert would fail: the newest sub-filter is full and no sub-filter can be
  // added. Removes from the newest sub-filter make room again.
  bool is_full() const noexcept {
    return meta().layers.back().table.stash.used && next_sub_filter_bytes() == 0;
  }

  // Stored fingerprints, the stashes included: inserted() - removed(). Exact for the filter's
  // content; "approximate" only in that colliding keys cannot be told apart.
  std::uint64_t approximate_count() const noexcept { return inserted() - removed(); }
  // Fraction of all sub-filters' table slots in use (stashes excluded).
  double load_factor() const noexcept {
    std::uint64_t in_table = 0;
    for (const auto& l : meta().layers) {
      in_table += l.table.inserted - l.table.removed - (l.table.stash.used ? 1 : 0);
    }
    return static_cast<double>(in_table) / static_cast<double>(slot_count());
  }
  // The shared name of load_factor().
  double fill_ratio() const noexcept { return load_factor(); }
  // The false-positive rate this filter has now: 1 - prod(1 - r_i), each r_i a sub-filter's model
  // rate at its actual occupancy (stash included).
  double estimated_fpr() const noexcept {
    const auto& layers = meta().layers;
    const auto rate = [&](const scalable_cuckoo_layer& l) {
      return scalable_cuckoo_model(l.table.fingerprint_bits, l.table.buckets,
                                   l.table.inserted - l.table.removed);
    };
    if (layers.size() == 1) return rate(layers[0]);  // exactly the cuckoo filter's estimate
    return detail::compound_fpr(layers.size(), [&](std::size_t i) { return rate(layers[i]); });
  }

  filter_stats stats() const {
    filter_stats s = common_stats(*this, filter_kind::scalable_cuckoo);
    const std::uint32_t bucket_bits =
        cuckoo_bucket_bits(meta().params.fingerprint_bits, meta().params.semi_sorted);
    s.bits = bucket_count() * bucket_bits;
    s.fill_ratio = load_factor();
    s.over_capacity = approximate_count() > capacity() && estimated_fpr() > target_fpr();
    s.params = {{"sub_filters", std::uint64_t{sub_filter_count()}},
                {"fingerprint_bits", std::uint64_t{meta().params.fingerprint_bits}},
                {"semi_sorted", meta().params.semi_sorted},
                {"buckets", bucket_count()},
                {"total_capacity", total_capacity()},
                {"expansion", std::uint64_t{meta().params.expansion}},
                {"max_sub_filters", std::uint64_t{meta().params.max_sub_filters}},
                {"max_kicks", std::uint64_t{meta().params.max_kicks}},
                {"removed", removed()},
                {"full", is_full()}};
    return s;
  }

 protected:
  bool probe(hash128 h) const noexcept {
    return chain_probe(meta().layers.size(), layer_probe_of(), h);
  }
  cuckoo_lanes lanes() const noexcept {
    return cuckoo_lanes(meta().params.fingerprint_bits, meta().params.semi_sorted);
  }

 private:
  // A sub-filter as sub_filter_chain.hpp's Probe policy: its table's buckets and stash.
  struct layer_probe {
    const std::uint64_t* words;
    const scalable_cuckoo_meta& chain;
    const scalable_cuckoo_layer& layer;
    cuckoo_lanes lanes;
    bool prefetching;
    cuckoo_position locate(hash128 h) const noexcept {
      return scalable_cuckoo_locate(h, chain, layer);
    }
    [[gnu::always_inline]] void prefetch(const cuckoo_position& p) const noexcept {
      prefetch_bucket(words, lanes, p.i1);
      prefetch_bucket(words, lanes, p.i2);
    }
    bool probe(const cuckoo_position& p) const noexcept {
      return cuckoo_probe(words, lanes, layer.table.stash, p);
    }
  };
  auto layer_probe_of() const noexcept {
    return [this, lanes = this->lanes()](std::size_t i) {
      const scalable_cuckoo_layer& l = meta().layers[i];
      return layer_probe{words() + l.word_offset, meta(), l, lanes,
                         l.words() * 8 >= batch_min_bytes};
    };
  }

  const scalable_cuckoo_meta& meta() const noexcept { return as_derived<Derived>(*this).meta_; }
  const std::uint64_t* words() const noexcept { return as_derived<Derived>(*this).storage(); }
};

using scalable_cuckoo_file = filter_file<scalable_cuckoo_filter, filter_kind::scalable_cuckoo,
                                         scalable_cuckoo_queries, scalable_cuckoo_meta>;
}  // namespace detail

class scalable_cuckoo_filter : public detail::scalable_cuckoo_queries<scalable_cuckoo_filter>,
                               public detail::scalable_cuckoo_file {
 public:
  static constexpr std::uint32_t max_max_kicks = detail::scalable_cuckoo_max_kicks;
  static constexpr std::uint32_t max_expansion = detail::scalable_cuckoo_max_expansion;
  static constexpr std::uint32_t max_max_sub_filters = detail::scalable_cuckoo_max_sub_filters;
  // What a filter sized from a target grows with: sub-filters of doubling size (so the chain
  // reaches 2^31 times its first capacity and the rate grows with the logarithm of the key count),
  // cuckoo_filter's eviction bound (so the first sub-filter holds its capacity, as a cuckoo filter
  // for the same target does), up to 32 sub-filters, semi-sorted.
  static constexpr std::uint32_t target_expansion = 2;
  static constexpr std::uint32_t target_max_kicks = cuckoo_filter::default_max_kicks;
  static constexpr std::uint32_t target_max_sub_filters = 32;

  // Explicit parameters; sub-filter 0's target is the model's rate at n0 keys. Throws
  // std::invalid_argument naming a value out of range, or a first sub-filter past 2^48 bits.
  explicit scalable_cuckoo_filter(scalable_cuckoo_parameters p, hasher h = {}) {
    detail::check_scalable_cuckoo_parameters(p);
    const std::uint64_t buckets = cuckoo_filter::buckets_for(p.initial_capacity);
    init(p,
         detail::as_target_fpr(
             detail::scalable_cuckoo_model(p.fingerprint_bits, buckets, p.initial_capacity)),
         std::move(h));
  }
  // Sized as cuckoo_filter(t) sizes itself: sub-filter 0 holds t.capacity keys at rate t.fpr or
  // less (f = cuckoo_filter::fingerprint_bits_for(t.fpr)); the chain then grows with
  // target_expansion, target_max_kicks and target_max_sub_filters, its rate rising above t.fpr.
  explicit scalable_cuckoo_filter(target t, hasher h = {}) {
    const scalable_cuckoo_parameters p = parameters_for(t);
    init(p, t.fpr, std::move(h));
  }

  // The parameters scalable_cuckoo_filter(t) uses.
  static scalable_cuckoo_parameters parameters_for(target t) {
    detail::check_capacity(t.capacity);
    if (t.capacity > max_bits) {
      detail::invalid("capacity", std::to_string(t.capacity), "allowed range is [1, 2^48]");
    }
    detail::check_fpr(t.fpr);
    scalable_cuckoo_parameters p;
    p.initial_capacity = t.capacity;
    p.fingerprint_bits = cuckoo_filter::fingerprint_bits_for(t.fpr);
    p.max_kicks = target_max_kicks;
    p.expansion = target_expansion;
    p.max_sub_filters = target_max_sub_filters;
    p.semi_sorted = true;
    detail::check_scalable_cuckoo_parameters(p);
    return p;
  }

  // How many sub-filters a chain of these parameters can reach: max_sub_filters, or fewer where
  // sub-filter i would pass 2^48 keys or bits (large capacities times a large expansion).
  static std::size_t sub_filter_limit(const scalable_cuckoo_parameters& p) {
    detail::check_scalable_cuckoo_parameters(p);
    const detail::scalable_cuckoo_meta m{p, 0.5, {}, {}};
    std::size_t i = 0;
    while (i < p.max_sub_filters && detail::scalable_cuckoo_make_layer(m, i, 0)) ++i;
    return i;
  }

  // What scalable_cuckoo_filter(t) costs at first (its first sub-filter, the size of
  // cuckoo_filter(t)), without allocating it; expected_fpr is that sub-filter's model rate at
  // t.capacity keys.
  static filter_plan plan(target t) { return plan(parameters_for(t)); }
  static filter_plan plan(scalable_cuckoo_parameters p) {
    detail::check_scalable_cuckoo_parameters(p);
    const detail::scalable_cuckoo_layer first = first_layer(p, 0.5);
    const std::uint64_t bytes = first.words() * 8;
    return {
        bytes, 8.0 * static_cast<double>(bytes) / static_cast<double>(p.initial_capacity),
        detail::scalable_cuckoo_model(p.fingerprint_bits, first.table.buckets, p.initial_capacity),
        "f=" + std::to_string(p.fingerprint_bits) +
            " buckets0=" + std::to_string(first.table.buckets) +
            " kicks=" + std::to_string(p.max_kicks) + " expansion=" + std::to_string(p.expansion) +
            " max_sub_filters=" + std::to_string(p.max_sub_filters) +
            (p.semi_sorted ? " semi-sorted" : "")};
  }

  // Adds the key's fingerprint to the newest sub-filter, adding a sub-filter first when the newest
  // is full. Returns `inserted` (true) when the key is stored, and `full` (false), changing
  // nothing, when the newest sub-filter is full and none can be added (is_full()): every key
  // inserted before still answers "possibly present". A repeated key is stored once more, as in
  // cuckoo_filter. Throws allocation_error when a new sub-filter's memory cannot be had; the
  // filter is then unchanged.
  template <hashable_key K>
  [[nodiscard]] insert_result insert(const K& key) {
    return insert_hash(hash_key(meta_.hash, key));
  }
  // Inserts the key and says whether it answered "possibly present" before (RedisBloom's CF.ADDNX
  // is may_contain, then insert when it says no). A present key is stored once more, as insert()
  // would, so that a later remove() of it takes its own copy; `full` means nothing changed.
  template <hashable_key K>
  [[nodiscard]] insert_result check_and_insert(const K& key) {
    const hash128 h = hash_key(meta_.hash, key);
    const bool present = probe(h);
    const insert_result r = insert_hash(h);
    if (!r) return r;
    return present ? insert_result::already_present : insert_result::inserted;
  }

  // Removes one copy of the key's fingerprint from the newest sub-filter that holds one (its
  // buckets or its stash), as RedisBloom's CF.DEL does. Returns `not_present` (false), and changes
  // nothing, when no sub-filter holds one (the key is certainly absent). Remove only keys that
  // were inserted: removing a key never inserted may delete the copy of another key with the same
  // fingerprint and buckets, which then reads as absent.
  template <hashable_key K>
  remove_result remove(const K& key) noexcept {
    const hash128 h = hash_key(meta_.hash, key);
    for (std::size_t i = meta_.layers.size(); i-- > 0;) {
      detail::scalable_cuckoo_layer& l = meta_.layers[i];
      const detail::cuckoo_position p = detail::scalable_cuckoo_locate(h, meta_, l);
      if (detail::cuckoo_remove(storage_.data() + l.word_offset, l.table, p,
                                detail::scalable_cuckoo_pairing_of(meta_, l))) {
        return remove_result::removed;
      }
    }
    return remove_result::not_present;
  }

  // Back to a single, empty sub-filter (the memory of the others is released).
  void clear() {
    detail::chain_clear(storage_, meta_.layers);
    detail::cuckoo_meta& t = meta_.layers[0].table;
    t.inserted = 0;
    t.removed = 0;
    t.stash = {};
  }

  // Same parameters and hashing, the same sub-filters with the same tables and stashes (the
  // target and the counts are not compared). Union is not defined, as for cuckoo filters.
  friend bool operator==(const scalable_cuckoo_filter& a,
                         const scalable_cuckoo_filter& b) noexcept {
    const scalable_cuckoo_parameters& p = a.meta_.params;
    const scalable_cuckoo_parameters& q = b.meta_.params;
    if (p.initial_capacity != q.initial_capacity || p.fingerprint_bits != q.fingerprint_bits ||
        p.max_kicks != q.max_kicks || p.expansion != q.expansion ||
        p.max_sub_filters != q.max_sub_filters || p.semi_sorted != q.semi_sorted ||
        a.meta_.layers.size() != b.meta_.layers.size() || !(a.meta_.hash == b.meta_.hash)) {
      return false;
    }
    for (std::size_t i = 0; i < a.meta_.layers.size(); ++i) {
      if (a.meta_.layers[i].table.buckets != b.meta_.layers[i].table.buckets ||
          !(a.meta_.layers[i].table.stash == b.meta_.layers[i].table.stash)) {
        return false;
      }
    }
    return a.storage_ == b.storage_;
  }

  // The concatenated sub-filter tables (sub-filter i's starts at word sub_filter(i).word_offset),
  // for tools; each table is laid out as cuckoo_filter::words() describes.
  std::span<const std::uint64_t> words() const noexcept { return storage_.words(); }

 private:
  friend detail::scalable_cuckoo_queries<scalable_cuckoo_filter>;
  friend detail::scalable_cuckoo_file;
  scalable_cuckoo_filter(detail::scalable_cuckoo_meta m, bit_array storage)
      : storage_(std::move(storage)), meta_(std::move(m)) {}

  const std::uint64_t* storage() const noexcept { return storage_.data(); }

  // Sub-filter 0 for parameters already checked, at target `fpr`; invalid_argument when its table
  // would pass 2^48 bits.
  static detail::scalable_cuckoo_layer first_layer(const scalable_cuckoo_parameters& p,
                                                   double fpr) {
    const detail::scalable_cuckoo_meta m{p, fpr, {}, {}};
    const std::optional<detail::scalable_cuckoo_layer> l =
        detail::scalable_cuckoo_make_layer(m, 0, 0);
    if (!l) {
      throw std::invalid_argument(
          "bloomery: initial_capacity = " + std::to_string(p.initial_capacity) + " at " +
          std::to_string(p.fingerprint_bits) + "-bit fingerprints needs more than the maximum " +
          "2^48 bits");
    }
    return *l;
  }

  void init(const scalable_cuckoo_parameters& p, double fpr, hasher h) {
    detail::scalable_cuckoo_layer first = first_layer(p, fpr);
    first.table.hash = h;
    storage_ = bit_array(first.words() * 64);
    meta_ = {p, fpr, std::move(h), {first}};
  }

  insert_result insert_hash(hash128 h) {
    if (meta_.layers.back().table.stash.used && !grow()) return insert_result::full;
    detail::scalable_cuckoo_layer& l = meta_.layers.back();
    detail::cuckoo_place_hash(storage_.data() + l.word_offset, l.table, h,
                              detail::scalable_cuckoo_locate(h, meta_, l),
                              detail::scalable_cuckoo_pairing_of(meta_, l));
    return insert_result::inserted;
  }

  // Adds the next sub-filter: a larger allocation, the old tables copied over. False, changing
  // nothing, when none can be added; allocation_error (the filter unchanged) when its memory
  // cannot be had.
  bool grow() {
    const std::size_t i = meta_.layers.size();
    if (i >= meta_.params.max_sub_filters) return false;
    std::optional<detail::scalable_cuckoo_layer> next =
        detail::scalable_cuckoo_make_layer(meta_, i, detail::chain_words(meta_.layers));
    if (!next) return false;
    detail::chain_grow(storage_, meta_.layers, std::move(*next));
    return true;
  }

  static constexpr std::uint32_t layout_plain = 0, layout_semi_sorted = 1;

  static std::vector<std::byte> params(const detail::scalable_cuckoo_meta& m) {
    detail::params_writer w;
    w.add<std::uint64_t>(m.params.initial_capacity)
        .add<double>(m.fpr)
        .add<std::uint32_t>(m.params.fingerprint_bits)
        .add<std::uint32_t>(m.params.max_kicks)
        .add<std::uint32_t>(m.params.expansion)
        .add<std::uint32_t>(m.params.max_sub_filters)
        .add<std::uint32_t>(m.params.semi_sorted ? layout_semi_sorted : layout_plain)
        .add<std::uint32_t>(static_cast<std::uint32_t>(m.layers.size()));
    for (const auto& l : m.layers) {
      w.add<std::uint64_t>(l.table.capacity)
          .add<std::uint64_t>(l.table.buckets)
          .add<std::uint64_t>(l.table.inserted)
          .add<std::uint64_t>(l.table.removed)
          .add<std::uint32_t>(l.table.stash.used ? 1 : 0)
          .add<std::uint32_t>(l.table.stash.fingerprint)
          .add<std::uint64_t>(l.table.stash.bucket);
    }
    return w.take();
  }

  // Validates the parameter block against the payload before anything trusts either: the chain's
  // parameters in range, every sub-filter exactly the shape the parameters give it (so a forged
  // file cannot make the next growth ask for memory its payload does not show), and each
  // sub-filter's table checked as a cuckoo filter file of its own would be (cuckoo_filter::view_of
  // on its slice of the payload, with its kind-4 parameter block).
  static detail::scalable_cuckoo_meta read_meta(const detail::parsed_file& f) {
    detail::params_reader r(f.params);
    detail::scalable_cuckoo_meta m;
    m.params.initial_capacity = r.read<std::uint64_t>("initial capacity");
    m.fpr = r.read<double>("target fpr");
    m.params.fingerprint_bits = r.read<std::uint32_t>("fingerprint bits");
    m.params.max_kicks = r.read<std::uint32_t>("max kicks");
    m.params.expansion = r.read<std::uint32_t>("expansion");
    m.params.max_sub_filters = r.read<std::uint32_t>("max sub-filters");
    const auto layout = r.read<std::uint32_t>("bucket layout");
    const auto count = r.read<std::uint32_t>("sub-filter count");
    if (count == 0 || count > max_max_sub_filters) {
      detail::fail("sub-filter count out of range: " + std::to_string(count) + " (allowed 1.." +
                   std::to_string(max_max_sub_filters) + ")");
    }
    struct stored_layer {
      std::uint64_t capacity, buckets, inserted, removed;
      std::uint32_t stash_used, stash_fingerprint;
      std::uint64_t stash_bucket;
    };
    std::vector<stored_layer> stored(count);
    for (stored_layer& s : stored) {
      s.capacity = r.read<std::uint64_t>("sub-filter capacity");
      s.buckets = r.read<std::uint64_t>("sub-filter bucket count");
      s.inserted = r.read<std::uint64_t>("sub-filter insert count");
      s.removed = r.read<std::uint64_t>("sub-filter remove count");
      s.stash_used = r.read<std::uint32_t>("sub-filter stash state");
      s.stash_fingerprint = r.read<std::uint32_t>("sub-filter stash fingerprint");
      s.stash_bucket = r.read<std::uint64_t>("sub-filter stash bucket");
    }
    r.expect_end("scalable-cuckoo");
    m.hash = f.hash;
    if (layout > layout_semi_sorted) {
      detail::fail("bucket layout is " + std::to_string(layout) +
                   " (allowed 0: plain, 1: semi-sorted)");
    }
    m.params.semi_sorted = layout == layout_semi_sorted;
    try {
      detail::check_scalable_cuckoo_parameters(m.params);
    } catch (const std::invalid_argument& e) {
      std::string msg = e.what();
      const std::string prefix = "bloomery: ";
      if (msg.starts_with(prefix)) msg.erase(0, prefix.size());
      detail::fail(msg);
    }
    if (count > m.params.max_sub_filters) {
      detail::fail("sub-filter count " + std::to_string(count) + " exceeds max sub-filters " +
                   std::to_string(m.params.max_sub_filters));
    }
    if (!(m.fpr > 0 && m.fpr < 1)) detail::fail("target fpr outside (0, 1)");
    std::uint64_t offset = 0;
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::string which = "sub-filter " + std::to_string(i) + ": ";
      std::optional<detail::scalable_cuckoo_layer> l =
          detail::scalable_cuckoo_make_layer(m, i, offset);
      if (!l) detail::fail(which + "cannot exist with these parameters (past 2^48 keys or bits)");
      const stored_layer& s = stored[i];
      if (s.capacity != l->table.capacity || s.buckets != l->table.buckets) {
        detail::fail(which + "capacity " + std::to_string(s.capacity) + " and " +
                     std::to_string(s.buckets) + " buckets do not follow from the parameters " +
                     "(expected " + std::to_string(l->table.capacity) + " and " +
                     std::to_string(l->table.buckets) + ")");
      }
      // The rest of the stash is checked with the sub-filter's table, by cuckoo_filter.
      if (s.stash_used > 1) detail::fail(which + "stash state is neither 0 nor 1");
      l->table.inserted = s.inserted;
      l->table.removed = s.removed;
      l->table.stash = {s.stash_used == 1, s.stash_fingerprint, s.stash_bucket};
      offset += l->words();
      m.layers.push_back(std::move(*l));
    }
    // Each sub-filter's table is then checked as cuckoo_filter's own file would be.
    detail::check_chain<cuckoo_filter>(
        f, m.layers, [](const detail::scalable_cuckoo_layer& l) { return l.table.inserted; },
        [&](std::size_t i) { return m.layers[i].table; });
    return m;
  }

  bit_array storage_;
  detail::scalable_cuckoo_meta meta_;
};

}  // namespace bloomery
