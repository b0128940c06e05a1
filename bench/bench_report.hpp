// Reporting helpers shared by the Google Benchmark programs (bench_bloom.cpp, bench_family.cpp).
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench_common.hpp"
#include "bloomery/bit_array.hpp"

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

// This machine's memory latency while the run goes on: ns per load in a chain of dependent loads
// that visits every 64-byte line of a `bytes` array once, in random order. The array is a
// bloomery::bit_array, so it gets huge pages exactly when a filter's bits would. The speed
// targets are ratios between a lookup bound by this latency (LevelDB's, one miss after another)
// and ones bound by instructions or memory throughput (batched lookups); on a VM whose latency
// swings, those ratios swing with it, and this number says which phase a run was in.
inline void bm_memory_latency(benchmark::State& st, std::uint64_t bytes) {
  const std::uint64_t lines = bytes / 64;
  bloomery::bit_array a(lines * 512);
  std::vector<std::uint64_t> order(lines);
  std::iota(order.begin(), order.end(), std::uint64_t{0});
  std::shuffle(order.begin(), order.end(), std::mt19937_64(1));
  std::uint64_t* w = a.data();
  for (std::uint64_t i = 0; i < lines; ++i) w[order[i] * 8] = order[(i + 1) % lines] * 8;
  constexpr std::uint64_t kLoads = 4096;
  std::uint64_t at = order[0] * 8;
  for (auto _ : st) {
    for (std::uint64_t i = 0; i < kLoads; ++i) at = w[at];
    benchmark::DoNotOptimize(at);
  }
  report_keys(st, kLoads);  // per_key = ns per dependent load
}

// The memory phase of a run: latency over an array as large as a 10^7-key filter, and as a
// 10^8-key one when the run is --huge.
inline void register_memory_latency(bool huge) {
  for (const std::uint64_t bytes : {std::uint64_t{12'000'000}, std::uint64_t{120'000'000}}) {
    if (bytes > 12'000'000 && !huge) continue;
    benchmark::RegisterBenchmark(("memory_latency/" + std::to_string(bytes)).c_str(),
                                 [bytes](benchmark::State& st) { bm_memory_latency(st, bytes); })
        ->Unit(benchmark::kMicrosecond);
  }
}

// Runs the registered benchmarks with the run's constants in the JSON context, where the
// summarizers read them; returns main's exit code.
inline int run_benchmarks(int argc, char** argv, bool huge,
                          const std::vector<std::pair<std::string, std::string>>& context = {}) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("bloomery.fpr_target", std::to_string(kFpr));
  benchmark::AddCustomContext("bloomery.keys_per_iteration", std::to_string(kBatch));
  benchmark::AddCustomContext("bloomery.fpr_probes", std::to_string(kFprProbes));
  benchmark::AddCustomContext("bloomery.huge", huge ? "1" : "0");
  for (const auto& [key, value] : context) benchmark::AddCustomContext(key, value);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace bloomery::bench
