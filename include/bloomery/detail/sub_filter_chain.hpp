// The chain both scalable filters are made of: sub-filters lying back to back in one allocation
// (each a whole number of 64-byte words, exactly as in the file's payload), the newest last. What
// the two share lives here once: the storage's bookkeeping (its size, growing by one sub-filter,
// clearing back to the first) and the checks of a file's chain (the payload's size, the element
// count, each sub-filter checked as a file of its own kind would be). A Layer has `word_offset`,
// `words()` and its insert count, read through an accessor the caller passes.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bloomery/bit_array.hpp"
#include "bloomery/format.hpp"

namespace bloomery::detail {

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
