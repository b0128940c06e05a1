// bloomery-probe-study: the in-process, paired comparisons behind the design choices of the
// lookup paths (docs/lookup-paths.md). Google Benchmark runs each case for a
// while before the next, so on a machine whose memory latency drifts minute to minute its ratios
// wander; here every variant runs once per round, in a fresh random order, and each variant's
// time is divided by the first variant's time of the same round. The median of those paired
// ratios is what to read.
//
//   bloomery-probe-study eager  N   one-at-a-time absent-key probes that load 2, 3 (the library's
//                                   probe_hash) or 4 probes before branching, or 3 and then the
//                                   rest without branches; present keys too
//   bloomery-probe-study window N   why hashing limits overlap: independent loads from
//                                   precomputed lines of an N-key filter, with and without
//                                   hashing each key first
//   bloomery-probe-study lines BYTES random-line throughput of a huge-page array: plain loads,
//                                   sliding prefetch at several distances, batch prefetch
//   bloomery-probe-study lanes  N   the classic filter's batched rounds (detail::batched_probe)
//                                   with lanes of 32, 64, 128 (the library's) and 256 keys,
//                                   against one-at-a-time may_contain; absent and present keys
//   bloomery-probe-study ring   N   the classic filter's two batched paths: rounds
//                                   (detail::batched_probe) against the pipeline
//                                   (detail::ring_probe) with 16, 32 (the library's) and 64
//                                   slots, the library's choice, and one-at-a-time may_contain
//
// Options after the arguments: --rounds R (default 15), --queries Q (default 2^20).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bloomery/bloomery.hpp"

namespace {

using bloomery::hash128;
using bloomery::detail::load_word;
using bloomery::detail::reduce;
using bloomery::detail::test_bit;
using u64 = std::uint64_t;

struct variant {
  variant(std::string n, std::function<u64()> r) : name(std::move(n)), run(std::move(r)) {}
  std::string name;
  std::function<u64()> run;  // returns a checksum so the work cannot be optimized away
  std::vector<double> ns;
  u64 checksum = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs every variant once per round in a fresh random order; prints each one's median ns per
// query and the median of its per-round ratio to the first variant.
void compare(std::vector<variant>& vs, std::size_t queries, int rounds) {
  std::mt19937 order_rng(7);
  std::vector<std::size_t> order(vs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (auto& v : vs) v.checksum = v.run();  // warm-up
  for (int r = 0; r < rounds; ++r) {
    std::shuffle(order.begin(), order.end(), order_rng);
    for (std::size_t i : order) {
      const auto t0 = std::chrono::steady_clock::now();
      vs[i].checksum = vs[i].run();
      const std::chrono::duration<double, std::nano> dt = std::chrono::steady_clock::now() - t0;
      vs[i].ns.push_back(dt.count() / static_cast<double>(queries));
    }
  }
  for (auto& v : vs) {
    std::vector<double> ratio;
    for (int r = 0; r < rounds; ++r) ratio.push_back(v.ns[r] / vs[0].ns[r]);
    std::printf("  %-40s %8.2f ns   paired vs first: %.3f   (checksum %llu)\n", v.name.c_str(),
                median(v.ns), median(ratio), static_cast<unsigned long long>(v.checksum));
  }
}

// Alternatives to the library's probe_hash, for comparison only.
template <std::uint32_t Eager>
inline bool probe_eager(const u64* w, u64 m, std::uint32_t k, hash128 h) {
  u64 g = h.low, all = 1;
  std::uint32_t i = 0;
  for (; i < Eager && i < k; ++i, g += h.high) {
    const u64 p = reduce(g, m);
    all &= load_word(w + (p >> 6)) >> (p & 63);
  }
  if (!(all & 1)) return false;
  for (; i < k; ++i, g += h.high) {
    if (!test_bit(w, reduce(g, m))) return false;
  }
  return true;
}
inline bool probe_three_then_rest(const u64* w, u64 m, std::uint32_t k, hash128 h) {
  u64 g = h.low, all = 1;
  std::uint32_t i = 0;
  for (; i < 3 && i < k; ++i, g += h.high) {
    const u64 p = reduce(g, m);
    all &= load_word(w + (p >> 6)) >> (p & 63);
  }
  if (!(all & 1)) return false;
  for (; i < k; ++i, g += h.high) {
    const u64 p = reduce(g, m);
    all &= load_word(w + (p >> 6)) >> (p & 63);
  }
  return all & 1;
}

// Probe is a lambda, so each variant gets its own instantiation with the probe inlined. The timed
// loops are flattened: in a file this large GCC would leave XXH3 out of line, unlike in a small
// consumer's file or the benchmarks, and the call would change what is measured.
template <class Probe>
__attribute__((noinline, flatten)) u64 probe_loop(const bloomery::bloom_filter& f,
                                                  const std::vector<u64>& q, Probe probe) {
  const u64* w = f.words().data();
  u64 hits = 0;
  for (const u64 key : q) {
    hits += probe(w, f.bit_count(), f.hash_count(), bloomery::hash_key(f.hash(), key));
  }
  return hits;
}
__attribute__((noinline, flatten)) u64 library_loop(const bloomery::bloom_filter& f,
                                                    const std::vector<u64>& q) {
  u64 hits = 0;
  for (const u64 key : q) hits += f.may_contain(key);
  return hits;
}

// A 1% classic filter of n random keys, and `queries` absent and present keys to ask it.
struct workload {
  workload(u64 n, std::size_t queries) : filter({.capacity = n, .fpr = 0.01}) {
    std::mt19937_64 rng(1);
    std::vector<u64> keys(n);
    for (u64& key : keys) {
      key = rng();
      filter.insert(key);
    }
    absent.resize(queries);
    present.resize(queries);
    for (u64& key : absent) key = rng();
    for (u64& key : present) key = keys[rng() % n];
  }
  bloomery::bloom_filter filter;
  std::vector<u64> absent, present;

  // Prints "n = N<extra>, absent|present keys<suffix>" and compares variants(q) for the absent,
  // then the present queries.
  template <class Variants>
  void compare_each(u64 n, const std::string& extra, const char* suffix, int rounds,
                    Variants variants) const {
    for (const bool is_present : {false, true}) {
      const std::vector<u64>& q = is_present ? present : absent;
      std::printf("n = %llu%s, %s keys%s\n", static_cast<unsigned long long>(n), extra.c_str(),
                  is_present ? "present" : "absent", suffix);
      std::vector<variant> vs = variants(q);
      compare(vs, q.size(), rounds);
    }
  }
};

// Sums fn(keys, out) over q in batches of 1024 keys, the batch size of the benchmarks.
template <class Fn>
u64 per_batch(const std::vector<u64>& q, Fn fn) {
  static std::vector<char> out(1024);
  u64 hits = 0;
  for (std::size_t i = 0; i + 1024 <= q.size(); i += 1024) {
    hits += fn(std::span<const u64>(q.data() + i, 1024), out);
  }
  return hits;
}

void eager(u64 n, std::size_t queries, int rounds) {
  const workload w(n, queries);
  const bloomery::bloom_filter& f = w.filter;
  w.compare_each(
      n, "", (", k = " + std::to_string(f.hash_count())).c_str(), rounds,
      [&](const std::vector<u64>& q) {
        return std::vector<variant>{
            {"library may_contain (3 loads, then exit)", [&] { return library_loop(f, q); }},
            {"2 loads, then exit",
             [&] { return probe_loop(f, q, [](auto... a) { return probe_eager<2>(a...); }); }},
            {"4 loads, then exit",
             [&] { return probe_loop(f, q, [](auto... a) { return probe_eager<4>(a...); }); }},
            {"3 loads, then the rest without branches", [&] {
               return probe_loop(f, q, [](auto... a) { return probe_three_then_rest(a...); });
             }}};
      });
}

__attribute__((noinline)) u64 loads_only(const u64* w, const std::vector<u64>& words) {
  u64 sum = 0;
  for (const u64 i : words) sum += w[i] & 1;
  return sum;
}
__attribute__((noinline, flatten)) u64 hash_then_load(const bloomery::bloom_filter& f,
                                                      const std::vector<u64>& q) {
  const u64* w = f.words().data();
  u64 sum = 0;
  for (const u64 key : q) {
    const u64 p = reduce(bloomery::hash_key(f.hash(), key).low, f.bit_count());
    sum += (w[p >> 6] >> (p & 63)) & 1;
  }
  return sum;
}

void window(u64 n, std::size_t queries, int rounds) {
  std::mt19937_64 rng(1);
  bloomery::bloom_filter f({.capacity = n, .fpr = 0.01});
  for (u64 i = 0; i < n; ++i) f.insert(rng());
  std::vector<u64> q(queries), words(queries);
  for (std::size_t i = 0; i < queries; ++i) {
    q[i] = rng();
    words[i] = reduce(bloomery::hash_key(f.hash(), q[i]).low, f.bit_count()) >> 6;
  }
  std::printf("n = %llu (%llu bytes): one load per query\n", static_cast<unsigned long long>(n),
              static_cast<unsigned long long>(f.size_in_bytes()));
  std::vector<variant> vs{
      {"load from a precomputed word", [&] { return loads_only(f.words().data(), words); }},
      {"hash the key (XXH3-128), then load", [&] { return hash_then_load(f, q); }}};
  compare(vs, q.size(), rounds);
}

void lines(u64 bytes, std::size_t queries, int rounds) {
  bloomery::bit_array a(bytes * 8);  // huge pages when large, like every filter
  for (u64 i = 0; i < a.word_count(); i += bloomery::words_per_line) a.data()[i] = i;
  const u64* w = a.data();
  std::mt19937_64 rng(1);
  std::vector<u64> idx(queries);
  for (u64& i : idx) i = (rng() % a.word_count()) & ~u64{7};  // first word of a random line
  std::printf("%llu bytes: ns per random 64-byte line\n", static_cast<unsigned long long>(bytes));
  std::vector<variant> vs{{"plain independent loads", [&] {
                             u64 s = 0;
                             for (const u64 i : idx) s += w[i];
                             return s;
                           }}};
  for (const std::size_t d : {8, 16, 32, 64}) {
    vs.push_back({"prefetch " + std::to_string(d) + " ahead", [&, d] {
                    u64 s = 0;
                    for (std::size_t i = 0; i + d < idx.size(); ++i) {
                      bloomery::detail::prefetch(w + idx[i + d]);
                      s += w[idx[i]];
                    }
                    return s;
                  }});
  }
  for (const std::size_t b : {32, 256}) {
    vs.push_back({"prefetch batches of " + std::to_string(b), [&, b] {
                    u64 s = 0;
                    for (std::size_t base = 0; base + b <= idx.size(); base += b) {
                      for (std::size_t j = 0; j < b; ++j)
                        bloomery::detail::prefetch(w + idx[base + j]);
                      for (std::size_t j = 0; j < b; ++j) s += w[idx[base + j]];
                    }
                    return s;
                  }});
  }
  compare(vs, idx.size(), rounds);
}

template <std::size_t Lane>
u64 batched_with_lanes(const bloomery::bloom_filter& f, const std::vector<u64>& q) {
  return per_batch(q, [&](std::span<const u64> keys, std::vector<char>& out) {
    return f.hash().with_mode([&](const auto& h) {
      return bloomery::detail::batched_probe<std::span<const u64>, std::vector<char>,
                                             std::decay_t<decltype(h)>, Lane>(
                 h, f.words().data(), f.bit_count(), f.hash_count(), keys, out)
          .run();
    });
  });
}

void lanes(u64 n, std::size_t queries, int rounds) {
  const workload w(n, queries);
  const bloomery::bloom_filter& f = w.filter;
  w.compare_each(n, "", ", batches of 1024", rounds, [&](const std::vector<u64>& q) {
    return std::vector<variant>{
        {"lanes of 128 (the library's)", [&] { return batched_with_lanes<128>(f, q); }},
        {"lanes of 32", [&] { return batched_with_lanes<32>(f, q); }},
        {"lanes of 64", [&] { return batched_with_lanes<64>(f, q); }},
        {"lanes of 256", [&] { return batched_with_lanes<256>(f, q); }},
        {"one-at-a-time may_contain", [&] { return library_loop(f, q); }}};
  });
}

template <std::size_t Slots>
u64 ring_with_slots(const bloomery::bloom_filter& f, const std::vector<u64>& q) {
  return per_batch(q, [&](std::span<const u64> keys, std::vector<char>& out) {
    return f.hash().with_mode([&](const auto& h) {
      return bloomery::detail::ring_probe<Slots>(h, f.words().data(), f.bit_count(), f.hash_count(),
                                                 keys, out);
    });
  });
}

void ring(u64 n, std::size_t queries, int rounds) {
  const workload w(n, queries);
  const bloomery::bloom_filter& f = w.filter;
  const std::string bytes = " (" + std::to_string(f.size_in_bytes()) + " bytes)";
  w.compare_each(n, bytes, ", batches of 1024", rounds, [&](const std::vector<u64>& q) {
    return std::vector<variant>{
        {"rounds (batched_probe, lanes of 128)", [&] { return batched_with_lanes<128>(f, q); }},
        {"ring of 32 slots (ring_probe)", [&] { return ring_with_slots<32>(f, q); }},
        {"ring of 16 slots", [&] { return ring_with_slots<16>(f, q); }},
        {"ring of 64 slots", [&] { return ring_with_slots<64>(f, q); }},
        {"library may_contain_many",
         [&] {
           return per_batch(q, [&](std::span<const u64> keys, std::vector<char>& out) {
             return f.may_contain_many(keys, out);
           });
         }},
        {"one-at-a-time may_contain", [&] { return library_loop(f, q); }}};
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s eager N | window N | lines BYTES | lanes N | ring N [--rounds R] "
                 "[--queries Q]\n",
                 argv[0]);
    return 2;
  }
  const std::string what = argv[1];
  const u64 size = std::strtoull(argv[2], nullptr, 10);
  int rounds = 15;
  std::size_t queries = std::size_t{1} << 20;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string opt = argv[i];
    if (opt == "--rounds") {
      rounds = std::atoi(argv[i + 1]);
    } else if (opt == "--queries") {
      queries = std::strtoull(argv[i + 1], nullptr, 10);
    } else {
      std::fprintf(stderr, "unknown option %s\n", opt.c_str());
      return 2;
    }
  }
  if (size == 0 || rounds < 1 || queries < 256) {
    std::fprintf(stderr, "need N > 0, --rounds >= 1, --queries >= 256\n");
    return 2;
  }
  if (what == "eager") {
    eager(size, queries, rounds);
  } else if (what == "window") {
    window(size, queries, rounds);
  } else if (what == "lines") {
    lines(size, queries, rounds);
  } else if (what == "lanes") {
    lanes(size, queries, rounds);
  } else if (what == "ring") {
    ring(size, queries, rounds);
  } else {
    std::fprintf(stderr, "unknown study %s\n", what.c_str());
    return 2;
  }
  return 0;
}
