// The driver of the differential targets (diff_*.cpp): it decodes the operations of ops.hpp from
// the fuzzer's bytes, applies each to filter A or B (twins of equal parameters, each the other's
// partner in merges) and to that filter's exact model (diff_models.hpp), and checks the answers.
//
// A target supplies rules derived from diff_rules<F, Model>, with
//   static constexpr op stands_for(op)  what runs in place of each operation (one the filter
//                                       lacks maps to one it has)
//   void check(const side&) const       its invariants, checked after check_side()'s own
// and a hook for each operation it does its own way. The driver has a version of
//   insert(side&, key, bool check_first)   insert() and check_and_insert(), plain
//   insert_many(side&, input&, key_space)  up to 23 inserts
//   query(const side&, key)                no false negative
//   merge(side&, const side& other)        |= and the models' union
// and none of insert_concurrent(side&, key), remove(side&, key), intersect(side&, const side&):
// rules that do not map those away must have them, or the target does not compile.
#pragma once

#include <array>
#include <bloomery/results.hpp>
#include <bloomery/stats.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "diff_models.hpp"
#include "ops.hpp"

namespace bloomery_fuzz {

template <class F, class Model>
struct diff_side {
  F filter;
  Model model;
};

// What every target's rules derive from: the filter of the run's parameters as built, empty
// (clear() must return to it), and the types the driver works with.
template <class F, class Model>
struct diff_rules {
  using filter = F;
  using model = Model;
  using side = diff_side<F, Model>;

  explicit diff_rules(F empty_filter) : empty(std::move(empty_filter)) {}
  F empty;
};

// What every filter keeps with its model (no false negative, sane stats), then the rules' own.
template <class Rules>
void check_side(const Rules& rules, const typename Rules::side& s) {
  s.model.each_key([&](std::uint64_t k) { FUZZ_CHECK(s.filter.may_contain(k)); });
  const bloomery::filter_stats st = s.filter.stats();
  FUZZ_CHECK(st.inserted == s.filter.inserted());
  FUZZ_CHECK(st.estimated_fpr >= 0.0 && st.estimated_fpr <= 1.0);
  FUZZ_CHECK(st.fill_ratio && *st.fill_ratio >= 0.0 && *st.fill_ratio <= 1.0);
  rules.check(s);
}

template <class Rules, class Make>
class diff_run {
 public:
  diff_run(input& in, const bloomery::hasher& h, Make make)
      : in_(in), key_space_(in.in_range(1, 256)), h_(h), make_(std::move(make)), rules_(make_(h)) {}

  void run() {
    static constexpr std::array apply = handlers(std::make_index_sequence<op_count>());
    while (!in_.empty()) {
      const step st = next_step(in_);
      (this->*apply[static_cast<std::size_t>(st.what)])(sides_[st.on_b], sides_[!st.on_b]);
    }
    check_side(rules_, sides_[0]);
    check_side(rules_, sides_[1]);
  }

 private:
  using F = typename Rules::filter;
  using side = typename Rules::side;
  using handler = void (diff_run::*)(side&, const side&);

  // Operation i runs as Rules::stands_for(i), so only the handlers the rules use are compiled.
  template <std::size_t... I>
  static constexpr std::array<handler, op_count> handlers(std::index_sequence<I...>) {
    return {&diff_run::apply<Rules::stands_for(static_cast<op>(I))>...};
  }

  std::uint64_t next_key() { return key(in_, key_space_); }

  template <op O>
  void apply(side& s, [[maybe_unused]] const side& other) {
    if constexpr (O == op::insert || O == op::check_and_insert) {
      insert(s, next_key(), O == op::check_and_insert);
    } else if constexpr (O == op::concurrent_insert) {
      rules_.insert_concurrent(s, next_key());
    } else if constexpr (O == op::insert_many) {
      if constexpr (requires { rules_.insert_many(s, in_, key_space_); }) {
        rules_.insert_many(s, in_, key_space_);
      } else {
        for (std::size_t n = in_.byte() % 24; n > 0; --n) insert(s, next_key(), false);
      }
    } else if constexpr (O == op::remove) {
      rules_.remove(s, next_key());
    } else if constexpr (O == op::query) {
      query(s, next_key());
    } else if constexpr (O == op::query_many) {
      check_batch_query(s.filter, in_, key_space_);
    } else if constexpr (O == op::merge) {
      merge(s, other);
    } else if constexpr (O == op::intersect) {
      rules_.intersect(s, other);
    } else if constexpr (O == op::round_trip) {
      s.filter = round_trip(s.filter);
      check_side(rules_, s);
    } else if constexpr (O == op::clear) {
      s.filter.clear();
      s.model = {};
      FUZZ_CHECK(s.filter == rules_.empty);
    } else if constexpr (O == op::bad_merge) {
      if (!alien_) alien_.emplace(make_(other_hasher(h_)));  // sizing can cost milliseconds
      check_refused_merge(s.filter, *alien_);
    }
  }

  // Plain: check_and_insert() answers already_present exactly when k answered "possibly" before
  // (as every key of the model must); either call inserts k.
  void insert(side& s, std::uint64_t k, bool check_first) {
    if constexpr (requires { rules_.insert(s, k, check_first); }) {
      rules_.insert(s, k, check_first);
    } else if (check_first) {
      const bool before = s.filter.may_contain(k);
      const bloomery::insert_result r = s.filter.check_and_insert(k);
      FUZZ_CHECK(r == (before ? bloomery::insert_result::already_present
                              : bloomery::insert_result::inserted));
      FUZZ_CHECK(!s.model.contains(k) || before);
      record_insert(s, k);
    } else {
      s.filter.insert(k);
      record_insert(s, k);
    }
  }

  void query(const side& s, std::uint64_t k) {
    if constexpr (requires { rules_.query(s, k); }) {
      rules_.query(s, k);
    } else {
      FUZZ_CHECK(!s.model.contains(k) || s.filter.may_contain(k));
    }
  }

  void merge(side& s, const side& other) {
    if constexpr (requires { rules_.merge(s, other); }) {
      rules_.merge(s, other);
    } else {
      s.filter |= other.filter;
      s.model.absorb(other.model);
      check_side(rules_, s);
    }
  }

  input& in_;
  const std::uint64_t key_space_;
  const bloomery::hasher h_;
  Make make_;
  const Rules rules_;
  side sides_[2] = {{rules_.empty, {}}, {rules_.empty, {}}};
  std::optional<F> alien_;  // a filter of another hasher, built on first use
};

// Runs the operations of `in` under `Rules` on two filters built by make(h).
template <class Rules, class Make>
void run_diff(input& in, const bloomery::hasher& h, Make make) {
  diff_run<Rules, Make>(in, h, std::move(make)).run();
}

}  // namespace bloomery_fuzz
