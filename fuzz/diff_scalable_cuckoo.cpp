// Fuzz target: scalable_cuckoo_filter against the exact multiset of its keys (diff_driver.hpp,
// diff_cuckoo_kinds.hpp), through growth, a full chain and removes of stored keys. A sub-filter is
// added exactly when the newest was full; remove() of a key in the multiset succeeds and takes no
// other key's last copy, and of a key with no copy is refused with nothing changed; the
// sub-filters' counts add up to the multiset. Input: the hasher, explicit parameters or a target,
// then the operations.
#include <bloomery/scalable_cuckoo_filter.hpp>
#include <cstddef>
#include <cstdint>

#include "diff_cuckoo_kinds.hpp"

namespace {

using namespace bloomery;
using namespace bloomery_fuzz;

struct scalable_cuckoo_rules : diff_rules<scalable_cuckoo_filter, key_multiset> {
  using diff_rules::diff_rules;

  static constexpr op stands_for(op o) { return cuckoo_stands_for(o); }
  void query(const side& s, std::uint64_t k) const { query_copies(s, k); }

  void insert(side& s, std::uint64_t k, bool check_first) const {
    const bool grows = s.filter.sub_filter(s.filter.sub_filter_count() - 1).full;
    // Nine copies of one key fill a sub-filter (its two buckets and the stash), so repeats make a
    // doubling chain grow fast: skip a growth past 16 MiB, which measures memory, not the filter.
    if (grows && s.filter.next_sub_filter_bytes() > (std::uint64_t{16} << 20)) return;
    const std::size_t subs = s.filter.sub_filter_count();
    if (insert_unless_full(*this, s, k, check_first)) {
      FUZZ_CHECK(s.filter.sub_filter_count() == subs + (grows ? 1 : 0));
    }
  }

  void remove(side& s, std::uint64_t k) const {
    if (remove_recorded(s, k, s.filter.count(k) == 0) == removal::removed) check_side(*this, s);
  }

  void check(const side& s) const {
    check_copies(s);
    std::uint64_t stored = 0;
    for (std::size_t i = 0; i < s.filter.sub_filter_count(); ++i) {
      const scalable_cuckoo_sub_filter sub = s.filter.sub_filter(i);
      FUZZ_CHECK(sub.removed <= sub.inserted);
      stored += sub.inserted - sub.removed;
    }
    FUZZ_CHECK(stored == s.model.size());
  }
};

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
    run_diff<scalable_cuckoo_rules>(in, h, [p](hasher x) { return scalable_cuckoo_filter(p, x); });
  } else {
    const target t{in.in_range(1, 60), pick_cuckoo_fpr(in)};
    run_diff<scalable_cuckoo_rules>(in, h, [t](hasher x) { return scalable_cuckoo_filter(t, x); });
  }
  return 0;
}
