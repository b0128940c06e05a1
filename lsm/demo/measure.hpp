// Building one store and running the read workload on it: what each filter kind is measured by.
#pragma once

#include <bloomery/lsm/store.hpp>
#include <bloomery/support/progress.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "options.hpp"
#include "workload.hpp"

namespace bloomery_lsm_demo {

namespace lsm = bloomery::lsm;

// Ctrl-C must still delete the temporary stores (several GB at full scale): the handler only
// sets a flag, the build and read loops check it and unwind with interrupted_error, and the
// destructors clean up. The handler restores the default action, so a second Ctrl-C stops a demo
// stuck in a long flush.
struct interrupted_error : std::runtime_error {
  interrupted_error() : std::runtime_error("interrupted") {}
};
void install_interrupt_handlers();

// The reads of one class (absent or present keys) on one store.
struct read_class {
  u64 reads = 0;
  u64 wrong = 0;           // present: missing or another value; absent: found something
  lsm::read_stats stats;   // the store's counters, attributed to this class's get() calls
  std::vector<u64> ns;     // each get()'s wall time
  double get_seconds = 0;  // their sum

  double per_read(u64 v) const {
    return reads == 0 ? std::nan("") : static_cast<double>(v) / static_cast<double>(reads);
  }
  // Nearest-rank percentile in microseconds; NaN for no reads.
  double percentile_us(double q) {
    if (ns.empty()) return std::nan("");
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(ns.size())));
    const auto at = ns.begin() + static_cast<std::ptrdiff_t>(std::max<std::size_t>(rank, 1) - 1);
    std::nth_element(ns.begin(), at, ns.end());
    return static_cast<double>(*at) / 1e3;
  }
};

struct kind_result {
  lsm::table_filter_kind kind;  // std::nullopt: no filter
  double build_seconds = 0;
  u64 table_count = 0;
  u64 data_blocks = 0;
  u64 file_bytes = 0;
  u64 filter_bytes = 0;
  read_class absent, present;
  // Filled in by summarize():
  double absent_p50 = 0, absent_p99 = 0, present_p50 = 0, present_p99 = 0;
  double fpr = 0;
  u64 false_positives = 0;
  u64 negative_checks = 0;  // filter checks on tables that do not hold the key
  double removed = 0;       // share of the no-filter run's wasted reads that this one avoided
  double reads_per_second = 0;

  u64 reads() const { return absent.reads + present.reads; }
  u64 wasted() const { return absent.stats.wasted_block_reads + present.stats.wasted_block_reads; }
};

// Builds the store for `kind` in `dir` and runs `ops` against it.
kind_result measure(lsm::table_filter_kind kind, const fs::path& dir, const config& c,
                    const std::vector<read_op>& ops, bloomery::support::progress_bar& progress);

// The derived numbers; `baseline` is the no-filter run (the first one).
void summarize(kind_result& r, const kind_result& baseline);

}  // namespace bloomery_lsm_demo
