// bloomery-bench: bloomery's classic Bloom filter against libbloom and LevelDB's built-in filter
// policy, at the same false-positive target (1%) and the same bits per key.
//
// Benchmark names are  <op>/<impl>/<keys>/<n>:
//   op    insert | build | present | absent | present_many | absent_many
//   impl  bloomery | libbloom | leveldb
//   keys  u64 (uint64_t keys, hashed as their 8 bytes) | str16 (16-character strings)
//   n     keys in the filter: 10^4, 10^6, 10^7; 10^8 (bloomery, u64 only) with --huge or
//         BLOOMERY_BENCH_HUGE=1
//
// Every timed iteration handles kBatch = 1024 keys. `per_key` is CPU seconds per key; the
// `fpr` counter is the false-positive rate measured once per filter over kFprProbes absent keys
// that are used nowhere else; `fpr_theory` is (1 - e^(-kn/m))^k for the filter's own m and k.
//
// Setup is never timed: keys and filters are built on first use and kept in static storage.
// Key streams (all pre-generated, fixed seeds):
//   present  the filter's keys, cycled to a power-of-two length Q = clamp(bit_ceil(n), 2^16, 2^22)
//   absent   Q keys guaranteed absent (disjoint by construction), walked in order, so one-at-a-time
//            lookups see random filter addresses and unpredictable early exits, as in real use.
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
#include <string_view>
#include <vector>

#include "bloomery/bloom_filter.hpp"

#ifdef BLOOMERY_BENCH_HAVE_LIBBLOOM
#include <bloom.h>
#endif
#ifdef BLOOMERY_BENCH_HAVE_LEVELDB
#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>
#endif

#include "bench_common.hpp"
#include "bench_report.hpp"

namespace {

using namespace bloomery::bench;

// str16 keys come from a stream of their own seed, at the same positions as the uint64 keys.
constexpr std::uint64_t kSeedStr = 0xfedcba9876543210ULL;

using str_key = std::string_view;

// The bytes each implementation hashes. bloomery hashes an integer key as its 8 little-endian
// bytes, which on x86-64 are exactly the bytes in memory, so all three hash identical input.
[[maybe_unused]] const char* key_data(const std::uint64_t& k) {
  return reinterpret_cast<const char*>(&k);
}
[[maybe_unused]] std::size_t key_size(const std::uint64_t&) {
  return sizeof(std::uint64_t);
}
[[maybe_unused]] const char* key_data(const str_key& k) {
  return k.data();
}
[[maybe_unused]] std::size_t key_size(const str_key& k) {
  return k.size();
}

template <class K>
const char* key_name();
template <>
const char* key_name<std::uint64_t>() {
  return "u64";
}
template <>
const char* key_name<str_key>() {
  return "str16";
}

// A list of keys of type K plus whatever owns their bytes.
template <class K>
struct key_list {
  std::vector<K> keys;
  std::vector<char> storage;  // str16 only: 16 bytes per key, contiguous
};

template <class K>
key_list<K> make_keys(std::uint64_t first, std::size_t count) {
  key_list<K> out;
  if constexpr (std::is_same_v<K, std::uint64_t>) {
    out.keys = keys_at(first, count);
  } else {
    out.keys.resize(count);
    // 16 lowercase hex digits of a random 64-bit value: distinct values give distinct strings.
    static constexpr char hex[] = "0123456789abcdef";
    out.storage.resize(count * 16);
    for (std::size_t i = 0; i < count; ++i) {
      std::uint64_t v = bloomery::support::splitmix64_at(kSeedStr, first + i);
      char* p = out.storage.data() + i * 16;
      for (int d = 15; d >= 0; --d, v >>= 4) p[d] = hex[v & 15];
    }
    for (std::size_t i = 0; i < count; ++i) out.keys[i] = str_key(out.storage.data() + i * 16, 16);
  }
  return out;
}

// What one filter implementation knows about itself after it was built and checked.
struct filter_stats {
  double bits_per_key = 0;
  double hashes = 0;
  double fpr = 0;         // measured over the FPR probes
  double fpr_theory = 0;  // (1 - e^(-kn/m))^k
  std::uint64_t false_negatives = 0;
};

template <class K, class Query>
filter_stats measure(std::uint64_t n, std::uint64_t m, std::uint32_t k,
                     const std::vector<K>& fpr_probes, const std::vector<K>& present,
                     Query&& query) {
  filter_stats s;
  s.bits_per_key = static_cast<double>(m) / static_cast<double>(n);
  s.hashes = k;
  std::uint64_t positives = 0;
  for (const K& key : fpr_probes) positives += query(key) ? 1 : 0;
  s.fpr = static_cast<double>(positives) / static_cast<double>(fpr_probes.size());
  s.fpr_theory = bloomery::false_positive_rate(n, m, k);
  for (const K& key : present) s.false_negatives += query(key) ? 0 : 1;
  return s;
}

#ifdef BLOOMERY_BENCH_HAVE_LIBBLOOM
struct libbloom_deleter {
  void operator()(::bloom* b) const {
    bloom_free(b);
    delete b;
  }
};
using libbloom_ptr = std::unique_ptr<::bloom, libbloom_deleter>;

libbloom_ptr make_libbloom(std::uint64_t n) {
  // libbloom 1.6 (Debian) has bloom_init(bloom, entries, error); bloom_init2 is the same call
  // under its later name. It needs entries >= 1000 and sizes with int arithmetic.
  libbloom_ptr b(new ::bloom());
  if (bloom_init(b.get(), static_cast<int>(n), kFpr) != 0) {
    std::fprintf(stderr, "bloom_init(%llu, %g) failed\n", static_cast<unsigned long long>(n), kFpr);
    std::abort();
  }
  return b;
}
#endif

#ifdef BLOOMERY_BENCH_HAVE_LEVELDB
const leveldb::FilterPolicy& leveldb_policy(int bits_per_key) {
  static std::map<int, std::unique_ptr<const leveldb::FilterPolicy>> policies;
  auto& p = policies[bits_per_key];
  if (!p) p.reset(leveldb::NewBloomFilterPolicy(bits_per_key));
  return *p;
}
template <class K>
std::vector<leveldb::Slice> to_slices(const std::vector<K>& keys) {
  std::vector<leveldb::Slice> s;
  s.reserve(keys.size());
  for (const K& k : keys) s.emplace_back(key_data(k), key_size(k));
  return s;
}
#endif

// Keys and filters for one (key type, n), built lazily and kept for the process lifetime.
template <class K>
class world {
 public:
  explicit world(std::uint64_t n)
      : n_(n),
        present_(make_keys<K>(0, n)),
        absent_(make_keys<K>(kAbsentBase, stream_length(n))),
        fpr_probes_(make_keys<K>(kFprBase, kFprProbes)) {
    const std::size_t q = stream_length(n);
    present_stream_.resize(q);
    for (std::size_t i = 0; i < q; ++i) present_stream_[i] = present_.keys[i % n];
  }

  std::uint64_t n() const { return n_; }
  const std::vector<K>& present_keys() const { return present_.keys; }
  const std::vector<K>& present_stream() const { return present_stream_; }
  const std::vector<K>& absent_stream() const { return absent_.keys; }

  bloomery::target target() const { return {n_, kFpr}; }

  const bloomery::bloom_filter& bloomery_filter() {
    if (!bloomery_) {
      bloomery_ = std::make_unique<bloomery::bloom_filter>(target());
      for (const K& key : present_.keys) bloomery_->insert(key);
      const auto& f = *bloomery_;
      bloomery_stats_ = measure(n_, f.bit_count(), f.hash_count(), fpr_probes_.keys,
                                present_stream_, [&](const K& key) { return f.may_contain(key); });
    }
    return *bloomery_;
  }
  const filter_stats& bloomery_stats() {
    bloomery_filter();
    return bloomery_stats_;
  }

  // The bits per key every peer is given: bloomery's m/n (9.585 at 1%).
  double bloomery_bits_per_key() {
    return static_cast<double>(bloomery::optimal_bits(n_, kFpr)) / static_cast<double>(n_);
  }

#ifdef BLOOMERY_BENCH_HAVE_LIBBLOOM
  ::bloom* libbloom_filter() {
    if (!libbloom_) {
      libbloom_ = make_libbloom(n_);
      ::bloom* b = libbloom_.get();
      for (const K& key : present_.keys)
        bloom_add(b, key_data(key), static_cast<int>(key_size(key)));
      libbloom_stats_ =
          measure(n_, static_cast<std::uint64_t>(b->bits), static_cast<std::uint32_t>(b->hashes),
                  fpr_probes_.keys, present_stream_, [&](const K& key) {
                    return bloom_check(b, key_data(key), static_cast<int>(key_size(key))) == 1;
                  });
    }
    return libbloom_.get();
  }
  const filter_stats& libbloom_stats() {
    libbloom_filter();
    return libbloom_stats_;
  }
#endif

#ifdef BLOOMERY_BENCH_HAVE_LEVELDB
  int leveldb_bits_per_key() {
    return static_cast<int>(std::lround(bloomery_bits_per_key()));
  }
  const std::vector<leveldb::Slice>& leveldb_slices() {
    if (slices_.empty()) slices_ = to_slices(present_.keys);
    return slices_;
  }
  // One filter over all n keys, as a LevelDB table block would hold for its keys.
  const std::string& leveldb_filter() {
    if (leveldb_filter_.empty()) {
      const auto& policy = leveldb_policy(leveldb_bits_per_key());
      policy.CreateFilter(leveldb_slices().data(), static_cast<int>(n_), &leveldb_filter_);
      std::vector<leveldb::Slice>().swap(slices_);  // only the build benchmark needs them again
      const leveldb::Slice filter(leveldb_filter_);
      // The policy's filter format: the bit array, then one byte holding k.
      const auto m = static_cast<std::uint64_t>(leveldb_filter_.size() - 1) * 8;
      const auto k = static_cast<std::uint32_t>(static_cast<unsigned char>(leveldb_filter_.back()));
      leveldb_stats_ = measure(n_, m, k, fpr_probes_.keys, present_stream_, [&](const K& key) {
        return policy.KeyMayMatch(leveldb::Slice(key_data(key), key_size(key)), filter);
      });
    }
    return leveldb_filter_;
  }
  const filter_stats& leveldb_stats() {
    leveldb_filter();
    return leveldb_stats_;
  }
#endif

 private:
  std::uint64_t n_;
  key_list<K> present_;
  key_list<K> absent_;
  key_list<K> fpr_probes_;
  std::vector<K> present_stream_;

  std::unique_ptr<bloomery::bloom_filter> bloomery_;
  filter_stats bloomery_stats_;
#ifdef BLOOMERY_BENCH_HAVE_LIBBLOOM
  libbloom_ptr libbloom_;
  filter_stats libbloom_stats_;
#endif
#ifdef BLOOMERY_BENCH_HAVE_LEVELDB
  std::vector<leveldb::Slice> slices_;
  std::string leveldb_filter_;
  filter_stats leveldb_stats_;
#endif
};

template <class K>
world<K>& world_for(std::uint64_t n) {
  static std::map<std::uint64_t, std::unique_ptr<world<K>>> worlds;
  auto& w = worlds[n];
  if (!w) w = std::make_unique<world<K>>(n);
  return *w;
}

// ---------------------------------------------------------------------------------------------
// Reporting helpers.

void report_filter(benchmark::State& st, const filter_stats& s) {
  st.counters["bits_per_key"] = s.bits_per_key;
  st.counters["k"] = s.hashes;
  st.counters["fpr"] = s.fpr;
  st.counters["fpr_theory"] = s.fpr_theory;
  fail_on_false_negatives(st, s.false_negatives);
}

// Walks a power-of-two key stream kBatch keys per iteration; `per_batch(const K*)` handles one
// batch and returns a count that is kept alive with DoNotOptimize.
template <class K, class PerBatch>
void walk(benchmark::State& st, const std::vector<K>& stream, PerBatch&& per_batch) {
  const std::size_t mask = stream.size() - 1;  // size is a power of two, multiple of kBatch
  std::size_t pos = 0;
  for (auto _ : st) {
    std::size_t hits = per_batch(stream.data() + pos);
    benchmark::DoNotOptimize(hits);
    pos = (pos + kBatch) & mask;
  }
  report_keys(st, kBatch);
}

// ---------------------------------------------------------------------------------------------
// bloomery

template <class K>
void bm_bloomery_insert(benchmark::State& st, std::uint64_t n) {
  auto& w = world_for<K>(n);
  bloomery::bloom_filter f(w.target());
  // Insert cost does not depend on the fill (every insert sets k bits), so the stream simply
  // cycles through the present keys into one filter of the benchmarked size.
  walk(st, w.present_stream(), [&](const K* keys) {
    for (std::size_t j = 0; j < kBatch; ++j) f.insert(keys[j]);
    return std::size_t{0};
  });
  benchmark::DoNotOptimize(f.words().data());
  benchmark::ClobberMemory();
  st.counters["bits_per_key"] = static_cast<double>(f.bit_count()) / static_cast<double>(n);
  st.counters["k"] = f.hash_count();
}

template <class K>
void bm_bloomery_query(benchmark::State& st, std::uint64_t n, bool present) {
  auto& w = world_for<K>(n);
  const auto& f = w.bloomery_filter();
  walk(st, present ? w.present_stream() : w.absent_stream(), [&](const K* keys) {
    std::size_t hits = 0;
    for (std::size_t j = 0; j < kBatch; ++j) hits += f.may_contain(keys[j]) ? 1 : 0;
    return hits;
  });
  report_filter(st, w.bloomery_stats());
}

template <class K>
void bm_bloomery_query_many(benchmark::State& st, std::uint64_t n, bool present) {
  auto& w = world_for<K>(n);
  const auto& f = w.bloomery_filter();
  std::array<bool, kBatch> out{};
  walk(st, present ? w.present_stream() : w.absent_stream(), [&](const K* keys) {
    const std::size_t hits = f.may_contain_many(std::span<const K>(keys, kBatch), out);
    benchmark::DoNotOptimize(out.data());
    return hits;
  });
  report_filter(st, w.bloomery_stats());
}

// ---------------------------------------------------------------------------------------------
// libbloom

#ifdef BLOOMERY_BENCH_HAVE_LIBBLOOM
template <class K>
void bm_libbloom_insert(benchmark::State& st, std::uint64_t n) {
  auto& w = world_for<K>(n);
  libbloom_ptr b = make_libbloom(n);
  walk(st, w.present_stream(), [&](const K* keys) {
    std::size_t r = 0;
    for (std::size_t j = 0; j < kBatch; ++j) {
      r += static_cast<std::size_t>(
          bloom_add(b.get(), key_data(keys[j]), static_cast<int>(key_size(keys[j]))));
    }
    return r;
  });
  st.counters["bits_per_key"] = static_cast<double>(b->bits) / static_cast<double>(n);
  st.counters["k"] = b->hashes;
}

template <class K>
void bm_libbloom_query(benchmark::State& st, std::uint64_t n, bool present) {
  auto& w = world_for<K>(n);
  ::bloom* b = w.libbloom_filter();
  walk(st, present ? w.present_stream() : w.absent_stream(), [&](const K* keys) {
    std::size_t hits = 0;
    for (std::size_t j = 0; j < kBatch; ++j) {
      hits += bloom_check(b, key_data(keys[j]), static_cast<int>(key_size(keys[j]))) == 1 ? 1 : 0;
    }
    return hits;
  });
  report_filter(st, w.libbloom_stats());
}
#endif

// ---------------------------------------------------------------------------------------------
// LevelDB's built-in policy: the filter is one immutable blob, built from all keys at once.

#ifdef BLOOMERY_BENCH_HAVE_LEVELDB
template <class K>
void bm_leveldb_build(benchmark::State& st, std::uint64_t n) {
  auto& w = world_for<K>(n);
  const auto& policy = leveldb_policy(w.leveldb_bits_per_key());
  const std::vector<leveldb::Slice> slices = to_slices(w.present_keys());
  std::string dst;
  for (auto _ : st) {
    dst.clear();
    policy.CreateFilter(slices.data(), static_cast<int>(n), &dst);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  report_keys(st, n);
  st.counters["bits_per_key"] = static_cast<double>(dst.size() - 1) * 8 / static_cast<double>(n);
  st.counters["k"] = static_cast<unsigned char>(dst.back());
}

template <class K>
void bm_leveldb_query(benchmark::State& st, std::uint64_t n, bool present) {
  auto& w = world_for<K>(n);
  const auto& policy = leveldb_policy(w.leveldb_bits_per_key());
  const leveldb::Slice filter(w.leveldb_filter());
  walk(st, present ? w.present_stream() : w.absent_stream(), [&](const K* keys) {
    std::size_t hits = 0;
    for (std::size_t j = 0; j < kBatch; ++j) {
      hits +=
          policy.KeyMayMatch(leveldb::Slice(key_data(keys[j]), key_size(keys[j])), filter) ? 1 : 0;
    }
    return hits;
  });
  report_filter(st, w.leveldb_stats());
}
#endif

// ---------------------------------------------------------------------------------------------
// Registration.

std::string name(const char* op, const char* impl, const char* keys, std::uint64_t n) {
  return std::string(op) + "/" + impl + "/" + keys + "/" + std::to_string(n);
}

template <class K>
void register_size(std::uint64_t n, [[maybe_unused]] bool peers) {
  const char* kn = key_name<K>();
  auto reg = [&](const char* op, const char* impl, auto fn) {
    benchmark::RegisterBenchmark(name(op, impl, kn, n).c_str(), fn)->Unit(benchmark::kMicrosecond);
  };
  reg("insert", "bloomery", [n](benchmark::State& st) { bm_bloomery_insert<K>(st, n); });
#ifdef BLOOMERY_BENCH_HAVE_LIBBLOOM
  if (peers) reg("insert", "libbloom", [n](benchmark::State& st) { bm_libbloom_insert<K>(st, n); });
#endif
#ifdef BLOOMERY_BENCH_HAVE_LEVELDB
  if (peers) {
    benchmark::RegisterBenchmark(name("build", "leveldb", kn, n).c_str(),
                                 [n](benchmark::State& st) { bm_leveldb_build<K>(st, n); })
        ->Unit(benchmark::kMillisecond);
  }
#endif
  for (const bool present : {true, false}) {
    const char* op = present ? "present" : "absent";
    const char* op_many = present ? "present_many" : "absent_many";
    reg(op, "bloomery",
        [n, present](benchmark::State& st) { bm_bloomery_query<K>(st, n, present); });
#ifdef BLOOMERY_BENCH_HAVE_LIBBLOOM
    if (peers) {
      reg(op, "libbloom",
          [n, present](benchmark::State& st) { bm_libbloom_query<K>(st, n, present); });
    }
#endif
#ifdef BLOOMERY_BENCH_HAVE_LEVELDB
    if (peers) {
      reg(op, "leveldb",
          [n, present](benchmark::State& st) { bm_leveldb_query<K>(st, n, present); });
    }
#endif
    reg(op_many, "bloomery",
        [n, present](benchmark::State& st) { bm_bloomery_query_many<K>(st, n, present); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool huge = take_huge_flag(argc, argv);
  for (const std::uint64_t n :
       {std::uint64_t{10'000}, std::uint64_t{1'000'000}, std::uint64_t{10'000'000}}) {
    register_size<std::uint64_t>(n, true);
    register_size<str_key>(n, true);
  }
  // 10^8 keys: ~115 MiB per filter plus 800 MB of keys; bloomery only (the batched-vs-single
  // ratio).
  if (huge) register_size<std::uint64_t>(100'000'000, false);
  register_memory_latency(huge);
  return run_benchmarks(argc, argv, huge);
}
