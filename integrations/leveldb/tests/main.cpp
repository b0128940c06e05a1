// test_leveldb_filter_policy: runs the GoogleTest tests, or with --benchmark the benchmark
// against LevelDB's built-in filter (docs/leveldb.md).
//
//   test_leveldb_filter_policy [--keys=N] [gtest flags]   keys written by the database tests
//   test_leveldb_filter_policy --benchmark [--keys=N] [--runs=R] [--queries=Q] [--value-size=V]
//                                          [--fpr-queries=F] [--bits-per-key=B] [--json]
//
// BLOOMERY_LEVELDB_KEYS sets the database tests' key count when --keys is not given.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "leveldb_support.hpp"

namespace {

bool parse_count(const char* text, std::uint64_t* out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || v == 0) return false;
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--benchmark") == 0) {
      try {
        return bloomery::leveldb_test::run_benchmark(argc, argv);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "benchmark failed: %s\n", e.what());
        return 1;
      }
    }
  }
  ::testing::InitGoogleTest(&argc, argv);  // removes the flags it knows
  auto& keys = bloomery::leveldb_test::database_keys();
  if (const char* env = std::getenv("BLOOMERY_LEVELDB_KEYS"); env != nullptr && *env != '\0') {
    if (!parse_count(env, &keys)) {
      std::fprintf(stderr, "BLOOMERY_LEVELDB_KEYS=%s is not a positive count\n", env);
      return 2;
    }
  }
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--keys=", 0) == 0 && parse_count(arg.c_str() + 7, &keys)) continue;
    std::fprintf(stderr, "unknown argument '%s' (see the top of main.cpp)\n", argv[i]);
    return 2;
  }
  std::printf("database tests write %llu keys\n", static_cast<unsigned long long>(keys));
  return RUN_ALL_TESTS();
}
