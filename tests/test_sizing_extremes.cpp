// Every sizing function answers or refuses promptly at the edges of its domain: capacities from 1
// to 2^64 - 1, rates from the smallest double to the largest below 1. Each call runs on its own
// thread under a deadline, so a stall fails the test instead of hanging the run (issue 26, D5:
// the blocked filter's sizing once took 273 s for 2^48 keys at 0.9999999999).
#include <gtest/gtest.h>
#include <bloomery/advise.hpp>
#include <bloomery/bloomery.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace bloomery;

namespace {

// A behaviour bound ("never stalls"), not a benchmark: the slowest call here takes milliseconds
// in a release build and well under this even at -O0 under ASan.
constexpr auto deadline = std::chrono::seconds(2);

constexpr std::uint64_t max_u64 = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t two_48 = std::uint64_t{1} << 48;

const std::vector<std::uint64_t> capacities = {1,          2,          3,
                                               1'000,      1'000'000,  1'000'000'000,
                                               1ull << 32, 1ull << 40, (1ull << 40) + 1,
                                               1ull << 47, two_48 - 1, two_48,
                                               two_48 + 1, 1ull << 56, max_u64};

const std::vector<double> rates = {std::numeric_limits<double>::denorm_min(),
                                   std::numeric_limits<double>::min(),
                                   1e-300,
                                   1e-100,
                                   1e-30,
                                   std::ldexp(1.0, -32),
                                   1e-6,
                                   0.01,
                                   0.5,
                                   0.9,
                                   0.999999,
                                   0.9999999999,
                                   1 - 1e-15,
                                   std::nextafter(1.0, 0.0)};

std::string describe(std::uint64_t n, double p) {
  return "n = " + std::to_string(n) + ", p = " + format_value(p);
}

// Runs `call` on a thread of its own and waits for it at most `deadline`. "" when it returned
// normally and its own checks passed, else what went wrong. A call still running at the deadline
// is left to finish detached (it holds nothing of the caller's), so one stall costs one deadline.
std::string run_bounded(const std::function<std::string()>& call) {
  auto task = std::make_shared<std::packaged_task<std::string()>>(call);
  std::future<std::string> done = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (done.wait_for(deadline) != std::future_status::ready) {
    return "still running after " + std::to_string(deadline.count()) + " s";
  }
  try {
    return done.get();
  } catch (const std::invalid_argument&) {
    return "";  // a refusal: how the library rejects parameters it cannot meet
  } catch (const std::exception& e) {
    return std::string("threw something other than std::invalid_argument: ") + e.what();
  }
}

// A plan as a caller would use it: positive bytes, a finite bits-per-key, a rate in [0, 1].
std::string check_plan(const filter_plan& plan) {
  if (plan.bytes == 0) return "a plan of 0 bytes";
  if (!std::isfinite(plan.bits_per_key) || plan.bits_per_key <= 0) {
    return "bits_per_key = " + format_value(plan.bits_per_key);
  }
  if (!(plan.expected_fpr >= 0 && plan.expected_fpr <= 1)) {
    return "expected_fpr = " + format_value(plan.expected_fpr);
  }
  return "";
}

// Sweeps every (capacity, rate) pair through `call`; stops at the first failure, so a stalled
// sizing costs this test one deadline rather than one per pair.
void sweep(const char* what, const std::function<std::string(std::uint64_t, double)>& call) {
  for (const std::uint64_t n : capacities) {
    for (const double p : rates) {
      const std::string why = run_bounded([=] { return call(n, p); });
      if (!why.empty()) {
        ADD_FAILURE() << what << " at " << describe(n, p) << ": " << why;
        return;
      }
    }
  }
}

template <class F>
void sweep_plan() {
  sweep(to_string(F::kind), [](std::uint64_t n, double p) {
    return check_plan(F::plan(target{n, p}));
  });
}

}  // namespace

TEST(SizingExtremes, EveryKindsPlanAnswersOrRefusesPromptly) {
  []<class... Fs>(type_list<Fs...>) { (sweep_plan<Fs>(), ...); }(filter_types{});
}

TEST(SizingExtremes, PlansWithOptionsAnswerOrRefusePromptly) {
  sweep("counting, 8-bit counters", [](std::uint64_t n, double p) {
    return check_plan(counting_bloom_filter::plan({n, p}, {.counter_bits = 8}));
  });
  sweep("scalable, growth 16, tightening 0.5", [](std::uint64_t n, double p) {
    return check_plan(scalable_bloom_filter::plan({n, p}, {.growth = 16, .tightening = 0.5}));
  });
}

// The blocked filter's own search, checked against its model: the answer is a valid size that
// reaches the target.
TEST(SizingExtremes, BlockedSizingReachesItsTargetOrRefuses) {
  sweep("blocked size_for", [](std::uint64_t n, double p) -> std::string {
    const bloom_parameters s = detail::blocked_layout::size_for({n, p});
    if (const std::string why = detail::blocked_layout::check(s.bits, s.hashes); !why.empty()) {
      return why;
    }
    const double fpr = detail::blocked_layout::model_fpr(n, s.bits, s.hashes);
    if (!(fpr <= p)) return "m = " + std::to_string(s.bits) + " models " + format_value(fpr);
    return "";
  });
}

TEST(SizingExtremes, ClassicFormulasAnswerOrRefusePromptly) {
  sweep("optimal_bits, optimal_hashes", [](std::uint64_t n, double p) -> std::string {
    const std::uint64_t m = optimal_bits(n, p);
    const std::uint32_t k = optimal_hashes(m, n);
    const double fpr = false_positive_rate(n, m, k);
    if (!(fpr >= 0 && fpr <= 1)) return "false_positive_rate = " + format_value(fpr);
    return "";
  });
  sweep("bits_per_key, capacity_for", [](std::uint64_t n, double p) -> std::string {
    if (!std::isfinite(bits_per_key(p))) return "bits_per_key = " + format_value(bits_per_key(p));
    (void)capacity_for(std::min(n, two_48), p);
    return "";
  });
}

TEST(SizingExtremes, CuckooParametersAnswerOrRefusePromptly) {
  sweep("cuckoo fingerprint_bits_for, buckets_for", [](std::uint64_t n, double p) {
    (void)cuckoo_filter::fingerprint_bits_for(p);
    (void)cuckoo_filter::buckets_for(n);
    return std::string();
  });
  sweep("scalable cuckoo parameters_for, sub_filter_limit", [](std::uint64_t n, double p) {
    (void)scalable_cuckoo_filter::sub_filter_limit(scalable_cuckoo_filter::parameters_for({n, p}));
    return std::string();
  });
}

TEST(SizingExtremes, AdviseAnswersOrRefusesPromptly) {
  sweep("advise", [](std::uint64_t n, double p) -> std::string {
    for (const advice& a : advise({.capacity = n, .fpr = p})) {
      if (a.suitable) {
        if (const std::string why = check_plan(a.plan); !why.empty()) return a.kind + ": " + why;
      } else if (a.note.empty()) {
        return a.kind + ": unsuitable without a reason";
      }
    }
    return "";
  });
}

// The audit's case: 2^48 keys at 0.9999999999. The blocked filter reaches the rate with k = 1 at
// about 11,800 keys per block.
TEST(SizingExtremes, BlockedFilterForTwoToThe48KeysNearRateOne) {
  const std::string why = run_bounded([]() -> std::string {
    const filter_plan plan = blocked_bloom_filter::plan({two_48, 0.9999999999});
    if (!plan.parameters.ends_with(" k=1")) return "parameters " + plan.parameters;
    if (!(plan.bits_per_key > 0.04 && plan.bits_per_key < 0.05)) {
      return "bits_per_key = " + format_value(plan.bits_per_key);
    }
    return check_plan(plan);
  });
  EXPECT_EQ(why, "");
}

// Parameters out of range are refused promptly too, with a message naming the value.
TEST(SizingExtremes, InvalidTargetsAreRefused) {
  for (const double p : {0.0, 1.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    EXPECT_THROW((void)blocked_bloom_filter::plan({1000, p}), std::invalid_argument);
    EXPECT_THROW((void)advise({.capacity = 1000, .fpr = p}), std::invalid_argument);
  }
  EXPECT_THROW((void)blocked_bloom_filter::plan({0, 0.01}), std::invalid_argument);
  EXPECT_THROW((void)advise({.capacity = 0, .fpr = 0.01}), std::invalid_argument);
}
