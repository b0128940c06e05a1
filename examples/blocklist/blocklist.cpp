// bloomery-blocklist: a Safe-Browsing-style client. It holds a Bloom filter of a blocklist
// (malicious URLs, spam senders) and asks the authoritative list, a remote service, only when the
// filter says "possibly": a "no" is final, so most lookups never leave the machine and no blocked
// entry is ever let through. Then an update cycle: the server ships new filter versions as files,
// and the client swaps each in atomically while its query threads keep running.
//
// Exit status 1 if a blocked entry was ever let through, 2 for bad arguments. README.md has more.
#include <bloomery/bloomery.hpp>
#include <bloomery/examples/harness.hpp>
#include <bloomery/support/temp_dir.hpp>
#ifdef BLOOMERY_EXAMPLES_HAVE_REDIS
#include <bloomery/examples/redis_client.hpp>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

namespace ex = bloomery::examples;
using std::uint64_t;

namespace {

struct options {
  ex::common_options common;
  uint64_t urls = 200'000, senders = 100'000, queries = 200'000, baseline = 2'000;
  uint64_t latency_us = 100, updates = 3, threads = 2;
  double fpr = 0.01, blocked_share = 0.01, churn = 0.05;
  std::string redis, dir;
};

// Entry i is the i-th entry ever listed: version v (from 1) lists ids [(v-1)*churn, +size). Ids
// from clean_base up are never listed. Distinct ids give distinct entries.
constexpr uint64_t clean_base = uint64_t{1} << 62;
struct blocklist {
  std::string name;
  uint64_t size;
  std::function<std::string(uint64_t)> entry;
};

std::string sender(uint64_t seed, uint64_t i) {
  static constexpr std::array<const char*, 4> users{"promo", "winner", "billing", "deals"};
  static constexpr std::array<const char*, 3> domains{"mail.example", "post.example", "inbox.io"};
  const uint64_t shape = bloomery::support::splitmix64_at(seed, i);
  std::string s = users[shape % users.size()] + std::string(".");
  for (uint64_t v = bloomery::support::splitmix64_mix(i ^ seed); v != 0; v /= 36) {
    s += "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];  // a bijection of i: unique
  }
  return s + "@" + domains[(shape >> 8) % domains.size()];
}

// The authoritative list, the exact answer, one remote call per question: in process, plus a
// round trip's latency, or a Redis set that the example fills with the list's entries.
using authority = std::function<bool(const std::string&)>;
authority make_authority(const options& o, const blocklist& list,
                         const std::vector<std::string>& entries) {
  if (o.redis.empty()) {
    auto set =
        std::make_shared<const std::unordered_set<std::string>>(entries.begin(), entries.end());
    return [set, latency = std::chrono::microseconds(o.latency_us)](const std::string& e) {
      if (latency.count() > 0) std::this_thread::sleep_for(latency);
      return set->contains(e);
    };
  }
#ifdef BLOOMERY_EXAMPLES_HAVE_REDIS
  auto redis = std::make_shared<ex::redis_client>(o.redis);
  const std::string key = "bloomery:blocklist:" + list.name;
  redis->command({"DEL", key});
  for (std::size_t i = 0; i < entries.size(); i += 1000) {  // SADD 1,000 entries at a time
    std::vector<std::string_view> args{"SADD", key};
    args.insert(args.end(), entries.begin() + i,
                entries.begin() + std::min(entries.size(), i + 1000));
    redis->command(args);
  }
  return [redis, key](const std::string& e) {
    return redis->command({"SISMEMBER", key, e}).integer == 1;
  };
#else
  (void)list;
  throw std::runtime_error("--redis needs hiredis (Debian: libhiredis-dev); this build has none");
#endif
}

// Phase 1: every lookup asks the filter first, and the list only on "possibly". `out(key, label,
// cell)` records a result; returns the blocked lookups let through.
uint64_t serve_queries(const options& o, const blocklist& list, auto&& out) {
  std::vector<std::string> entries(list.size);
  for (uint64_t i = 0; i < list.size; ++i) entries[i] = list.entry(i);
  bloomery::bloom_filter filter({.capacity = list.size, .fpr = o.fpr});
  for (const auto& e : entries) filter.insert(e);
  uint64_t list_wire = 0;
  for (const auto& e : entries) list_wire += e.size() + 1;
  const uint64_t filter_wire = bloomery::serialize(filter).size();  // what each client downloads
  const auto remote = make_authority(o, list, entries);

  uint64_t state = o.common.seed;  // a stream of its own for each list
  for (const char c : list.name) state = state * 31 + static_cast<unsigned char>(c);
  auto next_query = [&](uint64_t q) {  // a blocked entry with probability blocked_share
    const bool blocked = ex::uniform01(state) < o.blocked_share;
    return std::pair{list.entry(blocked ? ex::uniform_below(state, list.size) : clean_base + q),
                     blocked};
  };
  ex::answer_tally tally;
  uint64_t remote_calls = 0, missed = 0;
  double seconds = 0;
  std::vector<std::pair<std::string, bool>> batch;
  for (uint64_t q = 0; q < o.queries;) {  // generated in batches, outside the clock
    for (batch.clear(); batch.size() < 65536 && q < o.queries; ++q) batch.push_back(next_query(q));
    const ex::stopwatch clock;
    for (const auto& [key, blocked] : batch) {
      const bool possibly = filter.may_contain(key);
      const bool refused = possibly && (++remote_calls, remote(key));
      tally.record(possibly, blocked);
      missed += blocked && !refused;  // against the exact answer: must stay 0
    }
    seconds += clock.seconds();
  }
  batch.clear();  // the client without a filter: every lookup is a remote call (a sample)
  for (uint64_t q = 0; q < std::min(o.baseline, o.queries); ++q) batch.push_back(next_query(q));
  const ex::stopwatch clock;
  for (const auto& [key, blocked] : batch) missed += remote(key) != blocked;
  const double list_seconds = clock.seconds();

  const auto n = static_cast<double>(o.queries);
  out("entries", "blocked entries", ex::count(list.size));
  out("clean_queries", "lookups of clean entries", ex::count(tally.absent()));
  out("filter_positives", "filter says possibly",
      ex::count(tally.true_positives + tally.false_positives));
  out("remote_calls", "remote calls", ex::count(remote_calls));
  out("remote_calls_avoided", "remote calls avoided", ex::percent(1 - remote_calls / n, 2));
  out("blocked_missed", "blocked entries missed", ex::count(missed));
  out("false_positives", "false positives", ex::count(tally.false_positives));
  out("fpr", "measured FPR", ex::percent(tally.fpr()));
  out("expected_fpr", "expected FPR (from the fill)", ex::percent(filter.estimated_fpr()));
  out("filter_wire_bytes", "filter on the wire", ex::bytes(filter_wire));
  out("list_wire_bytes", "list on the wire (text)", ex::bytes(list_wire));
  out("prefix_list_bytes", "list as 32-bit hash prefixes", ex::bytes(4 * list.size));
  out("wire_ratio", "filter / list", ex::percent(filter_wire / static_cast<double>(list_wire), 1));
  out("list_only_qps", "lookups/s, list only", ex::per_second(batch.size() / list_seconds));
  out("filter_first_qps", "lookups/s, filter first", ex::per_second(n / seconds));
  return missed;
}

// One version of the client's filter, immutable once published: a lookup that holds it sees one
// whole version, and the version it replaced lives until its last reader lets go.
struct snapshot {
  uint64_t version, first;  // lists ids [first, first + size)
  bloomery::any_filter filter;
};

// Phase 2: the server ships versions 2..updates+1 (churn of the entries delisted, as many new)
// while query threads run; each lookup is checked against the version it saw.
uint64_t update_cycle(const options& o, const blocklist& list, const std::filesystem::path& file,
                      auto&& out) {
  const uint64_t churn = std::max<uint64_t>(1, static_cast<uint64_t>(o.churn * list.size));
  auto ship = [&](uint64_t v) {  // the server: build version v, save it crash-safely
    bloomery::bloom_filter f({.capacity = list.size, .fpr = o.fpr});
    for (uint64_t i = (v - 1) * churn; i < (v - 1) * churn + list.size; ++i)
      f.insert(list.entry(i));
    bloomery::save(f, file);  // temporary file, fsync, rename: readers see old or new, whole
  };
  auto install = [&](uint64_t v) {  // the client: load the shipped file, whatever its kind
    return std::make_shared<const snapshot>(snapshot{v, (v - 1) * churn, bloomery::load_any(file)});
  };
  ship(1);
  // The current version, behind a mutex held only to copy or swap the pointer. (C++20's
  // std::atomic<std::shared_ptr> says the same, but GCC 12's load releases its internal lock with
  // a relaxed store, which ThreadSanitizer rightly reports as a race with the next store.)
  std::mutex lock;
  std::shared_ptr<const snapshot> current = install(1);
  auto get = [&] {
    const std::lock_guard hold(lock);
    return current;
  };
  std::vector<std::atomic<uint64_t>> seen(o.threads);      // newest version each thread has used
  std::vector<std::array<uint64_t, 4>> counts(o.threads);  // lookups, missed, torn, versions
  const uint64_t span = o.updates * churn + list.size;     // every id some version lists
  std::vector<std::jthread> readers;
  for (uint64_t t = 0; t < o.threads; ++t) {
    readers.emplace_back([&, t](std::stop_token stop) {  // a jthread stops and joins when dropped
      auto& [lookups, missed, torn, versions] = counts[t];
      for (uint64_t state = o.common.seed + t, last = 0; !stop.stop_requested(); ++lookups) {
        const std::shared_ptr<const snapshot> s = get();
        if (s->version != last) {  // first sight: every entry this version added must be in it
          for (uint64_t i = s->first + list.size - churn; i < s->first + list.size; ++i) {
            torn += !s->filter.may_contain(list.entry(i));
          }
          seen[t].store(last = s->version);
          ++versions;
        }
        const uint64_t id = ex::uniform_below(state, span);
        const bool listed = id >= s->first && id < s->first + list.size;
        missed += listed && !s->filter.may_contain(list.entry(id));
      }
    });
  }
  double swap_seconds = 0;
  for (uint64_t v = 2; v <= o.updates + 2; ++v) {
    for (const auto& s : seen) {  // wait until every thread uses the current version
      while (s.load() < v - 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (v > o.updates + 1) break;
    ship(v);
    const ex::stopwatch clock;
    std::shared_ptr<const snapshot> next = install(v);
    std::unique_lock hold(lock);
    current.swap(next);  // the swap
    hold.unlock();       // the old version is released after it, by its last reader
    swap_seconds += clock.seconds();
  }
  readers.clear();  // stop and join
  std::array<uint64_t, 4> sum{0, 0, 0, ~uint64_t{0}};
  for (const auto& c : counts) {
    for (int i = 0; i < 3; ++i) sum[i] += c[i];
    sum[3] = std::min(sum[3], c[3]);
  }
  out("versions", "versions swapped in", ex::count(o.updates));
  out("swap_queries", "lookups during the swaps", ex::count(sum[0]));
  out("versions_seen", "versions seen by each thread", ex::count(sum[3]));
  out("torn_snapshots", "half-updated filters seen", ex::count(sum[2]));
  out("swap_missed", "blocked entries missed (swaps)", ex::count(sum[1]));
  out("file_bytes", "filter file", ex::bytes(std::filesystem::file_size(file)));
  out("swap_ms", "load + swap, mean (ms)", ex::number(1e3 * swap_seconds / o.updates));
  return sum[1] + sum[2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"A blocklist client: a Bloom filter in front of the authoritative list.",
               "bloomery-blocklist"};
  options o;
  ex::add_common_options(app, o.common);
  auto opt = [&](const char* name, auto& value, const char* help) {
    return app.add_option(name, value, help)->capture_default_str();
  };
  opt("--urls", o.urls, "blocked URLs")->check(ex::at_least_one());
  opt("--senders", o.senders, "blocked spam senders")->check(ex::at_least_one());
  opt("--queries", o.queries, "lookups per list")->check(ex::at_least_one());
  opt("--fpr", o.fpr, "the filters' target false-positive rate")->check(ex::open_unit_interval());
  opt("--blocked-share", o.blocked_share, "share of lookups for blocked entries")
      ->check(CLI::Range(0.0, 1.0));
  opt("--latency-us", o.latency_us, "added latency of each call to the in-process list");
  opt("--baseline", o.baseline, "lookups timed without the filter (all remote calls)");
  app.add_option("--redis", o.redis,
                 "HOST:PORT: the list is the Redis set bloomery:blocklist:NAME");
  opt("--updates", o.updates, "filter versions shipped after the first")
      ->check(CLI::Range(1, 1000));
  opt("--churn", o.churn, "share of the entries each version replaces")
      ->check(CLI::Range(0.0, 1.0));
  opt("--threads", o.threads, "query threads during the updates")->check(CLI::Range(1, 64));
  app.add_option("--dir", o.dir, "where versions are shipped (default: a temporary directory)");
  return ex::run_example(app, argc, argv, [&] {
    const uint64_t seed = o.common.seed;
    const std::array<blocklist, 2> lists{
        blocklist{"urls", o.urls,
                  [url = ex::url_generator(seed)](uint64_t i) { return url.url(i); }},
        blocklist{"senders", o.senders, [seed](uint64_t i) { return sender(seed, i); }}};
    ex::report rep("bloomery-blocklist", {"urls", "senders"});
    rep.param("queries", ex::count(o.queries));
    rep.param("blocked share", ex::percent(o.blocked_share, 1));
    rep.param("target fpr", ex::percent(o.fpr));
    rep.param("list", ex::text(o.redis.empty()
                                   ? "in process, +" + std::to_string(o.latency_us) + " us per call"
                                   : "redis " + o.redis));
    const bloomery::support::temp_dir tmp("bloomery-blocklist");
    uint64_t failures = 0;
    for (std::size_t i = 0; i < lists.size(); ++i) {
      auto out = [&](const char* key, const char* label, ex::cell c) { rep.set(i, key, label, c); };
      const std::filesystem::path dir = o.dir.empty() ? tmp.path() : std::filesystem::path(o.dir);
      failures += serve_queries(o, lists[i], out);
      failures += update_cycle(o, lists[i], dir / (lists[i].name + ".filter"), out);
    }
    rep.note(
        "A filter 'no' is final; 'possibly' asks the list. Missed: blocked lookups let through.");
    rep.note("Swaps: each thread checks every lookup against the version it holds, and on first");
    rep.note("sight of a version every entry that version added: a half-built filter fails both.");
    rep.print(o.common.json);
    if (failures == 0) return 0;
    std::fprintf(stderr, "bloomery-blocklist: error: %llu blocked lookups let through\n",
                 static_cast<unsigned long long>(failures));
    return 1;
  });
}
