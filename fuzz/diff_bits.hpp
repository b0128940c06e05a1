// The differential harness of the bit-array filters (bloom_filter and blocked_bloom_filter, one
// template with two layouts). The model of each filter is the set of keys inserted since its last
// clear: the filter never says "no" to one of them, its insert count is exact, and until an
// intersection it is bit for bit the filter built from that set alone (unions included, as
// documented for |=).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

#include "ops.hpp"

namespace bloomery_fuzz {

template <class F>
struct bit_side {
  explicit bit_side(const F& f) : filter(f) {}
  F filter;
  std::set<std::uint64_t> keys;
  std::uint64_t inserted = 0;  // insert calls since the last clear, as F::inserted() counts them
  bool exact = true;           // no intersection since the last clear
};

template <class F>
void check_side(const bit_side<F>& s, const F& empty) {
  for (const std::uint64_t k : s.keys) FUZZ_CHECK(s.filter.may_contain(k));
  FUZZ_CHECK(s.filter.inserted() == s.inserted);
  if (s.exact) {
    F rebuilt = empty;
    for (const std::uint64_t k : s.keys) rebuilt.insert(k);
    FUZZ_CHECK(rebuilt == s.filter);
  }
  const bloomery::filter_stats st = s.filter.stats();
  FUZZ_CHECK(st.inserted == s.inserted && st.bits == s.filter.bit_count());
  FUZZ_CHECK(st.estimated_fpr >= 0.0 && st.estimated_fpr <= 1.0);
  FUZZ_CHECK(st.fill_ratio && *st.fill_ratio >= 0.0 && *st.fill_ratio <= 1.0);
  FUZZ_CHECK(s.filter.set_bit_count() <= s.filter.bit_count());
}

// `make(h)` builds an empty filter of the chosen parameters with hasher h.
template <class F, class Make>
void run_bit_diff(input& in, const bloomery::hasher& h, Make make) {
  const std::uint64_t key_space = in.in_range(1, 256);
  const F empty = make(h);
  bit_side<F> sides[2] = {bit_side<F>(empty), bit_side<F>(empty)};
  std::optional<F> alien;  // a filter of another hasher, built on first use
  while (!in.empty()) {
    const step st = next_step(in);
    bit_side<F>& s = sides[st.on_b];
    const bit_side<F>& other = sides[!st.on_b];
    switch (st.what) {
      case op::insert:
      case op::remove: {  // no remove in a bit filter: one more insert
        const std::uint64_t k = key(in, key_space);
        s.filter.insert(k);
        s.keys.insert(k);
        ++s.inserted;
        FUZZ_CHECK(s.filter.may_contain(k));
        break;
      }
      case op::concurrent_insert: {
        const std::uint64_t k = key(in, key_space);
        s.filter.insert_concurrent(k);
        s.keys.insert(k);
        ++s.inserted;
        FUZZ_CHECK(s.filter.may_contain(k));
        break;
      }
      case op::check_and_insert: {
        const std::uint64_t k = key(in, key_space);
        const bool before = s.filter.may_contain(k);
        const bloomery::insert_result r = s.filter.check_and_insert(k);
        FUZZ_CHECK(r == (before ? bloomery::insert_result::already_present
                                : bloomery::insert_result::inserted));
        FUZZ_CHECK(!s.keys.contains(k) || before);
        s.keys.insert(k);
        ++s.inserted;
        FUZZ_CHECK(s.filter.may_contain(k));
        break;
      }
      case op::insert_many: {
        std::vector<std::uint64_t> batch(in.byte() % 48);
        for (std::uint64_t& k : batch) k = key(in, key_space);
        s.filter.insert_many(batch);
        s.keys.insert(batch.begin(), batch.end());
        s.inserted += batch.size();
        break;
      }
      case op::query: {
        const std::uint64_t k = key(in, key_space);
        FUZZ_CHECK(!s.keys.contains(k) || s.filter.may_contain(k));
        break;
      }
      case op::query_many:
        check_batch_query(s.filter, in, key_space);
        break;
      case op::merge:
        s.filter |= other.filter;
        s.keys.insert(other.keys.begin(), other.keys.end());
        s.inserted += other.inserted;
        s.exact = s.exact && other.exact;
        check_side(s, empty);
        break;
      case op::intersect: {
        s.filter &= other.filter;
        std::set<std::uint64_t> both;
        std::ranges::set_intersection(s.keys, other.keys, std::inserter(both, both.end()));
        s.keys = std::move(both);
        s.inserted = std::min(s.inserted, other.inserted);
        s.exact = false;
        check_side(s, empty);
        break;
      }
      case op::round_trip:
        s.filter = round_trip(s.filter);
        check_side(s, empty);
        break;
      case op::clear:
        s.filter.clear();
        s.keys.clear();
        s.inserted = 0;
        s.exact = true;
        FUZZ_CHECK(s.filter == empty);
        break;
      case op::bad_merge:
        if (!alien) alien.emplace(make(other_hasher(h)));  // sizing can cost milliseconds
        check_refused_merge(s.filter, *alien);
        break;
    }
  }
  check_side(sides[0], empty);
  check_side(sides[1], empty);
}

}  // namespace bloomery_fuzz
