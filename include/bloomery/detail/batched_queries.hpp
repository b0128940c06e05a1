// The batched-query loop of the counting, cuckoo and static filters: hash a block of keys with the
// hash mode fixed once per call, prefetch what each key will read, then probe the whole block, so
// the block's cache misses overlap. The classic and blocked filters keep loops of their own, shaped
// by their layouts (a pipeline of probes, double-buffered blocks: bloom_core.hpp, blocked_*.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <ranges>

#include "bloomery/detail/core_common.hpp"
#include "bloomery/hash.hpp"

namespace bloomery::detail {

// A Probe policy answers one key in two steps:
//   Located locate(hash128) const     where the key's data is (and anything derived once)
//   void prefetch(const Located&) const  [[gnu::always_inline]]: see detail::prefetch
//   bool probe(const Located&) const  the answer, as may_contain gives it
// `Block` keys are in flight at once. With `prefetching` false (a filter that fits in cache) the
// keys are answered one by one, with no block to fill.
template <std::size_t Block, class Probe, class Keys, class Out>
std::size_t batched_queries(const hasher& hash, const Probe& p, bool prefetching, const Keys& keys,
                            Out& out) {
  check_batch_sizes(keys, out);
  const std::size_t n = std::ranges::size(keys);
  return hash.with_mode([&](const auto& mode) {
    std::size_t positives = 0;
    if (!prefetching) {
      for (std::size_t i = 0; i < n; ++i) {
        const bool hit = p.probe(p.locate(hash_key(mode, keys[i])));
        out[i] = hit;
        positives += hit;
      }
      return positives;
    }
    decltype(p.locate(hash128{})) at[Block];
    for (std::size_t base = 0; base < n; base += Block) {
      const std::size_t count = std::min(Block, n - base);
      for (std::size_t j = 0; j < count; ++j) {
        at[j] = p.locate(hash_key(mode, keys[base + j]));
        p.prefetch(at[j]);
      }
      for (std::size_t j = 0; j < count; ++j) {
        const bool hit = p.probe(at[j]);
        out[base + j] = hit;
        positives += hit;
      }
    }
    return positives;
  });
}

}  // namespace bloomery::detail
