// Fuzz target: blocked_bloom_filter against the exact set of its keys (diff_bits.hpp). Input: the
// hasher, explicit parameters (1 to 8 blocks of 512 bits, k in [1, 16]) or a target, then the
// operations.
#include <bloomery/blocked_bloom_filter.hpp>
#include <cstddef>
#include <cstdint>

#include "diff_bits.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace bloomery;
  using rules = bloomery_fuzz::bit_rules<blocked_bloom_filter>;
  bloomery_fuzz::input in(data, size);
  const hasher h = bloomery_fuzz::pick_hasher(in);
  const std::uint8_t mode = in.byte();
  // Both query paths (AVX2 where the CPU has it, and the portable one) must keep the promises.
  force_portable_simd((mode & 2) != 0);
  if (mode & 1) {
    const bloom_parameters p{512 * in.in_range(1, 8),
                             static_cast<std::uint32_t>(in.in_range(1, 16))};
    bloomery_fuzz::run_diff<rules>(in, h, [p](hasher x) { return blocked_bloom_filter(p, x); });
  } else {
    const target t{in.in_range(1, 300), bloomery_fuzz::pick_fpr(in)};
    bloomery_fuzz::run_diff<rules>(in, h, [t](hasher x) { return blocked_bloom_filter(t, x); });
  }
  return 0;
}
