// "When to use which": ranks every filter kind for a workload by the memory it needs, from each
// kind's own sizing model (its static plan()), beside an exact hash set of the keys.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "bloomery/any_filter.hpp"
#include "bloomery/concepts.hpp"
#include "bloomery/kinds.hpp"
#include "bloomery/sizing.hpp"

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

// A kind that refuses keys before its FPR rises: one table that fills up (kinds.hpp's column),
// where a chain of them (sub-filters) adds to the FPR as it grows.
template <class F>
constexpr bool full_first = info_of(F::kind).fills_up && !requires(const F& f) {
  f.sub_filter_count();
};

// Every kind, the suitable ones first ordered by bytes; the others after, saying why not.
inline std::vector<advice> advise(const workload& w) {
  const target t{.capacity = w.capacity, .fpr = w.fpr};
  detail::check_capacity(w.capacity);
  detail::check_fpr(w.fpr);
  if (!(w.key_bytes >= 0)) {
    detail::invalid("key_bytes", detail::format_value(w.key_bytes), "it must be >= 0");
  }
  std::vector<advice> out;
  // Each kind's fit follows from what it can do (concepts.hpp); its plan from its own sizing. A
  // kind whose structure cannot reach the target (the cuckoo filter below 2^-13, the static filter
  // below 2^-16) is listed as unsuitable with its plan's own reason.
  const auto add = [&]<class F>() {
    advice a;
    a.kind = to_string(F::kind);
    if constexpr (!insertable_filter<F>) {
      a.suitable = w.static_set && !w.deletes;
      a.note = !w.static_set ? "needs the complete key set up front and takes no inserts"
               : w.deletes   ? "cannot delete"
                             : info_of(F::kind).summary;
    } else {
      const bool deletes = !w.deletes || removable_filter<F>;
      const bool grows = !w.grows || growable_filter<F>;
      a.suitable = deletes && grows;
      a.note = !deletes        ? "cannot delete"
               : grows         ? info_of(F::kind).summary
               : full_first<F> ? "inserts fail once the table is full"
                               : "cannot grow past capacity without its FPR rising";
    }
    try {
      a.plan = F::plan(t);
    } catch (const std::invalid_argument& e) {
      a.suitable = false;
      a.note = e.what();
    }
    out.push_back(std::move(a));
  };
  [&]<class... Fs>(type_list<Fs...>) { (add.template operator()<Fs>(), ...); }(filter_types{});
  const double per_key = exact_set_bytes_per_key(w.key_bytes);
  advice exact;
  exact.kind = "exact set";
  exact.suitable = true;
  // Saturated: near 2^64 keys the product passes 2^64, and converting it would be undefined.
  const double exact_bytes = per_key * static_cast<double>(w.capacity);
  exact.plan.bytes = exact_bytes < 0x1p64 ? static_cast<std::uint64_t>(exact_bytes)
                                          : std::numeric_limits<std::uint64_t>::max();
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
