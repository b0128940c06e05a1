// Fuzz target: bloom_filter against the exact set of its keys (diff_bits.hpp). Input: the hasher,
// explicit parameters (m in [1, 4096], k in [1, 255]) or a target, then the operations.
#include <bloomery/bloom_filter.hpp>
#include <cstddef>
#include <cstdint>

#include "diff_bits.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace bloomery;
  using rules = bloomery_fuzz::bit_rules<bloom_filter>;
  bloomery_fuzz::input in(data, size);
  const hasher h = bloomery_fuzz::pick_hasher(in);
  if (in.byte() & 1) {
    const bloom_parameters p{in.in_range(1, 4096),
                             static_cast<std::uint32_t>(in.in_range(1, max_hashes))};
    bloomery_fuzz::run_diff<rules>(in, h, [p](hasher x) { return bloom_filter(p, x); });
  } else {
    const target t{in.in_range(1, 300), bloomery_fuzz::pick_fpr(in)};
    bloomery_fuzz::run_diff<rules>(in, h, [t](hasher x) { return bloom_filter(t, x); });
  }
  return 0;
}
