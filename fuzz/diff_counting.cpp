// Fuzz target: counting_bloom_filter against the exact multiset of its keys (diff_driver.hpp).
// remove() of a key in the multiset succeeds, and of a key the filter rules out is refused with
// nothing changed; inserted() is the multiset's size; and while no counter has saturated the
// filter is counter for counter the one built from the multiset alone (unions included, as
// documented for |=). Input: the hasher, explicit parameters or a target, then the operations.
#include <bloomery/counting_bloom_filter.hpp>
#include <cstddef>
#include <cstdint>

#include "diff_driver.hpp"

namespace {

using namespace bloomery;
using namespace bloomery_fuzz;

struct counting_rules : diff_rules<counting_bloom_filter, key_multiset> {
  using diff_rules::diff_rules;

  static constexpr op stands_for(op o) {
    return o == op::concurrent_insert ? op::insert : o == op::intersect ? op::query : o;
  }

  void remove(side& s, std::uint64_t k) const {
    if (remove_recorded(s, k, !s.filter.may_contain(k)) == removal::refused) {
      FUZZ_CHECK(s.filter.inserted() == s.model.size());
    }
  }

  void check(const side& s) const {
    FUZZ_CHECK(s.filter.inserted() == s.model.size());
    if (s.filter.saturated_count() == 0) FUZZ_CHECK(built_from(empty, s.model) == s.filter);
    FUZZ_CHECK(s.filter.saturated_count() <= s.filter.nonzero_count());
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  input in(data, size);
  const hasher h = pick_hasher(in);
  const std::uint8_t mode = in.byte();
  const std::uint32_t counter_bits = mode & 2 ? 8 : 4;
  if (mode & 1) {
    const counting_parameters p{
        in.in_range(1, 2048), static_cast<std::uint32_t>(in.in_range(1, max_hashes)), counter_bits};
    run_diff<counting_rules>(in, h, [p](hasher x) { return counting_bloom_filter(p, x); });
  } else {
    const target t{in.in_range(1, 300), pick_fpr(in)};
    run_diff<counting_rules>(
        in, h, [t, counter_bits](hasher x) { return counting_bloom_filter(t, {counter_bits}, x); });
  }
  return 0;
}
