// Spreading one batch of keys over threads. The filters the tool builds and queries are usually
// larger than the cache, so every insert and lookup waits on memory; each core waits on its own
// cache misses, so N cores get through the batch up to N times faster.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace bloomery_cli {

// The number of threads that hash and probe, for --threads N. 0 picks, at most 8 (beyond that the
// memory system, not the cores, sets the pace): for queries, one per core, since they share the
// filter and the reader thread (keys.cpp) needs little; for inserts, one per core but one,
// because each extra inserting thread fills a copy of the filter that is ORed in at the end, and
// on 2 cores two inserting threads beside the reader measured slower than one.
inline unsigned thread_count(unsigned requested, bool inserting) {
  if (requested != 0) return requested;
  const unsigned cores = std::max(std::thread::hardware_concurrency(), 1u);
  return std::clamp(inserting ? cores - 1 : cores, 1u, 8u);
}

// Calls work(part, begin, end) for `parts` contiguous slices of [0, n) at once, slice 0 on the
// calling thread, and returns when all are done; rethrows the first exception. Batches too small
// to repay starting threads run as one slice.
template <class Work>
void for_each_slice(std::size_t n, unsigned parts, Work&& work) {
  constexpr std::size_t min_keys_per_thread = 4096;
  parts = static_cast<unsigned>(
      std::clamp<std::size_t>(n / min_keys_per_thread, 1, std::max(parts, 1u)));
  if (parts == 1) {
    work(0u, std::size_t{0}, n);
    return;
  }
  std::vector<std::exception_ptr> errors(parts);
  auto run = [&](unsigned part) {
    try {
      work(part, n * part / parts, n * (part + 1) / parts);
    } catch (...) {
      errors[part] = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> helpers;
    helpers.reserve(parts - 1);
    for (unsigned part = 1; part < parts; ++part) helpers.emplace_back(run, part);
    run(0);
  }  // joins the helpers
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace bloomery_cli
