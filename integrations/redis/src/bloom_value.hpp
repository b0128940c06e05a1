// The value of a BF key (dumped_value.hpp): bloomery's scalable Bloom filter shaped as RedisBloom's
// chain, or, while BF.LOADCHUNK restores one, the part of its dump received so far.
//
// RedisBloom's chain gives its first sub-filter half the requested error rate and each later one
// half the previous, with `expansion` times the previous capacity; bloomery's sub-filter i has
// rate p (1 - r) r^i and capacity ceil(n0 s^i), so p = error rate, r = 1/2 and s = expansion is
// that chain exactly. A NONSCALING filter is one sub-filter at the requested rate itself, which
// never grows: its p and r are chosen so that p (1 - r) is the requested rate.
//
// A dump (SCANDUMP's chunks, the RDB value, the AOF's LOADCHUNK commands) is dump.hpp's, with the
// magic "BLMRY-BF" and the flags word: bit 0 NONSCALING, others zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include <bloomery/scalable_bloom_filter.hpp>

#include "dump.hpp"
#include "dumped_value.hpp"
#include "memory_guard.hpp"

namespace bloomery_redis {

// RedisBloom's defaults for keys that BF.ADD, BF.MADD and BF.INSERT create.
inline constexpr double bf_default_error_rate = 0.01;
inline constexpr long long bf_default_capacity = 100;
inline constexpr long long bf_default_expansion = 2;
// bloomery's largest growth factor; RedisBloom has no bound.
inline constexpr long long bf_max_expansion = 16;

struct bloom_shape {
  double error_rate = bf_default_error_rate;
  std::uint64_t capacity = bf_default_capacity;
  std::uint64_t expansion = bf_default_expansion;
  bool nonscaling = false;
};

// The bound p and tightening r with p (1 - r) == error_rate exactly, for a filter that never adds a
// second sub-filter (RedisBloom's NONSCALING filter has the requested rate itself).
struct single_layer_bound {
  double fpr;
  double tightening;
};
single_layer_bound bound_for_single_layer(double error_rate);

class bloom_value : public dumped_value<bloom_value, bloomery::scalable_bloom_filter> {
 public:
  enum class add_result { added, present, full, cannot_grow, no_memory };

  // An empty filter; throws what bloomery throws for a shape it cannot build (std::bad_alloc,
  // std::invalid_argument, std::length_error), and bloomery::allocation_error when `check`
  // refuses its memory.
  explicit bloom_value(const bloom_shape& shape, memory_check check = memory_check::admission);

  bool nonscaling() const noexcept { return (word() & flag_nonscaling) != 0; }

  // BF.ADD on a complete filter: RedisBloom's answers, and for a NONSCALING filter holding its
  // capacity, `full` unless the item is already present. `cannot_grow` when bloomery cannot add a
  // sub-filter (64 exist), `no_memory` when the sub-filter's memory cannot be had or `check`
  // refuses it; the filter is then unchanged.
  add_result add(std::string_view item, memory_check check);

 private:
  friend dumped_value;
  static constexpr dump_kind dump = {{'B', 'L', 'M', 'R', 'Y', '-', 'B', 'F'}};
  static constexpr std::uint32_t flag_nonscaling = 1;
  // The per-sub-filter record bloomery keeps beside the bits (six 8-byte fields).
  static constexpr std::size_t sub_filter_record_bytes = 48;
  static void check_word(std::uint32_t flags);
  static bool accepts(std::uint32_t flags, const bloomery::scalable_bloom_filter& f);

  bloom_value(std::uint32_t flags, dumped_filter<bloomery::scalable_bloom_filter> state)
      : dumped_value(flags, std::move(state)) {}
};

}  // namespace bloomery_redis
