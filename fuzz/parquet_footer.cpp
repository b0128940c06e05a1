// Fuzz target: parquet_file, the reader of Parquet footers and Bloom filter headers
// (interop/parquet.hpp, parquet_thrift.hpp), on the input as a whole file and again as a footer
// framed by valid magic and length, so that mutations reach the Thrift parser. Whatever opens must
// give every chunk's filter or a format_error, and a filter read must answer as the specification's
// bit rule says; nothing may crash, hang or allocate beyond the input's size.
#include <bloomery/interop/parquet.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ops.hpp"

namespace {

namespace pq = bloomery::interop::parquet;

// The specification's rule, written apart from the library's: block ((h >> 32) * z) >> 32, and in
// it bit (uint32(h) * salt[i]) >> 27 of word i, words little-endian.
bool model_contains(std::span<const std::byte> bitset, std::uint64_t h) {
  const std::uint64_t z = bitset.size() / 32;
  const std::uint64_t block = ((h >> 32) * z) >> 32;
  for (std::size_t i = 0; i < 8; ++i) {
    const std::uint32_t bit =
        (static_cast<std::uint32_t>(h) * pq::split_block_filter::salt[i]) >> 27;
    const std::byte b = bitset[block * 32 + 4 * i + bit / 8];
    if (((static_cast<unsigned>(b) >> (bit % 8)) & 1) == 0) return false;
  }
  return true;
}

void check_file(std::vector<std::byte> bytes) {
  std::optional<pq::parquet_file> f;
  try {
    f.emplace(pq::parquet_file::from_bytes(std::move(bytes)));
  } catch (const bloomery::format_error&) {
    return;
  }
  for (std::size_t g = 0; g < f->row_groups().size(); ++g) {
    for (std::size_t c = 0; c < f->row_groups()[g].columns.size(); ++c) {
      std::optional<pq::split_block_filter> filter;
      try {
        filter = f->bloom_filter(g, c);
      } catch (const bloomery::format_error&) {
        continue;
      }
      const bool present = f->row_groups()[g].columns[c].bloom_filter_offset.has_value();
      FUZZ_CHECK(filter.has_value() == present);
      if (!filter) continue;
      const std::vector<std::byte> bits = filter->bitset();
      FUZZ_CHECK(bits.size() == filter->size_in_bytes());
      for (const std::uint64_t h :
           {std::uint64_t{0}, ~std::uint64_t{0}, std::uint64_t{0x9e3779b97f4a7c15},
            pq::split_block_filter::hash(std::int64_t(g * 31 + c))}) {
        FUZZ_CHECK(filter->may_contain_hash(h) == model_contains(bits, h));
      }
      pq::split_block_filter copy = *filter;
      copy.insert_hash(12345);
      FUZZ_CHECK(copy.may_contain_hash(12345));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  const std::span<const std::byte> raw = bloomery_fuzz::as_bytes(in);
  check_file({raw.begin(), raw.end()});
  // The input as a footer: "PAR1", the input, its length, "PAR1".
  std::vector<std::byte> framed = {std::byte{'P'}, std::byte{'A'}, std::byte{'R'}, std::byte{'1'}};
  framed.insert(framed.end(), raw.begin(), raw.end());
  for (int i = 0; i < 4; ++i) framed.push_back(static_cast<std::byte>(size >> (8 * i) & 0xff));
  for (const char c : {'P', 'A', 'R', '1'}) framed.push_back(static_cast<std::byte>(c));
  check_file(std::move(framed));
  return 0;
}
