// RedisBloom 2.4's cuckoo filter (Redis type `MBbloomCF`), held bit-exactly: the value a RedisBloom
// server keeps for a CF.* key, answering and changing as RedisBloom 2.4 does (false positives,
// duplicate counts and the items a stray CF.DEL takes with it included), and read and written in
// RedisBloom's encodings: the RDB value (encoding versions 0 to 4, writing 4) and the
// CF.SCANDUMP / CF.LOADCHUNK chunks. Every rule below is RedisBloom v2.4.23's (its src/cuckoo.c,
// src/cf.c and src/rebloom.c), written up with references into that source in
// docs/redisbloom-format.md §4 (and what this type refuses that RedisBloom accepts in §5.3);
// tests/data/redisbloom-golden holds data the real module wrote, which
// tests/test_redisbloom_cuckoo.cpp checks this type against.
//
// The value is a chain of sub-filters, oldest first. Sub-filter i has numBuckets * expansion^i
// buckets of bucketSize one-byte slots (0 = empty, 1-255 a fingerprint). An item's hash h is
// MurmurHash64A(item, seed 0); its fingerprint is h mod 255 + 1, its first index h and its second
// h XOR (fingerprint * 0x5bd1e995); in a sub-filter of n buckets index i is bucket i mod n, whose
// first slot is ((i mod n) * bucketSize) truncated to 32 bits, as RedisBloom computes it.
//
// What RedisBloom would accept but mishandle (divide by zero, read or write outside an array,
// convert an out-of-range double) is refused here instead: a loader throws format_error, a growth
// answers add_result::allocation_failed. Every such place says so where it is decided. Values that
// do not fit the 16-bit and 56-bit fields RedisBloom keeps them in are refused, not truncated:
// RedisBloom never writes such values, so no data it wrote depends on the truncation.
//
// Thread safety: as a std::vector; concurrent reads are safe, a write needs exclusive access.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bloomery/errors.hpp"
#include "bloomery/interop/redisbloom_hash.hpp"

namespace bloomery::interop::redisbloom {

namespace detail {

[[noreturn]] inline void cuckoo_invalid(const char* what, std::int64_t value,
                                        const std::string& allowed) {
  throw std::invalid_argument("bloomery: RedisBloom cuckoo filter: " + std::string(what) + " = " +
                              std::to_string(value) + " is invalid; " + allowed);
}

[[noreturn]] inline void cuckoo_format_error(const char* source, const std::string& what) {
  throw format_error("bloomery: RedisBloom cuckoo filter " + std::string(source) + ": " + what);
}

// RedisBloom's round-up to a power of two: 0 (and anything above 2^63) becomes 0, because the
// first decrement wraps.
constexpr std::uint64_t cuckoo_next_pow2(std::uint64_t n) noexcept {
  --n;
  n |= n >> 1;
  n |= n >> 2;
  n |= n >> 4;
  n |= n >> 8;
  n |= n >> 16;
  n |= n >> 32;
  return n + 1;
}

// a * b when it is at most `limit`, else nullopt: every size below is a product of fields.
constexpr std::optional<std::uint64_t> cuckoo_product_within(std::uint64_t a, std::uint64_t b,
                                                             std::uint64_t limit) noexcept {
  if (a != 0 && b > limit / a) return std::nullopt;
  return a * b;
}

inline void cuckoo_put_le(std::vector<std::byte>& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<std::byte>(v >> (8 * i)));
}

inline std::uint64_t cuckoo_get_le(std::span<const std::byte> in, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= std::to_integer<std::uint64_t>(in[at + static_cast<std::size_t>(i)]) << (8 * i);
  }
  return v;
}

// RedisBloom finds a bucket's first slot at ((i mod n) * bucketSize) cut to 32 bits. Past 2^32
// slots that can name a bucket whose last slots lie beyond the array, but only when the array is
// longer than 2^32 bytes by less than one bucket, which no power-of-two bucket count gives. Such a
// sub-filter is refused rather than read out of bounds.
constexpr bool cuckoo_truncated_offsets_fit(std::uint64_t buckets,
                                            std::uint64_t bucket_size) noexcept {
  const std::uint64_t bytes = buckets * bucket_size;  // below 2^64: buckets < 2^56, size < 2^8
  constexpr std::uint64_t two_32 = std::uint64_t{1} << 32;
  return bytes <= two_32 || bytes - two_32 >= bucket_size;
}

// Zeroed slot storage, or allocation_error: parameters that pass every check can still ask for
// more memory than the machine has.
inline std::vector<std::uint8_t> cuckoo_zeroed_slots(std::uint64_t bytes) {
  try {
    if (bytes > std::vector<std::uint8_t>().max_size()) throw std::bad_alloc();
    return std::vector<std::uint8_t>(static_cast<std::size_t>(bytes));
  } catch (const std::bad_alloc&) {
    throw allocation_error(bytes, "a RedisBloom cuckoo sub-filter");
  }
}

}  // namespace detail

class cuckoo_chain {
 public:
  // The Redis data type's name, which an RDB value carries, and the encoding version written.
  static constexpr std::string_view redis_type_name = "MBbloomCF";
  static constexpr int rdb_encoding = 4;

  // RedisBloom's defaults: keys created by CF.ADD, CF.ADDNX, CF.INSERT and CF.INSERTNX (which
  // may give its own CAPACITY) take these, and so do CF.RESERVE's missing options.
  static constexpr std::int64_t default_capacity = 1024;
  static constexpr std::int64_t default_bucket_size = 2;
  static constexpr std::int64_t default_max_iterations = 20;
  static constexpr std::int64_t default_expansion = 1;
  // CF_MAX_EXPANSIONS: a command that finds this many sub-filters refuses to add anything.
  static constexpr unsigned default_max_expansions = 32;

  // CF.RESERVE's limits, and the widths of the fields RedisBloom keeps: 16 bits for the number of
  // sub-filters, 56 for a sub-filter's bucket count.
  static constexpr std::int64_t max_bucket_size = 255;
  static constexpr std::int64_t max_max_iterations = 65535;
  static constexpr std::int64_t max_expansion = 32768;
  static constexpr std::uint64_t max_filters = 65535;
  // No bound on the memory an add's growth may take (add's max_growth_bytes).
  static constexpr std::uint64_t no_limit = std::numeric_limits<std::uint64_t>::max();
  static constexpr std::uint64_t max_buckets = (std::uint64_t{1} << 56) - 1;

  // CF.SCANDUMP: the header's length, and the largest piece a sub-filter is sent in.
  static constexpr std::size_t scandump_header_bytes = 38;
  static constexpr std::uint64_t scandump_piece_bytes = std::uint64_t{16} << 20;

  // CF.RESERVE's arguments, as signed 64-bit integers because that is how the command parses them
  // (a negative capacity is refused by the capacity rule, as RedisBloom refuses it).
  struct parameters {
    std::int64_t capacity = default_capacity;
    std::int64_t bucket_size = default_bucket_size;
    std::int64_t max_iterations = default_max_iterations;
    std::int64_t expansion = default_expansion;
  };

  // What an add did, where RedisBloom's replies differ: 1; 0 (CF.ADDNX / CF.INSERTNX: the item may
  // be present, nothing stored); "Filter is full" or -1 (no room and EXPANSION 0); "Memory
  // allocation failure" or -1 (a new sub-filter could not be made). The last two leave the value
  // exactly as it was.
  enum class add_result { added, exists, full, allocation_failed };

  // A piece of the SCANDUMP stream and the iterator RedisBloom replies with it.
  struct chunk {
    std::uint64_t next_iter;
    std::span<const std::byte> bytes;
  };

  // The values an item's hash gives: its fingerprint and its two bucket indices (before the
  // reduction modulo a sub-filter's bucket count).
  struct position {
    std::uint8_t fingerprint;
    std::uint64_t index1;
    std::uint64_t index2;
  };

  // A new filter as CF.RESERVE makes it: numBuckets = nextpow2(capacity / bucketSize) (at least
  // 1), expansion rounded up to a power of two (0 stays 0), one empty sub-filter. Throws
  // std::invalid_argument for the values CF.RESERVE refuses (checked in its order: max
  // iterations, bucket size, expansion, then capacity >= 2 * bucket size), and allocation_error
  // where RedisBloom replies "Insufficient memory to create filter": more than 2^56 - 1 buckets,
  // or an array the machine cannot allocate.
  explicit cuckoo_chain(const parameters& p) {
    const shape s = shape_for(p);
    num_buckets_ = s.num_buckets;
    bucket_size_ = s.bucket_size;
    max_iterations_ = s.max_iterations;
    expansion_ = s.expansion;
    filters_.push_back({num_buckets_, detail::cuckoo_zeroed_slots(num_buckets_ * bucket_size_)});
  }

  // The bytes a new filter's sub-filter takes, after CF.RESERVE's checks (which throw as the
  // constructor does): what a server's memory guard weighs before creating one.
  static std::uint64_t slot_bytes_for(const parameters& p) {
    const shape s = shape_for(p);
    return s.num_buckets * s.bucket_size;
  }

  static std::uint64_t hash_of(std::span<const std::byte> item) noexcept {
    return murmur64a(item, 0);
  }
  static std::uint64_t hash_of(std::string_view item) noexcept { return hash_of(bytes_of(item)); }

  static position position_of(std::span<const std::byte> item) noexcept {
    const lookup l = lookup_for(hash_of(item));
    return {l.fp, l.h1, l.h2};
  }
  static position position_of(std::string_view item) noexcept {
    return position_of(bytes_of(item));
  }

  // CF.ADD / CF.INSERT: stores one more copy of the item's fingerprint. Sub-filters are tried
  // newest to oldest for a free slot in the first bucket, then the second; then fingerprints are
  // kicked out of the newest (up to maxIterations moves, undone if they find no room); then a new
  // sub-filter is added, unless the expansion is 0. The 32-filter limit is the command's
  // (at_max_expansions), checked once before a command's first add. A new sub-filter of more than
  // `max_growth_bytes` is not made (allocation_failed, the value unchanged): a server bounds by it
  // the memory one add may take, where RedisBloom allocates whatever the expansion asks.
  add_result add(std::span<const std::byte> item, std::uint64_t max_growth_bytes = no_limit) {
    return insert(lookup_for(hash_of(item)), max_growth_bytes);
  }
  add_result add(std::string_view item, std::uint64_t max_growth_bytes = no_limit) {
    return add(bytes_of(item), max_growth_bytes);
  }

  // CF.ADDNX / CF.INSERTNX: add_result::exists, storing nothing, when may_contain(item).
  add_result add_unique(std::span<const std::byte> item,
                        std::uint64_t max_growth_bytes = no_limit) {
    const lookup l = lookup_for(hash_of(item));
    if (contains(l)) return add_result::exists;
    return insert(l, max_growth_bytes);
  }
  add_result add_unique(std::string_view item, std::uint64_t max_growth_bytes = no_limit) {
    return add_unique(bytes_of(item), max_growth_bytes);
  }

  // CF.EXISTS: whether some sub-filter holds the fingerprint in one of the item's two buckets.
  bool may_contain(std::span<const std::byte> item) const noexcept {
    return contains(lookup_for(hash_of(item)));
  }
  bool may_contain(std::string_view item) const noexcept { return may_contain(bytes_of(item)); }

  // CF.COUNT: the copies of the fingerprint in the item's two buckets, over every sub-filter. A
  // sub-filter whose two buckets for the item are one bucket counts that bucket twice.
  std::uint64_t count(std::span<const std::byte> item) const noexcept {
    const lookup l = lookup_for(hash_of(item));
    std::uint64_t n = 0;
    for (const sub_filter& f : filters_) {
      n += count_in(bucket(f, l.h1), l.fp) + count_in(bucket(f, l.h2), l.fp);
    }
    return n;
  }
  std::uint64_t count(std::string_view item) const noexcept { return count(bytes_of(item)); }

  // CF.DEL: clears one copy of the fingerprint, in the newest sub-filter holding it (first bucket,
  // lowest slot, then second bucket); then, with more than one sub-filter and more deletes than a
  // tenth of the items, compacts as RedisBloom does after a delete (stopping at the first
  // sub-filter that cannot be emptied). False when no copy was found. The fingerprint may be
  // another item's: deleting an item never added can make a stored item answer false.
  bool remove(std::span<const std::byte> item) {
    const lookup l = lookup_for(hash_of(item));
    for (std::size_t i = filters_.size(); i > 0; --i) {
      sub_filter& f = filters_[i - 1];
      if (clear_one(bucket(f, l.h1), l.fp) || clear_one(bucket(f, l.h2), l.fp)) {
        // Unsigned wrap, as RedisBloom's counters wrap (a loaded value may claim 0 items).
        --num_items_;
        ++num_deletes_;
        if (filters_.size() > 1 &&
            static_cast<double>(num_deletes_) > static_cast<double>(num_items_) * 0.10) {
          compact_chain(false);
        }
        return true;
      }
    }
    return false;
  }
  bool remove(std::string_view item) { return remove(bytes_of(item)); }

  // CF.COMPACT: moves fingerprints from newer sub-filters into free slots of older ones, newest
  // first, and drops the newest sub-filter each time it empties; unlike the compaction after a
  // delete it goes on past a sub-filter that cannot be emptied. Resets the delete count.
  void compact() { compact_chain(true); }

  // Whether a command must refuse to add, replying "Maximum expansions reached".
  bool at_max_expansions(unsigned max = default_max_expansions) const noexcept {
    return filters_.size() >= max;
  }

  // CF.INFO's fields and CF.DEBUG's figures. Size is RedisBloom's own count: its filter struct
  // (40 bytes) and a 16-byte struct per sub-filter on x86-64, plus the slot arrays.
  std::uint64_t info_size() const noexcept {
    std::uint64_t bytes = 40 + 16 * std::uint64_t{filters_.size()};
    for (const sub_filter& f : filters_) bytes += f.buckets * bucket_size_;
    return bytes;
  }
  std::uint64_t num_buckets() const noexcept { return num_buckets_; }  // sub-filter 0's, as INFO
  std::uint64_t num_filters() const noexcept { return filters_.size(); }
  std::uint64_t num_items() const noexcept { return num_items_; }
  std::uint64_t num_deletes() const noexcept { return num_deletes_; }
  std::uint16_t bucket_size() const noexcept { return bucket_size_; }
  std::uint16_t expansion() const noexcept { return expansion_; }
  std::uint16_t max_iterations() const noexcept { return max_iterations_; }

  // CF.DEBUG's reply.
  std::string debug_string() const {
    return debug_line({bucket_size_, num_buckets_, num_items_, num_deletes_, filters_.size(),
                       max_iterations_, expansion_});
  }

  // CF.DEBUG's format, for a caller that reports another filter the same way.
  struct debug_figures {
    std::uint64_t bucket_size, buckets, items, deletes, filters, max_iterations, expansion;
  };
  static std::string debug_line(const debug_figures& f) {
    return "bktsize:" + std::to_string(f.bucket_size) + " buckets:" + std::to_string(f.buckets) +
           " items:" + std::to_string(f.items) + " deletes:" + std::to_string(f.deletes) +
           " filters:" + std::to_string(f.filters) +
           " max_iterations:" + std::to_string(f.max_iterations) +
           " expansion:" + std::to_string(f.expansion);
  }

  // Sub-filter i (oldest first): its bucket count and its slots. Throws std::out_of_range.
  std::uint64_t sub_filter_buckets(std::size_t i) const { return filters_.at(i).buckets; }
  std::span<const std::byte> sub_filter_slots(std::size_t i) const {
    return std::as_bytes(std::span(filters_.at(i).slots));
  }

  // The bucket count of the sub-filter the next growth would add, or nullopt where a growth would
  // fail: expansion 0 (the add answers `full`), 65535 sub-filters, or more than 2^56 - 1 buckets
  // (the add answers `allocation_failed`). Exact where RedisBloom converts pow()'s double, which
  // for growths past 2^64 is undefined behaviour there.
  std::optional<std::uint64_t> next_sub_filter_buckets() const noexcept {
    if (expansion_ == 0 || filters_.size() >= max_filters) return std::nullopt;
    std::uint64_t growth = 1;
    for (std::size_t i = 0; i < filters_.size() && expansion_ != 1; ++i) {
      growth *= expansion_;
      if (growth > max_buckets) return std::nullopt;  // then so is the product: num_buckets >= 1
    }
    if (growth > max_buckets / num_buckets_) return std::nullopt;
    const std::uint64_t buckets = num_buckets_ * growth;
    if (!detail::cuckoo_truncated_offsets_fit(buckets, bucket_size_)) return std::nullopt;
    return buckets;
  }
  // Its bytes, for a memory guard: an add that must grow allocates this many.
  std::optional<std::uint64_t> next_sub_filter_bytes() const noexcept {
    const auto buckets = next_sub_filter_buckets();
    if (!buckets) return std::nullopt;
    return *buckets * bucket_size_;
  }

  // What max_bytes charges for each sub-filter besides its slots: its record in the chain.
  static constexpr std::uint64_t sub_filter_record_bytes() noexcept { return sizeof(sub_filter); }

  // The memory this value holds.
  std::uint64_t bytes_held() const noexcept {
    std::uint64_t bytes = sizeof(*this) + filters_.capacity() * sizeof(sub_filter);
    for (const sub_filter& f : filters_) bytes += f.slots.capacity();
    return bytes;
  }

  // ---- RDB value -------------------------------------------------------------------------------
  // Encoding 4: numFilters, numBuckets, numItems, numDeletes, bucketSize, maxIterations,
  // expansion (unsigned), then per sub-filter its bucket count (unsigned) and its slots (string).
  // Versions 0 to 3 hold only numFilters, numBuckets, numItems and the slot strings; the rest is
  // then 0 deletes, bucket size 2, 20 iterations, expansion 1, and every sub-filter has numBuckets
  // buckets.
  //
  // Source: read_unsigned(), read_double(), read_string() (throwing on short input is its
  // business). RedisBloom's checks: version <= 4, numFilters and numBuckets not 0, each string as
  // long as its sub-filter (an assert that aborts the server there). Refused here besides, since
  // RedisBloom would crash on them or truncate them: more than 65535 sub-filters, a bucket size
  // outside [1, 255] (0 divides by zero on the first kick-out; above 255 RedisBloom's sub-filter
  // keeps only 8 bits of it while kick-outs use all 16 and write past the array), maxIterations or
  // expansion above 65535, a sub-filter of 0 or more than 2^56 - 1 buckets, and one whose slot
  // offsets would leave the array (cuckoo_truncated_offsets_fit). Accepted as RedisBloom accepts
  // them, though RedisBloom never writes them: maxIterations 0, any expansion up to 65535 (not
  // rounded), bucket counts that are not powers of two or not numBuckets * expansion^i, any
  // numItems and numDeletes. max_bytes bounds the sub-filters (arrays and records, as bytes_held)
  // and is checked before each string is read.
  template <class Source>
  static cuckoo_chain load_rdb(int encver, Source& in, std::uint64_t max_bytes) {
    constexpr const char* where = "RDB value";
    if (encver < 0 || encver > rdb_encoding) {
      detail::cuckoo_format_error(where, "encoding version " + std::to_string(encver) +
                                             " is not one RedisBloom 2.4 reads (0 to 4)");
    }
    cuckoo_chain c;
    const std::uint64_t num_filters = in.read_unsigned();
    c.num_buckets_ = in.read_unsigned();
    if (num_filters == 0 || c.num_buckets_ == 0) {
      detail::cuckoo_format_error(where, "numFilters = " + std::to_string(num_filters) +
                                             ", numBuckets = " + std::to_string(c.num_buckets_) +
                                             ": neither may be 0");
    }
    if (num_filters > max_filters) {
      detail::cuckoo_format_error(where, "numFilters = " + std::to_string(num_filters) +
                                             " is over RedisBloom's 16-bit limit of 65535");
    }
    c.num_items_ = in.read_unsigned();
    if (encver < rdb_encoding) {
      c.num_deletes_ = 0;
      c.bucket_size_ = static_cast<std::uint16_t>(default_bucket_size);
      c.max_iterations_ = static_cast<std::uint16_t>(default_max_iterations);
      c.expansion_ = static_cast<std::uint16_t>(default_expansion);
    } else {
      c.num_deletes_ = in.read_unsigned();
      c.bucket_size_ = narrow16(in.read_unsigned(), "bucketSize", 1, max_bucket_size);
      c.max_iterations_ = narrow16(in.read_unsigned(), "maxIterations", 0, 65535);
      c.expansion_ = narrow16(in.read_unsigned(), "expansion", 0, 65535);
    }
    std::uint64_t budget = reserve_records(num_filters, max_bytes, where);
    c.filters_.reserve(static_cast<std::size_t>(num_filters));
    for (std::uint64_t i = 0; i < num_filters; ++i) {
      const std::uint64_t buckets = encver < rdb_encoding ? c.num_buckets_ : in.read_unsigned();
      const std::uint64_t bytes = c.checked_sub_filter(i, buckets, budget, where);
      const std::string slots = in.read_string();
      if (slots.size() != bytes) {
        detail::cuckoo_format_error(
            where, "sub-filter " + std::to_string(i) + " has " + std::to_string(slots.size()) +
                       " bytes of slots, but " + std::to_string(buckets) + " buckets of " +
                       std::to_string(c.bucket_size_) + " make " + std::to_string(bytes));
      }
      std::vector<std::uint8_t> copy = detail::cuckoo_zeroed_slots(bytes);
      std::memcpy(copy.data(), slots.data(), slots.size());
      c.filters_.push_back({buckets, std::move(copy)});
    }
    return c;
  }

  // Writes encoding 4 exactly as RedisBloom does. Sink: write_unsigned(std::uint64_t),
  // write_double(double) (unused: the value holds no doubles), write_string(span of bytes).
  template <class Sink>
  void save_rdb(Sink& out) const {
    out.write_unsigned(filters_.size());
    out.write_unsigned(num_buckets_);
    out.write_unsigned(num_items_);
    out.write_unsigned(num_deletes_);
    out.write_unsigned(bucket_size_);
    out.write_unsigned(max_iterations_);
    out.write_unsigned(expansion_);
    for (const sub_filter& f : filters_) {
      out.write_unsigned(f.buckets);
      out.write_string(std::as_bytes(std::span(f.slots)));
    }
  }

  // ---- CF.SCANDUMP / CF.LOADCHUNK --------------------------------------------------------------
  // The header CF.SCANDUMP replies at iterator 0 (and the AOF rewrite sends first): 38 bytes,
  // little-endian, packed: u64 numItems, u64 numBuckets, u64 numDeletes, u64 numFilters,
  // u16 bucketSize, u16 maxIterations, u16 expansion. CF.SCANDUMP sends it only when
  // !scandump_refused().
  std::vector<std::byte> scandump_header() const {
    std::vector<std::byte> out;
    out.reserve(scandump_header_bytes);
    detail::cuckoo_put_le(out, num_items_, 8);
    detail::cuckoo_put_le(out, num_buckets_, 8);
    detail::cuckoo_put_le(out, num_deletes_, 8);
    detail::cuckoo_put_le(out, filters_.size(), 8);
    detail::cuckoo_put_le(out, bucket_size_, 2);
    detail::cuckoo_put_le(out, max_iterations_, 2);
    detail::cuckoo_put_le(out, expansion_, 2);
    return out;
  }

  // Whether CF.SCANDUMP replies [0, nil] at every iterator, header included: a filter holding no
  // items (numItems == 0) cannot be dumped that way.
  bool scandump_refused() const noexcept { return num_items_ == 0; }

  // CF.SCANDUMP's reply at iterator iter >= 1 (iterator 0 is the header): nullopt for [0, nil],
  // when scandump_refused() or past the end. The stream is the sub-filters' slots, oldest first,
  // and p = iter - 1; a sub-filter of at most 16 MiB is sent whole, from its start even when p is
  // inside it, and the iterator advances by its size; a larger one goes in pieces of at most
  // 16 MiB from p. Throws std::invalid_argument for iterator 0.
  std::optional<chunk> scandump_chunk(std::uint64_t iter) const {
    if (scandump_refused()) return std::nullopt;
    return stream_chunk(iter);
  }

  // The same chunking without the numItems rule: what the AOF rewrite emits after the header as
  // CF.LOADCHUNK commands, for an empty filter too.
  std::optional<chunk> stream_chunk(std::uint64_t iter) const {
    if (iter == 0) {
      throw std::invalid_argument(
          "bloomery: RedisBloom cuckoo filter: SCANDUMP iterator 0 is the header "
          "(scandump_header()); chunks start at iterator 1");
    }
    std::uint64_t offset = iter - 1;
    for (const sub_filter& f : filters_) {
      const std::uint64_t size = f.slots.size();
      if (offset < size) {
        const std::span<const std::byte> all = std::as_bytes(std::span(f.slots));
        if (size <= scandump_piece_bytes) return chunk{iter + size, all};
        const std::uint64_t length = std::min(size - offset, scandump_piece_bytes);
        return chunk{iter + length, all.subspan(static_cast<std::size_t>(offset),
                                                static_cast<std::size_t>(length))};
      }
      offset -= size;
    }
    return std::nullopt;
  }

  // CF.LOADCHUNK key 1 <header> on a missing key: a filter of the header's shape with every slot
  // empty, the data to come by load_chunk. RedisBloom's checks: exactly 38 bytes, bucketSize
  // 1-255, numBuckets a power of two of at most 2^56 - 1, maxIterations >= 1, expansion 0 only with
  // one sub-filter, numFilters 1-65535 (refused when above, where RedisBloom would keep the low 16
  // bits: it never writes such a header). Sub-filter i gets numBuckets * expansion^i buckets;
  // one past 2^56 - 1 is refused (RedisBloom's double product, cut to 56 bits, is then 0, which it
  // refuses, or a truncated count it then allocates). max_bytes bounds the sub-filters (arrays
  // and records, as bytes_held); all of it is checked before anything is allocated.
  static cuckoo_chain from_scandump_header(std::span<const std::byte> header,
                                           std::uint64_t max_bytes) {
    constexpr const char* where = "SCANDUMP header";
    if (header.size() != scandump_header_bytes) {
      detail::cuckoo_format_error(where, std::to_string(header.size()) + " bytes; it has 38");
    }
    cuckoo_chain c;
    c.num_items_ = detail::cuckoo_get_le(header, 0, 8);
    c.num_buckets_ = detail::cuckoo_get_le(header, 8, 8);
    c.num_deletes_ = detail::cuckoo_get_le(header, 16, 8);
    const std::uint64_t num_filters = detail::cuckoo_get_le(header, 24, 8);
    const std::uint64_t bucket_size = detail::cuckoo_get_le(header, 32, 2);
    c.max_iterations_ = static_cast<std::uint16_t>(detail::cuckoo_get_le(header, 34, 2));
    c.expansion_ = static_cast<std::uint16_t>(detail::cuckoo_get_le(header, 36, 2));
    if (bucket_size == 0 || bucket_size > max_bucket_size) {
      detail::cuckoo_format_error(
          where, "bucketSize = " + std::to_string(bucket_size) + " is outside [1, 255]");
    }
    c.bucket_size_ = static_cast<std::uint16_t>(bucket_size);
    if (c.num_buckets_ == 0 || c.num_buckets_ > max_buckets ||
        (c.num_buckets_ & (c.num_buckets_ - 1)) != 0) {
      detail::cuckoo_format_error(where, "numBuckets = " + std::to_string(c.num_buckets_) +
                                             " is not a power of two in [1, 2^56 - 1]");
    }
    if (num_filters == 0 || num_filters > max_filters) {
      detail::cuckoo_format_error(
          where, "numFilters = " + std::to_string(num_filters) + " is outside [1, 65535]");
    }
    if (c.max_iterations_ == 0) detail::cuckoo_format_error(where, "maxIterations = 0");
    if (c.expansion_ == 0 && num_filters > 1) {
      detail::cuckoo_format_error(
          where, "expansion = 0 with " + std::to_string(num_filters) + " sub-filters");
    }
    // Every size first, then the allocations: a hostile header allocates nothing.
    std::uint64_t budget = reserve_records(num_filters, max_bytes, where);
    std::vector<std::uint64_t> counts;
    counts.reserve(static_cast<std::size_t>(num_filters));
    std::uint64_t buckets = c.num_buckets_;
    for (std::uint64_t i = 0; i < num_filters; ++i) {
      if (i > 0) {
        const auto grown = detail::cuckoo_product_within(buckets, c.expansion_, max_buckets);
        if (!grown) {
          detail::cuckoo_format_error(
              where, "sub-filter " + std::to_string(i) + " would have more than 2^56 - 1 buckets");
        }
        buckets = *grown;
      }
      c.checked_sub_filter(i, buckets, budget, where);
      counts.push_back(buckets);
    }
    c.filters_.reserve(counts.size());
    for (const std::uint64_t n : counts) {
      c.filters_.push_back({n, detail::cuckoo_zeroed_slots(n * c.bucket_size_)});
    }
    return c;
  }

  // CF.LOADCHUNK key iter <data>, iter >= 2: copies data to stream offset iter - len(data) - 1.
  // False where RedisBloom replies "Couldn't load chunk!": empty data, iter - 1 < len(data), or a
  // piece that does not lie inside one sub-filter. As in RedisBloom, whose walk over the
  // sub-filters ends on the newest with the offset past it reduced by every sub-filter's size, a
  // piece that starts at most the newest sub-filter's size past the end of the stream (and ends
  // within that distance) is written into the newest sub-filter at that reduced offset.
  bool load_chunk(std::uint64_t iter, std::span<const std::byte> data) {
    if (data.empty() || iter == 0 || iter - 1 < data.size()) return false;
    std::uint64_t offset = iter - data.size() - 1;
    sub_filter* target = nullptr;
    for (sub_filter& f : filters_) {
      target = &f;
      if (offset < f.slots.size()) break;
      offset -= f.slots.size();
    }
    if (target == nullptr || offset > std::numeric_limits<std::uint64_t>::max() - data.size() ||
        target->slots.size() < offset + data.size()) {
      return false;
    }
    std::memcpy(target->slots.data() + offset, data.data(), data.size());
    return true;
  }

  friend bool operator==(const cuckoo_chain&, const cuckoo_chain&) = default;

 private:
  struct sub_filter {
    std::uint64_t buckets = 0;
    std::vector<std::uint8_t> slots;  // buckets * bucket size bytes
    friend bool operator==(const sub_filter&, const sub_filter&) = default;
  };

  // An item's fingerprint and indices (RedisBloom's lookup parameters).
  struct lookup {
    std::uint64_t h1;
    std::uint64_t h2;
    std::uint8_t fp;
  };

  cuckoo_chain() = default;

  // What the constructor makes of its parameters.
  struct shape {
    std::uint64_t num_buckets;
    std::uint16_t bucket_size;
    std::uint16_t max_iterations;
    std::uint16_t expansion;
  };

  static shape shape_for(const parameters& p) {
    if (p.max_iterations < 1 || p.max_iterations > max_max_iterations) {
      detail::cuckoo_invalid("max_iterations", p.max_iterations, "allowed range is [1, 65535]");
    }
    if (p.bucket_size < 1 || p.bucket_size > max_bucket_size) {
      detail::cuckoo_invalid("bucket_size", p.bucket_size, "allowed range is [1, 255]");
    }
    if (p.expansion < 0 || p.expansion > max_expansion) {
      detail::cuckoo_invalid("expansion", p.expansion, "allowed range is [0, 32768]");
    }
    if (p.capacity < 2 * p.bucket_size) {
      detail::cuckoo_invalid(
          "capacity", p.capacity,
          "it must be at least 2 * bucket_size = " + std::to_string(2 * p.bucket_size));
    }
    const auto capacity = static_cast<std::uint64_t>(p.capacity);
    const auto bucket_size = static_cast<std::uint64_t>(p.bucket_size);
    const std::uint64_t buckets =
        std::max<std::uint64_t>(detail::cuckoo_next_pow2(capacity / bucket_size), 1);
    if (buckets > max_buckets) {
      // RedisBloom's growth check refuses it: "Insufficient memory to create filter".
      const std::uint64_t bytes = buckets > std::numeric_limits<std::uint64_t>::max() / bucket_size
                                      ? std::numeric_limits<std::uint64_t>::max()
                                      : buckets * bucket_size;
      throw allocation_error(bytes, "a RedisBloom cuckoo filter of more than 2^56 - 1 buckets");
    }
    return {buckets, static_cast<std::uint16_t>(bucket_size),
            static_cast<std::uint16_t>(p.max_iterations),
            static_cast<std::uint16_t>(
                detail::cuckoo_next_pow2(static_cast<std::uint64_t>(p.expansion)))};
  }

  static constexpr std::uint64_t alt_index(std::uint8_t fp, std::uint64_t index) noexcept {
    return index ^ (std::uint64_t{fp} * 0x5bd1e995);
  }

  static constexpr lookup lookup_for(std::uint64_t hash) noexcept {
    const auto fp = static_cast<std::uint8_t>(hash % 255 + 1);
    return {hash, alt_index(fp, hash), fp};
  }

  // The first slot of the bucket `index` names, at RedisBloom's 32-bit offset.
  std::uint8_t* bucket(sub_filter& f, std::uint64_t index) const noexcept {
    return f.slots.data() + static_cast<std::uint32_t>((index % f.buckets) * bucket_size_);
  }
  const std::uint8_t* bucket(const sub_filter& f, std::uint64_t index) const noexcept {
    return f.slots.data() + static_cast<std::uint32_t>((index % f.buckets) * bucket_size_);
  }

  std::uint8_t* empty_slot(std::uint8_t* b) const noexcept {
    for (std::size_t i = 0; i < bucket_size_; ++i) {
      if (b[i] == 0) return b + i;
    }
    return nullptr;
  }
  std::uint8_t* free_slot(sub_filter& f, const lookup& l) const noexcept {
    std::uint8_t* slot = empty_slot(bucket(f, l.h1));
    return slot != nullptr ? slot : empty_slot(bucket(f, l.h2));
  }
  bool has(const std::uint8_t* b, std::uint8_t fp) const noexcept {
    return std::find(b, b + bucket_size_, fp) != b + bucket_size_;
  }
  std::uint64_t count_in(const std::uint8_t* b, std::uint8_t fp) const noexcept {
    return static_cast<std::uint64_t>(std::count(b, b + bucket_size_, fp));
  }
  bool clear_one(std::uint8_t* b, std::uint8_t fp) const noexcept {
    std::uint8_t* slot = std::find(b, b + bucket_size_, fp);
    if (slot == b + bucket_size_) return false;
    *slot = 0;
    return true;
  }

  bool contains(const lookup& l) const noexcept {
    return std::any_of(filters_.begin(), filters_.end(), [&](const sub_filter& f) {
      return has(bucket(f, l.h1), l.fp) || has(bucket(f, l.h2), l.fp);
    });
  }

  add_result insert(const lookup& l, std::uint64_t max_growth_bytes) {
    for (;;) {
      for (std::size_t i = filters_.size(); i-- > 0;) {
        if (std::uint8_t* slot = free_slot(filters_[i], l)) {
          *slot = l.fp;
          ++num_items_;
          return add_result::added;
        }
      }
      if (kick_out(filters_.back(), l)) {
        ++num_items_;
        return add_result::added;
      }
      if (expansion_ == 0) return add_result::full;
      if (!grow(max_growth_bytes)) return add_result::allocation_failed;
      // The new sub-filter is empty, so the next round stores the fingerprint there.
    }
  }

  // RedisBloom's eviction, step for step: the carried fingerprint swaps into slot `victim` of its
  // bucket, the evicted one goes to its other bucket, and the victim slot advances by one each
  // round; the bucket offsets here are full 64-bit products, as RedisBloom's are in this loop.
  // When maxIterations rounds find no free slot the same walk is retraced backwards, which puts
  // every fingerprint back (for power-of-two bucket counts, where the other-bucket map is its own
  // inverse; for the counts only a hand-made RDB value has, the walk is RedisBloom's all the same).
  bool kick_out(sub_filter& f, const lookup& l) noexcept {
    const std::uint64_t n = f.buckets;
    const std::uint64_t size = bucket_size_;
    std::uint64_t b = l.h1 % n;
    std::uint64_t victim = 0;
    std::uint8_t carried = l.fp;
    for (unsigned round = 0; round < max_iterations_; ++round) {
      std::swap(f.slots[b * size + victim], carried);
      b = alt_index(carried, b) % n;
      if (std::uint8_t* slot = empty_slot(f.slots.data() + b * size)) {
        *slot = carried;
        return true;
      }
      victim = (victim + 1) % size;
    }
    for (unsigned round = 0; round < max_iterations_; ++round) {
      victim = (victim + size - 1) % size;
      b = alt_index(carried, b) % n;
      std::swap(f.slots[b * size + victim], carried);
    }
    return false;
  }

  bool grow(std::uint64_t max_bytes) noexcept {
    const auto buckets = next_sub_filter_buckets();
    if (!buckets || *buckets * bucket_size_ > max_bytes) return false;
    try {
      filters_.push_back({*buckets, detail::cuckoo_zeroed_slots(*buckets * bucket_size_)});
    } catch (const std::bad_alloc&) {
      return false;  // allocation_error is one too: the value is unchanged
    }
    return true;
  }

  // Moves every fingerprint of sub-filter s it can into an older one (lowest sub-filter, then
  // first bucket, then lowest slot), where it may live: bucket j of s and its other bucket, each
  // reduced modulo the older sub-filter's count. Drops s if it emptied and is the newest.
  bool compact_sub_filter(std::size_t s) {
    sub_filter& from = filters_[s];
    bool emptied = true;
    for (std::uint64_t j = 0; j < from.buckets; ++j) {
      for (std::uint64_t k = 0; k < bucket_size_; ++k) {
        std::uint8_t& slot = from.slots[j * bucket_size_ + k];
        if (slot == 0) continue;
        const lookup l{j, alt_index(slot, j), slot};
        bool moved = false;
        for (std::size_t t = 0; t < s && !moved; ++t) {
          if (std::uint8_t* free = free_slot(filters_[t], l)) {
            *free = slot;
            slot = 0;
            moved = true;
          }
        }
        emptied = emptied && moved;
      }
    }
    if (emptied && s == filters_.size() - 1) filters_.pop_back();
    return emptied;
  }

  // With `go_on` false (after a delete) it stops at the first sub-filter that keeps a
  // fingerprint, as the older ones cannot be dropped while a newer one stays.
  void compact_chain(bool go_on) {
    for (std::size_t s = filters_.size(); --s > 0;) {
      if (!compact_sub_filter(s) && !go_on) break;
    }
    num_deletes_ = 0;
  }

  // A loaded field that RedisBloom keeps in 16 bits, in [lo, hi].
  static std::uint16_t narrow16(std::uint64_t v, const char* name, std::uint64_t lo,
                                std::uint64_t hi) {
    if (v < lo || v > hi) {
      detail::cuckoo_format_error("RDB value", std::string(name) + " = " + std::to_string(v) +
                                                   " is outside [" + std::to_string(lo) + ", " +
                                                   std::to_string(hi) + "]");
    }
    return static_cast<std::uint16_t>(v);
  }

  // Charges the sub-filter records to the budget; returns what is left for the slot arrays.
  static std::uint64_t reserve_records(std::uint64_t num_filters, std::uint64_t max_bytes,
                                       const char* where) {
    const std::uint64_t records = num_filters * sub_filter_record_bytes();  // num_filters <= 65535
    if (records > max_bytes) {
      detail::cuckoo_format_error(
          where, std::to_string(num_filters) + " sub-filters need " + std::to_string(records) +
                     " bytes of records, over the limit of " + std::to_string(max_bytes));
    }
    return max_bytes - records;
  }

  // Checks sub-filter i's bucket count and charges its array to the budget; returns its bytes.
  std::uint64_t checked_sub_filter(std::uint64_t i, std::uint64_t buckets, std::uint64_t& budget,
                                   const char* where) const {
    if (buckets == 0 || buckets > max_buckets) {
      detail::cuckoo_format_error(where, "sub-filter " + std::to_string(i) + " has " +
                                             std::to_string(buckets) +
                                             " buckets; allowed are 1 to 2^56 - 1");
    }
    if (!detail::cuckoo_truncated_offsets_fit(buckets, bucket_size_)) {
      detail::cuckoo_format_error(
          where, "sub-filter " + std::to_string(i) + " of " + std::to_string(buckets) +
                     " buckets would have RedisBloom's 32-bit slot offsets leave its array");
    }
    const std::uint64_t bytes = buckets * bucket_size_;
    if (bytes > budget) {
      detail::cuckoo_format_error(
          where, "sub-filter " + std::to_string(i) + " needs " + std::to_string(bytes) +
                     " bytes, over the limit of the " + std::to_string(budget) + " bytes left");
    }
    budget -= bytes;
    return bytes;
  }

  std::uint64_t num_buckets_ = 0;
  std::uint64_t num_items_ = 0;
  std::uint64_t num_deletes_ = 0;
  std::uint16_t bucket_size_ = 0;
  std::uint16_t max_iterations_ = 0;
  std::uint16_t expansion_ = 0;
  std::vector<sub_filter> filters_;
};

}  // namespace bloomery::interop::redisbloom
