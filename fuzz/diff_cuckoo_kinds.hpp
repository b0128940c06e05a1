// What the rules of the two cuckoo targets (diff_cuckoo.cpp, diff_scalable_cuckoo.cpp) share: the
// filter keeps every copy of every key and counts them (count(k) is at least k's copies; the
// insert, remove and copy counts are exact), and a full filter refuses inserts, changing nothing.
#pragma once

#include <bloomery/cuckoo_filter.hpp>
#include <bloomery/results.hpp>
#include <cstdint>
#include <optional>

#include "diff_driver.hpp"

namespace bloomery_fuzz {

// No union, intersection or concurrent insert: their bytes drive the operations a cuckoo has.
constexpr op cuckoo_stands_for(op o) {
  switch (o) {
    case op::concurrent_insert:
    case op::merge:
      return op::insert;
    case op::bad_merge:
      return op::check_and_insert;
    case op::intersect:
      return op::query;
    default:
      return o;
  }
}

// pick_fpr's rate, or 1e-3 where that is below what a cuckoo fingerprint can reach.
inline double pick_cuckoo_fpr(input& in) {
  const double fpr = pick_fpr(in);
  return fpr < bloomery::cuckoo_filter::min_fpr() ? 1e-3 : fpr;
}

template <class Side>
void check_copies(const Side& s) {
  for (const auto& [k, copies] : s.model.copies) FUZZ_CHECK(s.filter.count(k) >= copies);
  FUZZ_CHECK(s.filter.approximate_count() == s.model.size());
  FUZZ_CHECK(s.filter.inserted() == s.model.inserted && s.filter.removed() == s.model.removed);
}

// may_contain(k) answers exactly whether count(k) > 0, which is at least k's copies.
template <class Side>
void query_copies(const Side& s, std::uint64_t k) {
  const auto it = s.model.copies.find(k);
  if (it != s.model.copies.end()) FUZZ_CHECK(s.filter.count(k) >= it->second);
  FUZZ_CHECK(s.filter.may_contain(k) == (s.filter.count(k) > 0));
}

// insert() (check_first: check_and_insert()) of k: a full filter refuses and keeps every key it
// had; any other takes a copy of k. Returns whether it did.
template <class Rules>
bool insert_unless_full(const Rules& rules, typename Rules::side& s, std::uint64_t k,
                        bool check_first) {
  const bool was_full = s.filter.is_full();
  const bool before = s.filter.may_contain(k);
  std::optional<typename Rules::filter> copy;
  if (was_full) copy.emplace(s.filter);
  const bloomery::insert_result r = check_first ? s.filter.check_and_insert(k) : s.filter.insert(k);
  if (was_full) {
    FUZZ_CHECK(r == bloomery::insert_result::full && s.filter == *copy);
    check_side(rules, s);
    return false;
  }
  FUZZ_CHECK(r == (check_first && before ? bloomery::insert_result::already_present
                                         : bloomery::insert_result::inserted));
  record_insert(s, k);
  return true;
}

}  // namespace bloomery_fuzz
