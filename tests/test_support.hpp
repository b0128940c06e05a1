// Helpers the filter tests share: FPR tolerances, exception checks, batched-query and damaged-file
// checks. Key streams and temporary directories are the support target's (support/).
#pragma once

#include <gtest/gtest.h>
#include <bloomery/file.hpp>
#include <bloomery/format.hpp>
#include <bloomery/hash.hpp>
#include <bloomery/sizing.hpp>
#include <bloomery/support/keys.hpp>
#include <bloomery/support/temp_dir.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace bloomery::test {

// The key streams and the temporary directory come from the shared support target (support/).
using support::absent_keys;
using support::present_keys;
using support::splitmix64;
using support::temp_dir;

// Tolerance for a measured false-positive rate: 5 standard deviations of the binomial sampling
// noise over `probes` queries, combined with the spread of a filter's true FPR around the formula
// (the fill X/m of one filter varies; fpr = fill^k, so its relative spread is k * sd(fill)/fill).
inline double fpr_tolerance(double p, std::uint64_t probes, std::uint64_t m, std::uint32_t k,
                            std::uint64_t n) {
  const double q =
      std::exp(-static_cast<double>(k) * static_cast<double>(n) / static_cast<double>(m));
  const double fill = 1 - q;
  const double sd_fill = std::sqrt(q * (1 - q) / static_cast<double>(m));  // conservative
  const double sd_model = p * k * sd_fill / fill;
  const double sd_sampling = std::sqrt(p * (1 - p) / static_cast<double>(probes));
  return 5 * std::sqrt(sd_model * sd_model + sd_sampling * sd_sampling);
}

// The failure probability of each statistical check that uses the bounds below: a correct filter
// exceeds one by chance with probability at most 1e-9, so a suite of a few thousand such checks
// fails spuriously less than once in 10^5 runs.
inline constexpr double check_failure_probability = 1e-9;

// log P(X = k) for X ~ Binomial(trials, p), 0 < p < 1.
inline double binomial_log_pmf(std::uint64_t trials, double p, std::uint64_t k) {
  const auto n = static_cast<double>(trials), x = static_cast<double>(k);
  return std::lgamma(n + 1) - std::lgamma(x + 1) - std::lgamma(n - x + 1) + x * std::log(p) +
         (n - x) * std::log1p(-p);
}

// The smallest count c with P(X > c) <= delta for X ~ Binomial(trials, p), summed exactly from
// the far tail (40 standard deviations out, where the terms are negligible next to delta).
inline std::uint64_t binomial_upper_bound(std::uint64_t trials, double p,
                                          double delta = check_failure_probability) {
  if (p <= 0) return 0;
  if (p >= 1) return trials;
  const double n = static_cast<double>(trials), sd = std::sqrt(n * p * (1 - p));
  auto k = static_cast<std::uint64_t>(std::min(n, std::ceil(n * p + 40 * sd + 40)));
  for (double tail = 0;; --k) {
    tail += std::exp(binomial_log_pmf(trials, p, k));  // P(X >= k)
    if (tail > delta || k == 0) return k;
  }
}

// The largest count c with P(X < c) <= delta for X ~ Binomial(trials, p).
inline std::uint64_t binomial_lower_bound(std::uint64_t trials, double p,
                                          double delta = check_failure_probability) {
  if (p <= 0) return 0;
  if (p >= 1) return trials;
  const double n = static_cast<double>(trials), sd = std::sqrt(n * p * (1 - p));
  auto k = static_cast<std::uint64_t>(std::max(0.0, std::floor(n * p - 40 * sd - 40)));
  for (double head = 0;; ++k) {
    head += std::exp(binomial_log_pmf(trials, p, k));  // P(X <= k)
    if (head > delta || k == trials) return k;
  }
}

// The message of the exception E that fn throws, or "no exception" (so a check on the message
// fails readably when nothing was thrown).
template <class E, class Fn>
std::string message_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  return "no exception";
}

// Expects fn to throw E with a message that contains needle.
template <class E, class Fn>
void expect_throw_with(Fn&& fn, const std::string& needle) {
  const std::string msg = message_of<E>(fn);
  EXPECT_NE(msg.find(needle), std::string::npos) << "expected '" << needle << "' in: " << msg;
}

// Expects fn to reject a parameter: std::invalid_argument with a message that contains needle.
template <class Fn>
void expect_invalid(Fn&& fn, const std::string& needle) {
  expect_throw_with<std::invalid_argument>(fn, needle);
}

// A copy read back from a file or an image is the same filter: equal, with the same counts,
// sizing and hashing.
template <class F>
void expect_same_filter(const F& copy, const F& f) {
  EXPECT_EQ(copy, f);
  EXPECT_EQ(copy.inserted(), f.inserted());
  EXPECT_EQ(copy.capacity(), f.capacity());
  EXPECT_EQ(copy.target_fpr(), f.target_fpr());
  EXPECT_EQ(copy.hash(), f.hash());
}

// The file that save(f, path) wrote holds exactly serialize(f), which deserializes to f again.
template <class F>
void expect_file_holds_image(const F& f, const std::filesystem::path& path) {
  const auto bytes = serialize(f);
  EXPECT_EQ(read_file(path), bytes);
  EXPECT_EQ(deserialize<F>(bytes), f);
}

// Saves f, loads and maps the file back: true when the loaded copy equals f and both copies
// answer "possibly present" for every key (`has(filter_or_view, key)` asks one), the mapped one
// also through may_contain_many where the keys are of one type. For property tests, which assert
// the result.
template <class F, class Keys, class Has>
bool files_keep_every_key(const F& f, const Keys& keys, Has&& has) {
  temp_dir dir;
  save(f, dir / "f.bin");
  const auto loaded = load<F>(dir / "f.bin");
  const auto mapped = map_file<F>(dir / "f.bin");
  if (!(loaded == f)) return false;
  for (const auto& k : keys) {
    if (!has(loaded, k) || !has(*mapped, k)) return false;
  }
  std::vector<bool> out(std::size(keys));
  if constexpr (hashable_key<std::ranges::range_value_t<Keys>>) {
    if (mapped->may_contain_many(keys, out) != std::size(keys)) return false;
  }
  return true;
}

// Inserts far more keys than a tiny filter has bits (or counters): every one is set, and the
// estimates saturate instead of overflowing.
template <class F>
void expect_estimates_saturate(F f) {
  for (std::uint64_t i = 0; i < 10'000; ++i) f.insert(i);
  EXPECT_EQ(f.fill_ratio(), 1.0);
  EXPECT_EQ(f.approximate_count(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_TRUE(f.is_over_capacity());
  EXPECT_EQ(f.estimated_fpr(), 1.0);
}

// Checks may_contain_many(probe) against may_contain key by key (failing at the first key that
// differs) and that its return value counts the positives; returns that count.
template <class F, class Keys>
std::size_t expect_batched_matches_single(const F& f, const Keys& probe) {
  std::vector<bool> out(std::size(probe));
  const std::size_t positives = f.may_contain_many(probe, out);
  std::size_t expected = 0;
  for (std::size_t i = 0; i < std::size(probe); ++i) {
    if (out[i] != f.may_contain(probe[i])) {
      ADD_FAILURE() << "may_contain_many differs from may_contain at key " << i;
      break;
    }
    expected += out[i];
  }
  EXPECT_EQ(positives, expected);
  return positives;
}

// The share of `probes` absent keys (absent_keys(probes)) that f answers "possibly present" for,
// through may_contain_many.
template <class F>
double measured_fpr(const F& f, std::uint64_t probes) {
  const auto absent = absent_keys(probes);
  std::vector<bool> out(probes);
  return static_cast<double>(f.may_contain_many(absent, out)) / static_cast<double>(probes);
}

// Measures the FPR of f (holding n keys in m bits or counters probed k times) over `probes`
// absent keys and checks it against the classic formula for that m and k, within fpr_tolerance,
// and against the filter's own estimate from its state, within 5 sigma of sampling noise alone.
// Returns the measured rate.
template <class F>
double expect_classic_fpr(const F& f, std::uint64_t n, std::uint64_t m, std::uint32_t k,
                          std::uint64_t probes) {
  const double measured = measured_fpr(f, probes);
  const double theory = false_positive_rate(n, m, k);
  EXPECT_NEAR(measured, theory, fpr_tolerance(theory, probes, m, k, n)) << "n=" << n;
  EXPECT_NEAR(measured, f.estimated_fpr(), 5 * std::sqrt(theory / static_cast<double>(probes)));
  return measured;
}

// expect_batched_matches_single on `count` absent keys followed by `count` keys the filter holds,
// keys[(i * stride) % keys.size()]: at least those `count` answers are positive.
template <class F>
void expect_batched_matches_single_mixed(const F& f, const std::vector<std::uint64_t>& keys,
                                         std::size_t count, std::size_t stride = 1) {
  std::vector<std::uint64_t> probe = absent_keys(count);
  for (std::size_t i = 0; i < count; ++i) probe.push_back(keys[(i * stride) % keys.size()]);
  EXPECT_GE(expect_batched_matches_single(f, probe), count);
}

// String keys through may_contain_many on a filter that holds "b": an output shorter than the
// keys is std::invalid_argument (never an overflow), a right-sized one marks "b". Returns the
// positives among {"a", "b", "c"}.
template <class F>
std::size_t expect_batched_output_checked(const F& f) {
  const std::vector<std::string> words = {"a", "b", "c"};
  std::vector<unsigned char> small(2);
  EXPECT_THROW(f.may_contain_many(words, small), std::invalid_argument);
  std::vector<unsigned char> out3(3);
  const std::size_t positives = f.may_contain_many(words, out3);
  EXPECT_EQ(out3[1], 1);
  return positives;
}

// Re-seals a hand-edited file image (recomputes its checksum), so that only the semantic checks
// of a loader can catch the edit.
inline void reseal(std::vector<std::byte>& bytes) {
  detail::reseal(bytes);
}

// The little-endian field of type T at `offset` of a file image (bloomery runs on little-endian
// machines only, hash.hpp), and the image with that field rewritten and the checksum recomputed.
template <class T>
T field_at(const std::vector<std::byte>& bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}
template <class T>
void rewrite_field(std::vector<std::byte>& bytes, std::size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof value);
  reseal(bytes);
}

// Saves f to `path` and loads it back: the loaded copy is the same filter and the file holds
// exactly serialize(f). Returns the loaded copy.
template <class F>
F expect_saved_copy(const F& f, const std::filesystem::path& path) {
  save(f, path);
  F loaded = load<F>(path);
  expect_same_filter(loaded, f);
  expect_file_holds_image(f, path);
  return loaded;
}

// The format_error message deserialize<F> gives for `image` with `value` written at `offset` and
// the checksum recomputed, so that only the loader's checks of the value can catch the edit.
template <class F, class T>
std::string edited_image_error(std::vector<std::byte> image, std::size_t offset, T value) {
  rewrite_field(image, offset, value);
  return message_of<format_error>([&] { (void)deserialize<F>(image); });
}

// A serialized F damaged in any way is a format_error: every truncation, and a byte flipped with
// three masks at every position; a few truncated lengths also through load() and map_file().
template <class F>
void expect_all_damage_rejected(const std::vector<std::byte>& bytes) {
  for (std::size_t len = 0; len < bytes.size(); ++len) {
    EXPECT_THROW(deserialize<F>(std::span(bytes).first(len)), format_error) << "length " << len;
  }
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (std::uint8_t mask : {0x01, 0x80, 0xFF}) {
      auto bad = bytes;
      bad[i] ^= std::byte{mask};
      EXPECT_THROW(deserialize<F>(bad), format_error) << "byte " << i << " mask " << int{mask};
    }
  }
  // Through real files too, at lengths that end inside the fixed header (7, 127), at its end
  // (128), inside the parameter blocks (176, 184, 191) and short of the whole (size - 1).
  temp_dir dir;
  for (std::size_t len :
       {std::size_t{0}, std::size_t{7}, std::size_t{100}, std::size_t{127}, std::size_t{128},
        std::size_t{176}, std::size_t{184}, std::size_t{191}, bytes.size() - 1}) {
    if (len >= bytes.size()) continue;
    std::ofstream(dir / "t.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(len));
    EXPECT_THROW(load<F>(dir / "t.bin"), format_error) << len;
    EXPECT_THROW(map_file<F>(dir / "t.bin"), format_error) << len;
  }
}

}  // namespace bloomery::test

namespace bloomery::test {
// A key type whose hashing counts its calls (in counted_key_hashes): how often a filter turns a
// user's key into bytes.
struct counted_key {
  std::uint64_t id;
};
inline std::size_t counted_key_hashes = 0;
}  // namespace bloomery::test

template <>
struct bloomery::key_hash<bloomery::test::counted_key> {
  std::uint64_t operator()(const bloomery::test::counted_key& k) const {
    ++bloomery::test::counted_key_hashes;
    return k.id;
  }
};
