// What the demos share: the splitmix64 key streams (present and absent keys that can never be
// equal) and number formatting for their tables.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace bloomery_demo {

using u64 = std::uint64_t;

inline constexpr u64 golden_gamma = 0x9e37'79b9'7f4a'7c15ULL;
// Absent keys are drawn from stream positions at and above 2^63, present keys from below it.
inline constexpr u64 absent_offset = u64{1} << 63;

// Output number `i` of splitmix64 seeded with `seed`, by random access. The state
// seed + (i + 1) * gamma is a bijection of i (gamma is odd) and the finalizer a bijection of the
// state, so distinct positions give distinct outputs: a key from position >= 2^63 can never
// equal one from below it.
constexpr u64 splitmix64_at(u64 seed, u64 i) noexcept {
  u64 z = seed + (i + 1) * golden_gamma;
  z = (z ^ (z >> 30)) * 0xbf58'476d'1ce4'e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d0'49bb'1331'11ebULL;
  return z ^ (z >> 31);
}

template <class... Args>
std::string fmt(const char* format, Args... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

// 1234567 -> "1,234,567"
inline std::string grouped(u64 v) {
  const std::string digits = std::to_string(v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace bloomery_demo
