#include "workload.hpp"

#include <cmath>
#include <utility>

namespace bloomery_lsm_demo {
namespace {

using bloomery::support::absent_offset;
using bloomery::support::splitmix64_at;

constexpr u64 workload_seed = 0x7ead'5eed'0000'0095ULL;  // which reads are absent, which keys

constexpr u64 absent_key(u64 j) noexcept {
  return splitmix64_at(key_seed, absent_offset + j);
}

// A number in [0, n) from 64 random bits. The modulo's bias is below n / 2^64 (under 10^-6 even
// at the full scale's 5 * 10^7 keys), far below anything the demo measures.
u64 below(u64 random, u64 n) noexcept {
  return random % n;
}

}  // namespace

std::vector<read_op> make_workload(u64 reads, double absent_fraction, u64 total_keys) {
  const u64 absent = std::min<u64>(
      reads, static_cast<u64>(std::llround(static_cast<double>(reads) * absent_fraction)));
  std::vector<read_op> ops(reads);
  for (u64 r = 0; r < reads; ++r) {
    if (r < absent) {
      ops[r] = {absent_key(r), 0, true};
    } else {
      const u64 i = below(splitmix64_at(workload_seed, r), total_keys);
      ops[r] = {present_key(i), i, false};
    }
  }
  for (u64 r = reads; r > 1; --r) {  // Fisher-Yates
    const u64 j = below(splitmix64_at(workload_seed, absent_offset + r), r);
    std::swap(ops[r - 1], ops[j]);
  }
  return ops;
}

}  // namespace bloomery_lsm_demo
