// bloomery-lsm-demo: what a filter per SSTable saves on point reads, measured on a real store.
//
// It builds the same bloomery::lsm store four times, once per filter kind (none, classic Bloom,
// blocked Bloom, static), runs the same point-read workload on each and prints the results side
// by side: data blocks read per absent and present read, the share of wasted reads the filter
// removes, the measured false-positive rate, the filters' memory, throughput and latency.
//
// The parts: options (the command line), workload (keys, values and the read sequence), work_dir
// (where the stores live), measure (building a store and timing its reads) and report (the
// table and the JSON).
#include <bloomery/support/progress.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>
#include <vector>

#include "measure.hpp"
#include "options.hpp"
#include "report.hpp"
#include "work_dir.hpp"
#include "workload.hpp"

namespace bloomery_lsm_demo {
namespace {

using bloomery::filter_kind;
using clock_type = std::chrono::steady_clock;

int run(const config& c) {
  const auto t0 = clock_type::now();
  work_dir wd(c);
  const std::vector<read_op> ops =
      make_workload(c.reads, c.absent_fraction, c.tables * c.keys_per_table);
  bloomery::support::progress_bar progress;
  std::vector<kind_result> results;
  const lsm::table_filter_kind kinds[] = {std::nullopt, filter_kind::bloom,
                                          filter_kind::blocked_bloom, filter_kind::static_filter};
  // All four directories first: a --dir that cannot be used should fail before minutes of work.
  std::vector<fs::path> dirs;
  for (const lsm::table_filter_kind kind : kinds) dirs.push_back(wd.prepare(kind));
  for (std::size_t k = 0; k < dirs.size(); ++k) {
    results.push_back(measure(kinds[k], dirs[k], c, ops, progress));
    wd.done_with(kinds[k]);
  }
  for (auto& r : results) summarize(r, results.front());
  bool correct = true;
  for (const auto& r : results) correct = correct && r.absent.wrong == 0 && r.present.wrong == 0;

  const double wall = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (c.json) {
    print_json(c, results, wd, correct, wall);
  } else {
    print_text(c, results, wd, wall);
  }
  std::fflush(stdout);
  if (!correct) {
    std::fprintf(stderr,
                 "%s: wrong answers: a store returned a value for an absent key or "
                 "missed a present one (see the results)\n",
                 program);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace bloomery_lsm_demo

int main(int argc, char** argv) {
  using namespace bloomery_lsm_demo;
  config c;
  try {
    c = parse_args(argc, argv);
  } catch (const usage_error& e) {
    std::fprintf(stderr, "%s: %s\nTry '%s --help'.\n", program, e.what(), program);
    return 2;
  }
  install_interrupt_handlers();
  try {
    return run(c);
  } catch (const interrupted_error&) {
    std::fprintf(stderr, "%s: interrupted\n", program);
    return 130;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
}
