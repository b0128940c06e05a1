// The cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher 2014): buckets of 4 f-bit
// fingerprints, bit-packed, in a table whose bucket count is not rounded to a power of two, so it
// runs at 95% load. Partial-key cuckoo hashing with a bounded number of evictions and a one-entry
// victim stash: a full table refuses inserts but never loses a key. Supports remove() and count().
// docs/cuckoo-filter.md has the model, the sizing and the file layout.
//
// Thread safety: one writer. insert, remove and clear need exclusive access; queries
// (may_contain, may_contain_many, count, the statistics) may run concurrently with each other.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bloomery/bit_array.hpp"
#include "bloomery/detail/core_common.hpp"
#include "bloomery/detail/cuckoo_core.hpp"
#include "bloomery/detail/filter_file.hpp"
#include "bloomery/detail/filter_view.hpp"
#include "bloomery/format.hpp"
#include "bloomery/hash.hpp"
#include "bloomery/results.hpp"
#include "bloomery/sizing.hpp"
#include "bloomery/stats.hpp"

namespace bloomery {

// Explicit cuckoo-filter parameters: `cuckoo_filter f({.fingerprint_bits = 12, .buckets = 1000});`.
struct cuckoo_parameters {
  std::uint32_t fingerprint_bits = 0;  // f, 4 .. 16
  std::uint64_t buckets = 0;           // any count >= 1; need not be a power of two
  std::uint32_t max_kicks = detail::cuckoo_default_max_kicks;  // evictions before the stash
  // Semi-sorted buckets: 4f - 4 bits per bucket instead of 4f, same answers
  // (docs/cuckoo-filter.md). Filters sized from a target use them; explicit parameters ask for
  // them.
  bool semi_sorted = false;
};

namespace detail {

// The read-only verbs, written once for the owning filter and its mapped view. Derived supplies
// `meta_` and `storage()`.
template <class Derived>
class cuckoo_queries {
 public:
  template <hashable_key K>
  bool may_contain(const K& key) const noexcept {
    return cuckoo_probe(words(), lanes(), meta().stash, position(key));
  }

  // Answers for many keys at once: hashes a block of keys and prefetches both buckets of each
  // before probing. `out[i]` receives may_contain(keys[i]); returns the number of positives.
  template <std::ranges::random_access_range Keys, class Out>
  std::size_t may_contain_many(const Keys& keys, Out&& out) const {
    return cuckoo_probe_many(meta().hash, words(), lanes(), meta().buckets, meta().stash, keys,
                             out);
  }

  // Copies of the key's fingerprint in its two buckets and the stash: at least the number of
  // times the key was inserted and not removed (other keys' equal fingerprints can only add).
  template <hashable_key K>
  std::uint32_t count(const K& key) const noexcept {
    return cuckoo_count(words(), lanes(), meta().stash, position(key));
  }

  std::uint32_t fingerprint_bits() const noexcept { return meta().fingerprint_bits; }
  std::uint64_t bucket_count() const noexcept { return meta().buckets; }
  std::uint64_t slot_count() const noexcept { return meta().buckets * cuckoo_bucket_slots; }
  std::uint32_t max_kicks() const noexcept { return meta().max_kicks; }
  std::uint64_t capacity() const noexcept { return meta().capacity; }
  double target_fpr() const noexcept { return meta().target_fpr; }
  // Successful inserts so far (failed ones are not counted), and successful removes.
  std::uint64_t inserted() const noexcept { return meta().inserted; }
  std::uint64_t removed() const noexcept { return meta().removed; }
  const hasher& hash() const noexcept { return meta().hash; }
  std::uint64_t size_in_bytes() const noexcept {
    return words_for_bits(
               cuckoo_storage_bits(meta().fingerprint_bits, meta().buckets, meta().semi_sorted)) *
           8;
  }
  // Whether the table stores semi-sorted buckets (4f - 4 bits each) rather than plain ones (4f).
  bool semi_sorted() const noexcept { return meta().semi_sorted; }
  // Bits of one bucket in the table: 4f, or 4f - 4 when semi-sorted.
  std::uint32_t bucket_bits() const noexcept {
    return cuckoo_bucket_bits(meta().fingerprint_bits, meta().semi_sorted);
  }

  // True once an insert ran out of evictions and parked a fingerprint in the stash: every later
  // insert fails (returns `full`) until a remove makes room.
  bool is_full() const noexcept { return meta().stash.used; }
  // The stash itself (its fingerprint and bucket while in use), for tests and tools.
  const cuckoo_stash& stash() const noexcept { return meta().stash; }

  // Stored fingerprints, the stash included: inserted() - removed(). Exact for the filter's
  // content; "approximate" only in that colliding keys cannot be told apart.
  std::uint64_t approximate_count() const noexcept { return meta().inserted - meta().removed; }
  // Fingerprints in the table (stash excluded), counted by scanning it.
  std::uint64_t occupied_slots() const noexcept {
    return cuckoo_occupied_slots(words(), lanes(), meta().buckets);
  }
  // Fraction of table slots in use (stash excluded).
  double load_factor() const noexcept {
    const std::uint64_t in_table = approximate_count() - (meta().stash.used ? 1 : 0);
    return static_cast<double>(in_table) / static_cast<double>(slot_count());
  }
  // The false-positive rate this filter has now, from its actual occupancy (stored fingerprints,
  // the stash included): 1 - exp(-8 · load / (2^f - 1)) (see cuckoo_fpr_model).
  double estimated_fpr() const noexcept {
    return cuckoo_fpr_model(meta().fingerprint_bits, static_cast<double>(approximate_count()) /
                                                         static_cast<double>(slot_count()));
  }
  // The shared name of load_factor().
  double fill_ratio() const noexcept { return load_factor(); }

  filter_stats stats() const {
    filter_stats s = common_stats(*this, filter_kind::cuckoo);
    s.bits = meta().buckets * bucket_bits();
    s.fill_ratio = load_factor();
    s.over_capacity = is_full() || approximate_count() > meta().capacity;
    s.params = {{"fingerprint_bits", std::uint64_t{meta().fingerprint_bits}},
                {"semi_sorted", meta().semi_sorted},
                {"buckets", meta().buckets},
                {"slots", slot_count()},
                {"removed", meta().removed},
                {"full", is_full()}};
    return s;
  }

 private:
  const cuckoo_meta& meta() const noexcept { return as_derived<Derived>(*this).meta_; }
  const std::uint64_t* words() const noexcept { return as_derived<Derived>(*this).storage(); }
  cuckoo_lanes lanes() const noexcept {
    return cuckoo_lanes(meta().fingerprint_bits, meta().semi_sorted);
  }
  template <class K>
  cuckoo_position position(const K& key) const noexcept {
    return cuckoo_locate(hash_key(meta().hash, key), meta().fingerprint_bits, meta().buckets);
  }
};

using cuckoo_file = filter_file<cuckoo_filter, filter_kind::cuckoo, cuckoo_queries, cuckoo_meta>;
}  // namespace detail

class cuckoo_filter : public detail::cuckoo_queries<cuckoo_filter>, public detail::cuckoo_file {
 public:
  static constexpr std::uint32_t bucket_slots = detail::cuckoo_bucket_slots;
  static constexpr std::uint32_t min_fingerprint_bits = detail::cuckoo_min_fingerprint_bits;
  static constexpr std::uint32_t max_fingerprint_bits = detail::cuckoo_max_fingerprint_bits;
  static constexpr std::uint32_t default_max_kicks = detail::cuckoo_default_max_kicks;
  static constexpr std::uint32_t max_max_kicks = 1u << 20;
  // The load a filter sized from a target runs at when it holds `capacity` keys: 19/20.
  static constexpr std::uint64_t target_load_num = 19, target_load_den = 20;
  static constexpr double target_load =
      static_cast<double>(target_load_num) / static_cast<double>(target_load_den);

  // Sized for `t.capacity` keys at false-positive rate `t.fpr`: f is the smallest width in
  // [4, 16] whose model rate at 95% load, 1 - exp(-8·0.95 / (2^f - 1)), is at most t.fpr, the
  // bucket count is buckets_for(capacity) (about capacity / (4·0.95)), and the buckets are
  // semi-sorted (4f - 4 bits instead of 4f, the same false-positive rate) whenever that takes
  // fewer bytes: always but for tiny tables, whose two layouts round to the same 64-byte lines.
  explicit cuckoo_filter(target t, hasher h = {}) {
    const sizing s = size_for(t);
    init(s.f, s.buckets, default_max_kicks, t.capacity, t.fpr, std::move(h), s.semi_sorted);
  }
  // Explicit f, bucket count, kick bound and layout. The capacity becomes the number of keys that
  // fill the table to 95%, floor(0.95·4·buckets) (at least 1), and the target FPR the model's rate
  // there.
  explicit cuckoo_filter(cuckoo_parameters p, hasher h = {}) {
    check_fingerprint_bits(p.fingerprint_bits);
    check_buckets(p.buckets, p.fingerprint_bits, p.semi_sorted);
    check_max_kicks(p.max_kicks);
    const std::uint64_t cap =
        std::max<std::uint64_t>(1, p.buckets * bucket_slots * target_load_num / target_load_den);
    init(p.fingerprint_bits, p.buckets, p.max_kicks, cap,
         detail::as_target_fpr(model_fpr(p.fingerprint_bits, p.buckets, cap)), std::move(h),
         p.semi_sorted);
  }

  // The smallest false-positive rate a filter sized from a target can promise: the model's rate
  // for 16-bit fingerprints at 95% load (about 1.16e-4). Smaller targets are rejected.
  static double min_fpr() noexcept {
    return detail::cuckoo_fpr_model(max_fingerprint_bits, target_load);
  }

  // The fingerprint width a target asks for: the smallest f in [4, 16] with
  // cuckoo_fpr_model(f, 0.95) <= fpr. Throws for fpr < min_fpr().
  static std::uint32_t fingerprint_bits_for(double fpr) {
    detail::check_fpr(fpr);
    for (std::uint32_t f = min_fingerprint_bits; f <= max_fingerprint_bits; ++f) {
      if (detail::cuckoo_fpr_model(f, target_load) <= fpr) return f;
    }
    detail::invalid(
        "fpr", detail::format_value(fpr),
        "allowed range is [" + detail::format_value(min_fpr()) +
            ", 1) for a cuckoo filter (16-bit fingerprints at 95% load reach no lower)");
  }
  // Buckets for `capacity` keys: ceil((n + s) / 3.8) = ceil(5·(n + s) / 19), rounded up to an
  // even count, with a slack of s = ceil(1.5·sqrt(n)) keys. Large tables run at about 95% load;
  // the slack and the even count (no single-bucket keys, see cuckoo_alt_bucket) keep small tables
  // from failing by chance (docs/cuckoo-filter.md, "Defaults and why").
  static std::uint64_t buckets_for(std::uint64_t capacity) {
    detail::check_capacity(capacity);
    if (capacity > max_bits) {
      detail::invalid("capacity", std::to_string(capacity), "allowed range is [1, 2^48]");
    }
    const auto slack =
        static_cast<std::uint64_t>(std::ceil(1.5 * std::sqrt(static_cast<double>(capacity))));
    const std::uint64_t den = bucket_slots * target_load_num;
    const std::uint64_t buckets = ((capacity + slack) * target_load_den + den - 1) / den;
    return buckets + buckets % 2;
  }

  // What cuckoo_filter(t) would cost, without allocating it.
  static filter_plan plan(target t) {
    const sizing s = size_for(t);
    const std::uint64_t bytes =
        detail::words_for_bits(detail::cuckoo_storage_bits(s.f, s.buckets, s.semi_sorted)) * 8;
    return {bytes, 8.0 * static_cast<double>(bytes) / static_cast<double>(t.capacity),
            model_fpr(s.f, s.buckets, t.capacity),
            "f=" + std::to_string(s.f) + " buckets=" + std::to_string(s.buckets) + " kicks=" +
                std::to_string(default_max_kicks) + (s.semi_sorted ? " semi-sorted" : "")};
  }

  // Adds the key's fingerprint. Returns `inserted` (true) when the key is stored, and `full`
  // (false), changing nothing, when the table is full (is_full()): the filter then still answers
  // "possibly present" for every key inserted before. The insert that runs out of evictions still
  // succeeds: its last victim goes to the stash, and that makes the table full.
  template <hashable_key K>
  [[nodiscard]] insert_result insert(const K& key) noexcept {
    if (meta_.stash.used) return insert_result::full;
    const hash128 h = hash_key(meta_.hash, key);
    place_hash(h, detail::cuckoo_locate(h, meta_.fingerprint_bits, meta_.buckets));
    return insert_result::inserted;
  }
  // Inserts the key and says whether it answered "possibly present" before (a crawler's
  // seen-check). A present key is stored once more, as insert() would, so that a later remove()
  // of it takes its own copy and never another key's; `full` means nothing changed.
  template <hashable_key K>
  [[nodiscard]] insert_result check_and_insert(const K& key) noexcept {
    if (meta_.stash.used) return insert_result::full;
    const hash128 h = hash_key(meta_.hash, key);
    const detail::cuckoo_position p =
        detail::cuckoo_locate(h, meta_.fingerprint_bits, meta_.buckets);
    const bool present = detail::cuckoo_probe(
        table_.data(), detail::cuckoo_lanes(meta_.fingerprint_bits, meta_.semi_sorted), meta_.stash,
        p);
    place_hash(h, p);
    return present ? insert_result::already_present : insert_result::inserted;
  }

  // Removes one copy of the key's fingerprint from its buckets (or the stash). Returns
  // `not_present` (false), and changes nothing, when no copy is there (the key is certainly
  // absent). Remove only keys that were inserted: removing a key never inserted may delete the copy
  // of another key with the same fingerprint and buckets, which then reads as absent. After a
  // remove, a stashed fingerprint moves back into the table when it can.
  template <hashable_key K>
  remove_result remove(const K& key) noexcept {
    const detail::cuckoo_position p =
        detail::cuckoo_locate(hash_key(meta_.hash, key), meta_.fingerprint_bits, meta_.buckets);
    return detail::cuckoo_remove(table_.data(), meta_, p, detail::cuckoo_pairing{meta_.buckets})
               ? remove_result::removed
               : remove_result::not_present;
  }

  void clear() noexcept {
    table_.clear();
    meta_.stash = {};
    meta_.inserted = 0;
    meta_.removed = 0;
  }

  // Same shape and layout, same hashing, the same table and stash (capacity, kick bound and counts
  // are not compared). Union is not defined for cuckoo filters: two tables cannot be merged in
  // place without re-inserting, which may fail.
  friend bool operator==(const cuckoo_filter& a, const cuckoo_filter& b) noexcept {
    return a.meta_.fingerprint_bits == b.meta_.fingerprint_bits &&
           a.meta_.semi_sorted == b.meta_.semi_sorted && a.meta_.buckets == b.meta_.buckets &&
           a.meta_.hash == b.meta_.hash && a.meta_.stash == b.meta_.stash && a.table_ == b.table_;
  }

  // The raw words, for tests and tools; the words past the table are zero. Plain buckets: bucket b
  // holds bits [4f·b, 4f·b + 4f), slot j of it bits [4f·b + j·f, 4f·b + (j+1)·f). Semi-sorted:
  // bucket b holds bits [(4f-4)·b, (4f-4)·(b+1)), laid out as in detail/cuckoo_core.hpp.
  std::span<const std::uint64_t> words() const noexcept { return table_.words(); }

 private:
  friend detail::cuckoo_queries<cuckoo_filter>;
  friend detail::cuckoo_file;
  struct sizing {
    std::uint32_t f;
    std::uint64_t buckets;
    bool semi_sorted;
  };

  cuckoo_filter(detail::cuckoo_meta m, bit_array table)
      : table_(std::move(table)), meta_(std::move(m)) {}

  static sizing size_for(target t) {
    detail::check_capacity(t.capacity);
    detail::check_fpr(t.fpr);
    const std::uint32_t f = fingerprint_bits_for(t.fpr);
    const std::uint64_t buckets = buckets_for(t.capacity);
    // Semi-sorting saves 4 bits per bucket at the same f (so the same false-positive rate), and
    // costs a decode per bucket access: take it whenever it makes the storage smaller, which it
    // does for every f unless the table is so small that both round to the same 64-byte lines.
    const bool semi_sorted = detail::words_for_bits(detail::cuckoo_storage_bits(f, buckets, true)) <
                             detail::words_for_bits(detail::cuckoo_storage_bits(f, buckets, false));
    if (detail::cuckoo_storage_bits(f, buckets, semi_sorted) > max_bits) {
      throw std::invalid_argument("bloomery: capacity = " + std::to_string(t.capacity) +
                                  " at fpr = " + detail::format_value(t.fpr) +
                                  " needs more than the maximum 2^48 bits");
    }
    return {f, buckets, semi_sorted};
  }
  static double model_fpr(std::uint32_t f, std::uint64_t buckets, std::uint64_t keys) {
    return detail::cuckoo_fpr_model(
        f, static_cast<double>(keys) / static_cast<double>(buckets * bucket_slots));
  }

  static void check_fingerprint_bits(std::uint64_t f) {
    if (f < min_fingerprint_bits || f > max_fingerprint_bits) {
      detail::invalid("fingerprint_bits", std::to_string(f), "allowed range is [4, 16]");
    }
  }
  static std::uint64_t max_buckets(std::uint32_t f, bool semi_sorted) {
    return (max_bits - 64) / detail::cuckoo_bucket_bits(f, semi_sorted);
  }
  static void check_buckets(std::uint64_t buckets, std::uint32_t f, bool semi_sorted) {
    if (buckets == 0 || buckets > max_buckets(f, semi_sorted)) {
      detail::invalid("buckets", std::to_string(buckets),
                      "allowed range is [1, " + std::to_string(max_buckets(f, semi_sorted)) +
                          "] for " + std::to_string(f) + "-bit fingerprints" +
                          (semi_sorted ? " in semi-sorted buckets" : ""));
    }
  }
  static void check_max_kicks(std::uint64_t kicks) {
    if (kicks > max_max_kicks) {
      detail::invalid("max_kicks", std::to_string(kicks),
                      "allowed range is [0, " + std::to_string(max_max_kicks) + "]");
    }
  }

  void init(std::uint32_t f, std::uint64_t buckets, std::uint32_t kicks, std::uint64_t cap,
            double fpr, hasher h, bool semi_sorted) {
    table_ = bit_array(detail::cuckoo_storage_bits(f, buckets, semi_sorted));
    meta_ = {f, kicks, buckets, cap, fpr, 0, 0, {}, std::move(h), semi_sorted};
  }

  void place_hash(hash128 h, const detail::cuckoo_position& p) noexcept {
    detail::cuckoo_place_hash(table_.data(), meta_, h, p, detail::cuckoo_pairing{meta_.buckets});
  }

  const std::uint64_t* storage() const noexcept { return table_.data(); }

  // The parameter block: 56 bytes for plain buckets, exactly as before semi-sorting existed; a
  // semi-sorted table appends u32 layout = 1 and a zero u32 (64 bytes). Readers that predate the
  // field reject such a file (wrong block size) rather than misread its table.
  static std::vector<std::byte> params(const detail::cuckoo_meta& m) {
    detail::params_writer w;
    w.add<std::uint32_t>(m.fingerprint_bits)
        .add<std::uint32_t>(m.max_kicks)
        .add<std::uint64_t>(m.buckets)
        .add<std::uint64_t>(m.capacity)
        .add<double>(m.target_fpr)
        .add<std::uint64_t>(m.removed)
        .add<std::uint32_t>(m.stash.used ? 1 : 0)
        .add<std::uint32_t>(m.stash.fingerprint)
        .add<std::uint64_t>(m.stash.bucket);
    if (m.semi_sorted) w.add<std::uint32_t>(layout_semi_sorted).add<std::uint32_t>(0);
    return w.take();
  }
  static constexpr std::uint32_t layout_plain = 0, layout_semi_sorted = 1;
  // Validates the parameter block against the payload before anything trusts either.
  static detail::cuckoo_meta read_meta(const detail::parsed_file& f) {
    detail::params_reader r(f.params);
    detail::cuckoo_meta m;
    m.fingerprint_bits = r.read<std::uint32_t>("fingerprint bits");
    m.max_kicks = r.read<std::uint32_t>("max kicks");
    m.buckets = r.read<std::uint64_t>("bucket count");
    m.capacity = r.read<std::uint64_t>("capacity");
    m.target_fpr = r.read<double>("target fpr");
    m.removed = r.read<std::uint64_t>("remove count");
    const auto stash_used = r.read<std::uint32_t>("stash state");
    m.stash.fingerprint = r.read<std::uint32_t>("stash fingerprint");
    m.stash.bucket = r.read<std::uint64_t>("stash bucket");
    // Absent in files written before semi-sorted buckets: those are plain.
    if (!r.at_end()) {
      const auto layout = r.read<std::uint32_t>("bucket layout");
      const auto reserved = r.read<std::uint32_t>("bucket layout");
      // Plain buckets are written without the field, so one filter has exactly one file (an
      // explicit 0 re-serialized shorter; found by fuzz/deserialize_any).
      if (layout != layout_semi_sorted) {
        detail::fail("bucket layout field is " + std::to_string(layout) +
                     "; only semi-sorted buckets (1) write it, plain ones omit it");
      }
      if (reserved != 0) detail::fail("reserved parameter field is not zero");
      m.semi_sorted = layout == layout_semi_sorted;
    }
    r.expect_end("cuckoo");
    m.inserted = f.element_count;
    m.hash = f.hash;
    const std::uint32_t fb = m.fingerprint_bits;
    if (fb < min_fingerprint_bits || fb > max_fingerprint_bits) {
      detail::fail("fingerprint bits out of range: " + std::to_string(fb) + " (allowed 4 .. 16)");
    }
    if (m.max_kicks > max_max_kicks) {
      detail::fail("max kicks out of range: " + std::to_string(m.max_kicks));
    }
    if (m.buckets == 0 || m.buckets > max_buckets(fb, m.semi_sorted)) {
      detail::fail("bucket count out of range: " + std::to_string(m.buckets));
    }
    if (m.capacity == 0) detail::fail("capacity is zero");
    if (!(m.target_fpr > 0 && m.target_fpr < 1)) detail::fail("target fpr outside (0, 1)");
    if (stash_used > 1) detail::fail("stash state is neither 0 nor 1");
    m.stash.used = stash_used == 1;
    if (m.stash.used) {
      if (m.stash.fingerprint == 0 || m.stash.fingerprint >= (std::uint32_t{1} << fb)) {
        detail::fail("stash fingerprint out of range: " + std::to_string(m.stash.fingerprint));
      }
      if (m.stash.bucket >= m.buckets) {
        detail::fail("stash bucket out of range: " + std::to_string(m.stash.bucket));
      }
    } else if (m.stash.fingerprint != 0 || m.stash.bucket != 0) {
      detail::fail("empty stash with a non-zero fingerprint or bucket");
    }
    const std::uint64_t bits = detail::cuckoo_storage_bits(fb, m.buckets, m.semi_sorted);
    if (f.payload.size() != detail::words_for_bits(bits) * 8) {
      detail::fail("payload has " + std::to_string(f.payload.size()) + " bytes, " +
                   std::to_string(m.buckets) + (m.semi_sorted ? " semi-sorted" : "") +
                   " buckets of " + std::to_string(fb) + "-bit fingerprints need " +
                   std::to_string(detail::words_for_bits(bits) * 8));
    }
    // Bits past the table are never set; a set one means the payload does not belong to it.
    const auto* words = reinterpret_cast<const std::uint64_t*>(f.payload.data());
    const std::uint64_t table_bits = detail::cuckoo_table_bits(fb, m.buckets, m.semi_sorted);
    const std::uint64_t word_count = f.payload.size() / 8;
    if (table_bits % 64 != 0 && (words[table_bits / 64] >> (table_bits % 64)) != 0) {
      detail::fail("padding bits past the table are set");
    }
    for (std::uint64_t w = (table_bits + 63) / 64; w < word_count; ++w) {
      if (words[w] != 0) detail::fail("padding bits past the table are set");
    }
    const detail::cuckoo_lanes lanes(fb, m.semi_sorted);
    // A semi-sorted bucket must be exactly what encode() writes: a code below 3876, and equal
    // nibbles' low bits in ascending order (so equal contents compare equal, bit for bit).
    if (m.semi_sorted) {
      for (std::uint64_t b = 0; b < m.buckets; ++b) {
        if (!lanes.canonical(detail::read_stored_bucket(words, lanes, b))) {
          detail::fail("semi-sorted bucket " + std::to_string(b) + " is not validly encoded");
        }
      }
    }
    // Every successful insert stored one fingerprint and every successful remove took one away.
    const std::uint64_t stored =
        detail::cuckoo_occupied_slots(words, lanes, m.buckets) + (m.stash.used ? 1 : 0);
    if (m.removed > m.inserted) {
      detail::fail("remove count " + std::to_string(m.removed) + " exceeds insert count " +
                   std::to_string(m.inserted));
    }
    if (m.inserted - m.removed != stored) {
      detail::fail("the table holds " + std::to_string(stored) + " fingerprints, but " +
                   std::to_string(m.inserted) + " inserts minus " + std::to_string(m.removed) +
                   " removes leave " + std::to_string(m.inserted - m.removed));
    }
    return m;
  }

  bit_array table_;
  detail::cuckoo_meta meta_;
};

}  // namespace bloomery
