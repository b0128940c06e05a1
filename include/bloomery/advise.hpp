// "When to use which": ranks every filter kind for a workload by the memory it needs, from each
// kind's own sizing model (its static plan()), beside an exact hash set of the keys.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "bloomery/blocked_bloom_filter.hpp"
#include "bloomery/bloom_filter.hpp"
#include "bloomery/counting_bloom_filter.hpp"
#include "bloomery/cuckoo_filter.hpp"
#include "bloomery/scalable_bloom_filter.hpp"
#include "bloomery/sizing.hpp"
#include "bloomery/static_filter.hpp"

namespace bloomery {

// What the keys and their use look like.
struct workload {
  std::uint64_t capacity = 0;  // keys expected (the initial capacity when the set grows)
  double fpr = 0.0;            // target false-positive rate
  bool deletes = false;        // keys are removed as well as added
  bool static_set = false;     // the whole key set is known once and never changes
  bool grows = false;          // the key count is unknown and may exceed capacity many times
  double key_bytes = 16;       // average key length, for the exact-set baseline
};

struct advice {
  std::string kind;  // "bloom", "blocked", "counting", "cuckoo", "scalable", "static", "exact set"
  bool suitable;     // meets every requirement of the workload
  filter_plan plan;  // bytes, bits/key, expected FPR, parameters
  std::string note;  // why it ranks where it does, or why it does not fit
};

// Bytes of an exact std::unordered_set<std::string> of the keys (64-bit libstdc++): per key a
// 32-byte std::string in a node with the next pointer and the cached hash (48 bytes), the
// allocator's 16-byte header, a bucket pointer (load factor 1), and the key's own heap block when
// it is longer than the 15-byte small-string buffer.
inline double exact_set_bytes_per_key(double key_bytes) {
  const double heap = key_bytes > 15 ? std::ceil((key_bytes + 1 + 16) / 16) * 16 : 0;
  return 48 + 16 + 8 + heap;
}

// Every kind, the suitable ones first ordered by bytes; the others after, saying why not.
inline std::vector<advice> advise(const workload& w) {
  const target t{.capacity = w.capacity, .fpr = w.fpr};
  detail::check_capacity(w.capacity);
  detail::check_fpr(w.fpr);
  if (!(w.key_bytes >= 0)) {
    detail::invalid("key_bytes", detail::format_value(w.key_bytes), "it must be >= 0");
  }
  std::vector<advice> out;
  // A kind whose structure cannot reach the target (the cuckoo filter below 2^-13, the static
  // filter below 2^-16) is listed as unsuitable with its own reason.
  const auto add = [&](const char* kind, bool suitable, auto&& plan_for, std::string note) {
    advice a;
    a.kind = kind;
    a.suitable = suitable;
    a.note = std::move(note);
    try {
      a.plan = plan_for(t);
    } catch (const std::invalid_argument& e) {
      a.suitable = false;
      a.note = e.what();
    }
    out.push_back(std::move(a));
  };
  const bool fixed = !w.grows;
  add("bloom", !w.deletes && fixed, bloom_filter::plan,
      w.deletes ? "cannot delete"
      : w.grows
          ? "cannot grow past capacity without its FPR rising"
          : "the classic filter: the smallest Bloom filter, ~2 cache misses per absent lookup");
  add("blocked", !w.deletes && fixed, blocked_bloom_filter::plan,
      w.deletes ? "cannot delete"
      : w.grows ? "cannot grow past capacity without its FPR rising"
                : "one cache miss per lookup, the fastest; a few % more memory than bloom at 1%");
  add(
      "counting", fixed, [](target x) { return counting_bloom_filter::plan(x); },
      w.grows ? "cannot grow past capacity without its FPR rising"
              : "deletes with 4-bit counters: about 4x the classic filter's memory");
  add("cuckoo", fixed, cuckoo_filter::plan,
      w.grows ? "inserts fail once the table is full"
              : "deletes; smaller than Bloom filters below ~0.6% FPR; inserts can fail when full");
  add(
      "scalable", !w.deletes, [](target x) { return scalable_bloom_filter::plan(x); },
      w.deletes ? "cannot delete"
                : "grows by adding sub-filters; sized here for the initial capacity only");
  add("static", w.static_set && !w.deletes, static_filter::plan,
      w.static_set ? "build once from all keys: the smallest, but no inserts afterwards"
                   : "needs the complete key set up front and takes no inserts");
  const double per_key = exact_set_bytes_per_key(w.key_bytes);
  advice exact;
  exact.kind = "exact set";
  exact.suitable = true;
  exact.plan.bytes = static_cast<std::uint64_t>(per_key * static_cast<double>(w.capacity));
  exact.plan.bits_per_key = 8 * per_key;
  exact.plan.parameters =
      "std::unordered_set<std::string>, " + detail::format_value(w.key_bytes) + "-byte keys";
  exact.note = "no false positives, at the price of storing every key";
  out.push_back(std::move(exact));
  std::stable_sort(out.begin(), out.end(), [](const advice& a, const advice& b) {
    if (a.suitable != b.suitable) return a.suitable;
    return a.plan.bytes < b.plan.bytes;
  });
  return out;
}

}  // namespace bloomery
