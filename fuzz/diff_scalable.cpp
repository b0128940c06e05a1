// Fuzz target: scalable_bloom_filter against the exact set of its keys (diff_driver.hpp). insert()
// says already_present exactly when the key answered "possibly" before; inserted() counts the keys
// it inserted; until a union, every sub-filter but the newest holds exactly its capacity; the
// compound bound stays below the target; a union succeeds exactly when incompatibility() is empty;
// a failed growth (std::length_error) changes nothing. Input: the hasher, the target and growth
// options, then the operations.
#include <bloomery/scalable_bloom_filter.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>

#include "diff_driver.hpp"

namespace {

using namespace bloomery;
using namespace bloomery_fuzz;

// Inserts stop growing a filter past this: with merges adding up counts, growth could otherwise
// ask for more memory than the fuzzer allows.
constexpr std::uint64_t max_bytes = 256 * 1024;

struct scalable_model : key_set {
  bool merged = false;  // a union since the last clear: sub-filters may hold more than capacity
};

struct scalable_rules : diff_rules<scalable_bloom_filter, scalable_model> {
  using diff_rules::diff_rules;

  // No remove(), &= or concurrent insert.
  static constexpr op stands_for(op o) {
    switch (o) {
      case op::concurrent_insert:
        return op::insert;
      case op::remove:
      case op::intersect:
        return op::query;
      default:
        return o;
    }
  }

  // Both calls skip a key the filter already answers "possibly present" for; only
  // check_and_insert says so (already_present), insert() answers inserted.
  void insert(side& s, std::uint64_t k, bool check_first) const {
    if (s.filter.size_in_bytes() > max_bytes) return;
    const bool before = s.filter.may_contain(k);
    const std::size_t last = s.filter.sub_filter_count() - 1;
    const bool grows =
        !before && s.filter.sub_filter(last).inserted() >= s.filter.sub_filter(last).capacity();
    std::optional<scalable_bloom_filter> copy;
    if (grows) copy.emplace(s.filter);
    try {
      const insert_result r = check_first ? s.filter.check_and_insert(k) : s.filter.insert(k);
      FUZZ_CHECK(
          r == (before && check_first ? insert_result::already_present : insert_result::inserted));
      FUZZ_CHECK(s.filter.sub_filter_count() == last + 1 + (grows ? 1 : 0));
      if (!before) ++s.model.inserted;
      s.model.keys.insert(k);
      FUZZ_CHECK(s.filter.may_contain(k));
    } catch (const std::length_error&) {
      FUZZ_CHECK(grows && s.filter == *copy && s.filter.inserted() == s.model.inserted);
    }
  }

  void merge(side& s, const side& other) const {
    const bool compatible = s.filter.incompatibility(other.filter).empty();
    const scalable_bloom_filter before = s.filter;
    try {
      s.filter |= other.filter;
      FUZZ_CHECK(compatible);
      s.model.absorb(other.model);
      s.model.merged = true;
    } catch (const std::invalid_argument&) {
      FUZZ_CHECK(!compatible && s.filter == before);
    }
    check_side(*this, s);
  }

  void check(const side& s) const {
    FUZZ_CHECK(s.filter.inserted() == s.model.inserted);
    FUZZ_CHECK(s.filter.current_fpr_bound() <= s.filter.target_fpr());
    const std::size_t n = s.filter.sub_filter_count();
    FUZZ_CHECK(n >= 1 && n <= scalable_bloom_filter::max_sub_filters);
    if (!s.model.merged) {
      for (std::size_t i = 0; i + 1 < n; ++i) {
        FUZZ_CHECK(s.filter.sub_filter(i).inserted() == s.filter.sub_filter(i).capacity());
      }
      FUZZ_CHECK(s.filter.sub_filter(n - 1).inserted() <= s.filter.sub_filter(n - 1).capacity());
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  input in(data, size);
  const hasher h = pick_hasher(in);
  const target t{in.in_range(1, 16), pick_fpr(in)};
  static constexpr double growths[] = {1.0, 1.5, 2.0, 3.0, 4.0};
  static constexpr double tightenings[] = {0.1, 0.5, 0.85, 0.9, 0.99};
  const scalable_options o{growths[in.byte() % 5], tightenings[in.byte() % 5]};
  run_diff<scalable_rules>(in, h, [t, o](hasher x) { return scalable_bloom_filter(t, o, x); });
  return 0;
}
