// Fuzz target: static_filter::build on any key set (duplicates, none, one, a few hundred) against
// the set itself: every key answers "possibly present", key_count() is the number of distinct keys
// and inserted() the number handed in, batched answers equal single ones, and the filter survives
// a round trip. Input: the hasher, the width (an explicit 8 or 16 bits, or a target rate: any
// width 1..32, three or four slots), then two bytes per key.
#include <bloomery/static_filter.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

#include "ops.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace bloomery;
  bloomery_fuzz::input in(data, size);
  const hasher h = bloomery_fuzz::pick_hasher(in);
  const std::uint8_t mode = in.byte();
  std::vector<std::uint64_t> keys;
  while (!in.empty()) keys.push_back(in.u16());
  const std::set<std::uint64_t> distinct(keys.begin(), keys.end());

  static_filter f;
  if (mode & 1) {
    f = static_filter::build(keys, mode & 2 ? fingerprint_width::bits16 : fingerprint_width::bits8,
                             h);
  } else {
    double fpr = bloomery_fuzz::pick_fpr(in);
    f = static_filter::build(keys, fpr < static_filter_min_fpr ? static_filter_min_fpr : fpr, h);
  }
  FUZZ_CHECK(f.key_count() == distinct.size() && f.inserted() == keys.size());
  for (const std::uint64_t k : distinct) FUZZ_CHECK(f.may_contain(k));
  // 2^-f for a filter with keys; the empty filter answers "no" to everything.
  FUZZ_CHECK(f.estimated_fpr() ==
             (distinct.empty() ? 0.0 : std::ldexp(1.0, -static_cast<int>(f.fingerprint_bits()))));

  // Batched answers over the keys and as many absent ones.
  std::vector<std::uint64_t> probes(keys);
  for (std::size_t i = 0; i < keys.size(); ++i) probes.push_back(0x10000 + i);
  std::vector<std::uint8_t> out(probes.size());
  std::size_t positives = 0;
  for (const std::uint64_t k : probes) positives += f.may_contain(k);
  FUZZ_CHECK(f.may_contain_many(probes, out) == positives);
  for (std::size_t i = 0; i < probes.size(); ++i)
    FUZZ_CHECK((out[i] != 0) == f.may_contain(probes[i]));

  const filter_stats st = f.stats();
  FUZZ_CHECK(st.size_in_bytes == f.size_in_bytes() && st.approximate_count == distinct.size());
  const static_filter g = bloomery_fuzz::round_trip(f);
  for (const std::uint64_t k : distinct) FUZZ_CHECK(g.may_contain(k));
  return 0;
}
