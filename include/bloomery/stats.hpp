// filter_stats: what every filter reports about itself, in one shape, so that a printer (the CLI's
// `info`, Redis's BF.INFO, Python's info()) walks it without knowing the filter's kind.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "bloomery/hash.hpp"
#include "bloomery/kinds.hpp"

namespace bloomery {

// One of a kind's own parameters (set_bits, counter_bits, fingerprint_bits, sub_filters...).
struct filter_param {
  const char* name;
  std::variant<std::uint64_t, double, bool> value;
};

struct filter_stats {
  filter_kind kind = filter_kind::bloom;
  std::uint64_t size_in_bytes = 0;
  std::uint64_t bits = 0;               // bits of storage the filter's structure uses
  std::optional<std::uint32_t> hashes;  // probes per key; none for fingerprint filters
  std::uint64_t capacity = 0;           // keys the filter was sized for
  std::uint64_t inserted = 0;           // insert calls counted by the filter (see each filter)
  std::uint64_t approximate_count = 0;  // distinct keys estimated from the structure
  std::optional<double> fill_ratio;     // set bits, non-zero counters or used slots; none: static
  double target_fpr = 0.0;
  double estimated_fpr = 0.0;  // the rate the filter has now, from its actual contents
  hash_algorithm hash = hash_algorithm::xxh3_128_seeded_intmix;
  bool keyed = false;
  std::uint64_t seed = 0;            // 0 when keyed: the key itself is never reported
  bool over_capacity = false;        // estimated_fpr is above target_fpr because of load
  std::vector<filter_param> params;  // the kind's own parameters, in a fixed order

  double bits_per_key() const noexcept {
    return 8.0 * static_cast<double>(size_in_bytes) /
           static_cast<double>(std::max<std::uint64_t>(1, capacity));
  }
};

namespace detail {

// Whether an estimated key count is past capacity by more than 1%, so that a filter filled exactly
// to capacity, whose estimate wobbles around it, does not warn.
inline bool past_capacity(std::uint64_t count, std::uint64_t capacity) noexcept {
  return static_cast<double>(count) > 1.01 * static_cast<double>(capacity);
}

// The fields every filter fills the same way, from its common accessors.
template <class F>
filter_stats common_stats(const F& f, filter_kind kind) {
  filter_stats s;
  s.kind = kind;
  s.size_in_bytes = f.size_in_bytes();
  s.capacity = f.capacity();
  s.inserted = f.inserted();
  s.approximate_count = f.approximate_count();
  s.target_fpr = f.target_fpr();
  s.estimated_fpr = f.estimated_fpr();
  s.hash = f.hash().algorithm();
  s.keyed = f.hash().keyed();
  s.seed = s.keyed ? 0 : f.hash().seed();
  return s;
}

}  // namespace detail
}  // namespace bloomery
