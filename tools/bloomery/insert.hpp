// Inserting the keys of the input into a filter, for `build` and `add`.
#pragma once

#include <algorithm>
#include <bloomery/bloomery.hpp>
#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "keys.hpp"
#include "parallel.hpp"

namespace bloomery_cli {

// Extra copies of a bit-array filter that the helper threads may fill: at most this many bytes.
inline constexpr std::uint64_t max_helper_filter_bytes = std::uint64_t{1} << 30;

// Kinds that take a whole batch at once and whose empty copies can be ORed together.
template <class F>
concept batch_insertable = requires(F& f, std::span<const std::string_view> keys) {
  f.insert_many(keys);
  f |= f;
  F(bloomery::bloom_parameters{.bits = f.bit_count(), .hashes = f.hash_count()}, f.hash());
};

// Inserts every key of the input into `f` and returns how many were read. `file` names the
// filter in the error of a filter that fills up; `label` names the progress bar.
template <bloomery::insertable_filter F>
std::uint64_t insert_all(F& f, const input_args& in, const std::string& file, const char* label) {
  std::uint64_t count = 0;
  if constexpr (batch_insertable<F>) {
    // The bit-array kinds take a whole read at once, hashed ahead and their lines prefetched, split
    // over the threads. Each helper thread fills its own empty copy of the filter, ORed into `f`
    // at the end: a union is bit-identical to one filter built from all the keys, and no two
    // threads ever write the same word (atomic ORs would cost more than the copies).
    unsigned threads = thread_count(in.threads, /*inserting=*/true);
    threads = static_cast<unsigned>(std::min<std::uint64_t>(
        threads, 1 + max_helper_filter_bytes / std::max<std::uint64_t>(f.size_in_bytes(), 1)));
    std::vector<F> helpers;
    read_keys(in.files, in.options(label), [&](std::span<const std::string_view> keys) {
      while (helpers.size() + 1 < threads && keys.size() >= 2 * 4096) {
        // Empty, with the same bits, hashes and hasher, so the union is defined (the helper's
        // capacity and target do not matter: the union keeps f's).
        helpers.emplace_back(
            bloomery::bloom_parameters{.bits = f.bit_count(), .hashes = f.hash_count()}, f.hash());
      }
      for_each_slice(
          keys.size(), static_cast<unsigned>(helpers.size() + 1),
          [&](unsigned part, std::size_t begin, std::size_t end) {
            (part == 0 ? f : helpers[part - 1]).insert_many(keys.subspan(begin, end - begin));
          });
      count += keys.size();
    });
    for (const F& h : helpers) f |= h;
  } else {
    read_keys(in.files, in.options(label), [&](std::span<const std::string_view> keys) {
      for (const std::string_view k : keys) {
        if (!f.insert(k)) {
          throw cli_error(quoted(file) + ": the " + std::string(bloomery::to_string(F::kind)) +
                          " filter is full after " + std::to_string(count) + " keys (capacity " +
                          std::to_string(f.capacity()) + "); build it with a larger -n");
        }
        ++count;
      }
    });
  }
  return count;
}

}  // namespace bloomery_cli
