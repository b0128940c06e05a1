// Fuzz target: scalable_cuckoo_filter against the exact multiset of its keys. No false negative
// ever, through growth, a full chain and removes of stored keys; count(k) is at least k's copies;
// insert() returns full exactly when the chain was full (is_full()), and then changes nothing;
// remove() of a key in the multiset succeeds, and of a key with no copy is refused with nothing
// changed; the counts (inserted, removed, approximate_count) are exact. Input: the hasher,
// explicit parameters or a target, then the operations.
#include <bloomery/scalable_cuckoo_filter.hpp>
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
  explicit side(const scalable_cuckoo_filter& f) : filter(f) {}
  scalable_cuckoo_filter filter;
  std::map<std::uint64_t, std::uint64_t> keys;  // key -> copies inserted and not removed
  std::uint64_t total = 0, inserts = 0, removes = 0;
};

void check_side(const side& s) {
  for (const auto& [k, copies] : s.keys) {
    FUZZ_CHECK(s.filter.may_contain(k) && s.filter.count(k) >= copies);
  }
  FUZZ_CHECK(s.filter.approximate_count() == s.total);
  FUZZ_CHECK(s.filter.inserted() == s.inserts && s.filter.removed() == s.removes);
  std::uint64_t stored = 0;
  for (std::size_t i = 0; i < s.filter.sub_filter_count(); ++i) {
    const scalable_cuckoo_sub_filter sub = s.filter.sub_filter(i);
    FUZZ_CHECK(sub.removed <= sub.inserted);
    stored += sub.inserted - sub.removed;
  }
  FUZZ_CHECK(stored == s.total);
  const filter_stats st = s.filter.stats();
  FUZZ_CHECK(st.inserted == s.inserts && st.estimated_fpr >= 0.0 && st.estimated_fpr <= 1.0);
  FUZZ_CHECK(st.fill_ratio && *st.fill_ratio >= 0.0 && *st.fill_ratio <= 1.0);
}

// insert() or check_and_insert() of k, checked against the model.
void insert(side& s, std::uint64_t k, bool check_first) {
  const bool was_full = s.filter.is_full();
  const bool grows = s.filter.sub_filter(s.filter.sub_filter_count() - 1).full;
  // Nine copies of one key fill a sub-filter (its two buckets and the stash), so repeats make a
  // doubling chain grow fast: skip a growth past 16 MiB, which measures memory, not the filter.
  if (grows && s.filter.next_sub_filter_bytes() > (std::uint64_t{16} << 20)) return;
  const std::size_t subs = s.filter.sub_filter_count();
  const bool before = s.filter.may_contain(k);
  std::optional<scalable_cuckoo_filter> copy;
  if (was_full) copy.emplace(s.filter);
  const insert_result r = check_first ? s.filter.check_and_insert(k) : s.filter.insert(k);
  if (was_full) {
    // A full chain refuses and keeps every key it had.
    FUZZ_CHECK(r == insert_result::full && s.filter == *copy);
    check_side(s);
    return;
  }
  if (check_first) {
    FUZZ_CHECK(r == (before ? insert_result::already_present : insert_result::inserted));
  } else {
    FUZZ_CHECK(r == insert_result::inserted);
  }
  // A sub-filter is added exactly when the newest was full.
  FUZZ_CHECK(s.filter.sub_filter_count() == subs + (grows ? 1 : 0));
  ++s.keys[k];
  ++s.total;
  ++s.inserts;
  FUZZ_CHECK(s.filter.may_contain(k));
}

void run(input& in, const scalable_cuckoo_filter& empty) {
  const std::uint64_t key_space = in.in_range(1, 256);
  side sides[2] = {side(empty), side(empty)};
  while (!in.empty()) {
    const step st = next_step(in);
    side& s = sides[st.on_b];
    switch (st.what) {
      case op::insert:
      case op::concurrent_insert:
      case op::merge:  // no union, as for cuckoo filters
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
          check_side(s);  // no other key lost its last copy
        } else if (s.filter.count(k) == 0) {
          const scalable_cuckoo_filter before = s.filter;
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
    // Tiny sub-filters, short walks and chains: collisions, growth and a full chain.
    scalable_cuckoo_parameters p;
    p.initial_capacity = in.in_range(1, 40);
    // Half of the inputs with 4 to 6 bits: fingerprints that collide often test removes hardest.
    p.fingerprint_bits = static_cast<std::uint32_t>(in.in_range(4, in.byte() & 1 ? 6 : 16));
    p.max_kicks = static_cast<std::uint32_t>(in.in_range(1, 100));
    p.expansion = std::uint32_t{1} << in.in_range(0, 3);
    p.max_sub_filters = static_cast<std::uint32_t>(in.in_range(1, 8));
    p.semi_sorted = (in.byte() & 1) != 0;
    run(in, scalable_cuckoo_filter(p, h));
  } else {
    const std::uint64_t capacity = in.in_range(1, 60);
    const double fpr = pick_fpr(in);
    run(in,
        scalable_cuckoo_filter(target{capacity, fpr < cuckoo_filter::min_fpr() ? 1e-3 : fpr}, h));
  }
  return 0;
}
