// What the crash harness and its writers agree on: the keys of each generation and, for the LSM
// store, the value every key has once a number of flushes is durable. A generation is one
// writer operation (an add, a remove, a save, a flush) of `batch` keys.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <bloomery/results.hpp>

namespace bloomery_crash {

// Key number i of every writer: generation g covers keys g * batch ... (g + 1) * batch - 1.
inline std::string key(std::uint64_t i) {
  std::string k = "k";  // appended: GCC 12 warns falsely (-Wrestrict) on "k" + std::to_string(i)
  return k.append(std::to_string(i));
}

// The LSM writer's flush g puts the keys of generation g with value_of(g, i), overwrites the
// first key of generation g - 1 with overwrite_of(g) and removes its second key, so that a
// reopened store shows whether it kept each write's latest version.
inline std::string value_of(std::uint64_t g, std::uint64_t i) {
  std::string v = "g";
  return v.append(std::to_string(g)).append("i").append(std::to_string(i));
}
inline std::string overwrite_of(std::uint64_t g) {
  std::string v = "g";
  return v.append(std::to_string(g)).append("-overwrite");
}

// Key j's value in a store whose first `flushed` flushes are durable: nullopt when absent.
inline std::optional<std::string> lsm_expected(std::uint64_t j, std::uint64_t batch,
                                               std::uint64_t flushed) {
  const std::uint64_t g = j / batch, i = j % batch;
  if (g >= flushed) return std::nullopt;
  if (g + 1 < flushed && i == 0) return overwrite_of(g + 1);
  if (g + 1 < flushed && i == 1) return std::nullopt;
  return value_of(g, i);
}

// A writer's report to the harness, one line on standard output ("saved 3"); a writer whose
// harness is gone exits, since nobody is left to read them.
inline void report(const char* what, std::uint64_t generation) {
  const std::string line = std::string(what) + " " + std::to_string(generation) + "\n";
  if (::write(STDOUT_FILENO, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    std::exit(4);
  }
}

}  // namespace bloomery_crash
