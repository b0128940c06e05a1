// Reporting helpers shared by the Google Benchmark programs (bench_bloom.cpp, bench_family.cpp).
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

namespace bloomery::bench {

// Items processed, and their rate inverted as "per_key": CPU seconds per key (the console shows
// e.g. "per_key=12.3ns").
inline void report_keys(benchmark::State& st, std::uint64_t keys_per_iteration) {
  const auto items = static_cast<std::int64_t>(st.iterations() * keys_per_iteration);
  st.SetItemsProcessed(items);
  st.counters["per_key"] = benchmark::Counter(
      static_cast<double>(items), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// A benchmark whose filter missed an inserted key is an error, not a number.
inline void fail_on_false_negatives(benchmark::State& st, std::uint64_t false_negatives) {
  if (false_negatives != 0) {
    const std::string msg = "false negatives: " + std::to_string(false_negatives);
    st.SkipWithError(msg.c_str());
  }
}

}  // namespace bloomery::bench
