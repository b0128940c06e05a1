// The value of a CF key: bloomery's scalable cuckoo filter shaped as RedisBloom's growing cuckoo
// filter, or, while CF.LOADCHUNK restores one, the part of its dump received so far.
//
// RedisBloom's CF is a chain of cuckoo tables, each `expansion` times the previous one's size, up
// to 32; bloomery's scalable_cuckoo_filter is that chain (initial capacity = capacity, expansion
// = EXPANSION rounded up to a power of two as RedisBloom rounds it, max kicks = MAXITERATIONS, 32
// sub-filters). Its buckets always hold 4 fingerprints: BUCKETSIZE is validated and kept (CF.INFO
// reports it) but does not change the table, whose bucket count follows from the capacity alone.
//
// A dump is dump.hpp's, with the magic "BLMRY-CF" and the BUCKETSIZE given as its word.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <bloomery/scalable_cuckoo_filter.hpp>

#include "dump.hpp"
#include "memory_guard.hpp"

namespace bloomery_redis {

// RedisBloom 2.4's CF defaults and limits.
inline constexpr long long cf_default_capacity = 1024;
inline constexpr long long cf_default_bucket_size = 2;
inline constexpr long long cf_max_bucket_size = 255;
inline constexpr long long cf_default_max_iterations = 20;
inline constexpr long long cf_max_iterations = 65535;
inline constexpr long long cf_default_expansion = 1;
inline constexpr long long cf_max_expansion = 32768;
inline constexpr std::uint32_t cf_max_sub_filters = 32;
// RedisBloom's 8-bit fingerprints; the module's load argument CF_FINGERPRINT_BITS changes it.
inline constexpr std::uint32_t cf_default_fingerprint_bits = 8;

struct cuckoo_shape {
  std::uint64_t capacity = cf_default_capacity;
  std::uint32_t bucket_size = cf_default_bucket_size;
  std::uint32_t max_iterations = cf_default_max_iterations;
  std::uint32_t expansion = cf_default_expansion;  // a power of two
  std::uint32_t fingerprint_bits = cf_default_fingerprint_bits;
};

class cuckoo_value {
 public:
  // `added` (1), `present` (CF.ADDNX: 0, nothing stored), `full` (the chain's 32 sub-filters, or
  // its largest possible one, are full), `no_memory` (the next sub-filter's memory cannot be
  // had); the last two change nothing.
  enum class add_result { added, present, full, no_memory };

  // An empty filter; throws bloomery::allocation_error when its memory cannot be had or `check`
  // refuses it, and std::invalid_argument for a shape bloomery cannot build (a capacity past
  // 2^48).
  explicit cuckoo_value(const cuckoo_shape& shape, memory_check check = memory_check::admission);
  // A key being restored from a dump's header chunk, its storage allocated; throws bad_dump, or
  // std::bad_alloc when the filter's memory is more than `check` lets it have.
  static std::unique_ptr<cuckoo_value> restore_from_header(std::span<const std::byte> header,
                                                           memory_check check);

  bool complete() const noexcept { return state_.complete(); }
  std::uint32_t bucket_size() const noexcept { return bucket_size_; }
  const bloomery::scalable_cuckoo_filter& filter() const { return state_.filter(); }

  // CF.ADD (`unique` false: always stores the item) and CF.ADDNX (`unique`: only when it is not
  // possibly present already), on a complete filter; `check` judges a new sub-filter's memory.
  add_result add(std::string_view item, bool unique, memory_check check);
  // CF.DEL: true when a copy of the item's fingerprint was removed.
  bool remove(std::string_view item) noexcept;

  std::vector<std::byte> dump_header() const;
  std::span<const std::byte> dump_payload() const;
  // While restoring: dumped_filter::restore_chunk, accepting only the chains this module creates.
  using chunk_result = dumped_filter<bloomery::scalable_cuckoo_filter>::chunk_result;
  chunk_result restore_chunk(std::uint64_t offset, std::span<const std::byte> data);

  // A copy of a complete value (COPY); null for a key being restored. Throws std::bad_alloc.
  std::unique_ptr<cuckoo_value> copy() const;

  // Bytes this value holds: the tables and the per-sub-filter bookkeeping (MEMORY USAGE, Size).
  std::size_t memory_usage() const noexcept;

 private:
  cuckoo_value(std::uint32_t bucket_size, dumped_filter<bloomery::scalable_cuckoo_filter> state)
      : bucket_size_(bucket_size), state_(std::move(state)) {}

  std::uint32_t bucket_size_ = cf_default_bucket_size;
  dumped_filter<bloomery::scalable_cuckoo_filter> state_;
};

}  // namespace bloomery_redis
