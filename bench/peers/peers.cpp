// bloomery-peers: bloomery side by side with Boost.Bloom and FastFilter's binary fuse filter, on
// the same keys in one process, as a markdown table of time ratios (README.md in this folder).
//
// usage: bloomery-peers [--rounds R] [--sizes N,N,...] [--queries Q] [--no-strings] [--quick]
//   --rounds R    timed rounds per measurement, at least 5 (default 7); the median is reported
//   --sizes       key counts (default 100000,10000000)
//   --queries Q   absent keys per timed run (default 2^22 uint64 keys; string keys get Q/2)
//   --no-strings  skip the byte-string comparisons
//   --quick       sizes 10^4,10^5, 2^18 queries, 5 rounds: a smoke test, numbers not usable
#include <sys/utsname.h>

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
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
  bool strings = true;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "bloomery-peers: %s\n", why);
  std::fprintf(stderr,
               "usage: bloomery-peers [--rounds R] [--sizes N,N,...] [--queries Q] "
               "[--no-strings] [--quick]\n");
  std::exit(2);
}

std::uint64_t parse_count(const char* s) {
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  if (end == s || *end != '\0' || !(v >= 1) || v > 4e9) usage("a count must lie in [1, 4e9]");
  return static_cast<std::uint64_t>(v);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&] {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--rounds") {
      o.rounds = static_cast<int>(parse_count(value()));
      if (o.rounds < 5) usage("--rounds must be at least 5");
    } else if (a == "--sizes") {
      o.sizes.clear();
      std::string list = value();
      for (std::size_t p = 0; p <= list.size();) {
        const std::size_t q = std::min(list.find(',', p), list.size());
        o.sizes.push_back(parse_count(list.substr(p, q - p).c_str()));
        p = q + 1;
      }
    } else if (a == "--queries") {
      o.queries = parse_count(value());
    } else if (a == "--no-strings") {
      o.strings = false;
    } else if (a == "--quick") {
      o.sizes = {10'000, 100'000};
      o.queries = std::size_t{1} << 18;
      o.rounds = 5;
    } else {
      usage(("unknown argument " + a).c_str());
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
    if (f.c->query_one(f.h, sample.data(), sample.size()) != sample.size()) {
      std::fprintf(stderr, "bloomery-peers: %s answers no to an inserted key\n", name.c_str());
      std::exit(1);
    }
    m.filters.push_back(name);
    m.bits_per_key[name] = 8.0 * static_cast<double>(f.bytes()) / static_cast<double>(n);
    tasks.push_back({name + "/one",
                     [&f, &absent] { return f.c->query_one(f.h, absent.data(), absent.size()); },
                     absent.size()});
    if (f.c->query_many != nullptr) {
      tasks.push_back({name + "/many",
                       [&f, &absent] { return f.c->query_many(f.h, absent.data(), absent.size()); },
                       absent.size()});
    }
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

std::string machine_line() {
  std::string cpu = "unknown CPU";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  std::string load = "?";
  std::ifstream la("/proc/loadavg");
  la >> load;
  utsname u{};
  uname(&u);
  return cpu + ", " + u.sysname + " " + u.release + ", 1-minute load " + load + " at start";
}

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
      u64_sides, {"bloomery blocked", "bloomery bloom", "bloomery static8",
                  "boost fast_multiblock32<8>", "boost classic k=7", "fastfilter binary_fuse8"});
  const std::vector<std::pair<std::string, const std::vector<str_contender>*>> str_sides = {
      {"native", &native.str}, {"o3", &o3.str}, {"", &boost.str}};
  const auto str_entries =
      pick<sv>(str_sides,
               {"bloomery blocked", "bloomery bloom", "boost fast_multiblock32<8>",
                "boost classic k=7", "boost fast_multiblock32<8> xxh3", "boost classic k=7 xxh3"});
  const shape shapes[] = {shape::bytes16, shape::url};

  report rep{o, {}};
  std::map<std::string, double> mean_length;
  for (const u64 n : o.sizes) {
    measured m;
    std::fprintf(stderr, "bloomery-peers: n = %" PRIu64 ", uint64 keys\n", n);
    {
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
