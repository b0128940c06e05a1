#include "options.hpp"

#include <bloomery/static_filter.hpp>
#include <bloomery/support/keys.hpp>
#include <bloomery/support/text.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <system_error>

namespace bloomery_lsm_demo {
namespace {

using bloomery::support::absent_offset;
using bloomery::support::fmt;
using bloomery::support::grouped;

constexpr u64 default_reads = 200'000;
constexpr u64 max_reads = 100'000'000;            // the workload and latencies stay in memory
constexpr double latency_budget_us = 20'000'000;  // see default_reads_for()

// With an added latency per block read, the default read count shrinks so that the no-filter
// run, which pays it once per table on every absent read, stays near 20 s of simulated waiting;
// the filtered runs then take a fraction of that. An explicit --reads is always obeyed.
u64 default_reads_for(const config& c) {
  if (c.read_latency_us == 0) return default_reads;
  const double per_read = static_cast<double>(c.tables) * c.read_latency_us;
  return std::clamp<u64>(static_cast<u64>(latency_budget_us / per_read), 2'000, default_reads);
}

void usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: %s [options]\n"
      "\n"
      "Builds a bloomery::lsm store four times, with no filter and with a classic Bloom, a\n"
      "blocked Bloom and a static (binary fuse) filter per SSTable, runs the same point reads on\n"
      "each (most of them for absent keys) and prints the data-block reads, the measured\n"
      "false-positive rate, the filters' memory, reads per second and read latencies side by\n"
      "side.\n"
      "\n"
      "  --tables N             SSTables per store (default 10)\n"
      "  --keys-per-table N     keys per table (default 500,000; 5000000 is the full scale)\n"
      "  --fpr P                target false-positive rate of every filter, in (0, 1)\n"
      "                         (default 0.01; at least 2^-32, the static filter's limit)\n"
      "  --reads N              point reads per filter kind (default %s; with\n"
      "                         --read-latency-us, fewer: about 20 s of added latency for the\n"
      "                         run without a filter, at least 2,000)\n"
      "  --absent-fraction F    share of reads for absent keys, in [0, 1] (default 0.95)\n"
      "  --read-latency-us L    add L microseconds to every data-block read, as a disk or a\n"
      "                         remote store would (default 0: page-cache speed)\n"
      "  --cold                 drop the tables from the page cache before the reads\n"
      "  --dir D                build the stores in D/none, D/bloom, D/blocked, D/static and\n"
      "                         keep them (default: a fresh directory under $TMPDIR or /tmp,\n"
      "                         each store deleted once measured, the directory at exit)\n"
      "  --keep                 keep the temporary directory and its stores\n"
      "  --json                 print the results as one JSON object on stdout\n"
      "  --help                 show this help\n"
      "\n"
      "Keys are 16 random hex characters, values 20 bytes. Exit status: 0 when every present\n"
      "read found its value and every absent read found nothing, 1 otherwise or on an error,\n"
      "2 on a bad command line.\n",
      program, grouped(default_reads).c_str());
}

u64 parse_count(std::string_view flag, std::string_view text, u64 min, u64 max) {
  u64 v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size()) {
    throw usage_error(fmt("%.*s expects a whole number, got '%.*s'", int(flag.size()), flag.data(),
                          int(text.size()), text.data()));
  }
  if (ec == std::errc::result_out_of_range || v < min || v > max) {
    throw usage_error(fmt("%.*s must lie in [%s, %s], got %.*s", int(flag.size()), flag.data(),
                          grouped(min).c_str(), grouped(max).c_str(), int(text.size()),
                          text.data()));
  }
  return v;
}

double parse_real(std::string_view flag, std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
    throw usage_error(fmt("%.*s expects a number, got '%.*s'", int(flag.size()), flag.data(),
                          int(text.size()), text.data()));
  }
  return v;
}

}  // namespace

config parse_args(int argc, char** argv) {
  config c;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    // Both "--flag value" and "--flag=value" are accepted.
    std::optional<std::string_view> inline_value;
    if (const auto eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    const auto value = [&]() -> std::string_view {
      if (inline_value) return *inline_value;
      if (i + 1 >= argc) {
        throw usage_error(fmt("%.*s needs a value", int(arg.size()), arg.data()));
      }
      return argv[++i];
    };
    const auto no_value = [&] {
      if (inline_value) {
        throw usage_error(fmt("%.*s takes no value", int(arg.size()), arg.data()));
      }
    };
    if (arg == "--tables") {
      c.tables = parse_count(arg, value(), 1, 100'000);
    } else if (arg == "--keys-per-table") {
      c.keys_per_table = parse_count(arg, value(), 1, u64{1} << 40);
    } else if (arg == "--fpr") {
      c.fpr = parse_real(arg, value());
      if (!(c.fpr > 0 && c.fpr < 1)) {
        throw usage_error(fmt("--fpr must lie in (0, 1), got %g", c.fpr));
      }
      if (c.fpr < bloomery::static_filter_min_fpr) {
        throw usage_error(
            fmt("--fpr must be at least 2^-32 = %.4g: the static filter goes no lower, got %g",
                bloomery::static_filter_min_fpr, c.fpr));
      }
    } else if (arg == "--reads") {
      c.reads = parse_count(arg, value(), 1, max_reads);
      c.reads_given = true;
    } else if (arg == "--absent-fraction") {
      c.absent_fraction = parse_real(arg, value());
      if (!(c.absent_fraction >= 0 && c.absent_fraction <= 1)) {
        throw usage_error(fmt("--absent-fraction must lie in [0, 1], got %g", c.absent_fraction));
      }
    } else if (arg == "--read-latency-us") {
      c.read_latency_us = static_cast<std::uint32_t>(parse_count(arg, value(), 0, 10'000'000));
    } else if (arg == "--dir") {
      const std::string_view d = value();
      if (d.empty()) throw usage_error("--dir needs a non-empty path");
      c.dir = fs::path(d);
    } else if (arg == "--cold") {
      no_value();
      c.cold = true;
    } else if (arg == "--keep") {
      no_value();
      c.keep = true;
    } else if (arg == "--json") {
      no_value();
      c.json = true;
    } else if (arg == "--help" || arg == "-h") {
      no_value();
      usage(stdout);
      std::exit(0);
    } else {
      throw usage_error(fmt("unknown argument '%s'", argv[i]));
    }
  }
  // Key positions must stay below 2^63, where the absent keys begin.
  if (c.keys_per_table > (absent_offset - 1) / c.tables) {
    throw usage_error("--tables times --keys-per-table is too large");
  }
  if (!c.reads_given) c.reads = default_reads_for(c);
  return c;
}

}  // namespace bloomery_lsm_demo
