// Fuzz target: cuckoo_filter against the exact multiset of its keys (diff_driver.hpp,
// diff_cuckoo_kinds.hpp). remove() of a key in the multiset succeeds, and of a key with no copy is
// refused with nothing changed; occupied slots plus the stash hold exactly the multiset. Input:
// the hasher, explicit parameters or a target, then the operations.
#include <bloomery/cuckoo_filter.hpp>
#include <cstddef>
#include <cstdint>

#include "diff_cuckoo_kinds.hpp"

namespace {

using namespace bloomery;
using namespace bloomery_fuzz;

struct cuckoo_rules : diff_rules<cuckoo_filter, key_multiset> {
  using diff_rules::diff_rules;

  static constexpr op stands_for(op o) { return cuckoo_stands_for(o); }
  void insert(side& s, std::uint64_t k, bool check_first) const {
    insert_unless_full(*this, s, k, check_first);
  }
  void query(const side& s, std::uint64_t k) const { query_copies(s, k); }
  void remove(side& s, std::uint64_t k) const { remove_recorded(s, k, s.filter.count(k) == 0); }

  void check(const side& s) const {
    check_copies(s);
    FUZZ_CHECK(s.filter.occupied_slots() + (s.filter.is_full() ? 1 : 0) == s.model.size());
  }
};

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
    run_diff<cuckoo_rules>(in, h, [p](hasher x) { return cuckoo_filter(p, x); });
  } else {
    const target t{in.in_range(1, 200), pick_cuckoo_fpr(in)};
    run_diff<cuckoo_rules>(in, h, [t](hasher x) { return cuckoo_filter(t, x); });
  }
  return 0;
}
