// Parquet's split-block Bloom filters (SBBF), bit-exact with the Parquet format specification
// (parquet-format's BloomFilter.md), and the reading of them straight from Parquet files: the
// footer and the filters only, never a data page. Writers (Arrow, Spark through parquet-java,
// DuckDB, Impala) put a filter in the column chunks they choose (DuckDB: the dictionary-encoded
// ones); a reader asks each row group's filter whether it may hold a key and skips those that
// cannot. docs/interop.md has the format and the formulas;
// tests/parquet checks every answer and bitset against DuckDB's.
//
//   filter   z blocks of 256 bits, each eight 32-bit words (little-endian in the file); a value's
//            hash h = XXH64(plain encoding of the value, seed 0); its block is
//            ((h >> 32) * z) >> 32; in that block, word i gets bit (uint32(h) * salt[i]) >> 27
//   header   a Thrift compact BloomFilterHeader {1: numBytes, 2: algorithm BLOCK, 3: hash XXHASH,
//            4: compression UNCOMPRESSED} right before the bitset
//   values   BYTE_ARRAY: its bytes (no length prefix); INT32, INT64: 4 or 8 bytes little-endian;
//            FLOAT, DOUBLE: the IEEE 754 bits, 4 or 8 bytes little-endian
//
// Everything read from a file is checked before it is trusted (parquet_thrift.hpp bounds the
// footer's parser); a bad file is a bloomery::format_error starting "bloomery: Parquet ", and I/O
// errors are std::system_error. Thread safety: as a std::vector; a parquet_file is read-only once
// opened, so concurrent calls on it are safe.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <bit>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "bloomery/errors.hpp"
#include "bloomery/file.hpp"
#include "bloomery/interop/parquet_thrift.hpp"

namespace bloomery::interop::parquet {

// Parquet's physical types, by the numbers its footer stores.
enum class physical_type : std::int32_t {
  boolean = 0,
  int32 = 1,
  int64 = 2,
  int96 = 3,
  float32 = 4,
  float64 = 5,
  byte_array = 6,
  fixed_len_byte_array = 7,
};

// As Parquet spells them: "BOOLEAN", "INT32", ..., "FIXED_LEN_BYTE_ARRAY".
constexpr std::string_view to_string(physical_type t) noexcept {
  switch (t) {
    case physical_type::boolean:
      return "BOOLEAN";
    case physical_type::int32:
      return "INT32";
    case physical_type::int64:
      return "INT64";
    case physical_type::int96:
      return "INT96";
    case physical_type::float32:
      return "FLOAT";
    case physical_type::float64:
      return "DOUBLE";
    case physical_type::byte_array:
      return "BYTE_ARRAY";
    case physical_type::fixed_len_byte_array:
      return "FIXED_LEN_BYTE_ARRAY";
  }
  return "UNKNOWN";
}

// A split-block Bloom filter: the bitset of one column chunk.
class split_block_filter {
 public:
  static constexpr std::uint32_t salt[8] = {0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
                                            0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U};
  static constexpr std::uint32_t block_bytes = 32;
  // The specification's bound on a filter's bitset.
  static constexpr std::uint32_t max_bytes = 128u << 20;

  // An empty filter of `bytes` bytes: a multiple of 32 in [32, 128 MiB] (writers use powers of
  // two; any multiple reads the same way). Throws std::invalid_argument otherwise.
  explicit split_block_filter(std::uint32_t bytes) {
    if (bytes < block_bytes || bytes > max_bytes || bytes % block_bytes != 0) {
      throw std::invalid_argument(
          "bloomery: a split-block Bloom filter has a multiple of 32 "
          "bytes from 32 to 128 MiB, not " +
          std::to_string(bytes));
    }
    try {
      words_.assign(bytes / 4, 0);
    } catch (const std::bad_alloc&) {
      throw allocation_error(bytes, "a split-block Bloom filter");
    }
  }

  // The filter whose bitset is `bitset`, as stored (words little-endian).
  static split_block_filter from_bitset(std::span<const std::byte> bitset) {
    if (bitset.size() < block_bytes || bitset.size() > max_bytes ||
        bitset.size() % block_bytes != 0) {
      throw format_error("bloomery: Parquet Bloom filter: a bitset of " +
                         std::to_string(bitset.size()) +
                         " bytes (it must be a multiple of 32 from 32 to 128 MiB)");
    }
    split_block_filter f(static_cast<std::uint32_t>(bitset.size()));
    for (std::size_t i = 0; i < f.words_.size(); ++i) {
      std::uint32_t w = 0;
      for (std::size_t b = 0; b < 4; ++b) {
        w |= static_cast<std::uint32_t>(bitset[4 * i + b]) << (8 * b);
      }
      f.words_[i] = w;
    }
    return f;
  }

  // XXH64 with seed 0 of a value's plain encoding.
  static std::uint64_t hash_bytes(std::span<const std::byte> plain) noexcept {
    return XXH64(plain.data(), plain.size(), 0);
  }
  static std::uint64_t hash(std::string_view byte_array) noexcept {
    return hash_bytes(std::as_bytes(std::span(byte_array.data(), byte_array.size())));
  }
  static std::uint64_t hash(std::int32_t v) noexcept {
    return hash_le(static_cast<std::uint32_t>(v), 4);
  }
  static std::uint64_t hash(std::int64_t v) noexcept {
    return hash_le(static_cast<std::uint64_t>(v), 8);
  }
  static std::uint64_t hash(float v) noexcept {
    return hash_le(std::bit_cast<std::uint32_t>(v), 4);
  }
  static std::uint64_t hash(double v) noexcept {
    return hash_le(std::bit_cast<std::uint64_t>(v), 8);
  }

  void insert_hash(std::uint64_t h) noexcept {
    std::uint32_t* block = words_.data() + block_of(h) * 8;
    for (std::size_t i = 0; i < 8; ++i) block[i] |= bit_of(h, i);
  }
  bool may_contain_hash(std::uint64_t h) const noexcept {
    const std::uint32_t* block = words_.data() + block_of(h) * 8;
    for (std::size_t i = 0; i < 8; ++i) {
      if ((block[i] & bit_of(h, i)) == 0) return false;
    }
    return true;
  }

  std::uint32_t size_in_bytes() const noexcept {
    return static_cast<std::uint32_t>(words_.size() * 4);
  }
  std::uint32_t blocks() const noexcept { return size_in_bytes() / block_bytes; }

  // The bitset as a file stores it.
  std::vector<std::byte> bitset() const {
    std::vector<std::byte> out(words_.size() * 4);
    for (std::size_t i = 0; i < words_.size(); ++i) {
      for (std::size_t b = 0; b < 4; ++b)
        out[4 * i + b] = static_cast<std::byte>(words_[i] >> (8 * b) & 0xff);
    }
    return out;
  }

  // The BloomFilterHeader a writer puts before the bitset, then the bitset: what a Parquet file
  // holds at the column chunk's bloom_filter_offset.
  std::vector<std::byte> serialize() const {
    std::vector<std::byte> out;
    const auto put = [&](std::uint8_t b) { out.push_back(static_cast<std::byte>(b)); };
    put(0x15);  // field 1, i32: numBytes, zigzag varint
    for (std::uint64_t v = std::uint64_t{size_in_bytes()} << 1;; v >>= 7) {
      if (v < 0x80) {
        put(static_cast<std::uint8_t>(v));
        break;
      }
      put(static_cast<std::uint8_t>(v & 0x7f) | 0x80);
    }
    // Fields 2, 3 and 4: a union holding field 1, an empty struct (BLOCK, XXHASH, UNCOMPRESSED).
    for (int field = 2; field <= 4; ++field) {
      put(0x1c);
      put(0x1c);
      put(0x00);
      put(0x00);
    }
    put(0x00);
    const std::vector<std::byte> bits = bitset();
    out.insert(out.end(), bits.begin(), bits.end());
    return out;
  }

  friend bool operator==(const split_block_filter&, const split_block_filter&) = default;

 private:
  static std::uint64_t hash_le(std::uint64_t v, std::size_t n) noexcept {
    std::byte b[8];
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::byte>(v >> (8 * i) & 0xff);
    return hash_bytes({b, n});
  }
  std::size_t block_of(std::uint64_t h) const noexcept {
    return static_cast<std::size_t>(((h >> 32) * blocks()) >> 32);
  }
  static std::uint32_t bit_of(std::uint64_t h, std::size_t i) noexcept {
    return std::uint32_t{1} << ((static_cast<std::uint32_t>(h) * salt[i]) >> 27);
  }

  std::vector<std::uint32_t> words_;
};

// Whether bloomery reads keys of this physical type: BYTE_ARRAY, INT32, INT64, FLOAT, DOUBLE.
constexpr bool has_keys(physical_type t) noexcept {
  return t == physical_type::byte_array || t == physical_type::int32 || t == physical_type::int64 ||
         t == physical_type::float32 || t == physical_type::float64;
}

// A key given as text, read as a value of the column's physical type and hashed as the filter
// hashes it. BYTE_ARRAY: the text's bytes; INT32, INT64: a signed decimal integer in range;
// FLOAT, DOUBLE: a decimal number (or inf, nan) rounded to the nearest value of the type (beyond
// its range: 0 or an infinity, with the sign). nullopt
// when the text is not such a value; std::invalid_argument for a type without keys (has_keys).
inline std::optional<std::uint64_t> hash_text_key(physical_type t, std::string_view text) {
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (t != physical_type::byte_array && !text.empty() && text.front() == '+') {
    ++first;  // from_chars takes a '-' but not a '+'
    if (first != last && *first == '-') return std::nullopt;
  }
  const auto whole = [&](const std::from_chars_result& r) {
    return r.ec == std::errc() && r.ptr == last && first != last;
  };
  switch (t) {
    case physical_type::byte_array:
      return split_block_filter::hash(text);
    case physical_type::int32: {
      std::int32_t v = 0;
      if (!whole(std::from_chars(first, last, v))) return std::nullopt;
      return split_block_filter::hash(v);
    }
    case physical_type::int64: {
      std::int64_t v = 0;
      if (!whole(std::from_chars(first, last, v))) return std::nullopt;
      return split_block_filter::hash(v);
    }
    case physical_type::float32: {
      float v = 0;
      const auto r = std::from_chars(first, last, v);
      // Beyond the range the nearest value is 0 (or a subnormal) or an infinity, as strtof says.
      if (r.ec == std::errc::result_out_of_range && r.ptr == last) {
        v = std::strtof(std::string(first, last).c_str(), nullptr);
      } else if (!whole(r)) {
        return std::nullopt;
      }
      return split_block_filter::hash(v);
    }
    case physical_type::float64: {
      double v = 0;
      const auto r = std::from_chars(first, last, v);
      if (r.ec == std::errc::result_out_of_range && r.ptr == last) {
        v = std::strtod(std::string(first, last).c_str(), nullptr);
      } else if (!whole(r)) {
        return std::nullopt;
      }
      return split_block_filter::hash(v);
    }
    default:
      break;
  }
  throw std::invalid_argument("bloomery: Parquet " + std::string(to_string(t)) +
                              " columns have no keys bloomery reads (BYTE_ARRAY, INT32, INT64, "
                              "FLOAT and DOUBLE do)");
}

// One column chunk as the footer describes it.
struct column_chunk {
  std::string path;  // path_in_schema joined with '.'
  physical_type type = physical_type::byte_array;
  std::optional<std::int64_t> bloom_filter_offset;
  std::optional<std::int32_t> bloom_filter_length;  // absent in files of older writers
  bool has_bloom_filter() const noexcept { return bloom_filter_offset.has_value(); }
};

struct row_group {
  std::int64_t num_rows = 0;
  std::vector<column_chunk> columns;
};

namespace detail {

// ColumnMetaData: type (1), path_in_schema (3), bloom_filter_offset (14), bloom_filter_length (15).
inline void read_column_metadata(thrift_reader& r, column_chunk& c) {
  r.enter();
  bool typed = false, pathed = false;
  std::int16_t last = 0;
  for (auto f = r.next_field(last); f.type != thrift_type::stop; f = r.next_field(last)) {
    if (f.id == 1 && f.type == thrift_type::i32) {
      const std::int32_t t = r.i32();
      if (t < 0 || t > 7) r.fail("a physical type " + std::to_string(t) + " Parquet does not have");
      c.type = static_cast<physical_type>(t);
      typed = true;
    } else if (f.id == 3 && f.type == thrift_type::list) {
      const auto h = r.list();
      if (h.element != thrift_type::binary)
        r.fail("a path_in_schema that is not a list of strings");
      c.path.clear();
      for (std::size_t i = 0; i < h.size; ++i) {
        if (i > 0) c.path += '.';
        c.path += r.binary();
      }
      pathed = true;
    } else if (f.id == 14 && f.type == thrift_type::i64) {
      c.bloom_filter_offset = r.zigzag();
    } else if (f.id == 15 && f.type == thrift_type::i32) {
      c.bloom_filter_length = r.i32();
    } else {
      r.skip(f.type);
    }
  }
  r.leave();
  if (!typed || !pathed) r.fail("a column chunk's metadata without its type or path");
}

// ColumnChunk: meta_data (3); a chunk without it (an encrypted column) is refused.
inline column_chunk read_column_chunk(thrift_reader& r) {
  r.enter();
  column_chunk c;
  bool has_meta = false;
  std::int16_t last = 0;
  for (auto f = r.next_field(last); f.type != thrift_type::stop; f = r.next_field(last)) {
    if (f.id == 3 && f.type == thrift_type::struct_) {
      read_column_metadata(r, c);
      has_meta = true;
    } else {
      r.skip(f.type);
    }
  }
  r.leave();
  if (!has_meta) r.fail("a column chunk without metadata (an encrypted column?)");
  return c;
}

// RowGroup: columns (1), num_rows (3).
inline row_group read_row_group(thrift_reader& r) {
  r.enter();
  row_group g;
  std::int16_t last = 0;
  for (auto f = r.next_field(last); f.type != thrift_type::stop; f = r.next_field(last)) {
    if (f.id == 1 && f.type == thrift_type::list) {
      const auto h = r.list();
      if (h.element != thrift_type::struct_) r.fail("row group columns that are not structs");
      g.columns.reserve(h.size);
      for (std::size_t i = 0; i < h.size; ++i) g.columns.push_back(read_column_chunk(r));
    } else if (f.id == 3 && f.type == thrift_type::i64) {
      g.num_rows = r.zigzag();
    } else {
      r.skip(f.type);
    }
  }
  r.leave();
  return g;
}

// FileMetaData: row_groups (4), checked against its other required fields (version 1, schema 2,
// num_rows 3), so that bytes that merely parse (a zeroed footer is an empty struct) are refused.
// Every row group must have the same columns in the same order, as the format requires.
inline std::vector<row_group> read_file_metadata(std::span<const std::byte> footer) {
  thrift_reader r(footer, "Parquet footer");
  std::vector<row_group> groups;
  int required = 0;
  r.enter();
  std::int16_t last = 0;
  for (auto f = r.next_field(last); f.type != thrift_type::stop; f = r.next_field(last)) {
    if (f.id == 4 && f.type == thrift_type::list) {
      const auto h = r.list();
      if (h.element != thrift_type::struct_) r.fail("row groups that are not structs");
      groups.reserve(h.size);
      for (std::size_t i = 0; i < h.size; ++i) groups.push_back(read_row_group(r));
      required |= 8;
    } else {
      if ((f.id == 1 && f.type == thrift_type::i32) || (f.id == 2 && f.type == thrift_type::list) ||
          (f.id == 3 && f.type == thrift_type::i64)) {
        required |= 1 << (f.id - 1);
      }
      r.skip(f.type);
    }
  }
  r.leave();
  if (required != 15) r.fail("a footer without its version, schema, row count or row groups");
  for (std::size_t g = 1; g < groups.size(); ++g) {
    bool same = groups[g].columns.size() == groups[0].columns.size();
    for (std::size_t c = 0; same && c < groups[g].columns.size(); ++c) {
      same = groups[g].columns[c].path == groups[0].columns[c].path &&
             groups[g].columns[c].type == groups[0].columns[c].type;
    }
    if (!same) r.fail("row group " + std::to_string(g) + " has other columns than row group 0");
  }
  return groups;
}

// A BloomFilterHeader: numBytes, once the algorithm, hash and compression are checked to be the
// ones the specification defines (BLOCK, XXHASH, UNCOMPRESSED: field 1 of each union).
inline std::uint32_t read_filter_header(thrift_reader& r) {
  r.enter();
  std::optional<std::int32_t> bytes;
  int unions = 0;
  std::int16_t last = 0;
  for (auto f = r.next_field(last); f.type != thrift_type::stop; f = r.next_field(last)) {
    if (f.id == 1 && f.type == thrift_type::i32) {
      bytes = r.i32();
    } else if (f.id >= 2 && f.id <= 4 && f.type == thrift_type::struct_) {
      static constexpr const char* names[] = {"algorithm", "hash", "compression"};
      r.enter();
      bool known = false;
      std::int16_t inner = 0;
      for (auto g = r.next_field(inner); g.type != thrift_type::stop; g = r.next_field(inner)) {
        known = known || (g.id == 1 && g.type == thrift_type::struct_);
        r.skip(g.type);
      }
      r.leave();
      if (!known) {
        r.fail(std::string("a Bloom filter ") + names[f.id - 2] +
               " other than the specification's (BLOCK, XXHASH, UNCOMPRESSED)");
      }
      ++unions;
    } else {
      r.skip(f.type);
    }
  }
  r.leave();
  if (!bytes || unions != 3)
    r.fail("a Bloom filter header without its size, algorithm, hash or compression");
  if (*bytes < 32 || static_cast<std::uint32_t>(*bytes) > split_block_filter::max_bytes ||
      *bytes % 32 != 0) {
    r.fail("a Bloom filter of " + std::to_string(*bytes) +
           " bytes (it must be a multiple of 32 from 32 to 128 MiB)");
  }
  return static_cast<std::uint32_t>(*bytes);
}

}  // namespace detail

// A Parquet file opened for its Bloom filters: the footer is read and parsed at open(), each
// filter on request. Nothing else of the file is read. Copies share the open file.
class parquet_file {
 public:
  static parquet_file open(const std::filesystem::path& path) {
    parquet_file f;
    f.path_ = path;
    f.fd_ = std::make_shared<bloomery::detail::fd_guard>();  // an aggregate: no make_shared(fd)
    f.fd_->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd_->fd < 0) {
      throw std::system_error(errno, std::generic_category(),
                              "bloomery: cannot open " + path.string());
    }
    struct stat st {};
    if (::fstat(f.fd_->fd, &st) != 0) {
      throw std::system_error(errno, std::generic_category(),
                              "bloomery: cannot stat " + path.string());
    }
    if (S_ISDIR(st.st_mode)) {
      throw std::system_error(EISDIR, std::generic_category(),
                              "bloomery: cannot read " + path.string());
    }
    f.size_ = static_cast<std::uint64_t>(st.st_size);
    f.read_footer();
    return f;
  }

  // A Parquet file already in memory (fetched from object storage, say); `file` is its whole
  // content.
  static parquet_file from_bytes(std::vector<std::byte> file) {
    parquet_file f;
    f.path_ = "(memory)";
    f.size_ = file.size();
    f.memory_ = std::make_shared<const std::vector<std::byte>>(std::move(file));
    f.read_footer();
    return f;
  }

  const std::filesystem::path& path() const noexcept { return path_; }
  const std::vector<row_group>& row_groups() const noexcept { return groups_; }

  // The column's index in every row group, by its dotted path; nullopt when no chunk has it.
  std::optional<std::size_t> column_index(std::string_view path) const {
    if (groups_.empty()) return std::nullopt;
    for (std::size_t i = 0; i < groups_[0].columns.size(); ++i) {
      if (groups_[0].columns[i].path == path) return i;
    }
    return std::nullopt;
  }

  // Where one column chunk's Bloom filter lies, from its header (read and checked): nullopt when
  // the chunk has none.
  struct filter_location {
    std::uint64_t offset = 0;        // of the header
    std::uint32_t header_bytes = 0;  // the BloomFilterHeader's
    std::uint32_t bitset_bytes = 0;  // numBytes
    std::uint64_t length() const noexcept { return std::uint64_t{header_bytes} + bitset_bytes; }
  };
  std::optional<filter_location> bloom_filter_location(std::size_t group,
                                                       std::size_t column) const {
    const column_chunk& c = groups_.at(group).columns.at(column);
    if (!c.bloom_filter_offset) return std::nullopt;
    const std::int64_t offset = *c.bloom_filter_offset;
    const std::string where = "row group " + std::to_string(group) + ", column '" + c.path + "'";
    if (offset < 4 || static_cast<std::uint64_t>(offset) >= size_) {
      bad(where + ": a Bloom filter offset " + std::to_string(offset) + " outside the file");
    }
    const std::uint64_t room = size_ - static_cast<std::uint64_t>(offset);
    // The header first: at most 64 bytes in any writer's files (numBytes and three empty unions).
    std::vector<std::byte> head(static_cast<std::size_t>(room < 64 ? room : 64));
    read_at(static_cast<std::uint64_t>(offset), head);
    thrift_reader r(head, "Parquet Bloom filter header (" + where + ")");
    filter_location loc;
    loc.offset = static_cast<std::uint64_t>(offset);
    loc.bitset_bytes = detail::read_filter_header(r);
    loc.header_bytes = static_cast<std::uint32_t>(r.position());
    if (loc.length() > room) {
      bad(where + ": a Bloom filter of " + std::to_string(loc.bitset_bytes) +
          " bytes past the end of the file");
    }
    if (c.bloom_filter_length &&
        static_cast<std::uint64_t>(*c.bloom_filter_length) != loc.length()) {
      bad(where + ": bloom_filter_length " + std::to_string(*c.bloom_filter_length) +
          " does not match its header (" + std::to_string(loc.length()) + " bytes)");
    }
    return loc;
  }

  // The Bloom filter of one column chunk, or nullopt when the chunk has none.
  std::optional<split_block_filter> bloom_filter(std::size_t group, std::size_t column) const {
    const std::optional<filter_location> loc = bloom_filter_location(group, column);
    if (!loc) return std::nullopt;
    std::vector<std::byte> bitset = bloomery::detail::file_buffer(loc->bitset_bytes);
    read_at(loc->offset + loc->header_bytes, bitset);
    return split_block_filter::from_bitset(bitset);
  }

 private:
  [[noreturn]] static void bad(const std::string& what) {
    throw format_error("bloomery: Parquet file: " + what);
  }

  // "PAR1", the data, the footer, its 4-byte little-endian length, "PAR1".
  void read_footer() {
    if (size_ < 12) bad("a file of " + std::to_string(size_) + " bytes is too short for Parquet");
    std::byte head[4], tail[8];
    read_at(0, head);
    read_at(size_ - 8, tail);
    if (std::memcmp(head, "PAR1", 4) != 0) bad("not a Parquet file (no PAR1 at its start)");
    if (std::memcmp(tail + 4, "PARE", 4) == 0) {
      bad("an encrypted footer (PARE), which bloomery does not read");
    }
    if (std::memcmp(tail + 4, "PAR1", 4) != 0) bad("no PAR1 at its end (truncated?)");
    std::uint32_t footer_len = 0;
    for (int i = 0; i < 4; ++i) footer_len |= static_cast<std::uint32_t>(tail[i]) << (8 * i);
    if (footer_len > size_ - 12) {
      bad("a footer of " + std::to_string(footer_len) + " bytes in a file of " +
          std::to_string(size_));
    }
    std::vector<std::byte> footer = bloomery::detail::file_buffer(footer_len);
    read_at(size_ - 8 - footer_len, footer);
    groups_ = detail::read_file_metadata(footer);
  }

  void read_at(std::uint64_t offset, std::span<std::byte> out) const {
    if (out.empty()) return;  // memcpy and pread want a real buffer
    if (memory_) {
      if (offset > memory_->size() || out.size() > memory_->size() - offset) bad("truncated");
      std::memcpy(out.data(), memory_->data() + offset, out.size());
      return;
    }
    std::size_t done = 0;
    while (done < out.size()) {
      const ssize_t n =
          ::pread(fd_->fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        throw std::system_error(errno, std::generic_category(),
                                "bloomery: cannot read " + path_.string());
      }
      if (n == 0) bad("the file shrank while it was read");
      done += static_cast<std::size_t>(n);
    }
  }

  std::filesystem::path path_;
  std::shared_ptr<bloomery::detail::fd_guard> fd_;        // a file, or
  std::shared_ptr<const std::vector<std::byte>> memory_;  // its bytes in memory
  std::uint64_t size_ = 0;
  std::vector<row_group> groups_;
};

}  // namespace bloomery::interop::parquet
