// bloomery::lsm — a small embedded LSM-tree store with a filter per SSTable.
//
// It exists to show, with real files and real reads, what a per-table filter saves: a point read
// for an absent key would otherwise read one data block from every table. The store is complete
// enough to be trusted with data (checksummed blocks, atomic flushes, a manifest as the commit
// point, crash-safe reopen) and small enough to read in one sitting. It is single-threaded:
// callers serialize access to one store object.
//
// Layout of a store directory:
//   MANIFEST      the live tables, newest last, and the next file number (checksummed)
//   000001.sst    immutable sorted tables, see sstable.hpp for their format
// The MANIFEST is the commit point of a flush: a table becomes part of the store only when a
// manifest naming it has been renamed into place. Anything else found on open (a *.tmp file, a
// table the manifest does not list) is debris of an interrupted flush and is deleted.
//
// There is no write-ahead log: put() and remove() are durable once flush() returns, and a crash
// loses the memtable. There is no compaction either: every flush adds one table, like an
// LSM-tree's level 0, which is exactly where per-table filters matter most.
#pragma once

#include <bloomery/lsm/sstable.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bloomery::lsm {

// The steps of a flush, in order; options::flush_hook is called at each one (tests kill the
// process there to prove that no step can lose flushed data or expose a half-written table).
enum class flush_step {
  table_partly_written,  // half of the table's data blocks are in its *.tmp file
  table_written,         // the table's *.tmp file is complete and fsynced
  table_renamed,         // the table has its final name; the manifest does not list it yet
  manifest_written,      // the new manifest is in MANIFEST.tmp, fsynced, not yet renamed
  committed,             // MANIFEST names the table: the flush is durable
};

// One data-block read of a get(), as options::on_block_read sees it.
struct block_read {
  const std::filesystem::path& table;  // the table file read
  std::uint64_t offset;                // where the block starts in it
  std::uint64_t bytes;                 // the block's size
  bool found;                          // whether the block held the key (false: a wasted read)
};

struct options {
  table_filter_kind filter = filter_kind::bloom;  // std::nullopt: tables without a filter
  double fpr = 0.01;                      // target false-positive rate of every table's filter
  std::size_t memtable_entries = 100000;  // put()/remove() flush automatically at this size
  std::size_t block_bytes = 4096;         // target size of a data block
  // Called after every data-block read, inside get(): the place for tracing or metrics, or for a
  // simulated slower device (bloomery-lsm-demo's --read-latency-us waits here). Empty: nothing.
  std::function<void(const block_read&)> on_block_read;
  // Called at each step of a flush. It lives in the options, though only tests set it, because
  // the crash tests must stop the process between steps that happen inside flush() and nothing
  // outside the store can reach them. Empty in normal use.
  std::function<void(flush_step)> flush_hook;
};

// Counters of the read path, since open() or the last reset_stats().
struct read_stats {
  std::uint64_t gets = 0;
  std::uint64_t tables_consulted = 0;    // tables a get() had to look at (all, unless found early)
  std::uint64_t filter_checks = 0;       // filter queries (0 when tables have no filter)
  std::uint64_t filter_skips = 0;        // ... that said "definitely not here": no read needed
  std::uint64_t block_reads = 0;         // data blocks read from table files with pread
  std::uint64_t block_bytes = 0;         // ... and their bytes
  std::uint64_t wasted_block_reads = 0;  // block reads that did not find the key
};

// Facts about one live table.
struct table_info {
  std::filesystem::path file;
  std::uint64_t entries = 0;
  std::uint64_t data_blocks = 0;
  std::uint64_t file_bytes = 0;
  std::uint64_t filter_bytes = 0;  // memory held by the table's filter
  table_filter_kind filter;        // std::nullopt: the table has no filter
};

class store {
 public:
  // Opens (creating if needed) the store in `dir`. Throws std::invalid_argument for bad options
  // (a filter kind that supports() refuses, say), corruption_error naming the file when the
  // manifest or a live table is damaged, std::system_error on I/O failure.
  static store open(const std::filesystem::path& dir, options opts = {});

  store(store&&) noexcept;
  store& operator=(store&&) noexcept;
  ~store();

  void put(std::string_view key, std::string_view value);
  void remove(std::string_view key);  // writes a tombstone
  // The latest value of `key`, or nullopt if it was never written or its latest write is a
  // remove(). Throws corruption_error if a data block it reads fails its checksum.
  std::optional<std::string> get(std::string_view key);

  // Writes the memtable as a new table (a no-op when it is empty); durable when it returns.
  void flush();

  const read_stats& stats() const noexcept;
  void reset_stats() noexcept;

  std::size_t memtable_size() const noexcept;
  std::vector<table_info> tables() const;  // oldest first
  const std::filesystem::path& directory() const noexcept;
  const options& config() const noexcept;

 private:
  struct state;
  explicit store(std::unique_ptr<state> s);
  std::unique_ptr<state> s_;
};

}  // namespace bloomery::lsm
