// bloomery's side of bench/parquet/run.sh: opens a Parquet file, reads one column's Bloom filters
// (interop/parquet.hpp) and probes every key of a key file against every row group, round after
// round, as duckdb_bench.mjs does with DuckDB's parquet_bloom_probe. Prints per round the
// nanoseconds per key (the file's footer and filters read anew each round) and the number of
// (key, row group) pairs the filters did not exclude, which must equal DuckDB's.
// Usage: bloomery-parquet-bench FILE COLUMN KEYFILE ROUNDS   (an INT64 column, decimal keys)
#include <bloomery/interop/parquet.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  namespace pq = bloomery::interop::parquet;
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s FILE COLUMN KEYFILE ROUNDS\n", argv[0]);
    return 2;
  }
  std::vector<std::int64_t> keys;
  std::ifstream in(argv[3]);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) keys.push_back(std::stoll(line));
  }
  const int rounds = std::stoi(argv[4]);
  for (int r = 0; r < rounds; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const pq::parquet_file f = pq::parquet_file::open(argv[1]);
    const std::size_t column = f.column_index(argv[2]).value();
    std::vector<std::optional<pq::split_block_filter>> filters;
    for (std::size_t g = 0; g < f.row_groups().size(); ++g)
      filters.push_back(f.bloom_filter(g, column));
    std::uint64_t maybe = 0;
    for (const std::int64_t k : keys) {
      const std::uint64_t h = pq::split_block_filter::hash(k);
      for (const auto& filter : filters) maybe += !filter || filter->may_contain_hash(h);
    }
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    std::printf("%.1f %llu\n", ns / static_cast<double>(keys.size()),
                static_cast<unsigned long long>(maybe));
  }
  return 0;
}
