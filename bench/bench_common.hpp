// Helpers shared by the benchmark programs: one key generator (so every program measures the
// same keys for the same n) and the --huge flag.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace bloomery::bench {

// SplitMix64 of a counter: a bijection of i, so disjoint index ranges give disjoint key sets.
inline std::uint64_t mix(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
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
