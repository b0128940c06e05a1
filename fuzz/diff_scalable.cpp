// Fuzz target: scalable_bloom_filter against the exact set of its keys. No false negative ever;
// insert() says already_present exactly when the key answered "possibly" before; inserted() counts
// the keys it inserted; until a union, every sub-filter but the newest holds exactly its capacity;
// the compound bound stays below the target; a union succeeds exactly when incompatibility() is
// empty; a failed growth (std::length_error) changes nothing. Input: the hasher, the target and
// growth options, then the operations.
#include <bloomery/scalable_bloom_filter.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

#include "ops.hpp"

namespace {

using namespace bloomery;
using namespace bloomery_fuzz;

// Inserts stop growing a filter past this: with merges adding up counts, growth could otherwise
// ask for more memory than the fuzzer allows.
constexpr std::uint64_t max_bytes = 256 * 1024;

struct side {
  explicit side(const scalable_bloom_filter& f) : filter(f) {}
  scalable_bloom_filter filter;
  std::set<std::uint64_t> keys;
  std::uint64_t inserted = 0;
  bool merged = false;  // a union since the last clear: sub-filters may hold more than capacity
};

void check_side(const side& s) {
  for (const std::uint64_t k : s.keys) FUZZ_CHECK(s.filter.may_contain(k));
  FUZZ_CHECK(s.filter.inserted() == s.inserted);
  FUZZ_CHECK(s.filter.current_fpr_bound() <= s.filter.target_fpr());
  const std::size_t n = s.filter.sub_filter_count();
  FUZZ_CHECK(n >= 1 && n <= scalable_bloom_filter::max_sub_filters);
  if (!s.merged) {
    for (std::size_t i = 0; i + 1 < n; ++i) {
      FUZZ_CHECK(s.filter.sub_filter(i).inserted() == s.filter.sub_filter(i).capacity());
    }
    FUZZ_CHECK(s.filter.sub_filter(n - 1).inserted() <= s.filter.sub_filter(n - 1).capacity());
  }
  const filter_stats st = s.filter.stats();
  FUZZ_CHECK(st.inserted == s.inserted && st.estimated_fpr >= 0.0 && st.estimated_fpr <= 1.0);
  FUZZ_CHECK(st.fill_ratio && *st.fill_ratio >= 0.0 && *st.fill_ratio <= 1.0);
}

// insert() (checked: check_and_insert()). Both skip a key the filter already answers "possibly
// present" for; only check_and_insert says so (already_present), insert() answers inserted.
void insert(side& s, std::uint64_t k, bool checked) {
  if (s.filter.size_in_bytes() > max_bytes) return;
  const bool before = s.filter.may_contain(k);
  const std::size_t last = s.filter.sub_filter_count() - 1;
  const bool grows =
      !before && s.filter.sub_filter(last).inserted() >= s.filter.sub_filter(last).capacity();
  std::optional<scalable_bloom_filter> copy;
  if (grows) copy.emplace(s.filter);
  try {
    const insert_result r = checked ? s.filter.check_and_insert(k) : s.filter.insert(k);
    FUZZ_CHECK(r == (before && checked ? insert_result::already_present : insert_result::inserted));
    FUZZ_CHECK(s.filter.sub_filter_count() == last + 1 + (grows ? 1 : 0));
    if (!before) ++s.inserted;
    s.keys.insert(k);
    FUZZ_CHECK(s.filter.may_contain(k));
  } catch (const std::length_error&) {
    FUZZ_CHECK(grows && s.filter == *copy && s.filter.inserted() == s.inserted);
  }
}

template <class Make>
void run(input& in, const hasher& h, Make make) {
  const std::uint64_t key_space = in.in_range(1, 256);
  const scalable_bloom_filter empty = make(h);
  side sides[2] = {side(empty), side(empty)};
  std::optional<scalable_bloom_filter> alien;  // a filter of another hasher, built on first use
  while (!in.empty()) {
    const step st = next_step(in);
    side& s = sides[st.on_b];
    const side& other = sides[!st.on_b];
    switch (st.what) {
      case op::insert:
      case op::concurrent_insert:
      case op::check_and_insert:
        insert(s, key(in, key_space), st.what == op::check_and_insert);
        break;
      case op::insert_many:
        for (std::size_t n = in.byte() % 24; n > 0; --n) insert(s, key(in, key_space), false);
        break;
      case op::query:
      case op::remove:
      case op::intersect: {
        const std::uint64_t k = key(in, key_space);
        FUZZ_CHECK(!s.keys.contains(k) || s.filter.may_contain(k));
        break;
      }
      case op::query_many:
        check_batch_query(s.filter, in, key_space);
        break;
      case op::merge: {
        const bool compatible = s.filter.incompatibility(other.filter).empty();
        const scalable_bloom_filter before = s.filter;
        try {
          s.filter |= other.filter;
          FUZZ_CHECK(compatible);
          s.keys.insert(other.keys.begin(), other.keys.end());
          s.inserted += other.inserted;
          s.merged = true;
        } catch (const std::invalid_argument&) {
          FUZZ_CHECK(!compatible && s.filter == before);
        }
        check_side(s);
        break;
      }
      case op::round_trip:
        s.filter = round_trip(s.filter);
        check_side(s);
        break;
      case op::clear:
        s.filter.clear();
        s.keys.clear();
        s.inserted = 0;
        s.merged = false;
        FUZZ_CHECK(s.filter == empty);
        break;
      case op::bad_merge:
        if (!alien) alien.emplace(make(other_hasher(h)));  // sizing can cost milliseconds
        check_refused_merge(s.filter, *alien);
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
  const target t{in.in_range(1, 16), pick_fpr(in)};
  static constexpr double growths[] = {1.0, 1.5, 2.0, 3.0, 4.0};
  static constexpr double tightenings[] = {0.1, 0.5, 0.85, 0.9, 0.99};
  const scalable_options o{growths[in.byte() % 5], tightenings[in.byte() % 5]};
  run(in, h, [t, o](hasher x) { return scalable_bloom_filter(t, o, x); });
  return 0;
}
