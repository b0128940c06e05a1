// bloomery-curve: the query-cost curve. Nanoseconds per absent-key query, one at a time and
// batched, against the key count n, for every bloomery filter and every peer, beside this
// machine's random-access bounds over an array of the filters' size. Prints a gnuplot data file;
// bench/curve/plot.gp draws it (bench/run.sh --curve does both).
//
// usage: bloomery-curve [--huge] [--rounds R] [--queries Q] [--sizes N,N,...] [--quick] > curve.dat
//   --huge       on past 10^8 to 3*10^8 and 10^9 keys for the classic and blocked filters and
//                Boost's two (about 5 GB of filters; inserted keys are generated on the fly)
//   --rounds R   timed rounds per point, at least 5 (default 5); the median is reported
//   --queries Q  absent keys per timed run (default 2^20)
//   --sizes      these key counts instead (past 10^8 only the four filters of --huge run)
//   --quick      n = 10^4..10^6, 2^16 queries: a smoke test, numbers not usable
//
// Output: data blocks separated by two blank lines (gnuplot `index`), each headed by its name.
// Blocks 0 and 1 are the memory bounds: n, ns per load, ns per load (the same figure twice, so
// both panels plot columns 2 and 3 alike), bytes of the array read (10 bits per key, the
// filters' size). Block 0: independent random loads, the throughput bound; block 1: a dependent
// chain of loads, the latency bound. Every further block is one filter: n, ns per query one at a
// time, ns per query batched ("-" when the filter has no batched call), bits per key, measured
// FPR. Keys: splitmix64 stream positions [0, n) inserted, [2^40, 2^40 + Q) queried (absent).
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "contender.hpp"
#include "workload.hpp"

namespace {

using namespace peers;
using u64 = std::uint64_t;

struct options {
  bool huge = false;
  bool quick = false;
  int rounds = 5;
  std::size_t queries = std::size_t{1} << 20;
  std::vector<std::uint64_t> sizes;  // empty: the default list
};

options parse(int argc, char** argv) {
  options o;
  command_line args(argc, argv, "bloomery-curve",
                    "[--huge] [--rounds R] [--queries Q] [--sizes N,N,...] [--quick]", 1e9);
  while (args.next()) {
    const std::string_view a = args.flag();
    if (a == "--huge") {
      o.huge = true;
    } else if (a == "--quick") {
      o.quick = true;
      o.queries = std::size_t{1} << 16;
    } else if (a == "--rounds") {
      o.rounds = static_cast<int>(args.count());
      if (o.rounds < 5) args.fail("--rounds must be at least 5");
    } else if (a == "--sizes") {
      o.sizes = args.counts();
    } else if (a == "--queries") {
      o.queries = std::max<std::size_t>(kBatch, args.count());
    } else {
      args.unknown();
    }
  }
  return o;
}

// The filters measured past 10^8 keys (--huge): those whose inserts need no stored key set.
bool goes_huge(const std::string& name) {
  return name == "bloomery blocked" || name == "bloomery bloom" ||
         name == "boost fast_multiblock32<8>" || name == "boost classic k=7";
}

struct point {
  double one_ns = 0;
  double many_ns = -1;  // negative: no batched call
  double bits_per_key = 0;
  double fpr = 0;
};

}  // namespace

int main(int argc, char** argv) try {
  const options o = parse(argc, argv);
  const std::string machine = machine_line();
  const auto start = std::chrono::steady_clock::now();

  std::vector<const u64_contender*> all;
  const side native = bloomery_native_side();
  for (const auto& c : native.u64) all.push_back(&c);
#ifdef BLOOMERY_CURVE_HAVE_PEERS
  const side boost = boost_side(10.0);
  const side fuse = fuse_side();
  for (const auto& c : boost.u64) all.push_back(&c);
  for (const auto& c : fuse.u64) all.push_back(&c);
#endif

  std::vector<u64> sizes = o.sizes;
  const u64 top = o.quick ? 1'000'000 : o.huge ? 1'000'000'000 : 100'000'000;
  for (u64 p = 10'000; o.sizes.empty() && p <= top; p *= 10) {
    sizes.push_back(p);
    if (3 * p <= top) sizes.push_back(3 * p);
  }

  const std::vector<u64> absent = u64_keys(kAbsentBase, o.queries);
  std::map<std::string, std::map<u64, point>> curves;
  std::map<u64, double> throughput, latency;
  for (const u64 n : sizes) {
    const bool past_stored = n > 100'000'000;
    std::vector<const u64_contender*> here;
    for (const auto* c : all) {
      if (!past_stored || goes_huge(c->name)) here.push_back(c);
    }
    std::fprintf(stderr, "bloomery-curve: n = %" PRIu64 ", %zu filters (%.0f s so far)\n", n,
                 here.size(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());

    // The built filters first, from a stored key set, freed before the growing ones are made.
    std::vector<instance<u64>> built(here.size());
    {
      std::vector<u64> keys;
      for (std::size_t i = 0; i < here.size(); ++i) {
        if (here[i]->build == nullptr) continue;
        if (keys.empty()) keys = u64_keys(0, static_cast<std::size_t>(n));
        built[i] = instance<u64>(*here[i], here[i]->build(keys.data(), keys.size()));
      }
    }
    for (std::size_t i = 0; i < here.size(); ++i) {
      if (here[i]->make != nullptr) built[i] = instance<u64>(*here[i], here[i]->make(n));
    }
    // Inserted keys come from the stream a chunk at a time: 10^9 stored keys would take 8 GB.
    {
      const std::size_t chunk = std::size_t{1} << 20;
      std::vector<u64> keys(chunk);
      for (u64 first = 0; first < n; first += chunk) {
        const auto count = static_cast<std::size_t>(std::min<u64>(chunk, n - first));
        for (std::size_t j = 0; j < count; ++j) keys[j] = key_at(first + j);
        for (auto& f : built) {
          if (f.c->insert != nullptr) f.c->insert(f.h, keys.data(), count);
        }
      }
      // The first chunk again: a filter must answer "possibly present" for every inserted key.
      const auto count = static_cast<std::size_t>(std::min<u64>(chunk, n));
      for (std::size_t j = 0; j < count; ++j) keys[j] = key_at(j);
      for (const auto& f : built) check_present(f, keys.data(), count, f.c->name);
    }

    // The bounds over an array of the filters' size (10 bits per key), timed in the same rounds
    // as the filters so that they see the same machine.
    const u64 bytes = std::max<u64>(64, n * 10 / 8);
    const random_loads loads(bytes, u64{1} << 22);
    const pointer_chase chase(bytes);
    std::vector<task> tasks = {
        random_loads_task("bound/random", loads),
        chase_task("bound/chase", chase, o.quick ? u64{1} << 18 : u64{1} << 21)};
    for (const auto& f : built) add_query_tasks(tasks, f.c->name, f, absent);
    const std::vector<timing> t = run_rounds(tasks, o.rounds);
    for (const auto& f : built) {
      point p;
      const timing& one = timing_of(t, f.c->name + "/one");
      p.one_ns = one.median_ns;
      if (f.c->query_many != nullptr) p.many_ns = timing_of(t, f.c->name + "/many").median_ns;
      p.bits_per_key = 8.0 * static_cast<double>(f.bytes()) / static_cast<double>(n);
      p.fpr = static_cast<double>(one.positives) / static_cast<double>(absent.size());
      curves[f.c->name][n] = p;
    }
    throughput[n] = timing_of(t, "bound/random").median_ns;
    latency[n] = timing_of(t, "bound/chase").median_ns;
    built.clear();
  }

  std::printf(
      "# bloomery-curve: ns per absent-key query against n; %s; median of %d rounds of %zu "
      "queries\n",
      machine.c_str(), o.rounds, absent.size());
  // Two blank lines between blocks, none after the last (gnuplot would count an empty block).
  const auto bound = [&](const char* name, const std::map<u64, double>& b) {
    std::printf("\"%s\" ns ns bytes\n", name);
    for (const auto& [n, ns] : b) {
      std::printf("%" PRIu64 " %.3f %.3f %" PRIu64 "\n", n, ns, ns, std::max<u64>(64, n * 10 / 8));
    }
  };
  bound("random loads (throughput bound)", throughput);
  std::printf("\n\n");
  bound("dependent loads (latency bound)", latency);
  for (const auto* c : all) {
    std::printf("\n\n\"%s\" one_ns many_ns bits_per_key fpr\n", c->name.c_str());
    for (const auto& [n, p] : curves[c->name]) {
      std::printf("%" PRIu64 " %.3f ", n, p.one_ns);
      if (p.many_ns < 0) {
        std::printf("- ");
      } else {
        std::printf("%.3f ", p.many_ns);
      }
      std::printf("%.3f %.6f\n", p.bits_per_key, p.fpr);
    }
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bloomery-curve: %s\n", e.what());
  return 1;
}
