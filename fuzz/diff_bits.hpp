// The differential rules of the bit-array filters (bloom_filter and blocked_bloom_filter, one
// template with two layouts) for diff_driver.hpp. The model of each filter is the set of keys
// inserted since its last clear: its insert count is exact, and until an intersection the filter
// is bit for bit the one built from that set alone (unions included, as documented for |=).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <set>
#include <utility>
#include <vector>

#include "diff_driver.hpp"

namespace bloomery_fuzz {

struct bit_model : key_set {
  bool exact = true;  // no intersection since the last clear

  void absorb(const bit_model& o) {
    key_set::absorb(o);
    exact = exact && o.exact;
  }
};

template <class F>
struct bit_rules : diff_rules<F, bit_model> {
  using base = diff_rules<F, bit_model>;
  using base::base;
  using typename base::side;

  // No remove in a bit filter: one more insert.
  static constexpr op stands_for(op o) { return o == op::remove ? op::insert : o; }

  void insert_concurrent(side& s, std::uint64_t k) const {
    s.filter.insert_concurrent(k);
    record_insert(s, k);
  }

  void insert_many(side& s, input& in, std::uint64_t key_space) const {
    std::vector<std::uint64_t> batch(in.byte() % 48);
    for (std::uint64_t& k : batch) k = key(in, key_space);
    s.filter.insert_many(batch);
    s.model.keys.insert(batch.begin(), batch.end());
    s.model.inserted += batch.size();
  }

  void intersect(side& s, const side& other) const {
    s.filter &= other.filter;
    std::set<std::uint64_t> both;
    std::ranges::set_intersection(s.model.keys, other.model.keys, std::inserter(both, both.end()));
    s.model.keys = std::move(both);
    s.model.inserted = std::min(s.model.inserted, other.model.inserted);
    s.model.exact = false;
    check_side(*this, s);
  }

  void check(const side& s) const {
    FUZZ_CHECK(s.filter.inserted() == s.model.inserted);
    if (s.model.exact) FUZZ_CHECK(built_from(this->empty, s.model) == s.filter);
    FUZZ_CHECK(s.filter.stats().bits == s.filter.bit_count());
    FUZZ_CHECK(s.filter.set_bit_count() <= s.filter.bit_count());
  }
};

}  // namespace bloomery_fuzz
