// SSTables of the bloomery::lsm store: immutable sorted files with one filter each.
//
// File layout (all integers little-endian):
//   data block 0 .. data block N-1   sorted entries, ~block_bytes each
//   filter block                     bloomery::serialize() of the table's filter (may be empty)
//   index block                      per data block: last key, offset, size, XXH3-64 checksum
//   footer (80 bytes)                where the filter and index blocks are, their checksums
//
// Entry:  varint key length, varint value length, type byte (1 = value, 0 = tombstone), key,
//         value. Entries are sorted by key (bytewise) and keys are unique within a table.
// Index:  u64 block count, then per block: varint key length, last key, u64 offset, u32 size,
//         u64 XXH3-64 of the block.
// Footer: "BLMRYSST" magic, u32 format version (1), u32 filter code, u64 entry count,
//         u64 filter offset, u64 filter size, u64 filter XXH3-64, u64 index offset,
//         u64 index size, u64 index XXH3-64, u64 XXH3-64 of the 72 bytes before it.
// Filter code: 0 none, 1 bloom, 2 blocked, 3 static. These are the table format's own numbers,
// fixed since its version 1, not bloomery::filter_kind's tags (static_filter is 6 there); the
// filter block itself is a self-describing bloomery image whose kind must agree with the code.
// The footer checks the filter and index blocks and the index checks every data block, so
// opening a table verifies everything held in memory, and every read verifies the block it reads.
#pragma once

#include <bloomery/any_filter.hpp>
#include <bloomery/kinds.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace bloomery::lsm {

// The filter a table keeps, named with the library's own bloomery::filter_kind; std::nullopt is
// the baseline "no filter" (every table must be read). An optional of the library's kinds rather
// than an enum of the store's own, so that there is one vocabulary of filter kinds (names, tags)
// and no second enum whose numbers could be mistaken for the library's. Tables support the
// kinds that suit an immutable, fully known key set: bloom, blocked_bloom and static_filter.
using table_filter_kind = std::optional<filter_kind>;

// Whether a table can carry a filter of `kind` (see table_filter_kind).
bool supports(table_filter_kind kind) noexcept;

// "none" for no filter, else the library's name of the kind (bloomery::to_string): "bloom",
// "blocked", "static".
std::string_view name_of(table_filter_kind kind) noexcept;

// A damaged store file; what() names the file and what is wrong with it.
class corruption_error : public std::runtime_error {
 public:
  corruption_error(const std::filesystem::path& file, const std::string& what);
  const std::filesystem::path& file() const noexcept { return file_; }

 private:
  std::filesystem::path file_;
};

// One entry of a table or the memtable. A tombstone records a remove().
struct entry {
  std::string key;
  std::string value;
  bool tombstone = false;
};

// Writes a table of sorted, unique entries to `path` (the caller renames it into place), with a
// filter of `kind` at `fpr` over all its keys. Throws std::invalid_argument for a kind that
// supports() refuses. `after_half` runs once half of the data blocks are written (crash tests
// hook in there).
struct table_write_result {
  std::uint64_t file_bytes = 0;
  std::uint64_t data_blocks = 0;
};
table_write_result write_table(const std::filesystem::path& path, const std::vector<entry>& entries,
                               table_filter_kind kind, double fpr, std::size_t block_bytes,
                               const std::function<void()>& after_half = {});

// An open table: the file descriptor, the index and the filter in memory; data blocks on disk.
class table_reader {
 public:
  // Throws corruption_error naming `path` if the footer, index or filter fail their checks.
  explicit table_reader(const std::filesystem::path& path);
  table_reader(const table_reader&) = delete;
  table_reader& operator=(const table_reader&) = delete;
  ~table_reader();

  struct lookup {
    bool block_read = false;         // a data block was read
    std::uint64_t block_offset = 0;  // ... at this offset of the file
    std::uint64_t block_bytes = 0;   // ... and of this size
    const entry* found = nullptr;    // points into scratch; valid until the next get()
  };
  // The index, then one pread of one data block. Callers consult filter() first: a table whose
  // filter says "no" needs no lookup at all.
  lookup get(std::string_view key);

  // The table's filter; std::nullopt when it was written without one.
  const std::optional<any_filter>& filter() const noexcept { return filter_; }
  table_filter_kind kind() const noexcept;
  const std::filesystem::path& path() const noexcept { return path_; }
  std::uint64_t entries() const noexcept { return entries_; }
  std::uint64_t data_blocks() const noexcept { return index_.size(); }
  std::uint64_t file_bytes() const noexcept { return file_bytes_; }

 private:
  struct block_handle {
    std::string last_key;
    std::uint64_t offset = 0;
    std::uint32_t size = 0;
    std::uint64_t checksum = 0;
  };
  std::filesystem::path path_;
  int fd_ = -1;
  std::uint64_t entries_ = 0;
  std::uint64_t file_bytes_ = 0;
  std::vector<block_handle> index_;
  std::optional<any_filter> filter_;
  std::vector<char> block_;  // scratch buffer for the block being read
  entry scratch_;
};

}  // namespace bloomery::lsm
