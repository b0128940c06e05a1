// Concurrent inserts (insert_concurrent) from several threads, with readers running beside them.
// Run under ThreadSanitizer in CI: any data race fails the build.
#include <gtest/gtest.h>
#include <bloomery/bloomery.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace bloomery;

template <class F>
class Concurrency : public ::testing::Test {};
using concurrent_filters = ::testing::Types<bloom_filter, blocked_bloom_filter>;
TYPED_TEST_SUITE(Concurrency, concurrent_filters);

TYPED_TEST(Concurrency, ParallelInsertsLoseNoKey) {
  constexpr std::size_t threads = 4, per_thread = 20'000;
  TypeParam f({.capacity = threads * per_thread, .fpr = 0.01});
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
  TypeParam serial({.capacity = threads * per_thread, .fpr = 0.01});
  for (const auto& ks : keys)
    for (auto k : ks) serial.insert(k);
  EXPECT_EQ(f, serial);
  for (const auto& ks : keys)
    for (auto k : ks) ASSERT_TRUE(f.may_contain(k));
}
