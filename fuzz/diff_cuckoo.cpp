// Fuzz target: cuckoo_filter against the exact multiset of its keys. No false negative ever, and
// count(k) is at least k's copies; insert() returns full exactly when the table was full, and then
// changes nothing; remove() of a key in the multiset succeeds, and of a key with no copy is refused
// with nothing changed; the counts (inserted, removed, approximate_count, occupied slots plus the
// stash) are exact. Input: the hasher, explicit parameters or a target, then the operations.
#include <bloomery/cuckoo_filter.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "ops.hpp"

namespace {

using namespace bloomery;
using namespace bloomery_fuzz;

struct side {
  explicit side(const cuckoo_filter& f) : filter(f) {}
  cuckoo_filter filter;
  std::map<std::uint64_t, std::uint64_t> keys;  // key -> copies inserted and not removed
  std::uint64_t total = 0, inserts = 0, removes = 0;
};

void check_side(const side& s) {
  for (const auto& [k, copies] : s.keys) {
    FUZZ_CHECK(s.filter.may_contain(k) && s.filter.count(k) >= copies);
  }
  FUZZ_CHECK(s.filter.approximate_count() == s.total);
  FUZZ_CHECK(s.filter.inserted() == s.inserts && s.filter.removed() == s.removes);
  FUZZ_CHECK(s.filter.occupied_slots() + (s.filter.is_full() ? 1 : 0) == s.total);
  const filter_stats st = s.filter.stats();
  FUZZ_CHECK(st.inserted == s.inserts && st.estimated_fpr >= 0.0 && st.estimated_fpr <= 1.0);
  FUZZ_CHECK(st.fill_ratio && *st.fill_ratio >= 0.0 && *st.fill_ratio <= 1.0);
}

// insert() or check_and_insert() of k, checked against the model.
void insert(side& s, std::uint64_t k, bool check_first) {
  const bool was_full = s.filter.is_full();
  const bool before = s.filter.may_contain(k);
  std::optional<cuckoo_filter> copy;
  if (was_full) copy.emplace(s.filter);
  const insert_result r = check_first ? s.filter.check_and_insert(k) : s.filter.insert(k);
  if (was_full) {
    // A full table refuses and keeps every key it had.
    FUZZ_CHECK(r == insert_result::full && s.filter == *copy);
    check_side(s);
    return;
  }
  if (check_first) {
    FUZZ_CHECK(r == (before ? insert_result::already_present : insert_result::inserted));
  } else {
    FUZZ_CHECK(r == insert_result::inserted);
  }
  ++s.keys[k];
  ++s.total;
  ++s.inserts;
  FUZZ_CHECK(s.filter.may_contain(k));
}

void run(input& in, const cuckoo_filter& empty) {
  const std::uint64_t key_space = in.in_range(1, 256);
  side sides[2] = {side(empty), side(empty)};
  while (!in.empty()) {
    const step st = next_step(in);
    side& s = sides[st.on_b];
    switch (st.what) {
      case op::insert:
      case op::concurrent_insert:
      case op::merge:  // cuckoo filters have no union
        insert(s, key(in, key_space), false);
        break;
      case op::check_and_insert:
      case op::bad_merge:
        insert(s, key(in, key_space), true);
        break;
      case op::insert_many:
        for (std::size_t n = in.byte() % 24; n > 0; --n) insert(s, key(in, key_space), false);
        break;
      case op::remove: {
        const std::uint64_t k = key(in, key_space);
        const auto it = s.keys.find(k);
        if (it != s.keys.end()) {
          FUZZ_CHECK(s.filter.remove(k) == remove_result::removed);
          if (--it->second == 0) s.keys.erase(it);
          --s.total;
          ++s.removes;
        } else if (s.filter.count(k) == 0) {
          const cuckoo_filter before = s.filter;
          FUZZ_CHECK(s.filter.remove(k) == remove_result::not_present && s.filter == before);
        }  // else another key's copy answers for k: removing it is the documented misuse
        break;
      }
      case op::query:
      case op::intersect: {
        const std::uint64_t k = key(in, key_space);
        const auto it = s.keys.find(k);
        if (it != s.keys.end()) FUZZ_CHECK(s.filter.count(k) >= it->second);
        FUZZ_CHECK(s.filter.may_contain(k) == (s.filter.count(k) > 0));
        break;
      }
      case op::query_many:
        check_batch_query(s.filter, in, key_space);
        break;
      case op::round_trip:
        s.filter = round_trip(s.filter);
        check_side(s);
        break;
      case op::clear:
        s.filter.clear();
        s.keys.clear();
        s.total = s.inserts = s.removes = 0;
        FUZZ_CHECK(s.filter == empty);
        break;
    }
  }
  check_side(sides[0]);
  check_side(sides[1]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  input in(data, size);
  const hasher h = pick_hasher(in);
  if (in.byte() & 1) {
    cuckoo_parameters p;
    p.fingerprint_bits = static_cast<std::uint32_t>(in.in_range(4, 16));
    p.buckets = in.in_range(1, 64);
    p.max_kicks = static_cast<std::uint32_t>(in.in_range(0, 600));
    p.semi_sorted = (in.byte() & 1) != 0;
    run(in, cuckoo_filter(p, h));
  } else {
    const std::uint64_t capacity = in.in_range(1, 200);
    const double fpr = pick_fpr(in);
    run(in, cuckoo_filter(target{capacity, fpr < cuckoo_filter::min_fpr() ? 1e-3 : fpr}, h));
  }
  return 0;
}
