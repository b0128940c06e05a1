#include "report.hpp"

#include <bloomery/support/json.hpp>
#include <bloomery/support/table.hpp>
#include <bloomery/support/text.hpp>
#include <bloomery/version.hpp>

#include <cmath>
#include <cstdio>
#include <string>

namespace bloomery_lsm_demo {
namespace {

using bloomery::filter_kind;
using bloomery::support::fmt;
using bloomery::support::grouped;

// Decimal units (1 MB = 10^6 bytes), as filter sizes are usually quoted.
std::string bytes_text(double b) {
  if (b < 1e3) return fmt("%.0f B", b);
  if (b < 1e6) return fmt("%.1f KB", b / 1e3);
  if (b < 1e9) return fmt("%.3f MB", b / 1e6);
  return fmt("%.3f GB", b / 1e9);
}

// "-" stands for a quantity the run cannot define (a percentile of no reads, say).
std::string num(double v, const char* format) {
  return std::isfinite(v) ? fmt(format, v) : std::string("-");
}

const char* long_name(lsm::table_filter_kind k) {
  if (!k) return "no filter";
  switch (*k) {
    case filter_kind::bloom:
      return "classic Bloom (bloomery::bloom_filter)";
    case filter_kind::blocked_bloom:
      return "blocked Bloom (bloomery::blocked_bloom_filter, one 64-byte line per key)";
    case filter_kind::static_filter:
      return "static (bloomery::static_filter, a binary fuse filter)";
    default:
      return "?";
  }
}

// A JSON number's format: six significant digits, but no exponent for large numbers such as reads
// per second. NaN, a quantity the run cannot define, is written as null whatever the format.
const char* number_format(double v) {
  return std::abs(v) >= 1e6 && std::abs(v) < 1e15 ? "%.0f" : "%.6g";
}

}  // namespace

void print_text(const config& c, const std::vector<kind_result>& results, const work_dir& wd,
                double wall_seconds) {
  const kind_result& base = results.front();
  const u64 absent = base.absent.reads, present = base.present.reads;
  std::printf("bloomery %s LSM-tree demo: %s SSTables x %s keys, target FPR %g%%\n",
              bloomery::version_string, grouped(c.tables).c_str(),
              grouped(c.keys_per_table).c_str(), c.fpr * 100);
#ifndef NDEBUG
  std::printf("note: this is not a Release (NDEBUG) build; timings are not representative.\n");
#endif
  std::printf(
      "  keys: %zu bytes (8 random bytes in hex), values %zu bytes; every table spans the whole\n"
      "        key space, like overlapping level-0 tables\n"
      "  each table: %s data blocks of ~4 KB, %s on disk (means)\n"
      "  workload: %s point reads per kind (%s for absent keys, %s for present ones),\n"
      "            the same sequence for every kind\n"
      "  reads: %s; %s\n\n",
      key_bytes, value_bytes, grouped(base.data_blocks / base.table_count).c_str(),
      bytes_text(static_cast<double>(base.file_bytes) / static_cast<double>(base.table_count))
          .c_str(),
      grouped(c.reads).c_str(), grouped(absent).c_str(), grouped(present).c_str(),
      c.cold ? "page cache dropped before them (--cold)" : "tables in the page cache",
      c.read_latency_us == 0
          ? "no added latency"
          : fmt("%s us added to every block read", grouped(c.read_latency_us).c_str()).c_str());

  bloomery::support::text_table t({.indent = 2, .gap = 3, .first_left = true});
  std::vector<std::string> head{""};
  for (const auto& r : results) head.emplace_back(lsm::name_of(r.kind));
  t.row(head);
  const auto add = [&](const char* label, auto cell) {
    std::vector<std::string> row{label};
    for (const auto& r : results) row.push_back(cell(r));
    t.row(row);
  };
  add("block reads per absent read", [](const kind_result& r) {
    return num(r.absent.per_read(r.absent.stats.block_reads), "%.3f");
  });
  add("block reads per present read", [](const kind_result& r) {
    return num(r.present.per_read(r.present.stats.block_reads), "%.3f");
  });
  add("wasted reads removed", [](const kind_result& r) { return num(r.removed * 100, "%.2f%%"); });
  add("measured FPR",
      [](const kind_result& r) { return !r.kind ? std::string("1") : num(r.fpr * 100, "%.3f%%"); });
  add("filter memory per table", [](const kind_result& r) {
    return bytes_text(static_cast<double>(r.filter_bytes) / static_cast<double>(r.table_count));
  });
  add("filter memory, all tables",
      [](const kind_result& r) { return bytes_text(static_cast<double>(r.filter_bytes)); });
  add("filter bits per key", [&](const kind_result& r) {
    return fmt("%.2f", static_cast<double>(r.filter_bytes) * 8 /
                           static_cast<double>(c.tables * c.keys_per_table));
  });
  add("reads per second",
      [](const kind_result& r) { return grouped(static_cast<u64>(r.reads_per_second)); });
  add("absent read p50 (us)", [](const kind_result& r) { return num(r.absent_p50, "%.1f"); });
  add("absent read p99 (us)", [](const kind_result& r) { return num(r.absent_p99, "%.1f"); });
  add("present read p50 (us)", [](const kind_result& r) { return num(r.present_p50, "%.1f"); });
  add("present read p99 (us)", [](const kind_result& r) { return num(r.present_p99, "%.1f"); });
  add("build time (s)", [](const kind_result& r) { return fmt("%.1f", r.build_seconds); });
  t.print();

  std::printf("\n");
  for (const auto& r : results) {
    std::printf("  %-8s %s\n", std::string(lsm::name_of(r.kind)).c_str(), long_name(r.kind));
  }
  std::printf(
      "\n"
      "  block reads per ... read: data blocks read from table files (one pread each) per get().\n"
      "    Without a filter an absent read reads one block from every table; with one, only\n"
      "    where the filter wrongly answers \"maybe\". A present read also reads its own block.\n"
      "  wasted reads removed: 1 - wasted block reads / those of \"none\" (a wasted read is one\n"
      "    that does not find the key), over all reads.\n"
      "  measured FPR: false positives / filter checks on tables that do not hold the key,\n"
      "    absent and present reads together; a false positive is a \"maybe\" whose block read\n"
      "    then missed. \"none\" shows 1: a missing filter answers \"maybe\" for every table.\n"
      "    The static filter's fingerprints have the fewest bits r with 2^-r <= the target, so at\n"
      "    1%% it delivers 2^-7 = 0.78%% (7 bits, four slots per key).\n"
      "  filter memory: the filters' in-memory size (mean per table, and all tables), and the\n"
      "    same as bits per key.\n"
      "  reads per second: reads / the summed wall time of the get() calls (one thread).\n"
      "  p50, p99: median and 99th percentile of one get()'s wall time, absent and present\n"
      "    reads apart.\n"
      "  build time: the puts and flushes of all tables, filters included.\n\n");

  u64 wrong = 0;
  for (const auto& r : results) wrong += r.absent.wrong + r.present.wrong;
  if (wrong == 0) {
    std::printf(
        "correct: with every filter kind, all %s present reads found their value and all %s\n"
        "         absent reads found nothing.\n",
        grouped(present).c_str(), grouped(absent).c_str());
  } else {
    for (const auto& r : results) {
      std::printf("WRONG (%s): %s present reads missed their value, %s absent reads found one\n",
                  std::string(lsm::name_of(r.kind)).c_str(), grouped(r.present.wrong).c_str(),
                  grouped(r.absent.wrong).c_str());
    }
  }
  std::printf("total time: %.1f s", wall_seconds);
  if (wd.kept()) std::printf("; stores kept in %s", wd.path().c_str());
  std::printf("\n");
}

void print_json(const config& c, const std::vector<kind_result>& results, const work_dir& wd,
                bool correct, double wall_seconds) {
  const kind_result& base = results.front();
  bloomery::support::json_writer w(bloomery::support::json_spaced);
  const auto real = [&w](const char* name, double v) { w.key(name).number(v, number_format(v)); };
  w.begin_object();
  w.key("tables").integer(c.tables).key("keys_per_table").integer(c.keys_per_table);
  real("absent_fraction", c.absent_fraction);
  real("fpr", c.fpr);
  w.key("reads").integer(c.reads);
  w.key("absent_reads").integer(base.absent.reads).key("present_reads").integer(base.present.reads);
  w.key("key_bytes").integer(key_bytes).key("value_bytes").integer(value_bytes);
  w.key("read_latency_us").integer(c.read_latency_us).key("cold").boolean(c.cold);
  w.key("correct").boolean(correct);
  real("total_seconds", wall_seconds);
  if (wd.kept()) w.key("dir").string(wd.path().string());
  w.key("results").begin_array();
  for (const kind_result& r : results) {
    w.begin_object().key("filter").string(lsm::name_of(r.kind));
    real("block_reads_per_absent_read", r.absent.per_read(r.absent.stats.block_reads));
    real("block_reads_per_present_read", r.present.per_read(r.present.stats.block_reads));
    real("wasted_reads_removed", r.removed);
    real("measured_fpr", r.fpr);
    w.key("false_positives").integer(r.false_positives);
    w.key("negative_filter_checks").integer(r.negative_checks);
    w.key("filter_bytes_per_table").integer(r.filter_bytes / r.table_count);
    w.key("filter_bytes_total").integer(r.filter_bytes);
    real("reads_per_second", r.reads_per_second);
    real("p50_us", r.absent_p50);
    real("p99_us", r.absent_p99);
    real("absent_p50_us", r.absent_p50);
    real("absent_p99_us", r.absent_p99);
    real("present_p50_us", r.present_p50);
    real("present_p99_us", r.present_p99);
    w.key("absent_found").integer(r.absent.wrong).key("present_wrong").integer(r.present.wrong);
    w.key("data_blocks").integer(r.data_blocks).key("file_bytes").integer(r.file_bytes);
    real("build_seconds", r.build_seconds);
    w.end_object();
  }
  w.end_array().end_object();
  std::printf("%s\n", w.str().c_str());
}

}  // namespace bloomery_lsm_demo
