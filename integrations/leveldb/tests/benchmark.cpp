// The benchmark behind docs/leveldb.md: LevelDB's built-in filter (NewBloomFilterPolicy) against
// bloomery's policies at the same bits/key.
//
// 1. Filters alone: FPR, bytes and ns per check of filters of 20..100 keys, the sizes LevelDB's
//    ~4 KiB table blocks give them.
// 2. Databases: one per policy, the same keys and values written and compacted. A counted pass
//    measures, per absent Get, the filter checks, the checks that answered "may match" (the FPR)
//    and the data-block reads (counted by an Env wrapper); then timed passes measure ns per absent
//    and per present Get, the policies taking turns chunk by chunk in a rotating order, median of
//    the runs.
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <bloomery/leveldb/filter_policy.hpp>
#include <bloomery/support/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "leveldb_support.hpp"

namespace bloomery::leveldb_test {
namespace {

struct bench_options {
  std::uint64_t keys = 1'000'000;
  std::uint64_t runs = 7;
  std::uint64_t queries = 200'000;        // absent and present Gets per timed run
  std::uint64_t fpr_queries = 1'000'000;  // absent Gets of the counted pass: FPR to about 1%
  std::uint64_t value_size = 100;
  std::uint64_t bits_per_key = 10;  // an integer: LevelDB's NewBloomFilterPolicy takes an int
  bool json = false;
};

bench_options parse(int argc, char** argv) {
  bench_options o;
  auto number = [](const std::string& arg, const char* name, std::uint64_t* out) {
    const std::string prefix = std::string(name) + "=";
    if (arg.rfind(prefix, 0) != 0) return false;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(arg.c_str() + prefix.size(), &end, 10);
    if (*end != '\0' || v == 0) throw std::invalid_argument(arg + ": expected a positive integer");
    *out = v;
    return true;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--benchmark") continue;
    if (arg == "--json") {
      o.json = true;
      continue;
    }
    if (number(arg, "--keys", &o.keys) || number(arg, "--runs", &o.runs) ||
        number(arg, "--queries", &o.queries) || number(arg, "--fpr-queries", &o.fpr_queries) ||
        number(arg, "--value-size", &o.value_size) ||
        number(arg, "--bits-per-key", &o.bits_per_key)) {
      continue;
    }
    throw std::invalid_argument("unknown argument '" + arg + "' (see the top of main.cpp)");
  }
  if (o.bits_per_key > 64) throw std::invalid_argument("--bits-per-key must be at most 64");
  return o;
}

struct contender {
  std::string name;
  std::unique_ptr<const leveldb::FilterPolicy> policy;
};

std::vector<contender> contenders(const bench_options& o) {
  std::vector<contender> c;
  c.push_back({"leveldb built-in", std::unique_ptr<const leveldb::FilterPolicy>(
                                       leveldb::NewBloomFilterPolicy(int(o.bits_per_key)))});
  const double bits = static_cast<double>(o.bits_per_key);
  c.push_back({"bloomery bloom",
               leveldb_integration::new_filter_policy(
                   {.kind = leveldb_integration::policy_kind::bloom, .bits_per_key = bits})});
  c.push_back({"bloomery blocked", leveldb_integration::new_filter_policy(
                                       {.kind = leveldb_integration::policy_kind::blocked_bloom,
                                        .bits_per_key = bits})});
  return c;
}

// ---- 1. filters alone -------------------------------------------------------------------------

struct filter_row {
  std::string sizes;
  std::vector<double> fpr, bits_per_key, ns_per_check;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

filter_row measure_filters(const std::vector<contender>& cs, std::size_t lo, std::size_t hi) {
  constexpr std::size_t filters = 4000, probes = 250, repeats = 7;
  filter_row row;
  row.sizes = lo == hi ? std::to_string(lo) : std::to_string(lo) + ".." + std::to_string(hi);
  // Probe keys back to back in one buffer, read in order: the timing is the check's, not that of
  // cache misses on a million scattered strings.
  std::string probe_keys;
  for (std::size_t j = 0; j < filters * probes; ++j) {
    probe_keys += key_of((std::uint64_t{1} << 40) + j);
  }
  std::vector<std::vector<std::string>> built(cs.size());
  for (std::size_t p = 0; p < cs.size(); ++p) {
    std::mt19937_64 rng(lo * 1000 + hi);  // the same sizes and keys for every policy
    std::uint64_t next = 0, bytes = 0, keys = 0;
    std::vector<std::string> batch;
    std::vector<leveldb::Slice> slices;
    built[p].resize(filters);
    for (std::string& filter : built[p]) {
      const std::size_t n = lo + rng() % (hi - lo + 1);
      batch.clear();
      for (std::size_t i = 0; i < n; ++i) batch.push_back(key_of(next++));
      slices.assign(batch.begin(), batch.end());
      cs[p].policy->CreateFilter(slices.data(), static_cast<int>(n), &filter);
      bytes += filter.size();
      keys += n;
    }
    row.bits_per_key.push_back(8.0 * static_cast<double>(bytes) / static_cast<double>(keys));
  }
  // The check itself, timed apart from LevelDB (hash the key, read the trailer, probe); the
  // policies take turns, in a rotating order, and each keeps its median.
  row.fpr.assign(cs.size(), 0);
  std::vector<std::vector<double>> ns(cs.size());
  for (std::size_t r = 0; r < repeats; ++r) {
    for (std::size_t i = 0; i < cs.size(); ++i) {
      const std::size_t p = (r + i) % cs.size();
      std::uint64_t hits = 0;
      const auto start = std::chrono::steady_clock::now();
      for (std::size_t f = 0; f < filters; ++f) {
        const leveldb::Slice filter(built[p][f]);
        for (std::size_t q = 0; q < probes; ++q) {
          const leveldb::Slice key(probe_keys.data() + 16 * (f * probes + q), 16);
          hits += cs[p].policy->KeyMayMatch(key, filter);
        }
      }
      const auto stop = std::chrono::steady_clock::now();
      ns[p].push_back(std::chrono::duration<double, std::nano>(stop - start).count() /
                      (filters * probes));
      row.fpr[p] = static_cast<double>(hits) / (filters * probes);
    }
  }
  for (const auto& v : ns) row.ns_per_check.push_back(median(v));
  return row;
}

// ---- 2. databases -----------------------------------------------------------------------------

struct db_result {
  std::uint64_t filters = 0, filter_keys = 0, filter_bytes = 0;
  double checks_per_get = 0, fpr = 0, reads_per_get = 0;
  std::vector<double> absent_ns, present_ns;  // one per run, in run order
};

// Absent keys: indices far beyond the written ones. `offset` separates warm-up from measured sets.
std::string absent_key(const bench_options& o, std::uint64_t offset, std::uint64_t j) {
  return key_of(o.keys + offset + j);
}

void warm_up(leveldb::DB& db, const bench_options& o) {
  // Opens every table (index and filter blocks loaded into the table cache) and faults in the
  // mapped pages, so the measured passes see the steady state of a long-running reader.
  std::string value;
  const std::uint64_t n = std::min<std::uint64_t>(o.keys, 100'000);
  for (std::uint64_t j = 0; j < n; ++j) {
    db.Get(leveldb::ReadOptions(), absent_key(o, std::uint64_t{1} << 40, j), &value);
    db.Get(leveldb::ReadOptions(), key_of(j * (o.keys / n)), &value);
  }
}

// Gets keys[begin, end) and returns the nanoseconds they took; checks every answer.
double time_gets(leveldb::DB& db, const std::vector<std::string>& keys, std::size_t begin,
                 std::size_t end, bool expect_found) {
  std::string value;
  std::size_t found = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = begin; i < end; ++i) {
    found += db.Get(leveldb::ReadOptions(), keys[i], &value).ok();
  }
  const auto stop = std::chrono::steady_clock::now();
  if (found != (expect_found ? end - begin : 0)) {
    throw std::runtime_error("wrong answers: " + std::to_string(found) + " of " +
                             std::to_string(end - begin) + " keys found");
  }
  return std::chrono::duration<double, std::nano>(stop - start).count();
}

void run_databases(const bench_options& o, const std::vector<contender>& cs,
                   std::vector<db_result>& results, const temp_dir& dir) {
  std::vector<std::string> absent, present, counted_absent;
  for (std::uint64_t j = 0; j < o.queries; ++j) {
    absent.push_back(absent_key(o, 0, j));
    present.push_back(key_of(mix(j) % o.keys));
  }
  for (std::uint64_t j = 0; j < o.fpr_queries; ++j) {
    counted_absent.push_back(absent_key(o, std::uint64_t{1} << 41, j));
  }
  results.assign(cs.size(), {});
  for (std::size_t p = 0; p < cs.size(); ++p) {
    // Build, counting the filters LevelDB asks for; then a counted pass of absent Gets.
    const counting_policy counted(*cs[p].policy);
    counting_env env;
    const leveldb::Options options = options_with(&counted, &env);
    auto db = open_db(options, dir / std::to_string(p));
    std::fprintf(stderr, "building the %s database...\n", cs[p].name.c_str());
    fill_db(*db, o.keys, o.value_size);
    db.reset();
    db = open_db(options, dir / std::to_string(p));
    warm_up(*db, o);
    counted.reset_checks();
    env.reads = 0;
    time_gets(*db, counted_absent, 0, counted_absent.size(), false);
    db_result& r = results[p];
    r.filters = counted.filters;
    r.filter_keys = counted.filter_keys;
    r.filter_bytes = counted.filter_bytes;
    const double q = static_cast<double>(o.fpr_queries);
    r.checks_per_get = static_cast<double>(counted.checks) / q;
    r.fpr = static_cast<double>(counted.positives) / static_cast<double>(counted.checks);
    r.reads_per_get = static_cast<double>(env.reads) / q;
  }

  // Timed passes with the bare policies and the default Env, all databases open. Each run splits
  // the queries into chunks and hands every chunk to each policy in turn, the order rotating from
  // chunk to chunk and from run to run: a slow spell of the machine (other tenants, clock changes)
  // then falls on all policies alike instead of on whichever was running.
  constexpr std::size_t chunk = 5000;
  std::vector<std::unique_ptr<leveldb::DB>> dbs;
  for (std::size_t p = 0; p < cs.size(); ++p) {
    dbs.push_back(open_db(options_with(cs[p].policy.get()), dir / std::to_string(p)));
    warm_up(*dbs.back(), o);
  }
  const std::size_t queries = absent.size();
  for (std::uint64_t run = 0; run < o.runs; ++run) {
    std::vector<double> absent_ns(cs.size()), present_ns(cs.size());
    for (std::size_t begin = 0, turn = run; begin < queries; begin += chunk, ++turn) {
      const std::size_t end = std::min(queries, begin + chunk);
      for (std::size_t i = 0; i < cs.size(); ++i) {
        const std::size_t p = (turn + i) % cs.size();
        absent_ns[p] += time_gets(*dbs[p], absent, begin, end, false);
        present_ns[p] += time_gets(*dbs[p], present, begin, end, true);
      }
    }
    for (std::size_t p = 0; p < cs.size(); ++p) {
      results[p].absent_ns.push_back(absent_ns[p] / static_cast<double>(queries));
      results[p].present_ns.push_back(present_ns[p] / static_cast<double>(queries));
    }
    std::fprintf(stderr, "run %llu of %llu done\n", static_cast<unsigned long long>(run + 1),
                 static_cast<unsigned long long>(o.runs));
  }
}

// ---- output -----------------------------------------------------------------------------------

double median_ratio(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> r;
  for (std::size_t i = 0; i < a.size(); ++i) r.push_back(a[i] / b[i]);
  return median(r);
}

std::string join(const std::vector<double>& v, const char* format) {
  std::string out;
  char buf[64];
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, format, v[i]);
    out += (i ? ", " : "") + std::string(buf);
  }
  return out;
}

void print_table(const bench_options& o, const std::vector<contender>& cs,
                 const std::vector<filter_row>& rows, const std::vector<db_result>& rs) {
  std::printf(
      "LevelDB filter policies at %llu bits/key: %llu keys of 16 bytes, %llu-byte values\n\n",
      static_cast<unsigned long long>(o.bits_per_key), static_cast<unsigned long long>(o.keys),
      static_cast<unsigned long long>(o.value_size));
  std::printf(
      "Filters alone (4000 filters x 250 absent probes per row; bits/key counts each\n"
      "filter's whole bytes, trailer included; ns per KeyMayMatch, median of 7):\n");
  std::printf("%-12s", "keys/filter");
  for (const auto& c : cs) std::printf("  %-30s", c.name.c_str());
  std::printf("\n");
  for (const auto& row : rows) {
    std::printf("%-12s", row.sizes.c_str());
    for (std::size_t p = 0; p < cs.size(); ++p) {
      char cell[64];
      std::snprintf(cell, sizeof cell, "%.3f%% @ %.2f b/k, %.0f ns", 100 * row.fpr[p],
                    row.bits_per_key[p], row.ns_per_check[p]);
      std::printf("  %-30s", cell);
    }
    std::printf("\n");
  }
  std::printf(
      "\nDatabase after CompactRange (%llu absent Gets counted; %llu runs of %llu absent\n"
      "and %llu present Gets timed, median and each run):\n",
      static_cast<unsigned long long>(o.fpr_queries), static_cast<unsigned long long>(o.runs),
      static_cast<unsigned long long>(o.queries), static_cast<unsigned long long>(o.queries));
  std::printf("%-18s %9s %9s %8s %12s %8s %12s %12s %12s\n", "policy", "built", "keys/flt",
              "bits/key", "checks/Get", "FPR", "reads/Get", "ns/absent", "ns/present");
  for (std::size_t p = 0; p < cs.size(); ++p) {
    const db_result& r = rs[p];
    std::printf("%-18s %9llu %9.1f %8.2f %12.3f %7.3f%% %12.4f %12.0f %12.0f\n", cs[p].name.c_str(),
                static_cast<unsigned long long>(r.filters),
                static_cast<double>(r.filter_keys) / static_cast<double>(r.filters),
                8.0 * static_cast<double>(r.filter_bytes) / static_cast<double>(r.filter_keys),
                r.checks_per_get, 100 * r.fpr, r.reads_per_get, median(r.absent_ns),
                median(r.present_ns));
  }
  // Runs are paired (every policy ran the same chunks, interleaved), so the per-run ratio to the
  // built-in policy is the steadier comparison when the machine's speed drifts between runs.
  std::printf("\nper-run ratio to %s, median (absent Get / present Get):\n", cs[0].name.c_str());
  for (std::size_t p = 1; p < cs.size(); ++p) {
    std::printf("  %-18s %.3f / %.3f\n", cs[p].name.c_str(),
                median_ratio(rs[p].absent_ns, rs[0].absent_ns),
                median_ratio(rs[p].present_ns, rs[0].present_ns));
  }
  std::printf("\nns per absent Get, each run:\n");
  for (std::size_t p = 0; p < cs.size(); ++p) {
    std::printf("  %-18s %s\n", cs[p].name.c_str(), join(rs[p].absent_ns, "%.0f").c_str());
  }
  std::printf("ns per present Get, each run:\n");
  for (std::size_t p = 0; p < cs.size(); ++p) {
    std::printf("  %-18s %s\n", cs[p].name.c_str(), join(rs[p].present_ns, "%.0f").c_str());
  }
}

// One object, laid out a line per filter size and per database.
void print_json(const bench_options& o, const std::vector<contender>& cs,
                const std::vector<filter_row>& rows, const std::vector<db_result>& rs) {
  support::json_writer w(support::json_spaced);
  w.begin_object().key("keys").integer(o.keys).key("value_size").integer(o.value_size);
  w.key("bits_per_key").integer(o.bits_per_key).key("queries").integer(o.queries);
  w.key("fpr_queries").integer(o.fpr_queries).key("runs").integer(o.runs);
  w.new_line(1).key("filters_alone").begin_array();
  for (const filter_row& row : rows) {
    w.new_line(2).begin_object().key("keys_per_filter").string(row.sizes);
    for (std::size_t p = 0; p < cs.size(); ++p) {
      w.key(cs[p].name).begin_object();
      w.key("fpr")
          .number(row.fpr[p], "%.6f")
          .key("bits_per_key")
          .number(row.bits_per_key[p], "%.4f");
      w.key("ns_per_check").number(row.ns_per_check[p], "%.2f").end_object();
    }
    w.end_object();
  }
  w.end_array();
  const auto runs = [&w](const char* name, const std::vector<double>& ns) {
    w.key(name).begin_array();
    for (const double v : ns) w.number(v, "%.1f");
    w.end_array();
  };
  w.new_line(1).key("databases").begin_array();
  for (std::size_t p = 0; p < cs.size(); ++p) {
    const db_result& r = rs[p];
    w.new_line(2).begin_object().key("policy").string(cs[p].name).key("filters").integer(r.filters);
    w.key("keys_per_filter")
        .number(static_cast<double>(r.filter_keys) / static_cast<double>(r.filters), "%.2f");
    w.key("bits_per_key")
        .number(8.0 * static_cast<double>(r.filter_bytes) / static_cast<double>(r.filter_keys),
                "%.4f");
    w.key("checks_per_get").number(r.checks_per_get, "%.4f").key("fpr").number(r.fpr, "%.6f");
    w.key("reads_per_absent_get").number(r.reads_per_get, "%.6f");
    runs("ns_per_absent_get", r.absent_ns);
    runs("ns_per_present_get", r.present_ns);
    w.key("median_ns_absent").number(median(r.absent_ns), "%.1f");
    w.key("median_ns_present").number(median(r.present_ns), "%.1f");
    w.key("median_run_ratio_absent").number(median_ratio(r.absent_ns, rs[0].absent_ns), "%.4f");
    w.key("median_run_ratio_present").number(median_ratio(r.present_ns, rs[0].present_ns), "%.4f");
    w.end_object();
  }
  w.end_array().end_object();
  std::printf("%s\n", w.str().c_str());
}

}  // namespace

int run_benchmark(int argc, char** argv) {
  const bench_options o = parse(argc, argv);
  const std::vector<contender> cs = contenders(o);
  std::vector<filter_row> rows;
  for (const auto& [lo, hi] : std::vector<std::pair<std::size_t, std::size_t>>{
           {20, 20}, {35, 35}, {50, 50}, {75, 75}, {100, 100}, {20, 100}}) {
    rows.push_back(measure_filters(cs, lo, hi));
  }
  const temp_dir dir("bloomery-leveldb-bench");
  std::vector<db_result> results;
  run_databases(o, cs, results, dir);
  if (o.json) {
    print_json(o, cs, rows, results);
  } else {
    print_table(o, cs, rows, results);
  }
  return 0;
}

}  // namespace bloomery::leveldb_test
