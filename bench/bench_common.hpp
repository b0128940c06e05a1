// What the benchmark programs share, so that every program measures the same keys for the same n:
// the run's constants, the key streams and the --huge flag.
#pragma once

#include <bloomery/support/keys.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace bloomery::bench {

inline constexpr double kFpr = 0.01;                             // every sized filter's target
inline constexpr std::size_t kBatch = 1024;                      // keys per timed iteration
inline constexpr std::size_t kFprProbes = std::size_t{1} << 22;  // absent probes per filter

// Keys are outputs of one splitmix64 stream (support::splitmix64_at, a bijection of the position),
// at disjoint position ranges: present keys [0, n), the timed absent stream [kAbsentBase, +Q), the
// FPR probes [kFprBase, +kFprProbes). So the three sets never share a key.
inline constexpr std::uint64_t kSeed = 0x0123456789abcdefULL;
inline constexpr std::uint64_t kAbsentBase = std::uint64_t{1} << 40;
inline constexpr std::uint64_t kFprBase = std::uint64_t{1} << 41;

// Stream positions first, first + 1, ..., first + count - 1: uint64 keys.
inline std::vector<std::uint64_t> keys_at(std::uint64_t first, std::size_t count) {
  return support::keys_at(kSeed, first, count);
}

// The length Q of a timed key stream for n keys: a power of two (so a walk wraps with a mask), a
// multiple of kBatch, at least 2^16 and at most 2^22.
inline std::size_t stream_length(std::uint64_t n) {
  return std::clamp<std::size_t>(std::bit_ceil(static_cast<std::size_t>(n)), std::size_t{1} << 16,
                                 std::size_t{1} << 22);
}

// True when --huge is on the command line or BLOOMERY_BENCH_HUGE=1; removes --huge from argv
// (Google Benchmark rejects flags it does not know).
inline bool take_huge_flag(int& argc, char** argv) {
  bool huge = false;
  if (const char* e = std::getenv("BLOOMERY_BENCH_HUGE");
      e != nullptr && std::strcmp(e, "1") == 0) {
    huge = true;
  }
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--huge") == 0) {
      huge = true;
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  argv[argc] = nullptr;
  return huge;
}

}  // namespace bloomery::bench
