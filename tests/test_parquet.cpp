// Parquet's split-block Bloom filters (interop/parquet.hpp) against files DuckDB 1.5.6 wrote
// (tests/data/parquet, with DuckDB's own answers in expected.json): every chunk's filter is found
// where DuckDB put it, answers every probe as DuckDB's parquet_bloom_probe did, and is rebuilt bit
// for bit from the chunk's distinct values. tests/parquet compares with DuckDB running beside;
// this file keeps the facts that need no npm, and the footer reader's refusals.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <bloomery/interop/parquet.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace pq = bloomery::interop::parquet;
using nlohmann::json;

namespace {

const std::filesystem::path data_dir = std::filesystem::path(BLOOMERY_TEST_DATA_DIR) / "parquet";

json expected() {
  std::ifstream in(data_dir / "expected.json");
  return json::parse(in);
}

std::vector<std::byte> read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

TEST(ParquetGolden, AnswersAndBitsetsAreDuckDBs) {
  std::size_t probes = 0, chunks = 0;
  const json all = expected();
  for (const json& file : all["files"]) {
    const auto f = pq::parquet_file::open(data_dir / file["file"].get<std::string>());
    ASSERT_EQ(f.row_groups().size(), file["row_groups"].size());
    for (const json& column : file["columns"]) {
      const std::string path = column["path"];
      const auto index = f.column_index(path);
      ASSERT_TRUE(index) << path;
      const pq::physical_type type = f.row_groups()[0].columns[*index].type;
      EXPECT_EQ(pq::to_string(type), column["physical_type"].get<std::string>());
      std::vector<std::optional<pq::split_block_filter>> filters;
      for (const json& chunk : column["chunks"]) {
        const std::size_t g = chunk["row_group"];
        filters.push_back(f.bloom_filter(g, *index));
        const auto& meta = f.row_groups()[g].columns[*index];
        if (chunk["bloom_filter_offset"].is_null()) {
          EXPECT_FALSE(filters.back()) << path << " row group " << g;
          continue;
        }
        ++chunks;
        ASSERT_TRUE(filters.back()) << path << " row group " << g;
        EXPECT_EQ(*meta.bloom_filter_offset, chunk["bloom_filter_offset"].get<std::int64_t>());
        EXPECT_EQ(filters.back()->size_in_bytes(), chunk["num_bytes"].get<std::uint32_t>());
        // What bloomery writes for the filter, header included, is what DuckDB wrote there.
        const auto raw = read_all(data_dir / file["file"].get<std::string>());
        const auto at = static_cast<std::size_t>(*meta.bloom_filter_offset);
        const std::vector<std::byte> written = filters.back()->serialize();
        ASSERT_LE(at + written.size(), raw.size());
        EXPECT_TRUE(std::equal(written.begin(), written.end(),
                               raw.begin() + static_cast<std::ptrdiff_t>(at)))
            << path << " row group " << g;
        EXPECT_EQ(written.size(), chunk["bloom_filter_length"].get<std::size_t>());
        // The bitset rebuilt from the chunk's distinct values is DuckDB's, bit for bit.
        pq::split_block_filter rebuilt(filters.back()->size_in_bytes());
        for (const json& v : chunk["distinct"]) {
          rebuilt.insert_hash(*pq::hash_text_key(type, v.get<std::string>()));
        }
        EXPECT_EQ(rebuilt, *filters.back()) << path << " row group " << g;
      }
      for (const json& probe : column["probes"]) {
        const auto h = pq::hash_text_key(type, probe["key"].get<std::string>());
        ASSERT_TRUE(h) << probe["key"];
        for (std::size_t g = 0; g < filters.size(); ++g) {
          if (!filters[g]) continue;
          ++probes;
          EXPECT_EQ(!filters[g]->may_contain_hash(*h), probe["excludes"][g].get<bool>())
              << path << " key " << probe["key"] << " row group " << g;
        }
      }
    }
  }
  EXPECT_GT(chunks, 20u) << "filters compared";
  EXPECT_GT(probes, 1000u);
}

TEST(ParquetFilter, SerializesAsTheSpecification) {
  pq::split_block_filter f(64);
  f.insert_hash(pq::split_block_filter::hash(std::int64_t{7}));
  const auto bytes = f.serialize();
  // numBytes 64 (zigzag 128: 0x80 0x01), then BLOCK, XXHASH, UNCOMPRESSED, stop; then 64 bytes.
  const std::vector<std::uint8_t> header = {0x15, 0x80, 0x01, 0x1c, 0x1c, 0, 0, 0x1c,
                                            0x1c, 0,    0,    0x1c, 0x1c, 0, 0, 0};
  ASSERT_EQ(bytes.size(), header.size() + 64);
  for (std::size_t i = 0; i < header.size(); ++i) EXPECT_EQ(bytes[i], std::byte{header[i]}) << i;
  EXPECT_EQ(pq::split_block_filter::from_bitset(std::span(bytes).subspan(header.size())), f);
  EXPECT_THROW(pq::split_block_filter(48), std::invalid_argument);
  EXPECT_THROW((void)pq::split_block_filter::from_bitset(std::span(bytes).subspan(0, 40)),
               bloomery::format_error);
}

TEST(ParquetKeys, TextIsReadAsTheColumnsType) {
  EXPECT_EQ(pq::hash_text_key(pq::physical_type::int32, "+5"),
            pq::split_block_filter::hash(std::int32_t{5}));
  EXPECT_FALSE(pq::hash_text_key(pq::physical_type::int32, "2147483648"));
  EXPECT_FALSE(pq::hash_text_key(pq::physical_type::int64, "1.5"));
  EXPECT_FALSE(pq::hash_text_key(pq::physical_type::int64, "+-1"));
  EXPECT_FALSE(pq::hash_text_key(pq::physical_type::float64, ""));
  EXPECT_EQ(pq::hash_text_key(pq::physical_type::float64, "1e999"),
            pq::split_block_filter::hash(std::numeric_limits<double>::infinity()));
  EXPECT_EQ(pq::hash_text_key(pq::physical_type::float32, "-5e-324"),
            pq::split_block_filter::hash(-0.0f));
  EXPECT_FALSE(pq::hash_text_key(pq::physical_type::float64, "1e999x"));
  EXPECT_EQ(pq::hash_text_key(pq::physical_type::float32, "0.1"),
            pq::split_block_filter::hash(0.1f));
  EXPECT_THROW((void)pq::hash_text_key(pq::physical_type::boolean, "1"), std::invalid_argument);
}

// `bytes` as a file, opened, with every chunk's filter read; throws what the reader throws.
void open_and_read_all(const std::vector<std::byte>& bytes) {
  const bloomery::support::temp_dir dir;
  const auto path = dir.path() / "f.parquet";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  const auto f = pq::parquet_file::open(path);
  for (std::size_t g = 0; g < f.row_groups().size(); ++g) {
    for (std::size_t c = 0; c < f.row_groups()[g].columns.size(); ++c) (void)f.bloom_filter(g, c);
  }
}

// A damaged copy of the golden file: every refusal is a format_error, never another exception.
void expect_refused(const std::vector<std::byte>& bytes, const std::string& part) {
  try {
    open_and_read_all(bytes);
    ADD_FAILURE() << "accepted a file damaged by " << part;
  } catch (const bloomery::format_error& e) {
    EXPECT_NE(std::string(e.what()).find("bloomery: Parquet"), std::string::npos) << e.what();
  }
}

TEST(ParquetFile, RefusesDamage) {
  const auto good = read_all(data_dir / "golden.parquet");
  expect_refused({}, "emptiness");
  expect_refused({good.begin(), good.begin() + 100}, "truncation");
  auto magic = good;
  magic[0] = std::byte{'X'};
  expect_refused(magic, "a bad leading magic");
  auto length = good;
  length[length.size() - 5] = std::byte{0x7f};
  expect_refused(length, "a footer length past the start");
  const std::uint32_t footer_len = static_cast<std::uint32_t>(good[good.size() - 8]) |
                                   static_cast<std::uint32_t>(good[good.size() - 7]) << 8 |
                                   static_cast<std::uint32_t>(good[good.size() - 6]) << 16 |
                                   static_cast<std::uint32_t>(good[good.size() - 5]) << 24;
  auto zeroed = good;
  std::fill(zeroed.end() - 8 - footer_len, zeroed.end() - 8, std::byte{0});
  expect_refused(zeroed, "a zeroed footer");
}

// Any footer bytes: the reader accepts or refuses with format_error, never crashes or loops.
RC_GTEST_PROP(ParquetFile, AnyFooterIsReadOrRefused, (std::vector<std::uint8_t> footer)) {
  std::vector<std::byte> bytes = {std::byte{'P'}, std::byte{'A'}, std::byte{'R'}, std::byte{'1'}};
  for (const std::uint8_t b : footer) bytes.push_back(std::byte{b});
  const auto n = static_cast<std::uint32_t>(footer.size());
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<std::byte>(n >> (8 * i) & 0xff));
  for (const char c : {'P', 'A', 'R', '1'}) bytes.push_back(static_cast<std::byte>(c));
  try {
    open_and_read_all(bytes);
  } catch (const bloomery::format_error&) {
  }
}

}  // namespace
