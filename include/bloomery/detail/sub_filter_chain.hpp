// The chain both scalable filters are made of: sub-filters lying back to back in one allocation
// (each a whole number of 64-byte words, exactly as in the file's payload), the newest last. What
// the two share lives here once: queries (newest sub-filter first, batched), the storage's
// bookkeeping (its size, growing by one sub-filter, clearing back to the first) and the checks of
// a file's chain (the payload's size, the element count, each sub-filter checked as a file of its
// own kind would be). A Layer has `word_offset` and `words()`; what else a chain needs of its
// sub-filters, it reads through functions the caller passes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ranges>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bloomery/bit_array.hpp"
#include "bloomery/detail/core_common.hpp"
#include "bloomery/format.hpp"
#include "bloomery/hash.hpp"

namespace bloomery::detail {

// Queries go through a Probe policy per sub-filter, `probe_of(i)` for sub-filter i (0 = oldest):
//   Located locate(hash128) const     where the key lies in the sub-filter
//   void prefetch(const Located&) const  [[gnu::always_inline]]: see detail::prefetch
//   bool probe(const Located&) const  the sub-filter's answer
//   bool prefetching                  the sub-filter is too large for the cache

// True when any sub-filter holds the key of hash `h`: the newest first (the largest, holding the
// most keys).
template <class ProbeOf>
bool chain_probe(std::size_t layers, const ProbeOf& probe_of, hash128 h) noexcept {
  for (std::size_t i = layers; i-- > 0;) {
    const auto p = probe_of(i);
    if (p.probe(p.locate(h))) return true;
  }
  return false;
}

// Batched chain_probe: hashes a block of keys once (the hash mode fixed once per call), then walks
// the sub-filters newest first; in each, every still-undecided key is located (and prefetched, in
// a sub-filter too large for the cache) before any is probed, so their misses overlap, and keys
// found leave the block. `out[i]` receives the answer for keys[i]; returns the number of
// positives.
template <std::size_t Block, class ProbeOf, class Keys, class Out>
std::size_t chain_probe_many(const hasher& hash, std::size_t layers, const ProbeOf& probe_of,
                             const Keys& keys, Out& out) {
  static_assert(Block <= 65536, "block positions are 16-bit");
  check_batch_sizes(keys, out);
  const std::size_t n = std::ranges::size(keys);
  using located = decltype(probe_of(0).locate(hash128{}));
  return hash.with_mode([&](const auto& mode) {
    std::size_t positives = 0;
    hash128 h[Block];
    located at[Block];
    std::uint16_t live[Block];
    bool hit[Block];
    for (std::size_t base = 0; base < n; base += Block) {
      const std::size_t count = std::min(Block, n - base);
      for (std::size_t j = 0; j < count; ++j) {
        h[j] = hash_key(mode, keys[base + j]);
        live[j] = static_cast<std::uint16_t>(j);
        hit[j] = false;
      }
      std::size_t alive = count;
      for (std::size_t i = layers; i-- > 0 && alive != 0;) {
        const auto p = probe_of(i);
        for (std::size_t a = 0; a < alive; ++a) {
          at[a] = p.locate(h[live[a]]);
          if (p.prefetching) p.prefetch(at[a]);
        }
        std::size_t kept = 0;
        for (std::size_t a = 0; a < alive; ++a) {
          if (p.probe(at[a])) {
            hit[live[a]] = true;
          } else {
            live[kept++] = live[a];
          }
        }
        alive = kept;
      }
      for (std::size_t j = 0; j < count; ++j) {
        out[base + j] = hit[j];
        positives += hit[j];
      }
    }
    return positives;
  });
}

// The words the chain's sub-filters take: where the newest one ends.
template <class Layer>
std::uint64_t chain_words(const std::vector<Layer>& layers) noexcept {
  return layers.back().word_offset + layers.back().words();
}

// Sum of field(layer) over the chain.
template <class Layer, class Field>
std::uint64_t chain_sum(const std::vector<Layer>& layers, Field&& field) noexcept {
  std::uint64_t total = 0;
  for (const Layer& l : layers) total += field(l);
  return total;
}

// Appends `next` (its word_offset already chain_words(layers)): a larger allocation, the old
// words copied once. Strong guarantee: when the allocation throws, nothing has changed.
template <class Layer>
void chain_grow(bit_array& storage, std::vector<Layer>& layers, Layer next) {
  const std::uint64_t used = chain_words(layers);
  bit_array bigger((used + next.words()) * 64);
  std::memcpy(bigger.data(), storage.data(), used * 8);
  layers.reserve(layers.size() + 1);  // may throw: before anything changes
  layers.push_back(std::move(next));
  storage = std::move(bigger);
}

// Back to the first sub-filter alone, its words zeroed (the others' memory is released). The
// caller resets the first sub-filter's counts.
template <class Layer>
void chain_clear(bit_array& storage, std::vector<Layer>& layers) {
  if (layers.size() > 1) {
    bit_array first(layers.front().words() * 64);
    layers.resize(1);
    storage = std::move(first);
  } else {
    storage.clear();
  }
}

// The checks of a file's chain once every sub-filter's shape is known (`layers`, word offsets
// set): the payload holds exactly their words, their insert counts add up to the file's element
// count, and each sub-filter's slice is a valid file of kind Sub (Sub::view_of with the
// parameters `sub_meta(i)` gives, the sub-filter's own). Throws format_error naming the
// sub-filter.
template <class Sub, class Layer, class Inserted, class SubMeta>
void check_chain(const parsed_file& f, const std::vector<Layer>& layers, Inserted&& inserted,
                 SubMeta&& sub_meta) {
  const std::uint64_t words = chain_words(layers);
  if (f.payload.size() != words * 8) {
    fail("payload has " + std::to_string(f.payload.size()) + " bytes, the " +
         std::to_string(layers.size()) + " sub-filters need " + std::to_string(words * 8));
  }
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::uint64_t n = inserted(layers[i]);
    if (n > std::numeric_limits<std::uint64_t>::max() - total) {
      fail("sub-filter " + std::to_string(i) + ": insert count overflows");
    }
    total += n;
  }
  if (total != f.element_count) {
    fail("element count " + std::to_string(f.element_count) +
         " is not the sum of the sub-filters' insert counts (" + std::to_string(total) + ")");
  }
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    try {
      (void)Sub::view_of(sub_meta(i), f.payload.subspan(l.word_offset * 8, l.words() * 8));
    } catch (const format_error& e) {
      std::string msg = e.what();
      const std::string prefix = "bloomery: ";
      if (msg.starts_with(prefix)) msg.erase(0, prefix.size());
      fail("sub-filter " + std::to_string(i) + ": " + msg);
    }
  }
}

}  // namespace bloomery::detail
