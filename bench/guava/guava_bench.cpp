// bloomery's side of bench/guava/run.sh: reads a Guava BloomFilter stream (interop/guava.hpp) and
// answers every key of a key file, round after round, exactly as GuavaBench.java does on the JVM.
// Prints one line per round: the stream read's time in microseconds, the queries' nanoseconds per
// key, and the number of positives (which must equal Guava's).
// Usage: bloomery-guava-bench STREAM string|long KEYFILE ROUNDS
#include <bloomery/interop/guava.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace guava = bloomery::interop::guava;
using clock_type = std::chrono::steady_clock;

double elapsed(clock_type::time_point from, clock_type::time_point to) {
  return std::chrono::duration<double, std::nano>(to - from).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s STREAM string|long KEYFILE ROUNDS\n", argv[0]);
    return 2;
  }
  const std::string stream = argv[1];
  const bool longs = std::string(argv[2]) == "long";
  std::vector<std::string> text;
  std::vector<std::int64_t> numbers;
  std::ifstream in(argv[3]);
  for (std::string line; std::getline(in, line);) {
    if (longs) numbers.push_back(std::stoll(line));
    text.push_back(std::move(line));
  }
  const int rounds = std::stoi(argv[4]);
  const auto funnel = longs ? guava::funnel::int64 : guava::funnel::string;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = clock_type::now();
    const guava::bloom_filter f = guava::bloom_filter::load(stream, funnel);
    const auto t1 = clock_type::now();
    std::uint64_t positives = 0;
    if (longs) {
      for (const std::int64_t k : numbers) positives += f.may_contain(k);
    } else {
      for (const std::string& k : text) positives += f.may_contain(std::string_view(k));
    }
    const auto t2 = clock_type::now();
    std::printf("%.1f %.2f %llu\n", elapsed(t0, t1) / 1e3,
                elapsed(t1, t2) / static_cast<double>(text.size()),
                static_cast<unsigned long long>(positives));
  }
  return 0;
}
