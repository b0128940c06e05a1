// bloomery-peers: bloomery side by side with Boost.Bloom and FastFilter's binary fuse filter, on
// the same keys in one process, as a markdown table of time ratios (README.md in this folder).
//
// usage: bloomery-peers [--rounds R] [--sizes N,N,...] [--queries Q] [--fpr-sizes N,N,...]
//                       [--no-strings] [--fpr-only] [--quick]
//   --rounds R     timed rounds per measurement, at least 5 (default 7); the median is reported
//   --sizes        key counts of the timed runs (default 100000,10000000)
//   --queries Q    absent keys per timed run (default 2^22 uint64 keys; string keys get Q/2)
//   --fpr-sizes    key counts of the structured-key FPR table (default 100000,1000000,10000000)
//   --no-strings   skip the byte-string comparisons
//   --fpr-only     only the structured-key FPR table: no timings, so valid on a busy machine
//   --quick        sizes 10^4,10^5 (both tables), 2^18 queries, 5 rounds: a smoke test, numbers
//                  not usable
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "contender.hpp"
#include "workload.hpp"

namespace {

using namespace peers;

struct options {
  int rounds = 7;
  std::vector<std::uint64_t> sizes = {100'000, 10'000'000};
  std::size_t queries = std::size_t{1} << 22;
  std::vector<std::uint64_t> fpr_sizes = {100'000, 1'000'000, 10'000'000};
  bool strings = true;
  bool fpr_only = false;
};

options parse(int argc, char** argv) {
  options o;
  command_line args(argc, argv, "bloomery-peers",
                    "[--rounds R] [--sizes N,N,...] [--queries Q] [--fpr-sizes N,N,...] "
                    "[--no-strings] [--fpr-only] [--quick]",
                    4e9);
  while (args.next()) {
    const std::string_view a = args.flag();
    if (a == "--rounds") {
      o.rounds = static_cast<int>(args.count());
      if (o.rounds < 5) args.fail("--rounds must be at least 5");
    } else if (a == "--sizes") {
      o.sizes = args.counts();
    } else if (a == "--queries") {
      o.queries = args.count();
    } else if (a == "--fpr-sizes") {
      o.fpr_sizes = args.counts();
    } else if (a == "--no-strings") {
      o.strings = false;
    } else if (a == "--fpr-only") {
      o.fpr_only = true;
    } else if (a == "--quick") {
      o.sizes = {10'000, 100'000};
      o.fpr_sizes = {10'000, 100'000};
      o.queries = std::size_t{1} << 18;
      o.rounds = 5;
    } else {
      args.unknown();
    }
  }
  return o;
}

std::string fmt(const char* f, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, args...);
  return buf;
}

std::string size_label(std::uint64_t n) {
  std::uint64_t p = 1;
  for (int e = 0; e <= 12; ++e, p *= 10) {
    if (p == n) return fmt("10^%d", e);
  }
  return fmt("%" PRIu64, n);
}

// A contender under a label that says which side it came from ("native bloomery blocked").
template <class K>
struct entry {
  std::string label;
  const contender<K>* c;
};

// Everything measured at one size: timings by task name, bits per key and FPR by label.
struct measured {
  std::map<std::string, timing> t;
  std::vector<std::string> filters, runs;  // in the order measured, for the tables
  std::map<std::string, double> bits_per_key;
  std::map<std::string, double> fpr;
};

// Present keys in chunks: calls `visit(keys, count)` for each, in order.
template <class K>
using present_feed = std::function<void(const std::function<void(const K*, std::size_t)>& visit)>;

// Builds every contender for n present keys (growing ones from `feed`, built ones from `all`,
// which may be null when there are none), checks that none answers "no" to a key of `sample`
// (present keys), then times absent-key queries, one at a time and batched, in interleaved
// rounds. Results go to `m` under `prefix` + label.
template <class K>
void measure(const std::vector<entry<K>>& entries, std::uint64_t n, const present_feed<K>& feed,
             const K* all, const std::vector<K>& sample, const std::vector<K>& absent,
             const std::string& prefix, int rounds, measured& m) {
  std::vector<instance<K>> built;
  built.reserve(entries.size());
  for (const auto& e : entries) {
    built.emplace_back(*e.c, e.c->make != nullptr ? e.c->make(n) : e.c->build(all, n));
  }
  feed([&](const K* keys, std::size_t count) {
    for (auto& f : built) {
      if (f.c->insert != nullptr) f.c->insert(f.h, keys, count);
    }
  });
  std::vector<task> tasks;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const instance<K>& f = built[i];
    const std::string name = prefix + entries[i].label;
    check_present(f, sample.data(), sample.size(), name);
    m.filters.push_back(name);
    m.bits_per_key[name] = 8.0 * static_cast<double>(f.bytes()) / static_cast<double>(n);
    add_query_tasks(tasks, name, f, absent);
  }
  std::fprintf(stderr, "  timing %zu query runs of %zu keys, %d rounds\n", tasks.size(),
               absent.size(), rounds);
  for (const auto& r : run_rounds(tasks, rounds)) {
    m.t[r.name] = r;
    m.runs.push_back(r.name);
  }
  for (const auto& e : entries) {
    const std::string name = prefix + e.label;
    m.fpr[name] =
        static_cast<double>(m.t[name + "/one"].positives) / static_cast<double>(absent.size());
  }
}

// Times the built contenders' construction from all n keys, in interleaved rounds.
void measure_builds(const std::vector<entry<std::uint64_t>>& entries,
                    const std::vector<std::uint64_t>& present, int rounds, measured& m) {
  std::vector<task> tasks;
  for (const auto& e : entries) {
    if (e.c->build == nullptr) continue;
    const contender<std::uint64_t>* c = e.c;
    tasks.push_back({e.label + "/build",
                     [c, &present] {
                       instance<std::uint64_t> f(*c, c->build(present.data(), present.size()));
                       return static_cast<std::size_t>(f.bytes());
                     },
                     present.size()});
  }
  std::fprintf(stderr, "  timing %zu builds of %zu keys, %d rounds\n", tasks.size(), present.size(),
               rounds);
  for (const auto& r : run_rounds(tasks, rounds)) {
    m.t[r.name] = r;
    m.runs.push_back(r.name);
  }
}

template <class K>
std::vector<entry<K>> pick(
    const std::vector<std::pair<std::string, const std::vector<contender<K>>*>>& sides,
    const std::vector<std::string>& names) {
  std::vector<entry<K>> out;
  for (const auto& [side_name, all] : sides) {
    for (const auto& c : *all) {
      for (const auto& want : names) {
        if (c.name == want)
          out.push_back({side_name.empty() ? c.name : side_name + " " + c.name, &c});
      }
    }
  }
  return out;
}

// --- false positives on structured integer keys -----------------------------------------------

// Strided uint64 keys: for shift s, present key i is (2i) << s and absent key i is (2i + 1) << s,
// between two present ones and never equal to one. A hash that keeps the stride's structure gives
// such keys a higher FPR than random ones.
constexpr unsigned kShifts[] = {0, 8, 16, 32};

std::string pattern_name(unsigned shift) {
  return fmt("(2i)<<%u", shift);
}

std::vector<std::uint64_t> strided(unsigned shift, std::uint64_t odd, std::size_t count) {
  // (2i + 1) << s must not wrap, or distinct indices would give one key.
  if (count > std::uint64_t{1} << (63 - shift)) {
    throw std::invalid_argument(
        fmt("%zu keys do not fit the pattern %s", count, pattern_name(shift).c_str()));
  }
  std::vector<std::uint64_t> keys(count);
  for (std::size_t i = 0; i < count; ++i) keys[i] = (2 * std::uint64_t{i} + odd) << shift;
  return keys;
}

// One contender's bits per key and FPR on each pattern at one n: random, then kShifts in order.
struct pattern_row {
  std::string label;
  double bits_per_key = 0;
  std::vector<double> fpr;
};

// Every contender holding n keys of each pattern, probed with n absent keys of it: the random keys
// of the timed runs, then the strided patterns, whose absent keys lie between the present ones.
std::vector<pattern_row> measure_patterns(const std::vector<entry<std::uint64_t>>& entries,
                                          std::uint64_t n) {
  std::vector<pattern_row> rows;
  for (const auto& e : entries) rows.push_back({e.label, 0, {}});
  const auto measure_one = [&](const std::string& pattern,
                               const std::vector<std::uint64_t>& present,
                               const std::vector<std::uint64_t>& absent) {
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const instance<std::uint64_t> f = filled(*entries[i].c, present);
      check_present(f, present.data(), present.size(), entries[i].label + " on " + pattern);
      const std::size_t hits = f.c->query_one(f.h, absent.data(), absent.size());
      rows[i].fpr.push_back(static_cast<double>(hits) / static_cast<double>(absent.size()));
      rows[i].bits_per_key = 8.0 * static_cast<double>(f.bytes()) / static_cast<double>(n);
    }
  };
  measure_one("random keys", u64_keys(0, n), u64_keys(kAbsentBase, n));
  for (const unsigned shift : kShifts) {
    measure_one(pattern_name(shift) + " keys", strided(shift, 0, n), strided(shift, 1, n));
  }
  return rows;
}

// --- the report ---------------------------------------------------------------------------------

struct report {
  const options& o;
  std::vector<measured> at;  // one per size

  // "0.91 (2.10 / 2.31)": a/b and both medians in ns per key; "n/a" when either is missing.
  std::string ratio_cell(const measured& m, const std::string& a, const std::string& b) const {
    const auto ia = m.t.find(a), ib = m.t.find(b);
    if (ia == m.t.end() || ib == m.t.end()) return "n/a";
    const double x = ia->second.median_ns, y = ib->second.median_ns;
    return fmt("**%.2f** (%.2f / %.2f)", x / y, x, y);
  }
  void header_row(const char* first) const {
    std::printf("| %s |", first);
    for (auto n : o.sizes) std::printf(" %s |", size_label(n).c_str());
    std::printf("\n|---|");
    for (std::size_t i = 0; i < o.sizes.size(); ++i) std::printf("---|");
    std::printf("\n");
  }
  void ratio_row(const std::string& what, const std::string& a, const std::string& b) const {
    std::printf("| %s |", what.c_str());
    for (const auto& m : at) std::printf(" %s |", ratio_cell(m, a, b).c_str());
    std::printf("\n");
  }
};

}  // namespace

int main(int argc, char** argv) try {
  const options o = parse(argc, argv);
  const side native = bloomery_native_side();
  const side o3 = bloomery_o3_side();
  const side boost = boost_side(10.0);
  const side fuse = fuse_side();
  const std::string machine = machine_line();
  // Had the linker merged the two bloomery builds, their query functions would be one function.
  if (native.u64.front().query_one == o3.u64.front().query_one) {
    std::fprintf(stderr, "bloomery-peers: the -O3 and native bloomery builds are the same code\n");
    return 1;
  }

  using u64 = std::uint64_t;
  using sv = std::string_view;
  const std::vector<std::pair<std::string, const std::vector<u64_contender>*>> u64_sides = {
      {"native", &native.u64}, {"o3", &o3.u64}, {"", &boost.u64}, {"", &fuse.u64}};
  const auto u64_entries = pick<u64>(
      u64_sides, {"bloomery blocked", "bloomery bloom", "bloomery static8", "bloomery static7x4",
                  "bloomery static8x4", "boost fast_multiblock32<8>", "boost classic k=7",
                  "fastfilter binary_fuse8"});
  const std::vector<std::pair<std::string, const std::vector<str_contender>*>> str_sides = {
      {"native", &native.str}, {"o3", &o3.str}, {"", &boost.str}};
  const auto str_entries =
      pick<sv>(str_sides,
               {"bloomery blocked", "bloomery bloom", "boost fast_multiblock32<8>",
                "boost classic k=7", "boost fast_multiblock32<8> xxh3", "boost classic k=7 xxh3"});
  const shape shapes[] = {shape::bytes16, shape::url};

  report rep{o, {}};
  std::map<std::string, double> mean_length;
  for (const u64 n : o.fpr_only ? std::vector<u64>{} : o.sizes) {
    measured m;
    {
      std::fprintf(stderr, "bloomery-peers: n = %" PRIu64 ", uint64 keys\n", n);
      const std::vector<u64> present = u64_keys(0, n);
      const std::vector<u64> absent = u64_keys(kAbsentBase, o.queries);
      const std::vector<u64> sample(present.begin(),
                                    present.begin() + std::min<std::size_t>(n, 1 << 16));
      const present_feed<u64> feed = [&](const auto& visit) { visit(present.data(), n); };
      measure<u64>(u64_entries, n, feed, present.data(), sample, absent, "u64 ", o.rounds, m);
      measure_builds(u64_entries, present, o.rounds, m);
    }
    if (o.strings) {
      for (const shape s : shapes) {
        std::fprintf(stderr, "bloomery-peers: n = %" PRIu64 ", %s keys\n", n, shape_name(s));
        const std::size_t chunk = std::size_t{1} << 18;
        const present_feed<sv> feed = [&](const auto& visit) {
          string_keys keys;
          for (u64 first = 0; first < n; first += chunk) {
            const std::size_t count = static_cast<std::size_t>(std::min<u64>(chunk, n - first));
            keys.fill(s, first, count);
            visit(keys.views.data(), count);
          }
        };
        string_keys sample_keys, absent_keys;
        sample_keys.fill(s, 0, static_cast<std::size_t>(std::min<u64>(n, 1 << 16)));
        absent_keys.fill(s, kAbsentBase, std::max<std::size_t>(kBatch, o.queries / 2));
        mean_length[shape_name(s)] = absent_keys.mean_length();
        measure<sv>(str_entries, n, feed, nullptr, sample_keys.views, absent_keys.views,
                    std::string(shape_name(s)) + " ", o.rounds, m);
      }
    }
    rep.at.push_back(std::move(m));
  }
  std::vector<std::vector<pattern_row>> patterns;  // one per size of o.fpr_sizes
  for (const u64 n : o.fpr_sizes) {
    std::fprintf(stderr, "bloomery-peers: n = %" PRIu64 ", FPR on structured uint64 keys\n", n);
    patterns.push_back(measure_patterns(u64_entries, n));
  }

  const auto pattern_section = [&] {
    std::printf(
        "Measured FPR on structured uint64 keys: for s = 0, 8, 16, 32, the n present keys "
        "(2i) << s and the n absent keys (2i + 1) << s, i in [0, n), each absent key between two "
        "present ones; random: the splitmix64 keys of the timed runs, n present (stream positions "
        "[0, n)) and n absent (from 2^40). Each library takes the keys as uint64, as its users "
        "would: bloomery's integer-key path, Boost's default boost::hash<std::uint64_t>, the "
        "binary fuse filter's keys as they are. Sized as in the timed runs: bloomery "
        "{.capacity = n, .fpr = 0.01}, Boost 10 bits per key, 8-bit fingerprints for the static "
        "filters.\n\n");
    std::printf("| filter, uint64 keys | n | bits/key | random |");
    for (const unsigned shift : kShifts) std::printf(" %s |", pattern_name(shift).c_str());
    std::printf("\n|---|---|---|---|");
    for (std::size_t i = 0; i < std::size(kShifts); ++i) std::printf("---|");
    std::printf("\n");
    for (std::size_t j = 0; j < o.fpr_sizes.size(); ++j) {
      for (const pattern_row& r : patterns[j]) {
        std::printf("| %s | %s | %.2f |", r.label.c_str(), size_label(o.fpr_sizes[j]).c_str(),
                    r.bits_per_key);
        for (const double f : r.fpr) std::printf(" %.3f%% |", 100.0 * f);
        std::printf("\n");
      }
    }
  };
  if (o.fpr_only) {
    std::printf("## bloomery against Boost.Bloom and FastFilter (bloomery-peers --fpr-only)\n\n");
    std::printf("%s. No timings.\n\n", machine.c_str());
    pattern_section();
    return 0;
  }

  std::fprintf(stderr, "bloomery-peers: memory latency (1 GiB pointer chase)\n");
  double latency = 0;
  {
    const pointer_chase chase(std::uint64_t{1} << 30);
    latency = run_rounds({chase_task("chase", chase, std::uint64_t{1} << 22)}, o.rounds)
                  .front()
                  .median_ns;
  }

  // --- print ---
  std::printf("## bloomery against Boost.Bloom and FastFilter (bloomery-peers)\n\n");
  std::printf("%s. Median of %d interleaved rounds; %zu absent uint64 keys per run",
              machine.c_str(), o.rounds, o.queries);
  if (o.strings)
    std::printf(", %zu absent string keys", std::max<std::size_t>(kBatch, o.queries / 2));
  std::printf(
      ". Each cell: **bloomery / peer** time ratio (below 1: bloomery is faster), then "
      "bloomery's and the peer's ns per key. bloomery and the peers are all compiled with "
      "-O3 -march=native here; bloomery's plain -O3 build is compared below.\n\n");

  rep.header_row("uint64 keys, 10 bits/key, absent keys");
  const auto row = [&](const std::string& what, const std::string& a, const std::string& b) {
    rep.ratio_row(what, a, b);
  };
  row("blocked vs Boost fast_multiblock32<8>, one at a time", "u64 native bloomery blocked/one",
      "u64 boost fast_multiblock32<8>/one");
  row("blocked vs Boost fast_multiblock32<8>, batched", "u64 native bloomery blocked/many",
      "u64 boost fast_multiblock32<8>/many");
  row("bloom vs Boost classic k=7, one at a time", "u64 native bloomery bloom/one",
      "u64 boost classic k=7/one");
  row("bloom vs Boost classic k=7, batched", "u64 native bloomery bloom/many",
      "u64 boost classic k=7/many");
  row("static8 vs binary_fuse8, one at a time", "u64 native bloomery static8/one",
      "u64 fastfilter binary_fuse8/one");
  row("static8 batched vs binary_fuse8 one at a time (it has no batch call)",
      "u64 native bloomery static8/many", "u64 fastfilter binary_fuse8/one");
  row("static8 vs binary_fuse8, build (ns per key)", "native bloomery static8/build",
      "fastfilter binary_fuse8/build");
  // The layouts a build from a rate takes: four packed slots per key, beside the same peer.
  for (const char* f : {"static7x4", "static8x4"}) {
    row(fmt("%s vs binary_fuse8, one at a time", f), fmt("u64 native bloomery %s/one", f),
        "u64 fastfilter binary_fuse8/one");
    row(fmt("%s batched vs binary_fuse8 one at a time", f), fmt("u64 native bloomery %s/many", f),
        "u64 fastfilter binary_fuse8/one");
    row(fmt("%s vs binary_fuse8, build (ns per key)", f), fmt("native bloomery %s/build", f),
        "fastfilter binary_fuse8/build");
  }

  std::printf("\n");
  rep.header_row("bloomery plain -O3 / bloomery -march=native");
  for (const char* f : {"blocked", "bloom", "static8"}) {
    for (const char* mode : {"one", "many"}) {
      row(fmt("%s, %s", f, std::strcmp(mode, "one") == 0 ? "one at a time" : "batched"),
          fmt("u64 o3 bloomery %s/%s", f, mode), fmt("u64 native bloomery %s/%s", f, mode));
    }
  }
  row("static8, build", "o3 bloomery static8/build", "native bloomery static8/build");

  if (o.strings) {
    for (const shape s : shapes) {
      const std::string p = shape_name(s);
      std::printf("\n");
      rep.header_row(
          fmt("%s keys (mean %.1f bytes), 10 bits/key, absent keys", p.c_str(), mean_length[p])
              .c_str());
      for (const char* mode : {"one", "many"}) {
        const char* how = std::strcmp(mode, "one") == 0 ? "one at a time" : "batched";
        for (const char* h : {"", " xxh3"}) {
          const char* hash = *h == '\0' ? "boost::hash" : "XXH3-64";
          row(fmt("blocked vs Boost fast_multiblock32<8> (%s), %s", hash, how),
              fmt("%s native bloomery blocked/%s", p.c_str(), mode),
              fmt("%s boost fast_multiblock32<8>%s/%s", p.c_str(), h, mode));
          row(fmt("bloom vs Boost classic k=7 (%s), %s", hash, how),
              fmt("%s native bloomery bloom/%s", p.c_str(), mode),
              fmt("%s boost classic k=7%s/%s", p.c_str(), h, mode));
        }
      }
    }
  }

  std::printf("\n| filter | keys |");
  for (auto n : o.sizes)
    std::printf(" bits/key %s | FPR %s |", size_label(n).c_str(), size_label(n).c_str());
  std::printf("\n|---|---|");
  for (std::size_t i = 0; i < o.sizes.size(); ++i) std::printf("---|---|");
  std::printf("\n");
  for (const std::string& name : rep.at.front().filters) {
    const std::size_t space = name.find(' ');
    std::printf("| %s | %s |", name.substr(space + 1).c_str(), name.substr(0, space).c_str());
    for (const auto& m : rep.at) {
      std::printf(" %.2f | %.3f%% |", m.bits_per_key.at(name), 100.0 * m.fpr.at(name));
    }
    std::printf("\n");
  }

  std::printf("\n");
  pattern_section();

  std::printf("\nEvery timing (ns per key: median, min, max over the rounds):\n\n");
  std::printf("| run |");
  for (auto n : o.sizes) std::printf(" %s |", size_label(n).c_str());
  std::printf("\n|---|");
  for (std::size_t i = 0; i < o.sizes.size(); ++i) std::printf("---|");
  std::printf("\n");
  for (const std::string& name : rep.at.front().runs) {
    std::printf("| %s |", name.c_str());
    for (const auto& m : rep.at) {
      const timing& x = m.t.at(name);
      std::printf(" %.2f (%.2f-%.2f) |", x.median_ns, x.min_ns, x.max_ns);
    }
    std::printf("\n");
  }
  std::printf(
      "\nMemory latency on this machine: %.1f ns per load (dependent pointer chase over a "
      "1 GiB random cycle of cache lines).\n",
      latency);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bloomery-peers: %s\n", e.what());
  return 1;
}
