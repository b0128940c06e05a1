#include <bloomery/lsm/store.hpp>

#include <bloomery/file.hpp>
#include <bloomery/sizing.hpp>
#include <bloomery/static_filter.hpp>

#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "posix_file.hpp"

namespace bloomery::lsm {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view manifest_name = "MANIFEST";
constexpr std::string_view manifest_header = "bloomery-lsm-manifest 1";

std::string table_name(std::uint64_t number) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%06llu.sst", static_cast<unsigned long long>(number));
  return buf;
}

// Table files are named by number only; the manifest may name nothing else (no paths).
bool is_table_name(std::string_view name) {
  if (!name.ends_with(".sst") || name.size() <= 4) return false;
  for (const char c : name.substr(0, name.size() - 4)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

struct manifest {
  std::uint64_t next_file = 1;
  std::vector<std::string> tables;  // oldest first
};

// The manifest is text, so a person can read it, with a checksum line so a torn or edited
// manifest is refused instead of silently dropping tables.
std::string encode_manifest(const manifest& m) {
  std::string body = std::string(manifest_header) + "\nnext " + std::to_string(m.next_file) + "\n";
  for (const std::string& t : m.tables) body += "table " + t + "\n";
  char sum[40];
  std::snprintf(sum, sizeof sum, "checksum %016llx\n",
                static_cast<unsigned long long>(XXH3_64bits(body.data(), body.size())));
  return body + sum;
}

manifest decode_manifest(const std::string& text, const fs::path& path) {
  const std::size_t at = text.rfind("checksum ");
  if (at == std::string::npos || (at != 0 && text[at - 1] != '\n'))
    throw corruption_error(path, "no checksum line (truncated?)");
  unsigned long long stored = 0;
  const std::string_view sum = std::string_view(text).substr(at + 9);
  const auto [end, ec] = std::from_chars(sum.data(), sum.data() + sum.size(), stored, 16);
  if (ec != std::errc() || std::string_view(end, sum.data() + sum.size()) != "\n")
    throw corruption_error(path, "malformed checksum line");
  if (stored != XXH3_64bits(text.data(), at)) throw corruption_error(path, "checksum mismatch");

  manifest m;
  std::istringstream lines(text.substr(0, at));
  std::string line;
  if (!std::getline(lines, line) || line != manifest_header)
    throw corruption_error(path, "not a bloomery-lsm manifest (or an unsupported version)");
  bool have_next = false;
  while (std::getline(lines, line)) {
    if (line.starts_with("next ")) {
      const std::string_view digits = std::string_view(line).substr(5);
      const auto [end, ec] =
          std::from_chars(digits.data(), digits.data() + digits.size(), m.next_file);
      if (ec != std::errc() || end != digits.data() + digits.size())
        throw corruption_error(path, "malformed line '" + line + "'");
      have_next = true;
    } else if (line.starts_with("table ") && is_table_name(line.substr(6))) {
      m.tables.push_back(line.substr(6));
    } else {
      throw corruption_error(path, "unexpected line '" + line + "'");
    }
  }
  if (!have_next) throw corruption_error(path, "no 'next' line");
  // The next flush writes table `next` and counts on: a counter that is not past every table
  // listed would have that flush overwrite a live table, and one at the top of the range would
  // wrap to 0 (both found by fuzz/lsm_readers).
  if (m.next_file == std::numeric_limits<std::uint64_t>::max()) {
    throw corruption_error(path, "next file number " + std::to_string(m.next_file) +
                                     " leaves no number for a new table");
  }
  std::set<std::string> seen;
  for (const std::string& t : m.tables) {
    if (!seen.insert(t).second) throw corruption_error(path, "table " + t + " is listed twice");
    std::uint64_t number = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size() - 4, number);
    // Only the names the store writes: no overlong runs of zeros a file system would refuse.
    if (ec != std::errc() || t != table_name(number)) {
      throw corruption_error(path, "'" + t + "' is not a table name this store writes");
    }
    if (number >= m.next_file) {
      throw corruption_error(
          path, "next file number " + std::to_string(m.next_file) + " is not past table " + t);
    }
  }
  return m;
}

std::string read_text(const fs::path& path) {
  const std::vector<std::byte> bytes = read_file(path);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

struct store::state {
  fs::path dir;
  options opts;
  manifest live;
  std::vector<std::unique_ptr<table_reader>> tables;  // oldest first, like live.tables
  // The value, or nullopt for a tombstone.
  std::map<std::string, std::optional<std::string>, std::less<>> memtable;
  read_stats stats;

  void step(flush_step s) const {
    if (opts.flush_hook) opts.flush_hook(s);
  }

  // Temporary file, fsync, rename, directory fsync: what bloomery::write_file_atomically does,
  // spelt out here so that flush_hook can stop the process between the fsync and the rename, and
  // so that the temporary file has the one name (MANIFEST.tmp) open() knows to clean up.
  void write_manifest(const manifest& m) {
    const fs::path tmp = dir / (std::string(manifest_name) + ".tmp");
    {
      const std::string text = encode_manifest(m);
      const posix::file f = posix::create(tmp);
      posix::write_all(f, {reinterpret_cast<const std::byte*>(text.data()), text.size()}, tmp);
      posix::sync(f, tmp);
    }
    step(flush_step::manifest_written);
    posix::rename_durably(tmp, dir / manifest_name);
  }
};

store::store(std::unique_ptr<state> s) : s_(std::move(s)) {}
store::store(store&&) noexcept = default;
store& store::operator=(store&&) noexcept = default;
store::~store() = default;

store store::open(const fs::path& dir, options opts) {
  check_fpr(opts.fpr);
  if (!supports(opts.filter)) {
    throw std::invalid_argument("bloomery::lsm: tables cannot carry a " +
                                std::string(name_of(opts.filter)) +
                                " filter (they support none, bloom, blocked and static)");
  }
  if (opts.filter == filter_kind::static_filter && opts.fpr < static_filter_min_fpr) {
    throw std::invalid_argument(
        "the static filter's lowest false-positive rate is 2^-32 (32-bit fingerprints)");
  }
  if (opts.memtable_entries == 0) throw std::invalid_argument("memtable_entries must be > 0");
  if (opts.block_bytes == 0) throw std::invalid_argument("block_bytes must be > 0");
  auto s = std::make_unique<state>();
  s->dir = dir;
  s->opts = std::move(opts);
  fs::create_directories(dir);

  const fs::path manifest_path = dir / manifest_name;
  if (fs::exists(manifest_path)) {
    s->live = decode_manifest(read_text(manifest_path), manifest_path);
  } else {
    // A store gets its manifest before its first table, so tables without one are not debris of
    // a crash: refuse, rather than delete them as unlisted.
    for (const auto& f : fs::directory_iterator(dir)) {
      if (is_table_name(f.path().filename().string()))
        throw corruption_error(manifest_path, "missing, but the directory holds tables");
    }
    s->write_manifest(s->live);  // an empty store is committed too, so open() is idempotent
  }
  for (const std::string& name : s->live.tables) {
    const fs::path p = dir / name;
    if (!fs::exists(p)) throw corruption_error(p, "listed in the manifest but missing");
    s->tables.push_back(std::make_unique<table_reader>(p));
  }
  // Debris of interrupted flushes: temporary files, and complete tables whose flush crashed
  // before the manifest named them (their data was never acknowledged as durable).
  for (const auto& f : fs::directory_iterator(dir)) {
    const std::string name = f.path().filename().string();
    const bool listed =
        std::find(s->live.tables.begin(), s->live.tables.end(), name) != s->live.tables.end();
    if (name.ends_with(".tmp") || (name.ends_with(".sst") && !listed)) fs::remove(f.path());
  }
  return store(std::move(s));
}

void store::put(std::string_view key, std::string_view value) {
  s_->memtable.insert_or_assign(std::string(key), std::string(value));
  if (s_->memtable.size() >= s_->opts.memtable_entries) flush();
}

void store::remove(std::string_view key) {
  s_->memtable.insert_or_assign(std::string(key), std::nullopt);
  if (s_->memtable.size() >= s_->opts.memtable_entries) flush();
}

std::optional<std::string> store::get(std::string_view key) {
  read_stats& st = s_->stats;
  ++st.gets;
  if (const auto it = s_->memtable.find(key); it != s_->memtable.end()) return it->second;
  for (auto t = s_->tables.rbegin(); t != s_->tables.rend(); ++t) {
    table_reader& table = **t;
    ++st.tables_consulted;
    if (const std::optional<any_filter>& filter = table.filter()) {
      ++st.filter_checks;
      if (!filter->may_contain(key)) {
        ++st.filter_skips;
        continue;
      }
    }
    const table_reader::lookup r = table.get(key);
    if (r.block_read) {
      ++st.block_reads;
      st.block_bytes += r.block_bytes;
      if (r.found == nullptr) ++st.wasted_block_reads;
      if (s_->opts.on_block_read) {
        s_->opts.on_block_read({table.path(), r.block_offset, r.block_bytes, r.found != nullptr});
      }
    }
    if (r.found != nullptr) {
      if (r.found->tombstone) return std::nullopt;
      return r.found->value;
    }
  }
  return std::nullopt;
}

void store::flush() {
  state& s = *s_;
  if (s.memtable.empty()) return;
  std::vector<entry> entries;
  entries.reserve(s.memtable.size());
  for (const auto& [key, value] : s.memtable)
    entries.push_back({key, value.value_or(std::string()), !value.has_value()});

  const std::string name = table_name(s.live.next_file);
  const fs::path final_path = s.dir / name;
  const fs::path tmp_path = s.dir / (name + ".tmp");
  try {
    write_table(tmp_path, entries, s.opts.filter, s.opts.fpr, s.opts.block_bytes,
                [&] { s.step(flush_step::table_partly_written); });
    s.step(flush_step::table_written);
    posix::rename_durably(tmp_path, final_path);
    s.step(flush_step::table_renamed);
    auto reader = std::make_unique<table_reader>(final_path);
    manifest next = s.live;
    next.tables.push_back(name);
    ++next.next_file;
    s.write_manifest(next);
    s.live = std::move(next);
    s.tables.push_back(std::move(reader));
  } catch (...) {
    // Not committed (as far as this process knows): the memtable keeps the data and the next
    // flush retries under the same file name. A renamed table is left alone, because a manifest
    // whose rename succeeded before a failed directory fsync may already name it; open() deletes
    // it if no manifest does.
    std::error_code ignored;
    fs::remove(tmp_path, ignored);
    throw;
  }
  s.memtable.clear();
  s.step(flush_step::committed);
}

const read_stats& store::stats() const noexcept {
  return s_->stats;
}
void store::reset_stats() noexcept {
  s_->stats = {};
}
std::size_t store::memtable_size() const noexcept {
  return s_->memtable.size();
}
const fs::path& store::directory() const noexcept {
  return s_->dir;
}
const options& store::config() const noexcept {
  return s_->opts;
}

std::vector<table_info> store::tables() const {
  std::vector<table_info> out;
  for (const auto& t : s_->tables) {
    out.push_back({t->path(), t->entries(), t->data_blocks(), t->file_bytes(),
                   t->filter() ? t->filter()->size_in_bytes() : 0, t->kind()});
  }
  return out;
}

}  // namespace bloomery::lsm
