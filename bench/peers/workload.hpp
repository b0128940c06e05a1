// What the drivers (peers.cpp, curve.cpp, and bounds.cpp for its rounds and keys) share: the key
// streams, filling and timing contenders, the interleaved timing rounds, the memory probes, the
// command line and the machine line. Included by the drivers only, never by a library's side.
#pragma once

#include <sys/mman.h>
#include <sys/utsname.h>
#include <bloomery/support/keys.hpp>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <new>
#include <numeric>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "contender.hpp"

namespace peers {

// Keys are outputs of one splitmix64 stream at disjoint position ranges, as in bench_common.hpp:
// present keys [0, n), absent keys from 2^40 on, so the two sets never share a key.
inline constexpr std::uint64_t kSeed = 0x0123456789abcdefULL;
inline constexpr std::uint64_t kAbsentBase = std::uint64_t{1} << 40;

inline std::uint64_t key_at(std::uint64_t i) {
  return bloomery::support::splitmix64_at(kSeed, i);
}

inline std::vector<std::uint64_t> u64_keys(std::uint64_t first, std::size_t count) {
  std::vector<std::uint64_t> keys(count);
  for (std::size_t i = 0; i < count; ++i) keys[i] = key_at(first + i);
  return keys;
}

// Byte-string key shapes: 16 raw bytes (two stream outputs), or a URL of about 70 bytes whose
// path holds one stream output in hex (so distinct positions give distinct URLs).
enum class shape { bytes16, url };

inline const char* shape_name(shape s) {
  return s == shape::bytes16 ? "16-byte" : "URL";
}

// A batch of string keys: one contiguous arena and views into it.
struct string_keys {
  std::vector<char> arena;
  std::vector<std::string_view> views;

  void fill(shape s, std::uint64_t first, std::size_t count) {
    arena.clear();
    views.clear();
    arena.reserve(count * (s == shape::bytes16 ? 16 : 80));
    std::vector<std::size_t> ends;
    ends.reserve(count);
    char buf[128];
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint64_t p = first + i;
      if (s == shape::bytes16) {
        const std::uint64_t a = key_at(2 * p), b = key_at(2 * p + 1);
        const char* pa = reinterpret_cast<const char*>(&a);
        const char* pb = reinterpret_cast<const char*>(&b);
        arena.insert(arena.end(), pa, pa + 8);
        arena.insert(arena.end(), pb, pb + 8);
      } else {
        const std::uint64_t x = key_at(p);
        const int len = std::snprintf(buf, sizeof buf,
                                      "https://www.site%" PRIu64 ".example.com/articles/%016" PRIx64
                                      "/page-%" PRIu64 ".html",
                                      (x >> 40) % 100000, x, (x >> 8) % 1000);
        arena.insert(arena.end(), buf, buf + len);
      }
      ends.push_back(arena.size());
    }
    views.resize(count);
    for (std::size_t i = 0, begin = 0; i < count; begin = ends[i], ++i) {
      views[i] = std::string_view(arena.data() + begin, ends[i] - begin);
    }
  }
  double mean_length() const {
    return views.empty() ? 0.0 : static_cast<double>(arena.size()) / views.size();
  }
};

// A built filter of some contender; destroyed with it.
template <class K>
struct instance {
  const contender<K>* c = nullptr;
  void* h = nullptr;
  instance() = default;
  instance(const contender<K>& who, void* handle) : c(&who), h(handle) {}
  instance(instance&& o) noexcept : c(o.c), h(std::exchange(o.h, nullptr)) {}
  instance& operator=(instance&& o) noexcept {
    std::swap(c, o.c);
    std::swap(h, o.h);
    return *this;
  }
  ~instance() {
    if (h != nullptr) c->destroy(h);
  }
  std::uint64_t bytes() const { return c->bytes(h); }
};

// Contender c holding `keys`: made for their count and grown by inserts, or built from them.
template <class K>
instance<K> filled(const contender<K>& c, const std::vector<K>& keys) {
  if (c.make == nullptr) return instance<K>(c, c.build(keys.data(), keys.size()));
  instance<K> f(c, c.make(keys.size()));
  c.insert(f.h, keys.data(), keys.size());
  return f;
}

// A filter must answer "possibly present" for every inserted key; `name` says which one did not.
template <class K>
void check_present(const instance<K>& f, const K* keys, std::size_t count,
                   const std::string& name) {
  if (f.c->query_one(f.h, keys, count) != count) {
    throw std::runtime_error(name + " answers no to an inserted key");
  }
}

// One timed job: returns the number of positives, so the work cannot be optimized away.
struct task {
  std::string name;
  std::function<std::size_t()> run;
  std::size_t keys = 1;  // keys per run, to report ns per key
};

struct timing {
  std::string name;
  double median_ns = 0;  // per key
  double min_ns = 0;
  double max_ns = 0;
  std::size_t positives = 0;  // of the last run
};

inline double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// Runs every task once untimed (warm-up), then `rounds` rounds; each round times every task once,
// starting one later than the round before, so drift and a noisy neighbour hit all alike.
inline std::vector<timing> run_rounds(const std::vector<task>& tasks, int rounds) {
  using clock = std::chrono::steady_clock;
  const std::size_t t = tasks.size();
  std::vector<std::vector<double>> samples(t);
  std::vector<std::size_t> positives(t);
  for (std::size_t i = 0; i < t; ++i) positives[i] = tasks[i].run();
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t j = 0; j < t; ++j) {
      const std::size_t i = (j + static_cast<std::size_t>(r)) % t;
      const auto start = clock::now();
      positives[i] = tasks[i].run();
      const auto stop = clock::now();
      samples[i].push_back(std::chrono::duration<double, std::nano>(stop - start).count() /
                           static_cast<double>(tasks[i].keys));
    }
  }
  std::vector<timing> out(t);
  for (std::size_t i = 0; i < t; ++i) {
    const auto [lo, hi] = std::minmax_element(samples[i].begin(), samples[i].end());
    out[i] = {tasks[i].name, median_of(samples[i]), *lo, *hi, positives[i]};
  }
  return out;
}

// The absent-key query runs of filter f under `name`: "<name>/one", one key at a time, and, when
// the library has a batched call, "<name>/many".
template <class K>
void add_query_tasks(std::vector<task>& tasks, const std::string& name, const instance<K>& f,
                     const std::vector<K>& absent) {
  tasks.push_back({name + "/one",
                   [&f, &absent] { return f.c->query_one(f.h, absent.data(), absent.size()); },
                   absent.size()});
  if (f.c->query_many != nullptr) {
    tasks.push_back({name + "/many",
                     [&f, &absent] { return f.c->query_many(f.h, absent.data(), absent.size()); },
                     absent.size()});
  }
}

inline const timing& timing_of(const std::vector<timing>& all, std::string_view name) {
  for (const auto& t : all) {
    if (t.name == name) return t;
  }
  throw std::out_of_range("peers: no timing named " + std::string(name));
}

// Zeroed words for the memory probes, allocated as bloomery's bit_array allocates a large filter
// (2 MiB aligned, MADV_HUGEPAGE), so the bounds see the same page size as the filters do.
class probe_words {
 public:
  explicit probe_words(std::uint64_t count) : size_(count) {
    constexpr std::size_t huge = std::size_t{2} << 20;
    const std::size_t bytes = static_cast<std::size_t>(count) * 8;
    const std::size_t align = bytes >= huge ? huge : 64;
    const std::size_t rounded = (bytes + align - 1) / align * align;
    words_.reset(static_cast<std::uint64_t*>(std::aligned_alloc(align, rounded)));
    if (!words_) throw std::bad_alloc();
    if (align == huge) ::madvise(words_.get(), rounded, MADV_HUGEPAGE);  // advisory
    std::fill_n(words_.get(), count, std::uint64_t{0});
  }
  std::uint64_t& operator[](std::uint64_t i) noexcept { return words_[i]; }
  const std::uint64_t& operator[](std::uint64_t i) const noexcept { return words_[i]; }
  std::uint64_t size() const noexcept { return size_; }

 private:
  struct freer {
    void operator()(std::uint64_t* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<std::uint64_t[], freer> words_;
  std::uint64_t size_;
};

// The memory probes. Both read an array of `bytes` bytes (at least one cache line).
//
// Dependent chain: each load's address comes from the previous load, over one random cycle
// through every cache line (Sattolo's shuffle), so no two loads overlap: the latency bound.
class pointer_chase {
 public:
  explicit pointer_chase(std::uint64_t bytes)
      : lines_(std::max<std::uint64_t>(1, bytes / 64)), words_(lines_ * 8) {
    std::vector<std::uint32_t> order(lines_);
    std::iota(order.begin(), order.end(), 0u);
    std::uint64_t state = 0x5eed;
    for (std::uint64_t i = lines_ - 1; i > 0; --i) {
      const auto j = static_cast<std::uint64_t>(
          (static_cast<unsigned __int128>(bloomery::support::splitmix64(state)) * i) >> 64);
      std::swap(order[i], order[j]);  // j < i: Sattolo, a single cycle
    }
    for (std::uint64_t i = 0; i < lines_; ++i) {
      words_[std::uint64_t{order[i]} * 8] = std::uint64_t{order[(i + 1) % lines_]} * 8;
    }
  }
  // `loads` dependent loads; returns where the chain ended.
  std::uint64_t run(std::uint64_t loads) const {
    std::uint64_t p = 0;
    for (std::uint64_t i = 0; i < loads; ++i) p = words_[p];
    return p;
  }

 private:
  std::uint64_t lines_;
  probe_words words_;
};

// Independent loads: random addresses read from a precomputed index array, so the core keeps as
// many misses in flight as it can: the throughput bound a batched query could reach.
class random_loads {
 public:
  random_loads(std::uint64_t bytes, std::uint64_t loads)
      : words_(std::max<std::uint64_t>(8, bytes / 8)), index_(loads) {
    const std::uint64_t n = words_.size();
    for (std::uint64_t i = 0; i < loads; ++i) {
      const std::uint64_t h = bloomery::support::splitmix64_mix(i);
      index_[i] = static_cast<std::uint64_t>((static_cast<unsigned __int128>(h) * n) >> 64);
    }
  }
  // One load per index; returns the sum of the words read.
  std::uint64_t run() const {
    std::uint64_t sum = 0;
    for (const std::uint64_t i : index_) sum += words_[i];
    return sum;
  }
  std::uint64_t loads() const { return index_.size(); }

 private:
  probe_words words_;
  std::vector<std::uint64_t> index_;
};

// The memory probes as timed tasks, to run in the same interleaved rounds as the filters.
inline task chase_task(std::string name, const pointer_chase& c, std::uint64_t loads) {
  return {std::move(name), [&c, loads] { return static_cast<std::size_t>(c.run(loads)); },
          static_cast<std::size_t>(loads)};
}
inline task random_loads_task(std::string name, const random_loads& r) {
  return {std::move(name), [&r] { return static_cast<std::size_t>(r.run()); },
          static_cast<std::size_t>(r.loads())};
}

// A driver's command line, one flag at a time: `program` takes the flags `usage` lists.
class command_line {
 public:
  // Counts are read as numbers (1e6 is 10^6) and must lie in [1, max_count].
  command_line(int argc, char** argv, const char* program, const char* usage, double max_count)
      : argc_(argc), argv_(argv), program_(program), usage_(usage), max_count_(max_count) {}

  // Prints why the command line is wrong and the usage, and exits with status 2.
  [[noreturn]] void fail(const std::string& why) const {
    std::fprintf(stderr, "%s: %s\nusage: %s %s\n", program_, why.c_str(), program_, usage_);
    std::exit(2);
  }

  // Moves to the next flag; false after the last.
  bool next() { return ++i_ < argc_; }
  std::string_view flag() const { return argv_[i_]; }
  // The value after the current flag.
  const char* value() {
    if (i_ + 1 >= argc_) fail("missing value after " + std::string(flag()));
    return argv_[++i_];
  }
  std::uint64_t count() { return count_of(value()); }
  // A value "N,N,..." as counts.
  std::vector<std::uint64_t> counts() {
    const std::string list = value();
    std::vector<std::uint64_t> out;
    for (std::size_t p = 0; p <= list.size();) {
      const std::size_t q = std::min(list.find(',', p), list.size());
      out.push_back(count_of(list.substr(p, q - p).c_str()));
      p = q + 1;
    }
    return out;
  }
  [[noreturn]] void unknown() const { fail("unknown argument " + std::string(flag())); }

 private:
  std::uint64_t count_of(const char* s) const {
    char* end = nullptr;
    const double v = std::strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= 1) || v > max_count_) {
      fail("a count must lie in [1, " + std::to_string(std::llround(max_count_)) + "]");
    }
    return static_cast<std::uint64_t>(v);
  }

  int argc_;
  char** argv_;
  const char* program_;
  const char* usage_;
  double max_count_;
  int i_ = 0;
};

// The CPU, the kernel and the load when the run started, for a report's first line.
inline std::string machine_line() {
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

}  // namespace peers
