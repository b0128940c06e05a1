// The value of a CF key (dumped_value.hpp): bloomery's scalable cuckoo filter shaped as
// RedisBloom's growing cuckoo filter, or, while CF.LOADCHUNK restores one, the part of its dump
// received so far.
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
#include <string_view>
#include <utility>

#include <bloomery/scalable_cuckoo_filter.hpp>

#include "dump.hpp"
#include "dumped_value.hpp"
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
inline constexpr std::uint32_t cf_max_sub_filters = 32;  // CF_MAX_EXPANSIONS's default
// RedisBloom's 8-bit fingerprints; the module's load argument CF_FINGERPRINT_BITS changes it.
inline constexpr std::uint32_t cf_default_fingerprint_bits = 8;

struct cuckoo_shape {
  std::uint64_t capacity = cf_default_capacity;
  std::uint32_t bucket_size = cf_default_bucket_size;
  std::uint32_t max_iterations = cf_default_max_iterations;
  std::uint32_t expansion = cf_default_expansion;  // a power of two
  std::uint32_t fingerprint_bits = cf_default_fingerprint_bits;
  std::uint32_t max_sub_filters = cf_max_sub_filters;
};

class cuckoo_value : public dumped_value<cuckoo_value, bloomery::scalable_cuckoo_filter> {
 public:
  // `added` (1), `present` (CF.ADDNX: 0, nothing stored), `full` (the chain's 32 sub-filters, or
  // its largest possible one, are full), `no_memory` (the next sub-filter's memory cannot be
  // had); the last two change nothing.
  enum class add_result { added, present, full, no_memory };

  // An empty filter; throws bloomery::allocation_error when its memory cannot be had or `check`
  // refuses it, and std::invalid_argument for a shape bloomery cannot build (a capacity past
  // 2^48).
  explicit cuckoo_value(const cuckoo_shape& shape, memory_check check = memory_check::admission);

  std::uint32_t bucket_size() const noexcept { return word(); }

  // CF.ADD (`unique` false: always stores the item) and CF.ADDNX (`unique`: only when it is not
  // possibly present already), on a complete filter; `check` judges a new sub-filter's memory.
  add_result add(std::string_view item, bool unique, memory_check check);
  // CF.DEL: true when a copy of the item's fingerprint was removed.
  bool remove(std::string_view item) noexcept;

 private:
  friend dumped_value;
  static constexpr dump_kind dump = {{'B', 'L', 'M', 'R', 'Y', '-', 'C', 'F'}};
  // The record bloomery keeps per sub-filter beside its table (shape, counts, stash, hasher).
  static constexpr std::size_t sub_filter_record_bytes = 328;
  static void check_word(std::uint32_t bucket_size);
  static bool accepts(std::uint32_t bucket_size, const bloomery::scalable_cuckoo_filter& f);

  cuckoo_value(std::uint32_t bucket_size, dumped_filter<bloomery::scalable_cuckoo_filter> state)
      : dumped_value(bucket_size, std::move(state)) {}
};

}  // namespace bloomery_redis
