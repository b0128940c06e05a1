// Fuzz target: counting_bloom_filter against the exact multiset of its keys. No false negative
// ever; remove() of a key in the multiset succeeds, and of a key the filter rules out is refused
// with nothing changed; inserted() is the multiset's size; and while no counter has saturated the
// filter is counter for counter the one built from the multiset alone (unions included, as
// documented for |=). Input: the hasher, explicit parameters or a target, then the operations.
#include <bloomery/counting_bloom_filter.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <vector>

#include "ops.hpp"

namespace {

using namespace bloomery;
using namespace bloomery_fuzz;

struct side {
  explicit side(const counting_bloom_filter& f) : filter(f) {}
  counting_bloom_filter filter;
  std::map<std::uint64_t, std::uint64_t> keys;  // key -> copies inserted and not removed
  std::uint64_t total = 0;
};

void check_side(const side& s, const counting_bloom_filter& empty) {
  for (const auto& [k, copies] : s.keys) FUZZ_CHECK(s.filter.may_contain(k));
  FUZZ_CHECK(s.filter.inserted() == s.total);
  if (s.filter.saturated_count() == 0) {
    counting_bloom_filter rebuilt = empty;
    for (const auto& [k, copies] : s.keys) {
      for (std::uint64_t i = 0; i < copies; ++i) rebuilt.insert(k);
    }
    FUZZ_CHECK(rebuilt == s.filter);
  }
  const filter_stats st = s.filter.stats();
  FUZZ_CHECK(st.inserted == s.total && st.estimated_fpr >= 0.0 && st.estimated_fpr <= 1.0);
  FUZZ_CHECK(st.fill_ratio && *st.fill_ratio >= 0.0 && *st.fill_ratio <= 1.0);
  FUZZ_CHECK(s.filter.saturated_count() <= s.filter.nonzero_count());
}

void add(side& s, std::uint64_t k) {
  ++s.keys[k];
  ++s.total;
}

template <class Make>
void run(input& in, const hasher& h, Make make) {
  const std::uint64_t key_space = in.in_range(1, 256);
  const counting_bloom_filter empty = make(h);
  side sides[2] = {side(empty), side(empty)};
  std::optional<counting_bloom_filter> alien;  // a filter of another hasher, built on first use
  while (!in.empty()) {
    const step st = next_step(in);
    side& s = sides[st.on_b];
    const side& other = sides[!st.on_b];
    switch (st.what) {
      case op::insert:
      case op::concurrent_insert: {
        const std::uint64_t k = key(in, key_space);
        s.filter.insert(k);
        add(s, k);
        FUZZ_CHECK(s.filter.may_contain(k));
        break;
      }
      case op::insert_many:
        for (std::size_t n = in.byte() % 24; n > 0; --n) {
          const std::uint64_t k = key(in, key_space);
          s.filter.insert(k);
          add(s, k);
        }
        break;
      case op::check_and_insert: {
        const std::uint64_t k = key(in, key_space);
        const bool before = s.filter.may_contain(k);
        const insert_result r = s.filter.check_and_insert(k);
        FUZZ_CHECK(r == (before ? insert_result::already_present : insert_result::inserted));
        FUZZ_CHECK(!s.keys.contains(k) || before);
        add(s, k);
        break;
      }
      case op::remove: {
        const std::uint64_t k = key(in, key_space);
        const auto it = s.keys.find(k);
        if (it != s.keys.end()) {
          FUZZ_CHECK(s.filter.remove(k) == remove_result::removed);
          if (--it->second == 0) s.keys.erase(it);
          --s.total;
        } else if (!s.filter.may_contain(k)) {
          const counting_bloom_filter before = s.filter;
          FUZZ_CHECK(s.filter.remove(k) == remove_result::not_present);
          FUZZ_CHECK(s.filter == before && s.filter.inserted() == s.total);
        }  // else a false positive: removing it is the misuse the header warns about
        break;
      }
      case op::query:
      case op::intersect: {
        const std::uint64_t k = key(in, key_space);
        FUZZ_CHECK(!s.keys.contains(k) || s.filter.may_contain(k));
        break;
      }
      case op::query_many:
        check_batch_query(s.filter, in, key_space);
        break;
      case op::merge:
        s.filter |= other.filter;
        for (const auto& [k, copies] : other.keys) s.keys[k] += copies;
        s.total += other.total;
        check_side(s, empty);
        break;
      case op::round_trip:
        s.filter = round_trip(s.filter);
        check_side(s, empty);
        break;
      case op::clear:
        s.filter.clear();
        s.keys.clear();
        s.total = 0;
        FUZZ_CHECK(s.filter == empty);
        break;
      case op::bad_merge:
        if (!alien) alien.emplace(make(other_hasher(h)));  // sizing can cost milliseconds
        check_refused_merge(s.filter, *alien);
        break;
    }
  }
  check_side(sides[0], empty);
  check_side(sides[1], empty);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  input in(data, size);
  const hasher h = pick_hasher(in);
  const std::uint8_t mode = in.byte();
  const std::uint32_t counter_bits = mode & 2 ? 8 : 4;
  if (mode & 1) {
    const counting_parameters p{
        in.in_range(1, 2048), static_cast<std::uint32_t>(in.in_range(1, max_hashes)), counter_bits};
    run(in, h, [p](hasher x) { return counting_bloom_filter(p, x); });
  } else {
    const target t{in.in_range(1, 300), pick_fpr(in)};
    run(in, h, [t, counter_bits](hasher x) { return counting_bloom_filter(t, {counter_bits}, x); });
  }
  return 0;
}
