// bloomery-bench-family: every bloomery filter side by side, with LevelDB's built-in Bloom filter
// policy as the external reference, on uint64 keys at a 1% target.
//
// Benchmark names are  <op>/<filter>/<n>:
//   op      insert | build | present | absent | present_many | absent_many
//   filter  bloom | blocked | blocked-portable | counting | cuckoo | scalable | static | static8 |
//           static16
//           | leveldb, and two fixed-size rows behind the blocked filter's speed targets:
//           bloom-10b (bloom_filter {.bits = 10n, .hashes = 7}) and
//           blocked-10b (blocked_bloom_filter {.bits = floor(10n / 512) * 512, .hashes = 6})
//   n       keys in the filter: 10^6, 10^7; 10^8 with --huge or BLOOMERY_BENCH_HUGE=1
//
// Every filter except the -10b rows is sized from bloomery::target{n, 0.01}. static is
// static_filter::build(keys, 0.01), which picks 7-bit fingerprints in four slots per key and so
// delivers 2^-7 = 0.78%; static8 and static16 are built with explicit 8- and 16-bit widths (three
// whole-byte slots: 2^-8 and 2^-16). LevelDB gets NewBloomFilterPolicy(10), the
// bits per key bloom_filter uses at 1% rounded (9.585 -> 10); it picks k = 6 itself.
// blocked-portable queries the blocked filter with bloomery::force_portable_simd(true).
//
// insert: ns per key to insert all n distinct keys into an empty filter sized for them (the
// filter is cleared, untimed, before each pass), so the cost is the average over the whole fill
// -- which matters for the cuckoo filter, whose evictions grow with its load. build (static
// filters, LevelDB): ns per key of building the filter from all n keys.
// present / absent: one may_contain (LevelDB: KeyMayMatch) per key; *_many: one
// may_contain_many call per 1024 keys. Streams and key generation are bench_bloom.cpp's
// (bench_common.hpp): kBatch = 1024 keys per timed iteration from a pre-generated power-of-two
// stream (present keys cycled, or keys absent by construction), `per_key` = CPU seconds per key.
//
// Counters: bits_per_key = 8 * size_in_bytes() / n; fpr = measured once per filter over
// kFprProbes keys absent by construction and used nowhere else; est_fpr = the filter's own
// estimated_fpr() (LevelDB: (1 - e^(-kn/m))^k for its m and k). A filter that answers "no" for
// any key of the present stream fails its benchmarks with "false negatives".
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "family_filters.hpp"

#include "bench_common.hpp"
#include "bench_report.hpp"

namespace {

using namespace bloomery::bench;

using u64 = std::uint64_t;

constexpr int kLeveldbBitsPerKey = 10;

// The explicit shapes behind the blocked filter's speed targets: 10 bits per key.
bloomery::bloom_parameters classic_10b(u64 n) {
  return {n * 10, 7};
}
bloomery::bloom_parameters blocked_10b(u64 n) {
  return {n * 10 / 512 * 512, 6};
}

// Process-wide portable-path switch for the blocked filter, restored on scope exit.
class portable_scope {
 public:
  explicit portable_scope(bool on) : on_(on) {
    if (on_) bloomery::force_portable_simd(true);
  }
  ~portable_scope() {
    if (on_) bloomery::force_portable_simd(false);
  }
  portable_scope(const portable_scope&) = delete;
  portable_scope& operator=(const portable_scope&) = delete;

 private:
  bool on_;
};

struct filter_stats {
  double bits_per_key = 0;
  double fpr = 0;
  double est_fpr = 0;
  u64 false_negatives = 0;
};

template <class F>
struct built {
  std::unique_ptr<F> filter;
  filter_stats stats;
};

// Keys, streams and built filters for one n, made lazily and kept for the process lifetime.
class world {
 public:
  explicit world(u64 n)
      : n_(n),
        present_(keys_at(0, n)),
        absent_(keys_at(kAbsentBase, stream_length(n))),
        fpr_probes_(keys_at(kFprBase, kFprProbes)) {
    present_stream_.resize(stream_length(n));
    for (std::size_t i = 0; i < present_stream_.size(); ++i) {
      present_stream_[i] = present_[i % n];
    }
  }

  u64 n() const { return n_; }
  bloomery::target target() const { return {n_, kFpr}; }
  const std::vector<u64>& present_keys() const { return present_; }
  const std::vector<u64>& stream(bool present) const { return present ? present_stream_ : absent_; }

  // The filter called `name`, made by `make(present keys)` on first use, then measured.
  template <class F, class Make>
  const built<F>& get(const std::string& name, Make&& make) {
    std::shared_ptr<void>& slot = filters_[name];
    if (!slot) {
      auto b = std::make_shared<built<F>>();
      b->filter = make(present_);
      const F& f = *b->filter;
      b->stats.bits_per_key =
          8.0 * static_cast<double>(f.size_in_bytes()) / static_cast<double>(n_);
      u64 positives = 0;
      for (const u64& key : fpr_probes_) positives += f.may_contain(key) ? 1 : 0;
      b->stats.fpr = static_cast<double>(positives) / static_cast<double>(fpr_probes_.size());
      b->stats.est_fpr = f.estimated_fpr();
      for (const u64& key : present_stream_) b->stats.false_negatives += f.may_contain(key) ? 0 : 1;
      slot = b;
    }
    return *static_cast<const built<F>*>(slot.get());
  }

 private:
  u64 n_;
  std::vector<u64> present_;
  std::vector<u64> absent_;
  std::vector<u64> fpr_probes_;
  std::vector<u64> present_stream_;
  std::map<std::string, std::shared_ptr<void>> filters_;
};

world& world_for(u64 n) {
  static std::map<u64, std::unique_ptr<world>> worlds;
  auto& w = worlds[n];
  if (!w) w = std::make_unique<world>(n);
  return *w;
}

// ---------------------------------------------------------------------------------------------
// Reporting.

void report_filter(benchmark::State& st, const filter_stats& s) {
  st.counters["bits_per_key"] = s.bits_per_key;
  st.counters["fpr"] = s.fpr;
  st.counters["est_fpr"] = s.est_fpr;
  fail_on_false_negatives(st, s.false_negatives);
}

// ---------------------------------------------------------------------------------------------
// The benchmarks, generic over the filter type.

// Inserts all n keys into a cleared filter per iteration. `insert(f, key)` returns false when the
// filter refused the key (only the cuckoo filter can); any refusal fails the benchmark.
template <class F, class Make, class Insert>
void bm_insert(benchmark::State& st, u64 n, Make make, Insert insert) {
  auto& w = world_for(n);
  const std::vector<u64>& keys = w.present_keys();
  std::unique_ptr<F> f = make(w.target());
  u64 refused = 0;
  for (auto _ : st) {
    st.PauseTiming();
    f->clear();
    st.ResumeTiming();
    for (const u64& key : keys) refused += insert(*f, key) ? 0 : 1;
    benchmark::ClobberMemory();
  }
  report_keys(st, n);
  st.counters["bits_per_key"] =
      8.0 * static_cast<double>(f->size_in_bytes()) / static_cast<double>(n);
  if (refused != 0) {
    const std::string msg = "inserts refused: " + std::to_string(refused);
    st.SkipWithError(msg.c_str());
  }
}

// Builds the whole filter from all n keys per iteration (static filters, LevelDB).
template <class F, class Build>
void bm_build(benchmark::State& st, u64 n, Build build) {
  auto& w = world_for(n);
  const std::vector<u64>& keys = w.present_keys();
  double bytes = 0;
  for (auto _ : st) {
    std::unique_ptr<F> f = build(keys);
    benchmark::DoNotOptimize(f.get());
    benchmark::ClobberMemory();
    st.PauseTiming();
    bytes = static_cast<double>(f->size_in_bytes());
    f.reset();
    st.ResumeTiming();
  }
  report_keys(st, n);
  st.counters["bits_per_key"] = 8.0 * bytes / static_cast<double>(n);
}

template <class F>
void bm_query(benchmark::State& st, const built<F>& b, const std::vector<u64>& stream, bool many,
              bool portable) {
  const F& f = *b.filter;
  const portable_scope scope(portable);
  const std::size_t mask = stream.size() - 1;  // a power of two, a multiple of kBatch
  std::size_t pos = 0;
  std::array<bool, kBatch> out{};
  for (auto _ : st) {
    const u64* keys = stream.data() + pos;
    std::size_t hits = 0;
    if (many) {
      if constexpr (requires { f.may_contain_many(std::span<const u64>(keys, kBatch), out); }) {
        hits = f.may_contain_many(std::span<const u64>(keys, kBatch), out);
        benchmark::DoNotOptimize(out.data());
      }
    } else {
      for (std::size_t j = 0; j < kBatch; ++j) hits += f.may_contain(keys[j]) ? 1 : 0;
    }
    benchmark::DoNotOptimize(hits);
    pos = (pos + kBatch) & mask;
  }
  report_keys(st, kBatch);
  report_filter(st, b.stats);
}

// ---------------------------------------------------------------------------------------------
// Registration.

std::string bench_name(const char* op, const std::string& filter, u64 n) {
  return std::string(op) + "/" + filter + "/" + std::to_string(n);
}

// Registers present/absent, one-at-a-time and (when `batched`) may_contain_many, for the filter
// `name` of type F made by `make(keys)`.
template <class F, class Make>
void register_queries(const std::string& name, u64 n, Make make, bool batched,
                      bool portable = false, const std::string& shared_as = "") {
  const std::string key = shared_as.empty() ? name : shared_as;
  for (const bool present : {true, false}) {
    for (const bool many : {false, true}) {
      if (many && !batched) continue;
      const char* op =
          present ? (many ? "present_many" : "present") : (many ? "absent_many" : "absent");
      benchmark::RegisterBenchmark(bench_name(op, name, n).c_str(), [=](benchmark::State& st) {
        auto& w = world_for(n);
        bm_query(st, w.get<F>(key, make), w.stream(present), many, portable);
      })->Unit(benchmark::kMicrosecond);
    }
  }
}

template <class F, class Insert>
void register_insert(const std::string& name, u64 n, Insert insert) {
  benchmark::RegisterBenchmark(bench_name("insert", name, n).c_str(), [=](benchmark::State& st) {
    bm_insert<F>(
        st, n, [](bloomery::target t) { return std::make_unique<F>(t); }, insert);
  })->Unit(benchmark::kMillisecond);
}

template <class F, class Build>
void register_build(const std::string& name, u64 n, Build build) {
  benchmark::RegisterBenchmark(bench_name("build", name, n).c_str(), [=](benchmark::State& st) {
    bm_build<F>(st, n, build);
  })->Unit(benchmark::kMillisecond);
}

// A filter sized from the target and filled with all n keys.
template <class F>
auto fill_from_target(u64 n) {
  return [n](const std::vector<u64>& keys) {
    auto f = std::make_unique<F>(bloomery::target{n, kFpr});
    for (const u64& key : keys) {
      if (!f->insert(key)) {
        std::fprintf(stderr, "bloomery-bench-family: insert refused at n = %llu\n",
                     static_cast<unsigned long long>(n));
        std::abort();
      }
    }
    return f;
  };
}

template <class F>
auto fill_explicit(bloomery::bloom_parameters p) {
  return [p](const std::vector<u64>& keys) {
    auto f = std::make_unique<F>(p);
    for (const u64& key : keys) f->insert(key);
    return f;
  };
}

// The insert row and the query rows of a filter sized from the target.
template <class F>
void register_sized(const std::string& name, u64 n) {
  register_insert<F>(name, n,
                     [](F& f, const u64& key) { return static_cast<bool>(f.insert(key)); });
  register_queries<F>(name, n, fill_from_target<F>(n), true);
}

void register_size(u64 n) {
  using namespace bloomery;

  register_sized<bloom_filter>("bloom", n);
  // blocked-portable shares the blocked filter (the same bits); only the query path differs.
  // Inserts have no SIMD path, so blocked-portable has no insert row.
  register_sized<blocked_bloom_filter>("blocked", n);
  register_queries<blocked_bloom_filter>(
      "blocked-portable", n, fill_from_target<blocked_bloom_filter>(n), true, true, "blocked");
  // blocked-shared: shared for concurrent inserts, so its AVX2 probe reads the line word by word
  // with atomic loads (README "Thread safety"); the price of race-free queries beside writers.
  register_queries<blocked_bloom_filter>(
      "blocked-shared", n,
      [fill = fill_from_target<blocked_bloom_filter>(n)](const std::vector<u64>& keys) {
        auto f = fill(keys);
        f->share_for_concurrent_inserts();
        return f;
      },
      true);
  register_sized<counting_bloom_filter>("counting", n);
  register_sized<cuckoo_filter>("cuckoo", n);
  register_sized<scalable_bloom_filter>("scalable", n);

  const auto from_rate = [](const std::vector<u64>& keys) {
    return std::make_unique<static_filter>(static_filter::build(keys, kFpr));
  };
  const auto static8 = [](const std::vector<u64>& keys) {
    return std::make_unique<static_filter>(static_filter::build(keys, fingerprint_width::bits8));
  };
  const auto static16 = [](const std::vector<u64>& keys) {
    return std::make_unique<static_filter>(static_filter::build(keys, fingerprint_width::bits16));
  };
  register_build<static_filter>("static", n, from_rate);
  register_queries<static_filter>("static", n, from_rate, true);
  register_build<static_filter>("static8", n, static8);
  register_queries<static_filter>("static8", n, static8, true);
  register_build<static_filter>("static16", n, static16);
  register_queries<static_filter>("static16", n, static16, true);

#ifdef BLOOMERY_BENCH_HAVE_LEVELDB
  const auto leveldb = [](const std::vector<u64>& keys) {
    return std::make_unique<leveldb_filter>(keys, kLeveldbBitsPerKey);
  };
  register_build<leveldb_filter>("leveldb", n, leveldb);
  register_queries<leveldb_filter>("leveldb", n, leveldb, false);
#endif

  // The blocked filter's speed targets: both filters at 10 bits per key.
  register_queries<bloom_filter>("bloom-10b", n, fill_explicit<bloom_filter>(classic_10b(n)), true);
  register_queries<blocked_bloom_filter>("blocked-10b", n,
                                         fill_explicit<blocked_bloom_filter>(blocked_10b(n)), true);
}

}  // namespace

int main(int argc, char** argv) {
  const bool huge = bloomery::bench::take_huge_flag(argc, argv);
  register_size(1'000'000);
  register_size(10'000'000);
  // 10^8 keys: 800 MB of keys plus every filter (about 2.5 GB in all).
  if (huge) register_size(100'000'000);
  bloomery::bench::register_memory_latency(huge);
  std::string family =
      "bloom blocked blocked-portable counting cuckoo scalable static static8 static16";
#ifdef BLOOMERY_BENCH_HAVE_LEVELDB
  family += " leveldb";
#endif
  return bloomery::bench::run_benchmarks(
      argc, argv, huge,
      {{"bloomery.family", family}, {"bloomery.avx2", bloomery::simd_available() ? "1" : "0"}});
}
