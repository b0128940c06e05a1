// Limits: parameters at the edge of what validation accepts ask for more memory than any machine
// has, and must end in bloomery::allocation_error (a std::bad_alloc whose message starts
// "bloomery:" and says how many bytes were asked for), never a bare std::bad_alloc or an abort;
// sizes whose arithmetic would overflow 64 bits are rejected as invalid parameters.
//
// Its own binary because AddressSanitizer aborts on huge requests by default: tests/CMakeLists.txt
// runs it with ASAN_OPTIONS=allocator_may_return_null=1, so the ASan stage checks the same path.
#include <gtest/gtest.h>
#include <bloomery/bloomery.hpp>

#include <cstdint>
#include <limits>
#include <new>
#include <string>

#include "test_support.hpp"

using namespace bloomery;

namespace {

constexpr std::uint64_t max_u64 = std::numeric_limits<std::uint64_t>::max();

// fn must throw allocation_error for exactly `bytes` bytes, catchable as std::bad_alloc.
template <class Fn>
void expect_allocation_error(Fn&& fn, std::uint64_t bytes) {
  try {
    fn();
    ADD_FAILURE() << "no exception: " << bytes << " bytes were allocated";
  } catch (const allocation_error& e) {
    EXPECT_EQ(e.bytes(), bytes);
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("bloomery: cannot allocate " + std::to_string(bytes) + " bytes", 0), 0u)
        << msg;
    const std::bad_alloc& as_std = e;  // existing handlers of std::bad_alloc still catch it
    EXPECT_EQ(std::string(as_std.what()), msg);
  }
}

TEST(Limits, TheLargestBitArrayIsAnAllocationError) {
  constexpr std::uint64_t bits = max_bits;  // 2^48 bits: valid, and 32 TiB
  expect_allocation_error([] { bloom_filter f({.bits = bits, .hashes = 7}); }, bits / 8);
  expect_allocation_error([] { blocked_bloom_filter f({.bits = bits, .hashes = 7}); }, bits / 8);
  // 2^48 counters of 8 bits: 256 TiB.
  expect_allocation_error(
      [] { counting_bloom_filter f({.counters = bits, .hashes = 3, .counter_bits = 8}); }, bits);
}

TEST(Limits, SizingAtTheEdgeIsAnAllocationError) {
  // 2^40 keys at 1%: about 1.2 TiB of bits, under the 2^48-bit maximum.
  const target t{.capacity = std::uint64_t{1} << 40, .fpr = 0.01};
  const filter_plan plan = bloom_filter::plan(t);
  expect_allocation_error([&] { bloom_filter f(t); }, plan.bytes);
  expect_allocation_error([&] { cuckoo_filter f(t); }, cuckoo_filter::plan(t).bytes);
  expect_allocation_error([&] { scalable_bloom_filter f(t); },
                          scalable_bloom_filter::plan(t).bytes);
}

TEST(Limits, AnyFilterPassesTheErrorOn) {
  test::temp_dir dir;
  // A huge file is refused by its header long before memory is asked for.
  bloom_filter small({.capacity = 10, .fpr = 0.01});
  save(small, dir / "f.bf");
  EXPECT_NO_THROW((void)load_any(dir / "f.bf"));
}

TEST(Limits, SizesThatWouldOverflowAreInvalidParameters) {
  test::expect_invalid([] { bloom_filter f({.capacity = max_u64, .fpr = 1e-9}); }, "2^48");
  test::expect_invalid([] { blocked_bloom_filter f({.capacity = max_u64, .fpr = 0.01}); },
                       "capacity");
  test::expect_invalid([] { bloom_filter f({.bits = max_u64, .hashes = 3}); }, "[1, 2^48]");
  test::expect_invalid([] { bloom_filter f({.bits = max_bits + 1, .hashes = 3}); }, "[1, 2^48]");
  test::expect_invalid(
      [] { counting_bloom_filter f({.counters = max_u64, .hashes = 3, .counter_bits = 8}); },
      "counters");
  test::expect_invalid([] { counting_bloom_filter f({.capacity = max_u64, .fpr = 0.01}); }, "2^48");
  test::expect_invalid([] { cuckoo_filter f({.capacity = max_u64, .fpr = 0.01}); }, "2^48");
  test::expect_invalid([] { cuckoo_filter f({.capacity = max_u64 / 2, .fpr = 0.01}); }, "2^48");
  test::expect_invalid([] { cuckoo_filter f({.fingerprint_bits = 16, .buckets = max_u64}); },
                       "buckets");
  test::expect_invalid([] { scalable_bloom_filter f({.capacity = max_u64, .fpr = 0.01}); }, "2^48");
  test::expect_invalid([] { (void)static_filter::plan({.capacity = max_u64, .fpr = 0.01}); },
                       "2^40");
}

}  // namespace
