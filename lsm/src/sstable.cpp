#include <bloomery/lsm/sstable.hpp>

#include <bloomery/blocked_bloom_filter.hpp>
#include <bloomery/bloom_filter.hpp>
#include <bloomery/format.hpp>
#include <bloomery/static_filter.hpp>

#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "posix_file.hpp"

namespace bloomery::lsm {
namespace {

constexpr char magic[8] = {'B', 'L', 'M', 'R', 'Y', 'S', 'S', 'T'};
constexpr std::uint32_t format_version = 1;
constexpr std::size_t footer_bytes = 80;

// The footer's filter codes, indexed by code (see sstable.hpp): the table format's own numbers.
constexpr std::array<table_filter_kind, 4> filter_codes = {
    std::nullopt, filter_kind::bloom, filter_kind::blocked_bloom, filter_kind::static_filter};

[[noreturn]] void refuse(table_filter_kind kind) {
  throw std::invalid_argument("bloomery::lsm: a table cannot carry a " +
                              std::string(name_of(kind)) +
                              " filter (it supports none, bloom, blocked and static)");
}

std::uint32_t code_of(table_filter_kind kind) {
  const auto at = std::find(filter_codes.begin(), filter_codes.end(), kind);
  if (at == filter_codes.end()) refuse(kind);
  return static_cast<std::uint32_t>(at - filter_codes.begin());
}

std::uint64_t checksum(const void* data, std::size_t size) noexcept {
  return XXH3_64bits(data, size);
}

// --- little-endian and varint encoding ---------------------------------------------------------

template <class T>
void put_fixed(std::string& out, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// Reads from a byte range that came from disk: every read is bounds-checked, and a malformed
// range is reported (not trusted) so a damaged file can never read out of bounds.
class reader {
 public:
  reader(const char* p, std::size_t n) : p_(p), end_(p + n) {}
  bool empty() const noexcept { return p_ == end_; }
  template <class T>
  bool fixed(T& v) {
    if (static_cast<std::size_t>(end_ - p_) < sizeof(T)) return false;
    v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      v |= static_cast<T>(static_cast<T>(static_cast<unsigned char>(p_[i])) << (8 * i));
    p_ += sizeof(T);
    return true;
  }
  bool varint(std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && p_ != end_; shift += 7) {
      const auto byte = static_cast<unsigned char>(*p_++);
      v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if (byte < 0x80) return true;
    }
    return false;
  }
  bool bytes(std::uint64_t n, std::string_view& out) {
    if (static_cast<std::uint64_t>(end_ - p_) < n) return false;
    out = std::string_view(p_, static_cast<std::size_t>(n));
    p_ += n;
    return true;
  }

 private:
  const char* p_;
  const char* end_;
};

void pread_all(int fd, char* out, std::size_t n, std::uint64_t offset,
               const std::filesystem::path& path) {
  while (n > 0) {
    const ssize_t got = ::pread(fd, out, n, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      posix::fail("cannot read", path);
    }
    if (got == 0) throw corruption_error(path, "unexpected end of file");
    out += got;
    n -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
}

std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace

bool supports(table_filter_kind kind) noexcept {
  return std::find(filter_codes.begin(), filter_codes.end(), kind) != filter_codes.end();
}

std::string_view name_of(table_filter_kind kind) noexcept {
  return kind ? to_string(*kind) : "none";
}

corruption_error::corruption_error(const std::filesystem::path& file, const std::string& what)
    : std::runtime_error("corrupted store file '" + file.string() + "': " + what), file_(file) {}

// --- filters -----------------------------------------------------------------------------------

namespace {

// The serialized filter of `kind` over `keys`; empty for no filter.
std::vector<std::byte> build_filter(table_filter_kind kind,
                                    const std::vector<std::string_view>& keys, double fpr) {
  if (!kind) return {};
  // A filter sized for zero keys is invalid; an empty table still gets a (tiny) valid filter.
  const std::uint64_t n = std::max<std::uint64_t>(keys.size(), 1);
  switch (*kind) {
    case filter_kind::bloom: {
      bloom_filter f(target{n, fpr});
      f.insert_many(keys);
      return serialize(f);
    }
    case filter_kind::blocked_bloom: {
      blocked_bloom_filter f(target{n, fpr});
      f.insert_many(keys);
      return serialize(f);
    }
    case filter_kind::static_filter:
      return serialize(static_filter::build(keys, fpr));
    default:
      refuse(kind);
  }
}

// The filter in a table's filter block, which the footer says is of `kind`. Throws format_error.
std::optional<any_filter> load_filter(table_filter_kind kind, std::span<const std::byte> bytes) {
  if (!kind) {
    if (!bytes.empty()) throw format_error("a table without a filter has a filter block");
    return std::nullopt;
  }
  any_filter f = deserialize_any(bytes);
  if (f.kind() != *kind) {
    throw format_error("the footer says " + std::string(name_of(kind)) +
                       ", the filter block holds a " + to_string(f.kind()) + " filter");
  }
  return f;
}

}  // namespace

// --- writing -----------------------------------------------------------------------------------

table_write_result write_table(const std::filesystem::path& path, const std::vector<entry>& entries,
                               table_filter_kind kind, double fpr, std::size_t block_bytes,
                               const std::function<void()>& after_half) {
  const std::uint32_t code = code_of(kind);  // before creating anything: an invalid kind throws
  const posix::file file = posix::create(path);

  // Data blocks: cut when a block reaches block_bytes, so blocks are that size or a bit more.
  std::string index_entries;
  std::uint64_t blocks = 0;
  std::uint64_t offset = 0;
  std::string block;
  std::string_view last_key;
  bool half_reported = false;
  std::size_t written = 0;
  auto finish_block = [&] {
    posix::write_all(file, as_bytes(block), path);
    put_varint(index_entries, last_key.size());
    index_entries.append(last_key);
    put_fixed<std::uint64_t>(index_entries, offset);
    put_fixed<std::uint32_t>(index_entries, static_cast<std::uint32_t>(block.size()));
    put_fixed<std::uint64_t>(index_entries, checksum(block.data(), block.size()));
    offset += block.size();
    ++blocks;
    block.clear();
    if (after_half && !half_reported && 2 * written >= entries.size()) {
      half_reported = true;
      after_half();
    }
  };
  for (const entry& e : entries) {
    put_varint(block, e.key.size());
    put_varint(block, e.value.size());
    block.push_back(e.tombstone ? '\0' : '\1');
    block.append(e.key);
    block.append(e.value);
    last_key = e.key;
    ++written;
    if (block.size() >= block_bytes) finish_block();
  }
  if (!block.empty()) finish_block();

  // The filter holds every key, tombstones included: a tombstone must be found to hide the older
  // tables' values of its key.
  std::vector<std::string_view> keys;
  keys.reserve(entries.size());
  for (const entry& e : entries) keys.emplace_back(e.key);
  const std::vector<std::byte> filter = build_filter(kind, keys, fpr);
  posix::write_all(file, filter, path);
  const std::uint64_t filter_offset = offset;
  offset += filter.size();

  std::string index;
  put_fixed<std::uint64_t>(index, blocks);
  index += index_entries;
  posix::write_all(file, as_bytes(index), path);
  const std::uint64_t index_offset = offset;
  offset += index.size();

  std::string footer(magic, sizeof magic);
  put_fixed<std::uint32_t>(footer, format_version);
  put_fixed<std::uint32_t>(footer, code);
  put_fixed<std::uint64_t>(footer, entries.size());
  put_fixed<std::uint64_t>(footer, filter_offset);
  put_fixed<std::uint64_t>(footer, filter.size());
  put_fixed<std::uint64_t>(footer, checksum(filter.data(), filter.size()));
  put_fixed<std::uint64_t>(footer, index_offset);
  put_fixed<std::uint64_t>(footer, index.size());
  put_fixed<std::uint64_t>(footer, checksum(index.data(), index.size()));
  put_fixed<std::uint64_t>(footer, checksum(footer.data(), footer.size()));
  posix::write_all(file, as_bytes(footer), path);
  offset += footer.size();

  posix::sync(file, path);
  return {offset, blocks};
}

// --- reading -----------------------------------------------------------------------------------

table_reader::table_reader(const std::filesystem::path& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) posix::fail("cannot open", path);
  // Point reads touch one block each: kernel read-ahead would fetch neighbours no read asked for,
  // and would quietly warm a cache that --cold just emptied.
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_RANDOM);
  try {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) posix::fail("cannot stat", path);
    file_bytes_ = static_cast<std::uint64_t>(st.st_size);
    if (file_bytes_ < footer_bytes) {
      throw corruption_error(path, "file of " + std::to_string(file_bytes_) +
                                       " bytes is too short to be a table (truncated?)");
    }
    std::string footer(footer_bytes, '\0');
    pread_all(fd_, footer.data(), footer.size(), file_bytes_ - footer_bytes, path);
    if (std::memcmp(footer.data(), magic, sizeof magic) != 0)
      throw corruption_error(path, "bad magic: not a bloomery::lsm table, or truncated");
    reader f(footer.data() + sizeof magic, footer.size() - sizeof magic);
    std::uint32_t version = 0, kind = 0;
    std::uint64_t filter_offset = 0, filter_size = 0, filter_sum = 0, index_offset = 0,
                  index_size = 0, index_sum = 0, footer_sum = 0;
    f.fixed(version), f.fixed(kind), f.fixed(entries_), f.fixed(filter_offset),
        f.fixed(filter_size), f.fixed(filter_sum), f.fixed(index_offset), f.fixed(index_size),
        f.fixed(index_sum), f.fixed(footer_sum);
    if (footer_sum != checksum(footer.data(), footer_bytes - 8))
      throw corruption_error(path, "footer checksum mismatch");
    if (version != format_version)
      throw corruption_error(path, "unsupported table format version " + std::to_string(version));
    if (kind >= filter_codes.size())
      throw corruption_error(path, "unknown filter kind " + std::to_string(kind));
    const std::uint64_t body = file_bytes_ - footer_bytes;
    if (filter_offset > body || filter_size > body - filter_offset ||
        index_offset != filter_offset + filter_size || index_size != body - index_offset) {
      throw corruption_error(path, "footer offsets do not match the file size");
    }

    std::string filter(filter_size, '\0');
    pread_all(fd_, filter.data(), filter.size(), filter_offset, path);
    if (checksum(filter.data(), filter.size()) != filter_sum)
      throw corruption_error(path, "filter block checksum mismatch");
    try {
      filter_ = load_filter(filter_codes[kind], as_bytes(filter));
    } catch (const format_error& e) {
      throw corruption_error(path, std::string("bad filter block: ") + e.what());
    }

    std::string index(index_size, '\0');
    pread_all(fd_, index.data(), index.size(), index_offset, path);
    if (checksum(index.data(), index.size()) != index_sum)
      throw corruption_error(path, "index block checksum mismatch");
    reader r(index.data(), index.size());
    std::uint64_t count = 0;
    if (!r.fixed(count) || count > index_size) throw corruption_error(path, "bad index block size");
    index_.reserve(count);
    std::uint64_t expected_offset = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
      std::uint64_t key_size = 0;
      std::string_view key;
      block_handle h;
      if (!r.varint(key_size) || !r.bytes(key_size, key) || !r.fixed(h.offset) ||
          !r.fixed(h.size) || !r.fixed(h.checksum)) {
        throw corruption_error(path, "index block entry " + std::to_string(i) + " is truncated");
      }
      // Blocks tile the data region in order, and their last keys strictly increase: the binary
      // search in get() relies on both.
      if (h.offset != expected_offset || h.size == 0 || h.size > filter_offset - h.offset ||
          (!index_.empty() && key <= index_.back().last_key)) {
        throw corruption_error(path, "index block entry " + std::to_string(i) + " is invalid");
      }
      expected_offset += h.size;
      h.last_key = key;
      index_.push_back(std::move(h));
    }
    if (!r.empty() || expected_offset != filter_offset)
      throw corruption_error(path, "index block does not cover the data blocks");
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

table_reader::~table_reader() {
  if (fd_ >= 0) ::close(fd_);
}

table_filter_kind table_reader::kind() const noexcept {
  if (!filter_) return std::nullopt;
  return filter_->kind();
}

table_reader::lookup table_reader::get(std::string_view key) {
  lookup result;
  // The first block whose last key is >= key is the only one that can hold it.
  const auto it = std::lower_bound(
      index_.begin(), index_.end(), key,
      [](const block_handle& h, std::string_view k) { return std::string_view(h.last_key) < k; });
  if (it == index_.end()) return result;  // beyond the table's last key: no read needed

  block_.resize(it->size);
  pread_all(fd_, block_.data(), block_.size(), it->offset, path_);
  result.block_read = true;
  result.block_offset = it->offset;
  result.block_bytes = it->size;
  if (checksum(block_.data(), block_.size()) != it->checksum) {
    throw corruption_error(
        path_, "data block at offset " + std::to_string(it->offset) + " fails its checksum");
  }
  reader r(block_.data(), block_.size());
  while (!r.empty()) {
    std::uint64_t key_size = 0, value_size = 0;
    std::string_view k, v, type;
    if (!r.varint(key_size) || !r.varint(value_size) || !r.bytes(1, type) ||
        !r.bytes(key_size, k) || !r.bytes(value_size, v)) {
      throw corruption_error(path_, "malformed data block at offset " + std::to_string(it->offset));
    }
    if (k < key) continue;
    if (k == key) {
      scratch_.key.assign(k);
      scratch_.value.assign(v);
      scratch_.tombstone = type[0] == '\0';
      result.found = &scratch_;
    }
    break;  // entries are sorted: the key is not in this block
  }
  return result;
}

}  // namespace bloomery::lsm
