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
// Footer: "BLMRYSST" magic, u32 format version (1), u32 filter kind, u64 entry count,
//         u64 filter offset, u64 filter size, u64 filter XXH3-64, u64 index offset,
//         u64 index size, u64 index XXH3-64, u64 XXH3-64 of the 72 bytes before it.
// The footer checks the filter and index blocks and the index checks every data block, so
// opening a table verifies everything held in memory, and every read verifies the block it reads.
#pragma once

#include <bloomery/blocked_bloom_filter.hpp>
#include <bloomery/bloom_filter.hpp>
#include <bloomery/static_filter.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace bloomery::lsm {

// The filter kept for each table. `none` is the baseline: every table must be read.
enum class filter_kind : std::uint32_t { none = 0, bloom = 1, blocked = 2, static_set = 3 };

std::string_view name_of(filter_kind kind) noexcept;  // "none", "bloom", "blocked", "static"
std::optional<filter_kind> filter_kind_from_name(std::string_view name) noexcept;

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

// The in-memory filter of one table.
class table_filter {
 public:
  table_filter() = default;  // kind none: may_contain() is always true
  static table_filter build(filter_kind kind, const std::vector<std::string_view>& keys,
                            double fpr);
  static table_filter decode(filter_kind kind, std::span<const std::byte> bytes);  // throws
  std::vector<std::byte> encode() const;

  bool may_contain(std::string_view key) const noexcept;
  filter_kind kind() const noexcept;
  std::uint64_t memory_bytes() const noexcept;

 private:
  std::variant<std::monostate, bloom_filter, blocked_bloom_filter, static_filter> f_;
};

// Writes a table of sorted, unique entries to `path` (the caller renames it into place).
// `after_half` runs once half of the data blocks are written (crash tests hook in there).
struct table_write_result {
  std::uint64_t file_bytes = 0;
  std::uint64_t data_blocks = 0;
};
table_write_result write_table(const std::filesystem::path& path, const std::vector<entry>& entries,
                               filter_kind kind, double fpr, std::size_t block_bytes,
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
    bool block_read = false;  // a data block was read
    std::uint64_t block_bytes = 0;
    const entry* found = nullptr;  // points into scratch; valid until the next get()
  };
  // The index, then one pread of one data block. Callers consult filter() first: a table whose
  // filter says "no" needs no lookup at all.
  lookup get(std::string_view key, std::uint32_t read_latency_us);

  const table_filter& filter() const noexcept { return filter_; }
  const std::filesystem::path& path() const noexcept { return path_; }
  std::uint64_t entries() const noexcept { return entries_; }
  std::uint64_t data_blocks() const noexcept { return index_.size(); }
  std::uint64_t file_bytes() const noexcept { return file_bytes_; }
  void drop_page_cache() const;

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
  table_filter filter_;
  std::vector<char> block_;  // scratch buffer for the block being read
  entry scratch_;
};

}  // namespace bloomery::lsm
