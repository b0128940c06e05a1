// Concurrent inserts (insert_concurrent) from several threads, with readers running beside them,
// on every query path that ships (the blocked filter's AVX2 and portable probes); concurrent
// static filter builds; and concurrent saves. Run under ThreadSanitizer in CI: any data race fails
// the build.
#include <gtest/gtest.h>
#include <bloomery/bloomery.hpp>

#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace bloomery;

template <class F>
class Concurrency : public ::testing::Test {};
using concurrent_filters = ::testing::Types<bloom_filter, blocked_bloom_filter>;
TYPED_TEST_SUITE(Concurrency, concurrent_filters);

template <class F>
void parallel_inserts_lose_no_key() {
  constexpr std::size_t threads = 4, per_thread = 20'000;
  F f({.capacity = threads * per_thread, .fpr = 0.01});
  f.share_for_concurrent_inserts();  // queries run beside the inserts below
  std::vector<std::vector<std::uint64_t>> keys;
  for (std::size_t t = 0; t < threads; ++t) keys.push_back(test::present_keys(per_thread, 100 + t));

  std::atomic<bool> done{false};
  std::atomic<std::size_t> reader_hits{0};
  // A reader queries keys the writers have finished, and absent ones, while writers run.
  std::thread reader([&] {
    const auto absent = test::absent_keys(1000);
    while (!done.load()) {
      std::size_t hits = 0;
      for (auto k : absent) hits += f.may_contain(k);
      reader_hits += hits;
      (void)f.fill_ratio();
    }
  });
  std::vector<std::thread> writers;
  for (std::size_t t = 0; t < threads; ++t) {
    writers.emplace_back([&, t] {
      for (auto k : keys[t]) f.insert_concurrent(k);
      // Everything this thread inserted is visible to itself at once.
      for (auto k : keys[t]) EXPECT_TRUE(f.may_contain(k));
    });
  }
  for (auto& w : writers) w.join();
  done = true;
  reader.join();

  EXPECT_EQ(f.inserted(), threads * per_thread);
  // Bit-identical to a single-threaded build: OR is order-independent.
  F serial({.capacity = threads * per_thread, .fpr = 0.01});
  for (const auto& ks : keys)
    for (auto k : ks) serial.insert(k);
  EXPECT_EQ(f, serial);
  for (const auto& ks : keys)
    for (auto k : ks) ASSERT_TRUE(f.may_contain(k));
}

TYPED_TEST(Concurrency, ParallelInsertsLoseNoKey) {
  parallel_inserts_lose_no_key<TypeParam>();
}

// The blocked filter's probes, each with queries beside insert_concurrent: the SIMD ones are what
// ship on x86-64, so ThreadSanitizer must see every one this CPU runs (it once forced the portable
// one).
TEST(Concurrency, BlockedFilterEveryProbePathIsRaceFree) {
  for (const simd_path p : {simd_path::portable, simd_path::avx2, simd_path::avx512}) {
    if (p > best_simd_path()) continue;
    SCOPED_TRACE(to_string(p));
    ASSERT_TRUE(select_simd_path(p));
    EXPECT_EQ(simd_path_in_use(), p);
    parallel_inserts_lose_no_key<blocked_bloom_filter>();
  }
  force_portable_simd(false);
}

TEST(Concurrency, SanitizerBuildsTakeTheShippedProbePath) {
  EXPECT_EQ(simd_path_in_use(), best_simd_path());
  EXPECT_EQ(simd_in_use(), simd_available());
}

TEST(Concurrency, ShareIsAPropertyOfTheObjectNotTheFile) {
  blocked_bloom_filter f({.capacity = 100, .fpr = 0.01});
  EXPECT_FALSE(f.shared_for_concurrent_inserts());
  f.share_for_concurrent_inserts();
  EXPECT_TRUE(f.shared_for_concurrent_inserts());
  f.insert(7);
  const auto copy = deserialize<blocked_bloom_filter>(serialize(f));
  EXPECT_FALSE(copy.shared_for_concurrent_inserts());
  EXPECT_EQ(copy, f);
  f.share_for_concurrent_inserts(false);
  EXPECT_FALSE(f.shared_for_concurrent_inserts());
}

// Static filters built on several threads at once: each thread keeps its own construction scratch
// between builds, so concurrent builds neither race nor change each other's result.
TEST(Concurrency, StaticBuildsOnSeveralThreadsEqualSerialBuilds) {
  constexpr std::size_t threads = 4, builds = 3;
  std::vector<std::vector<std::uint64_t>> keys;
  std::vector<static_filter> serial;
  for (std::size_t i = 0; i < threads * builds; ++i) {
    keys.push_back(test::present_keys(2000 + 3000 * i, 300 + i));
    serial.push_back(static_filter::build(keys.back(), i % 2 == 0 ? 0.01 : 1.0 / 256));
  }
  std::vector<static_filter> parallel(keys.size());
  std::vector<std::thread> workers;
  for (std::size_t t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (std::size_t b = 0; b < builds; ++b) {
        const std::size_t i = t * builds + b;
        parallel[i] = static_filter::build(keys[i], i % 2 == 0 ? 0.01 : 1.0 / 256);
      }
    });
  }
  for (auto& w : workers) w.join();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(parallel[i], serial[i]) << i;
    for (auto k : keys[i]) ASSERT_TRUE(parallel[i].may_contain(k));
  }
}

// The umask as the kernel reports it, read without changing it (umask(2) can only be read by
// setting it, which is the race save() must not have).
static std::string current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0) return line;
  }
  return "no Umask line";
}

// Saves from several threads must neither touch the process umask (another thread creating a
// file in that window would get it world-writable) nor give their files other bits than
// 0666 minus the umask.
TEST(Concurrency, ConcurrentSavesLeaveTheUmaskAndModesAlone) {
  const mode_t old_mask = ::umask(022);
  const std::string expected = current_umask();
  test::temp_dir dir("bloomery-saves");
  std::atomic<bool> done{false};
  std::atomic<std::size_t> umask_changes{0};
  std::thread watcher([&] {
    while (!done.load()) {
      if (current_umask() != expected) ++umask_changes;
    }
  });
  constexpr int threads = 3, per_thread = 150;
  std::vector<std::thread> savers;
  for (int t = 0; t < threads; ++t) {
    savers.emplace_back([&, t] {
      bloom_filter f({.capacity = 10, .fpr = 0.01});
      for (int i = 0; i < per_thread; ++i) {
        f.insert(i);
        std::string name = "f";  // built piece by piece: GCC 12 warns falsely (-Wrestrict) on +
        name.append(std::to_string(t)).append("-").append(std::to_string(i));
        save(f, dir / name);
      }
    });
  }
  for (auto& s : savers) s.join();
  done = true;
  watcher.join();
  const mode_t after = ::umask(old_mask);
  EXPECT_EQ(after, mode_t{022});
  EXPECT_EQ(umask_changes.load(), 0u);
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    ++files;
    struct stat st {};
    ASSERT_EQ(::stat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, mode_t{0644}) << e.path();
  }
  EXPECT_EQ(files, std::size_t{threads * per_thread});  // and no temporary files left behind
}
