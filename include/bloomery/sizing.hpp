// Sizing: the classic Bloom filter formulas, in one place. docs/formulas.md derives each one.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <numbers>
#include <sstream>
#include <stdexcept>
#include <string>

namespace bloomery {

// The largest bit array any bloomery filter accepts: 2^48 bits (32 TiB) keeps every position
// computation exact in 64-bit arithmetic with a wide margin.
inline constexpr std::uint64_t max_bits = std::uint64_t{1} << 48;
// More probes than this never pays: k = 255 is optimal only for p below 1e-76.
inline constexpr std::uint32_t max_hashes = 255;

// What a filter is sized for: `capacity` keys at false-positive rate `fpr`. Every filter accepts
// one: `bloom_filter f({.capacity = 1'000'000, .fpr = 0.01});`.
struct target {
  std::uint64_t capacity = 0;
  double fpr = 0.0;
};

// What a filter of some kind costs for a target, computed without building it. Every filter
// type has `static filter_plan plan(target)`; advise() ranks kinds by these numbers.
struct filter_plan {
  std::uint64_t bytes = 0;  // size_in_bytes() of the filter as built
  double bits_per_key = 0;  // 8 * bytes / capacity
  double expected_fpr = 0;  // the kind's own FPR model at full capacity
  std::string parameters;   // e.g. "m=9585059 k=7"
};

namespace detail {

inline constexpr double ln2 = std::numbers::ln2;
inline constexpr double ln2_squared = std::numbers::ln2 * std::numbers::ln2;

template <class T>
std::string format_value(T value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

// "<what> differ (a vs b)" when a and b differ, else "": the merges' incompatibility messages.
template <class T>
std::string differs(const char* what, const T& a, const T& b) {
  if (a == b) return {};
  return std::string(what) + " differ (" + format_value(a) + " vs " + format_value(b) + ")";
}
// The first non-empty message of a list of checks, or "".
inline std::string first_difference(std::initializer_list<std::string> whys) {
  for (const std::string& why : whys) {
    if (!why.empty()) return why;
  }
  return {};
}

[[noreturn]] inline void invalid(const std::string& what, const std::string& value,
                                 const std::string& allowed) {
  throw std::invalid_argument("bloomery: " + what + " = " + value + " is invalid; " + allowed);
}

inline void check_fpr(double p, const char* name = "fpr") {
  // Written so that NaN fails too: every comparison with NaN is false.
  if (!(p > 0.0 && p < 1.0)) invalid(name, format_value(p), "allowed range is (0, 1), exclusive");
}

inline void check_capacity(std::uint64_t n, const char* name = "capacity") {
  if (n == 0) invalid(name, "0", "it must be at least 1");
}

inline void check_bits(std::uint64_t m, const char* name = "bits") {
  if (m == 0 || m > max_bits) {
    invalid(name, std::to_string(m), "allowed range is [1, 2^48]");
  }
}

// A modelled FPR as a filter's target: inside (0, 1), as files require. Explicit parameters can
// model a rate that rounds to exactly 1 (255 hashes into one bit), which a saved file could then
// not be loaded with (found by fuzz/diff_bloom).
inline double as_target_fpr(double p) noexcept {
  return std::min(std::max(p, std::numeric_limits<double>::min()), std::nextafter(1.0, 0.0));
}

inline void check_hashes(std::uint64_t k, const char* name = "hashes") {
  if (k == 0 || k > max_hashes) {
    invalid(name, std::to_string(k), "allowed range is [1, " + std::to_string(max_hashes) + "]");
  }
}

// The chance that at least one of n independent sub-filters, sub-filter i with false-positive
// rate rate_of(i), answers "yes": 1 - prod(1 - p_i), summed as logs so that tiny rates keep their
// precision. 0 - expm1, not -expm1: with only zero rates it is +0, never -0 (printed "-0").
template <class RateOf>
double compound_fpr(std::size_t n, RateOf&& rate_of) noexcept {
  double log_none = 0.0;  // log of the chance that no sub-filter answers "yes"
  for (std::size_t i = 0; i < n; ++i) log_none += std::log1p(-rate_of(i));
  return 0.0 - std::expm1(log_none);
}

}  // namespace detail

// The argument checks the library runs, for tools and integrations that validate their own input
// with the same messages: each throws std::invalid_argument naming the value and the allowed range.
using detail::check_bits;
using detail::check_capacity;
using detail::check_fpr;
using detail::check_hashes;
// A double in 17 significant digits, enough to read back as the same value ("0.01", "0.85").
using detail::format_value;

// Bits per key of an optimally configured classic filter: -ln p / (ln 2)^2 (9.585 at p = 1%).
inline double bits_per_key(double p) {
  detail::check_fpr(p);
  return -std::log(p) / detail::ln2_squared;
}

// m = ceil(-n ln p / (ln 2)^2), the smallest bit count that reaches p for n keys.
inline std::uint64_t optimal_bits(std::uint64_t n, double p) {
  detail::check_capacity(n);
  detail::check_fpr(p);
  const double m = std::ceil(static_cast<double>(n) * bits_per_key(p));
  if (!(m <= static_cast<double>(max_bits))) {
    throw std::invalid_argument("bloomery: capacity = " + std::to_string(n) +
                                " at fpr = " + detail::format_value(p) + " needs " +
                                detail::format_value(m) + " bits, more than the maximum 2^48");
  }
  return static_cast<std::uint64_t>(m);
}

// k = round((m / n) ln 2), at least 1; the k that minimizes the false-positive rate.
inline std::uint32_t optimal_hashes(std::uint64_t m, std::uint64_t n) {
  detail::check_bits(m, "m");
  detail::check_capacity(n, "n");
  const double k = std::round(static_cast<double>(m) / static_cast<double>(n) * detail::ln2);
  if (k > max_hashes) {
    throw std::invalid_argument("bloomery: m/n = " + detail::format_value(double(m) / double(n)) +
                                " bits per key would need " + detail::format_value(k) +
                                " hashes, more than the maximum " + std::to_string(max_hashes));
  }
  return k < 1 ? 1u : static_cast<std::uint32_t>(k);
}

// Expected false-positive rate after n distinct insertions into m bits with k probes:
// (1 - e^(-k n / m))^k. n = 0 is allowed and gives 0.
inline double false_positive_rate(std::uint64_t n, std::uint64_t m, std::uint32_t k) {
  detail::check_bits(m, "m");
  detail::check_hashes(k, "k");
  const double fill =
      -std::expm1(-static_cast<double>(k) * static_cast<double>(n) / static_cast<double>(m));
  return std::pow(fill, static_cast<double>(k));
}

// The most keys m bits can hold at false-positive rate p with optimal k: floor(m (ln 2)^2 / -ln p),
// saturated at 2^64 - 1 (a rate near 1 needs a tiny fraction of a bit per key).
inline std::uint64_t capacity_for(std::uint64_t m, double p) {
  detail::check_bits(m, "m");
  const double keys = std::floor(static_cast<double>(m) / bits_per_key(p));
  return keys < 0x1p64 ? static_cast<std::uint64_t>(keys) : UINT64_MAX;
}

// The false-positive rate of a filter whose bits are `fill` set: fill^k. A query for an absent
// key is a false positive exactly when all k probed bits are set.
inline double fpr_from_fill(double fill, std::uint32_t k) {
  return std::pow(fill, static_cast<double>(k));
}

// The number of distinct keys that best explains X set bits out of m: -(m/k) ln(1 - X/m)
// (Swamidass & Baldi). Infinite when every bit is set.
inline double count_from_fill(std::uint64_t set_bits, std::uint64_t m, std::uint32_t k) {
  if (set_bits >= m) return std::numeric_limits<double>::infinity();
  return -static_cast<double>(m) / static_cast<double>(k) *
         std::log1p(-static_cast<double>(set_bits) / static_cast<double>(m));
}

}  // namespace bloomery
