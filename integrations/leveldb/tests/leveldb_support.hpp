// Shared by the LevelDB tests and the benchmark: key and value streams, a policy wrapper and an Env
// wrapper that count what LevelDB does, and database helpers. The splitmix64 finalizer and
// temporary directories are the support target's (support/).
#pragma once

#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/filter_policy.h>
#include <leveldb/options.h>
#include <leveldb/slice.h>
#include <leveldb/write_batch.h>
#include <bloomery/support/keys.hpp>
#include <bloomery/support/temp_dir.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

namespace bloomery::leveldb_test {

using support::temp_dir;

// The splitmix64 finalizer: a bijection on 64 bits, so distinct indices give distinct keys.
inline std::uint64_t mix(std::uint64_t z) noexcept {
  return support::splitmix64_mix(z);
}

// Key i: 16 hex digits of a well-mixed 64-bit value. Keys are spread uniformly over the key space,
// so an absent key (an index not written) falls inside some table's key range and its Get has to
// consult that table's filter, as on a real database with random keys.
inline std::string key_of(std::uint64_t i) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(mix(i)));
  return std::string(text, 16);
}

// Value i: `size` bytes derived from i (incompressible, so Snappy leaves blocks at their size and
// the keys per table block stay predictable).
inline std::string value_of(std::uint64_t i, std::size_t size) {
  std::string v(size, '\0');
  std::uint64_t x = i;
  for (std::size_t at = 0; at < size; at += 8) {
    x = mix(x + support::splitmix64_gamma);
    for (std::size_t b = 0; b < 8 && at + b < size; ++b) v[at + b] = static_cast<char>(x >> 8 * b);
  }
  return v;
}

// Forwards to another policy (under its name, so tables written through the wrapper are read by
// the bare policy and vice versa) and counts filters built and consulted.
class counting_policy final : public leveldb::FilterPolicy {
 public:
  explicit counting_policy(const leveldb::FilterPolicy& inner) : inner_(inner) {}

  const char* Name() const override { return inner_.Name(); }
  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    const std::size_t before = dst->size();
    inner_.CreateFilter(keys, n, dst);
    filters.fetch_add(1, std::memory_order_relaxed);
    filter_keys.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_relaxed);
    filter_bytes.fetch_add(dst->size() - before, std::memory_order_relaxed);
  }
  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    const bool hit = inner_.KeyMayMatch(key, filter);
    checks.fetch_add(1, std::memory_order_relaxed);
    if (hit) positives.fetch_add(1, std::memory_order_relaxed);
    return hit;
  }
  void reset_checks() const noexcept {
    checks = 0;
    positives = 0;
  }

  // LevelDB builds filters on its compaction thread and checks them on the reading threads.
  mutable std::atomic<std::uint64_t> filters{0}, filter_keys{0}, filter_bytes{0};
  mutable std::atomic<std::uint64_t> checks{0}, positives{0};

 private:
  const leveldb::FilterPolicy& inner_;
};

// Counts reads of table files. After a table is open (its index and filter blocks loaded), every
// read during a Get is a data-block read: what a filter exists to avoid.
class counting_env final : public leveldb::EnvWrapper {
 public:
  counting_env() : EnvWrapper(leveldb::Env::Default()) {}

  leveldb::Status NewRandomAccessFile(const std::string& name,
                                      leveldb::RandomAccessFile** result) override {
    leveldb::Status s = target()->NewRandomAccessFile(name, result);
    if (s.ok()) *result = new counted_file(*result, reads);
    return s;
  }

  std::atomic<std::uint64_t> reads{0};

 private:
  class counted_file final : public leveldb::RandomAccessFile {
   public:
    counted_file(leveldb::RandomAccessFile* inner, std::atomic<std::uint64_t>& reads)
        : inner_(inner), reads_(reads) {}
    leveldb::Status Read(std::uint64_t offset, std::size_t n, leveldb::Slice* result,
                         char* scratch) const override {
      reads_.fetch_add(1, std::memory_order_relaxed);
      return inner_->Read(offset, n, result, scratch);
    }

   private:
    std::unique_ptr<leveldb::RandomAccessFile> inner_;
    std::atomic<std::uint64_t>& reads_;
  };
};

inline leveldb::Options options_with(const leveldb::FilterPolicy* policy,
                                     leveldb::Env* env = nullptr) {
  leveldb::Options o;
  o.create_if_missing = true;
  o.filter_policy = policy;
  if (env != nullptr) o.env = env;
  return o;
}

inline std::unique_ptr<leveldb::DB> open_db(const leveldb::Options& options,
                                            const std::filesystem::path& dir) {
  leveldb::DB* raw = nullptr;
  const leveldb::Status s = leveldb::DB::Open(options, dir.string(), &raw);
  if (!s.ok()) {
    throw std::runtime_error("cannot open LevelDB at " + dir.string() + ": " + s.ToString());
  }
  return std::unique_ptr<leveldb::DB>(raw);
}

// Writes keys [0, n) in index order (random key order: memtables overlap and compactions merge)
// with `value_size`-byte values, then compacts everything into the last level holding data, so a
// Get consults exactly one table and its filter.
inline void fill_db(leveldb::DB& db, std::uint64_t n, std::size_t value_size) {
  constexpr std::uint64_t batch_keys = 1000;
  for (std::uint64_t base = 0; base < n; base += batch_keys) {
    leveldb::WriteBatch batch;
    for (std::uint64_t i = base; i < n && i < base + batch_keys; ++i) {
      batch.Put(key_of(i), value_of(i, value_size));
    }
    const leveldb::Status s = db.Write(leveldb::WriteOptions(), &batch);
    if (!s.ok()) throw std::runtime_error("LevelDB write failed: " + s.ToString());
  }
  db.CompactRange(nullptr, nullptr);
}

}  // namespace bloomery::leveldb_test

namespace bloomery::leveldb_test {

// Keys the database tests write: --keys=N, else BLOOMERY_LEVELDB_KEYS, else 1,000,000. Set by main.
inline std::uint64_t& database_keys() {
  static std::uint64_t keys = 1'000'000;
  return keys;
}

// The benchmark (--benchmark); returns the process exit code.
int run_benchmark(int argc, char** argv);

}  // namespace bloomery::leveldb_test
