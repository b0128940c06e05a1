// The demo's command line: its settings, their checks and --help.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>

namespace bloomery_lsm_demo {

namespace fs = std::filesystem;
using u64 = std::uint64_t;

constexpr const char* program = "bloomery-lsm-demo";

// A bad command line: main prints it with the usage hint and exits 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct config {
  u64 tables = 10;
  u64 keys_per_table = 500'000;
  double fpr = 0.01;
  double absent_fraction = 0.95;
  u64 reads = 0;  // 0 until parsed: the default depends on --read-latency-us
  bool reads_given = false;
  std::uint32_t read_latency_us = 0;
  bool cold = false;
  bool keep = false;
  bool json = false;
  std::optional<fs::path> dir;
};

// The settings of argv, checked; throws usage_error. --help prints the usage and exits 0.
config parse_args(int argc, char** argv);

}  // namespace bloomery_lsm_demo
