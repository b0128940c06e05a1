// Number formatting for the tables and status lines of the demos, benchmarks and tools.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace bloomery::support {

// printf into a std::string, of any length.
template <class... Args>
std::string fmt(const char* format, Args... args) {
  char buf[256];
  const int len = std::snprintf(buf, sizeof buf, format, args...);
  if (len < 0) return {};
  const auto size = static_cast<std::size_t>(len);
  if (size < sizeof buf) return std::string(buf, size);
  std::string out(size, '\0');
  std::snprintf(out.data(), size + 1, format, args...);
  return out;
}

// 1234567 -> "1,234,567"
inline std::string grouped(std::uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// A count or rate in three significant places at most: 950 -> "950", 12345 -> "12.3k",
// 4.2e6 -> "4.2M".
inline std::string si_count(double v) {
  if (v >= 1e9) return fmt("%.1fG", v / 1e9);
  if (v >= 1e6) return fmt("%.1fM", v / 1e6);
  if (v >= 1e3) return fmt("%.1fk", v / 1e3);
  return fmt("%.0f", v);
}

}  // namespace bloomery::support
