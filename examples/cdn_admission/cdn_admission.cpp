// bloomery-cdn-admission: the one-hit-wonder filter in front of a CDN cache. Most objects a CDN
// serves are requested once and never again, yet an LRU cache writes every miss to disk, evicting
// objects that would have been hit. With the filter, an object is cached only on its second request
// within a window: the filter remembers which objects were asked for, and a "no" (never asked for)
// means "serve it, don't cache it". Two filters rotate, the current window's and the previous
// one's, so the filter forgets old requests and never fills up. The same trace is replayed through
// an LRU cache of fixed bytes without and with the filter.
//   bloomery-cdn-admission                    Zipf(0.8) trace over 10^6 objects, 2 * 10^6 requests
//   bloomery-cdn-admission --objects 10000000 --requests 20000000       the larger run
//   bloomery-cdn-admission --stdin < trace    a real trace: "timestamp object-id size" lines
#include <bloomery/blocked_bloom_filter.hpp>

#include <bloomery/examples/harness.hpp>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

namespace ex = bloomery::examples;
using u64 = std::uint64_t;
using u32 = std::uint32_t;

struct options {
  ex::common_options common;
  u64 objects = 1'000'000, requests = 2'000'000, cache_bytes = 0, window = 0;
  double skew = 0.8, cache_share = 0.05, fpr = 0.01;
  bool from_stdin = false;
};

// Requests as dense object numbers, with each object's key (what the filter sees) and size.
struct trace {
  std::vector<u32> requests;
  std::vector<u64> keys, sizes;
  std::vector<u32> counts;  // requests per object
};

// An object's size: Pareto-distributed (shape 1.2, from 4 KiB: median 7 KiB, mean 24 KiB, a few
// objects of many MiB), drawn from the object's key so that it is the same in every run.
u64 object_size(u64 key) {
  u64 state = key;
  const double u = 1.0 - ex::uniform01(state);  // in (0, 1]
  return static_cast<u64>(std::min(4096.0 / std::pow(u, 1 / 1.2), 1e9));
}

trace zipf_trace(const options& o) {
  trace t;
  ex::zipf_sampler zipf(o.objects, o.skew, o.common.seed);
  std::vector<u32> dense(o.objects + 1, 0);  // rank -> object number + 1, in order of first request
  for (u64 r = 0; r < o.requests; ++r) {
    const u64 rank = zipf.next();
    if (dense[rank] == 0) {
      t.keys.push_back(bloomery::support::splitmix64_at(o.common.seed, rank));
      t.sizes.push_back(object_size(t.keys.back()));
      dense[rank] = static_cast<u32>(t.keys.size());
    }
    t.requests.push_back(dense[rank] - 1);
  }
  return t;
}

trace read_trace(std::istream& in) {
  trace t;
  std::unordered_map<std::string, u32> dense;
  std::string line, timestamp, id;
  for (u64 n = 1; std::getline(in, line); ++n) {
    std::istringstream fields(line);
    u64 size = 0;
    if (!(fields >> timestamp >> id >> size)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      throw std::runtime_error("line " + std::to_string(n) +
                               ": expected 'timestamp object-id size'");
    }
    const auto [it, added] = dense.emplace(id, static_cast<u32>(t.keys.size()));
    if (added) t.keys.push_back(it->second), t.sizes.push_back(0);
    t.sizes[it->second] = size;  // the object's latest size
    t.requests.push_back(it->second);
  }
  return t;
}

// An LRU cache of fixed bytes over dense object numbers: an intrusive list through two arrays.
class lru_cache {
 public:
  lru_cache(u64 capacity, const std::vector<u64>& sizes)
      : capacity_(capacity),
        sizes_(sizes),
        prev_(sizes.size()),
        next_(sizes.size()),
        cached_(sizes.size(), 0) {}

  bool lookup(u32 x) {
    if (!cached_[x]) return false;
    unlink(x);
    push_front(x);
    return true;
  }
  // Writes x, evicting the least recently used objects; false if x is larger than the cache.
  bool insert(u32 x) {
    if (sizes_[x] > capacity_) return false;
    while (used_ + sizes_[x] > capacity_) {
      const u32 victim = tail_;
      unlink(victim);
      cached_[victim] = 0;
      used_ -= sizes_[victim];
    }
    push_front(x);
    cached_[x] = 1;
    used_ += sizes_[x];
    return true;
  }

 private:
  static constexpr u32 none = UINT32_MAX;
  void unlink(u32 x) {
    (prev_[x] == none ? head_ : next_[prev_[x]]) = next_[x];
    (next_[x] == none ? tail_ : prev_[next_[x]]) = prev_[x];
  }
  void push_front(u32 x) {
    prev_[x] = none;
    next_[x] = head_;
    (head_ == none ? tail_ : prev_[head_]) = x;
    head_ = x;
  }
  u64 capacity_, used_ = 0;
  const std::vector<u64>& sizes_;
  std::vector<u32> prev_, next_;
  std::vector<char> cached_;
  u32 head_ = none, tail_ = none;
};

// The admission filter: "was this object requested in this window or the previous one?" Every
// `window` requests the current filter becomes the previous one and the old previous one is
// cleared to start the new window, so no filter ever holds more than `window` requests.
class admission_filter {
 public:
  admission_filter(u64 window, double fpr)
      : current_({.capacity = window, .fpr = fpr}), previous_(current_), window_(window) {}

  // Records the request; true if the object was requested before within the last two windows.
  bool seen_before(u64 key) {
    if (in_window_++ == window_) {
      std::swap(current_, previous_);
      current_.clear();
      in_window_ = 1;
      ++rotations_;
    }
    const bool in_current =
        current_.check_and_insert(key) == bloomery::insert_result::already_present;
    return in_current || previous_.may_contain(key);
  }
  u64 size_in_bytes() const { return current_.size_in_bytes() + previous_.size_in_bytes(); }
  u64 rotations() const { return rotations_; }

 private:
  bloomery::blocked_bloom_filter current_, previous_;
  u64 window_, in_window_ = 0, rotations_ = 0;
};

struct outcome {
  u64 hits = 0, hit_bytes = 0, writes = 0, written_bytes = 0, one_hit_writes = 0, checksum = 0;
  double seconds = 0;
};

// Replays the trace through the cache, admitting every miss or only those the filter has seen.
outcome replay(const trace& t, u64 cache_bytes, admission_filter* filter) {
  lru_cache cache(cache_bytes, t.sizes);
  outcome out;
  const ex::stopwatch clock;
  for (const u32 x : t.requests) {
    out.checksum = bloomery::support::splitmix64_mix(out.checksum ^ x);  // the same trace?
    const bool admit = filter == nullptr || filter->seen_before(t.keys[x]);
    if (cache.lookup(x)) {
      ++out.hits;
      out.hit_bytes += t.sizes[x];
    } else if (admit && cache.insert(x)) {
      ++out.writes;
      out.written_bytes += t.sizes[x];
      out.one_hit_writes += t.counts[x] == 1;
    }
  }
  out.seconds = clock.seconds();
  return out;
}

int run(const options& o) {
  const auto ratio = [](u64 a, u64 b) { return static_cast<double>(a) / static_cast<double>(b); };
  trace t = o.from_stdin ? read_trace(std::cin) : zipf_trace(o);
  if (t.requests.empty()) throw std::runtime_error("the trace has no requests");
  t.counts.assign(t.keys.size(), 0);
  u64 total_bytes = 0, distinct_bytes = 0, one_hit = 0;
  for (const u32 x : t.requests) {
    total_bytes += t.sizes[x];
    distinct_bytes += ++t.counts[x] == 1 ? t.sizes[x] : 0;
  }
  for (const u32 c : t.counts) one_hit += c == 1;
  const u64 cache_bytes =
      o.cache_bytes != 0 ? o.cache_bytes
                         : static_cast<u64>(o.cache_share * static_cast<double>(distinct_bytes));
  const u64 window = o.window != 0 ? o.window : std::max<u64>(1, t.requests.size() / 8);
  admission_filter filter(window, o.fpr);
  const outcome plain = replay(t, cache_bytes, nullptr);
  const outcome filtered = replay(t, cache_bytes, &filter);

  ex::report r("cdn_admission", {"no filter", "admission filter"});
  if (!o.from_stdin) {
    r.param("objects", ex::count(o.objects));
    r.param("skew", ex::number(o.skew));
    r.param("seed", ex::count(o.common.seed));
  }
  r.param("requests", ex::count(t.requests.size()));
  r.param("distinct objects", ex::count(t.keys.size()));
  r.param("one-hit wonders", ex::percent(ratio(one_hit, t.keys.size()), 1));
  r.param("distinct bytes", ex::bytes(distinct_bytes));
  r.param("cache", ex::bytes(cache_bytes));
  r.param("window", ex::count(window));
  r.param("filter fpr", ex::percent(o.fpr));
  const outcome* runs[] = {&plain, &filtered};
  for (std::size_t i = 0; i < 2; ++i) {
    const outcome& x = *runs[i];
    const auto checksum = static_cast<unsigned long long>(x.checksum);
    r.set(i, "trace_checksum", "trace checksum",
          ex::text(bloomery::support::fmt("%016llx", checksum)));
    r.set(i, "hit_ratio", "hit ratio", ex::percent(ratio(x.hits, t.requests.size()), 2));
    r.set(i, "byte_hit_ratio", "byte hit ratio", ex::percent(ratio(x.hit_bytes, total_bytes), 2));
    r.set(i, "cache_writes", "cache writes (objects)", ex::count(x.writes));
    r.set(i, "bytes_written", "bytes written to disk", ex::bytes(x.written_bytes));
    r.set(i, "one_hit_writes", "one-hit wonders written", ex::count(x.one_hit_writes));
    r.set(i, "writes_avoided", "writes avoided", ex::percent(1 - ratio(x.writes, plain.writes), 1));
    r.set(i, "bytes_avoided", "disk bytes saved",
          ex::percent(1 - ratio(x.written_bytes, plain.written_bytes), 1));
    r.set(i, "requests_per_second", "requests per second",
          ex::per_second(static_cast<double>(t.requests.size()) / x.seconds));
  }
  r.row("filter_memory", "filter memory (2 windows)",
        {ex::none(), ex::bytes(filter.size_in_bytes())});
  r.row("filter_rotations", "filter rotations", {ex::none(), ex::count(filter.rotations())});
  r.row("one_hit_fpr", "one-hit wonders let in",
        {ex::none(), ex::percent(ratio(filtered.one_hit_writes, one_hit))});
  r.note("With the filter an object is cached on its second request within two windows; a");
  r.note("one-hit wonder gets in only through a false positive of the filter.");
  r.print(o.common.json);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  CLI::App app("The one-hit-wonder filter in front of a CDN cache: cache on the second request.",
               "bloomery-cdn-admission");
  app.option_defaults()->always_capture_default();
  ex::add_common_options(app, o.common);
  app.add_option("--objects", o.objects, "objects of the Zipf trace")
      ->check(CLI::Range(u64{1}, u64{UINT32_MAX - 1}));
  app.add_option("--requests", o.requests, "requests of the Zipf trace")
      ->check(CLI::Range(u64{1}, u64{UINT32_MAX}));
  app.add_option("--skew", o.skew, "Zipf skew s: P(rank k) ~ 1/k^s")->check(CLI::Range(0.0, 10.0));
  app.add_option("--cache-share", o.cache_share, "cache size as a share of the distinct bytes")
      ->check(ex::open_unit_interval());
  app.add_option("--cache-bytes", o.cache_bytes, "cache size in bytes (instead of --cache-share)");
  app.add_option("--window", o.window, "requests per filter window (0: an eighth of the trace)");
  app.add_option("--fpr", o.fpr, "false-positive rate of each window's filter")
      ->check(ex::open_unit_interval());
  app.add_flag("--stdin", o.from_stdin,
               "replay 'timestamp object-id size' lines of standard input");
  return ex::run_example(app, argc, argv, [&] { return run(o); });
}
