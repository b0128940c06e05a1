// bloomery-crawler: a web crawler's visited-URL set. The crawler takes pages from its frontier and
// checks every link on them against the set of URLs it has visited; most links lead to pages seen
// before. A scalable Bloom filter holds the set in a few bits per URL, starting small and growing
// with the crawl, at the price of a few URLs wrongly taken as visited (false positives) and never
// crawled. An exact std::unordered_set<std::string> beside it counts them and the memory saved.
//   bloomery-crawler [--pages 10000000]   crawl a synthetic web (default 200,000 pages)
//   bloomery-crawler --stdin < urls.txt   dedup a real URL log, one URL per line
//   bloomery-crawler --redis HOST:PORT --workers 4
//       4 crawler processes share one visited set in Redis (the bloomery-redis module)
#include <bloomery/scalable_bloom_filter.hpp>

#include <bloomery/examples/harness.hpp>
#ifdef BLOOMERY_EXAMPLES_HAVE_REDIS
#include <bloomery/examples/processes.hpp>
#include <bloomery/examples/redis_client.hpp>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace {

namespace ex = bloomery::examples;
using u64 = std::uint64_t;

struct options {
  ex::common_options common;
  u64 pages = 200'000, initial_capacity = 10'000;
  unsigned links = 8, workers = 1;
  int worker = -1;  // run only this worker of --workers in this process
  double fpr = 0.01;
  bool from_stdin = false;
  std::string redis, key = "bloomery:crawler:visited", crawled_log;
};

// Link j of page i on the synthetic web, a pure function of (seed, i, j). Link 0 goes to the next
// page; the others go to hubs (home pages, popular articles: low page numbers), to pages of the
// same site nearby, or anywhere.
u64 link(const options& o, u64 page, unsigned j) {
  if (j == 0) return (page + 1) % o.pages;
  u64 state = bloomery::support::splitmix64_at(~o.common.seed, page * o.links + j);
  const u64 kind = ex::uniform_below(state, 10);
  const double u = ex::uniform01(state);
  if (kind < 4) return static_cast<u64>(u * u * u * u * static_cast<double>(o.pages));
  if (kind < 7) return (page + 1 + ex::uniform_below(state, 64)) % o.pages;
  return ex::uniform_below(state, o.pages);
}

struct crawl_counts {
  u64 checked = 0;  // links checked
  u64 crawled = 0;  // links the visited set reported new: pages crawled
  double seconds = 0;
};

// The crawl of the synthetic web, or of each line of standard input. Pages come from the frontier
// and, whenever it runs dry, from this crawler's share of the sitemap, pages [seed, seed_end), so
// every page is found. check(urls, is_new) is the visited-set check of a batch: is_new[i] says
// urls[i] was not visited before (and now is). Each URL crawled goes to the file `log`, if named.
template <class Check>
crawl_counts crawl(const options& o, u64 seed, u64 seed_end, Check&& check,
                   const std::string& log) {
  const ex::url_generator web(o.common.seed);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(nullptr, std::fclose);
  if (!log.empty() && !(out.reset(std::fopen(log.c_str(), "w")), out)) {
    throw std::runtime_error("cannot write '" + log + "'");
  }
  std::deque<u64> frontier;
  std::vector<std::string> urls;
  std::vector<u64> pages;  // on the synthetic web, the page of each URL
  const auto next_batch = [&] {
    urls.clear();
    pages.clear();
    std::string line;
    while (o.from_stdin && urls.size() < 4096 && std::getline(std::cin, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) urls.push_back(std::move(line));
    }
    if (std::cin.bad()) throw std::runtime_error("read error on standard input");
    for (int n = 0; n < 256 && !frontier.empty(); ++n, frontier.pop_front()) {
      for (unsigned j = 0; j < o.links; ++j) {
        pages.push_back(link(o, frontier.front(), j));
        urls.push_back(web.url(pages.back()));
      }
    }
    const bool dry = urls.empty();
    for (; dry && !o.from_stdin && seed < seed_end && pages.size() < 256; ++seed) {
      pages.push_back(seed);
      urls.push_back(web.url(seed));
    }
  };
  next_batch();
  crawl_counts c;
  const ex::stopwatch clock;
  std::vector<char> is_new;
  while (!urls.empty()) {
    is_new.assign(urls.size(), 0);
    check(urls, is_new);
    c.checked += urls.size();
    for (std::size_t i = 0; i < urls.size(); ++i) {
      if (!is_new[i]) continue;
      ++c.crawled;
      if (!o.from_stdin) frontier.push_back(pages[i]);  // "fetch" it: its links come next
      if (out) std::fprintf(out.get(), "%s\n", urls[i].c_str());
    }
    next_batch();
  }
  if (c.checked == 0) throw std::runtime_error("standard input has no URLs");
  c.seconds = clock.seconds();
  return c;
}

// The exact baseline: every URL's bytes in a hash set, each of its allocations counted.
using counted_string =
    std::basic_string<char, std::char_traits<char>, ex::counting_allocator<char>>;
struct url_hash {
  using is_transparent = void;  // looked up by string_view: nothing allocated for a URL seen before
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using exact_set = std::unordered_set<counted_string, url_hash, std::equal_to<>,
                                     ex::counting_allocator<counted_string>>;

// One crawl with the scalable filter as the visited set, scored against the exact set.
int run_local(const options& o) {
  bloomery::scalable_bloom_filter filter({.capacity = o.initial_capacity, .fpr = o.fpr});
  ex::allocation_counter exact_bytes;
  exact_set exact(0, url_hash{}, {}, ex::counting_allocator<counted_string>(exact_bytes));
  ex::answer_tally tally;
  double filter_s = 0, exact_s = 0;
  const crawl_counts c = crawl(
      o, 0, o.pages,
      [&](const std::vector<std::string>& urls, std::vector<char>& is_new) {
        ex::stopwatch t;
        for (std::size_t i = 0; i < urls.size(); ++i) {
          is_new[i] = filter.check_and_insert(urls[i]) == bloomery::insert_result::inserted;
        }
        filter_s += t.seconds();
        t.restart();
        std::vector<char> truly_new(urls.size());
        for (std::size_t i = 0; i < urls.size(); ++i) {
          truly_new[i] = !exact.contains(std::string_view(urls[i])) &&
                         exact.emplace(urls[i], exact.get_allocator()).second;
        }
        exact_s += t.seconds();
        for (std::size_t i = 0; i < urls.size(); ++i) tally.record(!is_new[i], !truly_new[i]);
      },
      o.crawled_log);

  const bloomery::filter_stats st = filter.stats();  // its memory, fill and estimated rate
  ex::report r("crawler", {"unordered_set", "scalable bloom"});
  if (!o.from_stdin) {
    r.param("pages", ex::count(o.pages));
    r.param("links per page", ex::count(o.links));
    r.param("seed", ex::count(o.common.seed));
  }
  r.param("target fpr", ex::percent(o.fpr));
  r.param("initial capacity", ex::count(o.initial_capacity));
  const u64 found = exact.size(), skipped = tally.false_positives;
  const auto per_url = [&](u64 b) { return ex::number(static_cast<double>(b) / found, "%.2f"); };
  const auto rate = [&](double s) { return ex::per_second(static_cast<double>(c.checked) / s); };
  r.row("memory_bytes", "memory", {ex::bytes(exact_bytes.live_bytes), ex::bytes(st.size_in_bytes)});
  r.row("bytes_per_url", "bytes per URL",
        {per_url(exact_bytes.live_bytes), per_url(st.size_in_bytes)});
  r.row("urls_checked", "URLs checked", {ex::count(c.checked), ex::count(c.checked)});
  r.row("distinct_urls", "distinct URLs found", {ex::count(found), ex::count(found)});
  r.row("pages_crawled", "pages crawled", {ex::count(found), ex::count(c.crawled)});
  r.row("false_positives", "wrongly skipped as visited", {ex::count(0), ex::count(skipped)});
  r.row("false_negatives", "reported new twice", {ex::count(0), ex::count(tally.false_negatives)});
  r.row("never_crawled", "found, never crawled", {ex::count(0), ex::count(found - c.crawled)});
  r.row("measured_fpr", "false-positive rate", {ex::percent(0), ex::percent(tally.fpr())});
  r.row("estimated_fpr", "estimated from fill", {ex::none(), ex::percent(st.estimated_fpr)});
  r.row("sub_filters", "sub-filters", {ex::none(), ex::count(filter.sub_filter_count())});
  r.row("checks_per_second", "checks per second", {rate(exact_s), rate(filter_s)});
  r.note("Each URL wrongly skipped is a page found but never crawled; the exact set crawls all.");
  r.print(o.common.json);
  return tally.false_negatives == 0 ? 0 : 1;
}

#ifdef BLOOMERY_EXAMPLES_HAVE_REDIS
// Worker w of a crawl sharing its visited set through Redis: BF.ADD replies 1 for a URL no one has
// visited, and the worker that gets that 1 crawls the page. Its share of the sitemap is the w-th.
crawl_counts run_worker(const options& o, unsigned w) {
  ex::redis_client redis(o.redis);
  try {  // the first worker creates the filter; the others find it there
    redis.command({"BF.RESERVE", o.key, bloomery::support::fmt("%.17g", o.fpr),
                   std::to_string(o.initial_capacity)});
  } catch (const std::runtime_error& e) {
    if (!std::string_view(e.what()).ends_with("item exists")) throw;
  }
  std::vector<std::vector<std::string_view>> commands;
  const auto check = [&](const std::vector<std::string>& urls, std::vector<char>& is_new) {
    commands.clear();
    for (const auto& u : urls) commands.push_back({"BF.ADD", o.key, u});
    const std::vector<ex::redis_reply> replies = redis.pipeline(commands);  // one round trip
    for (std::size_t i = 0; i < urls.size(); ++i) is_new[i] = replies[i].integer == 1;
  };
  const std::string log = o.crawled_log.empty() || o.workers == 1
                              ? o.crawled_log
                              : o.crawled_log + "." + std::to_string(w);
  return crawl(o, o.pages * w / o.workers, o.pages * (w + 1) / o.workers, check, log);
}

// Runs the workers, each in a process of its own (or only --worker, in this one), and reports.
int run_redis(const options& o) {
  ex::redis_client redis(o.redis);  // fails here, once, if the server cannot be reached
  std::vector<crawl_counts> counts =
      o.worker >= 0 || o.workers == 1
          ? std::vector{run_worker(o, static_cast<unsigned>(std::max(o.worker, 0)))}
          : ex::run_in_processes<crawl_counts>(o.workers, "bloomery-crawler",
                                               [&](unsigned w) { return run_worker(o, w); });
  std::vector<std::string> columns;
  for (unsigned w = 0; w < counts.size(); ++w) {
    columns.push_back("worker " + std::to_string(o.worker >= 0 ? o.worker : w));
  }
  if (counts.size() > 1) {
    columns.emplace_back("all");
    crawl_counts all;
    for (const auto& c : counts) {
      all = {all.checked + c.checked, all.crawled + c.crawled, std::max(all.seconds, c.seconds)};
    }
    counts.push_back(all);
  }
  const auto info = [&](const char* field) {  // the shared filter as the server has it
    return static_cast<u64>(redis.command({"BF.INFO", o.key, field}).elements.at(0).integer);
  };
  ex::report r("crawler", columns);
  r.param("redis", ex::text(o.redis));
  r.param("key", ex::text(o.key));
  r.param("workers", ex::count(o.workers));
  r.param("filter memory", ex::bytes(info("SIZE")));
  r.param("sub-filters", ex::count(info("FILTERS")));
  r.param("items inserted", ex::count(info("ITEMS")));
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const crawl_counts& c = counts[i];
    r.set(i, "urls_checked", "URLs checked (BF.ADD)", ex::count(c.checked));
    r.set(i, "pages_crawled", "pages crawled (replied 1)", ex::count(c.crawled));
    r.set(i, "checks_per_second", "checks per second", ex::per_second(c.checked / c.seconds));
  }
  r.note("A page is crawled by the one worker whose BF.ADD added it: never by two.");
  r.note("Once every worker has finished, items inserted = pages crawled by all of them.");
  r.print(o.common.json);
  return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  options o;
  CLI::App app("A web crawler's visited-URL set: a scalable Bloom filter against an exact set.",
               "bloomery-crawler");
  app.option_defaults()->always_capture_default();
  ex::add_common_options(app, o.common);
  app.add_option("--pages", o.pages, "pages of the synthetic web (full size: 10000000)")
      ->check(ex::at_least_one());
  app.add_option("--links", o.links, "links on each page")->check(CLI::Range(1u, 1000u));
  app.add_option("--initial-capacity", o.initial_capacity, "URLs the filter is sized for at first")
      ->check(ex::at_least_one());
  app.add_option("--fpr", o.fpr, "the filter's target false-positive rate")
      ->check(ex::open_unit_interval());
  app.add_flag("--stdin", o.from_stdin, "dedup the URLs of standard input, one per line");
  app.add_option("--redis", o.redis, "share the visited set through bloomery-redis at HOST:PORT");
  app.add_option("--key", o.key, "the Redis key of the shared visited set");
  app.add_option("--workers", o.workers, "crawler processes sharing the visited set (--redis)")
      ->check(CLI::Range(1u, 64u));
  app.add_option("--worker", o.worker, "run only worker I of --workers (one process per worker)")
      ->check(CLI::Range(0, 63));
  app.add_option("--crawled-log", o.crawled_log,
                 "write the URLs crawled to FILE (FILE.W: worker W)");
  return ex::run_example(app, argc, argv, [&] {
    if (o.redis.empty() && (o.workers > 1 || o.worker >= 0)) {
      throw std::invalid_argument("--workers and --worker need --redis, the shared visited set");
    }
    if (o.worker >= static_cast<int>(o.workers)) {
      throw std::invalid_argument("--worker " + std::to_string(o.worker) +
                                  " is not below --workers");
    }
    if (o.from_stdin && o.workers > 1 && o.worker < 0) {
      throw std::invalid_argument("--stdin is one log: run one process per log, with --worker");
    }
    if (o.redis.empty()) return run_local(o);
#ifdef BLOOMERY_EXAMPLES_HAVE_REDIS
    return run_redis(o);
#else
    throw std::invalid_argument("--redis is not built in: hiredis (libhiredis-dev) was missing");
#endif
  });
}
