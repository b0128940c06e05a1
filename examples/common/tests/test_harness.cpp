// The example harness: the workloads are what they claim (distinct URLs, Zipf frequencies), the
// counting allocator counts, and the report's two forms agree.
#include <gtest/gtest.h>

#include <bloomery/examples/harness.hpp>
#include <bloomery/examples/processes.hpp>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

namespace ex = bloomery::examples;

TEST(ExampleHarness, UrlsAreDistinctDeterministicAndUrlShaped) {
  const ex::url_generator gen(7, 100);
  std::unordered_set<std::string> seen;
  for (std::uint64_t i = 0; i < 20'000; ++i) {
    const std::string u = gen.url(i);
    EXPECT_TRUE(u.starts_with("http://") || u.starts_with("https://")) << u;
    EXPECT_TRUE(seen.insert(u).second) << "duplicate URL " << u << " at " << i;
  }
  EXPECT_EQ(gen.url(123), ex::url_generator(7, 100).url(123));
  EXPECT_NE(gen.url(123), ex::url_generator(8, 100).url(123));
}

// Each rank's observed count against its expectation P(k) = k^-s / H(n, s), within 5 standard
// deviations of the binomial count (a false alarm about once in 3.5 million per rank).
TEST(ExampleHarness, ZipfFrequenciesMatchTheLaw) {
  for (const double s : {0.0, 0.8, 1.0, 1.3}) {
    const std::uint64_t n = 50, draws = 200'000;
    ex::zipf_sampler z(n, s, 42);
    std::vector<std::uint64_t> counts(n + 1, 0);
    for (std::uint64_t i = 0; i < draws; ++i) {
      const std::uint64_t k = z.next();
      ASSERT_GE(k, 1u);
      ASSERT_LE(k, n);
      ++counts[k];
    }
    double norm = 0;
    for (std::uint64_t k = 1; k <= n; ++k) norm += std::pow(static_cast<double>(k), -s);
    for (std::uint64_t k = 1; k <= n; ++k) {
      const double p = std::pow(static_cast<double>(k), -s) / norm;
      const double expected = p * draws, sd = std::sqrt(draws * p * (1 - p));
      EXPECT_NEAR(static_cast<double>(counts[k]), expected, 5 * sd) << "s=" << s << " k=" << k;
    }
  }
}

TEST(ExampleHarness, ZipfRejectsBadParameters) {
  EXPECT_THROW(ex::zipf_sampler(0, 1.0), std::invalid_argument);
  EXPECT_THROW(ex::zipf_sampler(10, -0.5), std::invalid_argument);
  EXPECT_THROW(ex::zipf_sampler(10, NAN), std::invalid_argument);
}

TEST(ExampleHarness, CountingAllocatorCountsLiveAndPeakBytes) {
  ex::allocation_counter c;
  {
    std::vector<std::uint64_t, ex::counting_allocator<std::uint64_t>> v{
        ex::counting_allocator<std::uint64_t>(c)};
    v.reserve(1000);
    EXPECT_EQ(c.live_bytes, 8000u);
  }
  EXPECT_EQ(c.live_bytes, 0u);
  EXPECT_EQ(c.peak_bytes, 8000u);
}

TEST(ExampleHarness, TallyScoresAgainstTheTruth) {
  ex::answer_tally t;
  t.record(true, true);
  t.record(true, false);
  t.record(false, false);
  t.record(false, false);
  t.record(false, false);
  EXPECT_EQ(t.false_negatives, 0u);
  EXPECT_EQ(t.absent(), 4u);
  EXPECT_DOUBLE_EQ(t.fpr(), 0.25);
  t.record(false, true);
  EXPECT_EQ(t.false_negatives, 1u);
}

TEST(ExampleHarness, ReportPrintsTheSameCellsAsTextAndJson) {
  ex::report r("demo", {"exact", "filter"});
  r.param("keys", ex::count(1'000'000));
  r.row("memory_bytes", "memory", {ex::bytes(48'000'000), ex::bytes(1'200'000)});
  r.row("fpr", "false positives", {ex::percent(0), ex::percent(0.0101)});
  r.row("label", "a \"quoted\" name", {ex::text("a\\b")});
  r.note("one note");
  EXPECT_EQ(r.json(),
            "{\"example\":\"demo\",\"params\":{\"keys\":1000000},\"results\":{\"exact\":{"
            "\"memory_bytes\":48000000,\"fpr\":0,\"label\":\"a\\\\b\"},\"filter\":{"
            "\"memory_bytes\":1200000,\"fpr\":0.0101,\"label\":null}},\"notes\":[\"one note\"]}\n");
  const std::string t = r.text();
  EXPECT_NE(t.find("demo: keys 1,000,000"), std::string::npos) << t;
  EXPECT_NE(t.find("48.00 MB"), std::string::npos) << t;
  EXPECT_NE(t.find("1.010%"), std::string::npos) << t;
  EXPECT_NE(t.find("one note"), std::string::npos) << t;
}

TEST(ExampleHarness, ReportCellsSetOneColumnAtATime) {
  ex::report r("demo", {"a", "b"});
  r.set(1, "x", "x", ex::count(2));
  r.set(0, "y", "y", ex::count(3));
  r.set(0, "x", "x", ex::count(1));
  EXPECT_EQ(r.json(),
            "{\"example\":\"demo\",\"params\":{},\"results\":{\"a\":{\"x\":1,\"y\":3},"
            "\"b\":{\"x\":2,\"y\":null}},\"notes\":[]}\n");
  EXPECT_THROW(r.set(2, "x", "x", ex::count(0)), std::out_of_range);
}

TEST(ExampleHarness, ReadLinesDropsEmptyLinesAndCarriageReturns) {
  std::istringstream in("a\r\n\nb\nc");
  EXPECT_EQ(ex::read_lines(in), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(ExampleHarness, BadArgumentsAreStatusTwo) {
  CLI::App app{"t", "t"};
  ex::common_options o;
  ex::add_common_options(app, o);
  const char* argv[] = {"t", "--seed", "x"};
  EXPECT_EQ(ex::run_example(app, 3, const_cast<char**>(argv), [] { return 0; }), 2);
  CLI::App app2{"t", "t"};
  ex::add_common_options(app2, o);
  const char* ok[] = {"t", "--seed", "5", "--json"};
  EXPECT_EQ(ex::run_example(app2, 4, const_cast<char**>(ok), [] { return 7; }), 7);
  EXPECT_EQ(o.seed, 5u);
  EXPECT_TRUE(o.json);
  CLI::App app3{"t", "t"};
  EXPECT_EQ(ex::run_example(app3, 1, const_cast<char**>(ok),
                            []() -> int { throw std::runtime_error("boom"); }),
            2);
}

TEST(ExampleHarness, ValidatorsNameTheAllowedRange) {
  double fpr = 0;
  std::uint64_t n = 0;
  auto parse = [&](std::vector<const char*> args) {
    CLI::App app{"t", "t"};
    app.add_option("--fpr", fpr)->check(ex::open_unit_interval());
    app.add_option("--n", n)->check(ex::at_least_one());
    args.insert(args.begin(), "t");
    return ex::run_example(app, static_cast<int>(args.size()), const_cast<char**>(args.data()),
                           [] { return 0; });
  };
  EXPECT_EQ(parse({"--fpr", "0.01", "--n", "1"}), 0);
  EXPECT_EQ(fpr, 0.01);
  EXPECT_EQ(n, 1u);
  for (const char* bad : {"0", "1", "1.5", "-0.1", "x", "nan"}) {
    EXPECT_EQ(parse({"--fpr", bad}), 2) << bad;
  }
  for (const char* bad : {"0", "-1", "x", "2y"}) EXPECT_EQ(parse({"--n", bad}), 2) << bad;
}

TEST(ExampleHarness, ProcessesRunAtOnceAndReturnTheirResultsInOrder) {
  struct result {
    unsigned index;
    pid_t pid;
  };
  const auto results = ex::run_in_processes<result>(3, "t", [](unsigned i) {
    return result{i * i, getpid()};
  });
  ASSERT_EQ(results.size(), 3u);
  for (unsigned i = 0; i < 3; ++i) {
    EXPECT_EQ(results[i].index, i * i);
    EXPECT_NE(results[i].pid, getpid());
  }
  EXPECT_NE(results[0].pid, results[1].pid);
  EXPECT_THROW(ex::run_in_processes<int>(2, "t",
                                         [](unsigned i) -> int {
                                           if (i == 1) throw std::runtime_error("boom");
                                           return 0;
                                         }),
               std::runtime_error);
}
