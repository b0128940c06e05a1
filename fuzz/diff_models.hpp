// The exact models the differential targets hold beside each filter (diff_driver.hpp), and the
// checked steps that more than one target takes on a filter and its model.
#pragma once

#include <bloomery/results.hpp>
#include <cstdint>
#include <map>
#include <set>

#include "ops.hpp"

namespace bloomery_fuzz {

// The model of a filter without remove(): the keys inserted since its last clear.
struct key_set {
  std::set<std::uint64_t> keys;
  std::uint64_t inserted = 0;  // what the filter's inserted() must say

  bool contains(std::uint64_t k) const { return keys.contains(k); }
  template <class Fn>
  void each_key(Fn fn) const {
    for (const std::uint64_t k : keys) fn(k);
  }
  void add(std::uint64_t k) {
    keys.insert(k);
    ++inserted;
  }
  // The model of a union.
  void absorb(const key_set& o) {
    keys.insert(o.keys.begin(), o.keys.end());
    inserted += o.inserted;
  }
};

// The model of a filter with remove(): each key with its copies inserted and not removed.
struct key_multiset {
  std::map<std::uint64_t, std::uint64_t> copies;
  std::uint64_t inserted = 0;  // successful inserts since the last clear
  std::uint64_t removed = 0;   // successful removes since the last clear

  bool contains(std::uint64_t k) const { return copies.contains(k); }
  template <class Fn>
  void each_key(Fn fn) const {
    for (const auto& [k, n] : copies) fn(k);
  }
  std::uint64_t size() const { return inserted - removed; }
  void add(std::uint64_t k) {
    ++copies[k];
    ++inserted;
  }
  // The model of a union: the copies add up.
  void absorb(const key_multiset& o) {
    for (const auto& [k, n] : o.copies) copies[k] += n;
    inserted += o.inserted;
    removed += o.removed;
  }
};

// The filter that inserting the model's keys (every copy) into `f` builds.
template <class F>
F built_from(F f, const key_set& m) {
  for (const std::uint64_t k : m.keys) f.insert(k);
  return f;
}
template <class F>
F built_from(F f, const key_multiset& m) {
  for (const auto& [k, n] : m.copies) {
    for (std::uint64_t i = 0; i < n; ++i) f.insert(k);
  }
  return f;
}

// The model takes k, which the filter has just taken: it must answer "possibly" for it.
template <class Side>
void record_insert(Side& s, std::uint64_t k) {
  s.model.add(k);
  FUZZ_CHECK(s.filter.may_contain(k));
}

enum class removal { removed, refused, not_tried };

// remove() of k against a key_multiset: a key with copies loses one; a key the filter rules out
// (`absent`) is refused, changing nothing; any other key is a false positive, and removing it is
// the misuse the library documents, so it is not tried.
template <class Side>
removal remove_recorded(Side& s, std::uint64_t k, bool absent) {
  const auto it = s.model.copies.find(k);
  if (it != s.model.copies.end()) {
    FUZZ_CHECK(s.filter.remove(k) == bloomery::remove_result::removed);
    if (--it->second == 0) s.model.copies.erase(it);
    ++s.model.removed;
    return removal::removed;
  }
  if (!absent) return removal::not_tried;
  const auto before = s.filter;
  FUZZ_CHECK(s.filter.remove(k) == bloomery::remove_result::not_present && s.filter == before);
  return removal::refused;
}

}  // namespace bloomery_fuzz
