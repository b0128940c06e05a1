// The bloomery file format (docs/file-format.md): save, load, and a zero-copy view of a mapped
// file. The format is filter-agnostic: a 128-byte header, the filter kind's parameters, zero
// padding to a 64-byte boundary, and the payload (the filter's storage, exactly as in memory).
//
// A filter type F plugs in with:
//   static constexpr filter_kind kind;
//   detail::file_image image() const;                     // what to write
//   static F from_image(const detail::parsed_file&);      // validates params and payload
//   using view = ...; static view view_of(const detail::parsed_file&);  // for map_file
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "bloomery/hash.hpp"

namespace bloomery {

// A file that is not a valid bloomery filter of the expected kind. I/O failures (missing file,
// permissions) are std::system_error instead.
class format_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Stable on-disk tags: never renumber.
enum class filter_kind : std::uint32_t {
  bloom = 1,
  blocked_bloom = 2,
  counting_bloom = 3,
  cuckoo = 4,
  scalable_bloom = 5,
  static_filter = 6,
};

inline const char* to_string(filter_kind k) {
  switch (k) {
    case filter_kind::bloom:
      return "bloom";
    case filter_kind::blocked_bloom:
      return "blocked";
    case filter_kind::counting_bloom:
      return "counting";
    case filter_kind::cuckoo:
      return "cuckoo";
    case filter_kind::scalable_bloom:
      return "scalable";
    case filter_kind::static_filter:
      return "static";
  }
  return "unknown";
}

inline constexpr std::uint32_t format_version = 1;
inline constexpr std::size_t header_bytes = 128;
inline constexpr std::size_t payload_alignment = 64;
inline constexpr char format_magic[8] = {'B', 'L', 'O', 'O', 'M', 'E', 'R', 'Y'};

namespace detail {

// Header field offsets (all little-endian).
namespace offs {
inline constexpr std::size_t magic = 0, version = 8, kind = 12, hash_algo = 16, params_size = 20,
                             seed = 24, key = 32, element_count = 64, payload_offset = 72,
                             payload_size = 80, file_size = 88, reserved = 96, checksum = 120;
}
// Kind parameters are tiny; anything larger is a corrupted header, not a filter.
inline constexpr std::uint32_t max_params_bytes = 4096;

inline constexpr std::uint64_t align_up(std::uint64_t v, std::uint64_t a) {
  return (v + a - 1) / a * a;
}

template <class T>
void put(std::byte* at, T v) {
  std::memcpy(at, &v, sizeof v);
}
template <class T>
T get(const std::byte* at) {
  T v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

// Builds a kind's parameter block.
class params_writer {
 public:
  template <class T>
  params_writer& add(T v) {
    const auto at = bytes_.size();
    bytes_.resize(at + sizeof v);
    put(bytes_.data() + at, v);
    return *this;
  }
  std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

// Reads a kind's parameter block; running past its end is a format_error.
class params_reader {
 public:
  explicit params_reader(std::span<const std::byte> b) : bytes_(b) {}
  template <class T>
  T read(const char* what) {
    if (bytes_.size() - pos_ < sizeof(T)) {
      throw format_error(std::string("bloomery: parameter block too short for ") + what);
    }
    const T v = get<T>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return v;
  }
  bool at_end() const noexcept { return pos_ == bytes_.size(); }
  void expect_end(const char* kind) const {
    if (pos_ != bytes_.size()) {
      throw format_error(std::string("bloomery: parameter block of ") + kind + " filter has " +
                         std::to_string(bytes_.size()) + " bytes, expected " +
                         std::to_string(pos_));
    }
  }

 private:
  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
};

// What a filter hands to save().
struct file_image {
  filter_kind kind;
  hasher hash;
  std::uint64_t element_count;
  std::vector<std::byte> params;
  std::span<const std::byte> payload;
};

// A validated file: every header field checked, checksum verified.
struct parsed_file {
  filter_kind kind;
  hasher hash;
  std::uint64_t element_count;
  std::span<const std::byte> params;
  std::span<const std::byte> payload;  // 64-byte aligned when the file's bytes are
};

[[noreturn]] inline void fail(const std::string& msg) {
  throw format_error("bloomery: " + msg);
}

inline std::uint64_t checksum(std::span<const std::byte> header, std::span<const std::byte> rest) {
  // XXH3-64 over every byte of the file except the checksum field itself.
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, header.data(), offs::checksum);
  XXH3_64bits_update(&state, header.data() + header_bytes, header.size() - header_bytes);
  if (!rest.empty()) XXH3_64bits_update(&state, rest.data(), rest.size());
  return XXH3_64bits_digest(&state);
}

// Header, params and padding for `img`; the payload follows it in the file.
inline std::vector<std::byte> encode_prefix(const file_image& img) {
  if (img.params.size() > max_params_bytes) fail("parameter block too large");
  const std::uint64_t payload_offset =
      align_up(header_bytes + img.params.size(), payload_alignment);
  std::vector<std::byte> out(payload_offset, std::byte{0});
  std::memcpy(out.data() + offs::magic, format_magic, sizeof format_magic);
  put<std::uint32_t>(out.data() + offs::version, format_version);
  put<std::uint32_t>(out.data() + offs::kind, static_cast<std::uint32_t>(img.kind));
  put<std::uint32_t>(out.data() + offs::hash_algo,
                     static_cast<std::uint32_t>(img.hash.algorithm()));
  put<std::uint32_t>(out.data() + offs::params_size, static_cast<std::uint32_t>(img.params.size()));
  put<std::uint64_t>(out.data() + offs::seed, img.hash.seed());
  std::memcpy(out.data() + offs::key, img.hash.key().bytes.data(), img.hash.key().bytes.size());
  put<std::uint64_t>(out.data() + offs::element_count, img.element_count);
  put<std::uint64_t>(out.data() + offs::payload_offset, payload_offset);
  put<std::uint64_t>(out.data() + offs::payload_size, img.payload.size());
  put<std::uint64_t>(out.data() + offs::file_size, payload_offset + img.payload.size());
  if (!img.params.empty())
    std::memcpy(out.data() + header_bytes, img.params.data(), img.params.size());
  put<std::uint64_t>(out.data() + offs::checksum, checksum(out, img.payload));
  return out;
}

// Validates a whole file image. Order matters for the messages: structure first (so truncation
// reads as truncation), then the checksum (so a flipped byte reads as corruption), then values.
inline parsed_file parse(std::span<const std::byte> file) {
  if (file.empty()) fail("file is empty, not a bloomery filter");
  if (file.size() < header_bytes) {
    if (std::memcmp(file.data(), format_magic, std::min(file.size(), sizeof format_magic)) != 0) {
      fail("not a bloomery filter file (bad magic)");
    }
    fail("file is truncated: " + std::to_string(file.size()) + " bytes, shorter than the " +
         std::to_string(header_bytes) + "-byte header");
  }
  const std::byte* h = file.data();
  if (std::memcmp(h + offs::magic, format_magic, sizeof format_magic) != 0) {
    fail("not a bloomery filter file (bad magic)");
  }
  const auto version = get<std::uint32_t>(h + offs::version);
  if (version != format_version) {
    fail("unsupported format version " + std::to_string(version) + " (this build reads version " +
         std::to_string(format_version) + ")");
  }
  const auto file_size = get<std::uint64_t>(h + offs::file_size);
  if (file.size() < file_size) {
    fail("file is truncated: header says " + std::to_string(file_size) + " bytes, file has " +
         std::to_string(file.size()));
  }
  if (file.size() > file_size) {
    fail("file has " + std::to_string(file.size()) + " bytes, header says " +
         std::to_string(file_size) + " (trailing data)");
  }
  const auto params_size = get<std::uint32_t>(h + offs::params_size);
  const auto payload_offset = get<std::uint64_t>(h + offs::payload_offset);
  const auto payload_size = get<std::uint64_t>(h + offs::payload_size);
  if (params_size > max_params_bytes ||
      payload_offset != align_up(header_bytes + params_size, payload_alignment) ||
      payload_offset > file_size || payload_size != file_size - payload_offset) {
    fail("header sizes do not add up (params " + std::to_string(params_size) + ", payload at " +
         std::to_string(payload_offset) + " of " + std::to_string(payload_size) + " bytes, file " +
         std::to_string(file_size) + " bytes)");
  }
  const std::span<const std::byte> prefix = file.first(payload_offset);
  const std::span<const std::byte> payload = file.subspan(payload_offset);
  if (checksum(prefix, payload) != get<std::uint64_t>(h + offs::checksum)) {
    fail("checksum mismatch: the file is corrupted");
  }
  for (std::size_t i = offs::reserved; i < offs::checksum; ++i) {
    if (h[i] != std::byte{0}) fail("reserved header bytes are not zero");
  }
  for (std::size_t i = header_bytes + params_size; i < payload_offset; ++i) {
    if (h[i] != std::byte{0}) fail("padding bytes are not zero");
  }
  const auto kind = get<std::uint32_t>(h + offs::kind);
  if (kind < 1 || kind > 6) fail("unknown filter kind " + std::to_string(kind));
  const auto algo = get<std::uint32_t>(h + offs::hash_algo);
  const auto seed = get<std::uint64_t>(h + offs::seed);
  secret_key key;
  std::memcpy(key.bytes.data(), h + offs::key, key.bytes.size());
  hasher hash;
  if (algo == static_cast<std::uint32_t>(hash_algorithm::xxh3_128_seeded)) {
    if (key != secret_key{}) fail("seeded hash with a non-zero key field");
    hash = hasher(seed);
  } else if (algo == static_cast<std::uint32_t>(hash_algorithm::xxh3_128_keyed)) {
    if (seed != 0) fail("keyed hash with a non-zero seed field");
    hash = hasher(key);
  } else {
    fail("unknown hash algorithm " + std::to_string(algo));
  }
  return {static_cast<filter_kind>(kind), hash, get<std::uint64_t>(h + offs::element_count),
          file.subspan(header_bytes, params_size), payload};
}

template <class F>
void expect_kind(const parsed_file& f) {
  if (f.kind != F::kind) {
    fail(std::string("file holds a ") + to_string(f.kind) + " filter, not a " + to_string(F::kind) +
         " filter");
  }
}

[[noreturn]] inline void io_fail(const std::string& what, const std::filesystem::path& path) {
  throw std::system_error(errno, std::generic_category(),
                          "bloomery: " + what + " '" + path.string() + "'");
}

// RAII file descriptor.
struct fd_guard {
  int fd = -1;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

inline void write_all(int fd, std::span<const std::byte> bytes, const std::filesystem::path& p) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), std::min<std::size_t>(bytes.size(), 1 << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      io_fail("cannot write", p);
    }
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
}

// Writes a file crash-safely: a temporary file in the same directory, fsync, rename over the
// target, fsync the directory. A crash at any point leaves either the old or the new file.
inline void write_file_atomically(const std::filesystem::path& path,
                                  std::span<const std::span<const std::byte>> parts) {
  const std::filesystem::path dir =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::string tmpl = (dir / ("." + path.filename().string() + ".tmp.XXXXXX")).string();
  fd_guard tmp{::mkstemp(tmpl.data())};
  if (tmp.fd < 0) io_fail("cannot create a temporary file beside", path);
  try {
    for (const auto& part : parts) write_all(tmp.fd, part, tmpl);
    if (::fsync(tmp.fd) != 0) io_fail("cannot fsync", tmpl);
    // mkstemp creates 0600; a filter is ordinary data, so give it the usual 0644 (minus umask).
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(tmp.fd, 0666 & ~mask);
    if (::rename(tmpl.c_str(), path.c_str()) != 0)
      io_fail("cannot rename a temporary file to", path);
  } catch (...) {
    ::unlink(tmpl.c_str());
    throw;
  }
  fd_guard d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY)};
  if (d.fd >= 0) ::fsync(d.fd);  // makes the rename durable; best effort where unsupported
}

inline std::vector<std::byte> read_file(const std::filesystem::path& path) {
  fd_guard f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) io_fail("cannot open", path);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) io_fail("cannot stat", path);
  if (S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    io_fail("cannot read", path);
  }
  std::vector<std::byte> bytes(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(f.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      io_fail("cannot read", path);
    }
    if (n == 0) break;  // the file shrank while we read it; parse() reports the truncation
    done += static_cast<std::size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

// A read-only memory mapping of a whole file.
class mapped_file {
 public:
  explicit mapped_file(const std::filesystem::path& path) {
    fd_guard f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) io_fail("cannot open", path);
    struct stat st {};
    if (::fstat(f.fd, &st) != 0) io_fail("cannot stat", path);
    if (!S_ISREG(st.st_mode)) {
      errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
      io_fail("cannot map", path);
    }
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ == 0) return;  // mmap rejects empty files; parse() reports "file is empty"
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, f.fd, 0);
    if (p == MAP_FAILED) io_fail("cannot map", path);
    data_ = p;
  }
  mapped_file(mapped_file&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  mapped_file& operator=(mapped_file&&) = delete;
  mapped_file(const mapped_file&) = delete;
  ~mapped_file() {
    if (data_ != nullptr) ::munmap(data_, size_);
  }
  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(data_), size_}; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace detail

// Saves `filter` to `path` crash-safely (temporary file, fsync, rename): an interrupted save
// leaves the previous file intact.
template <class F>
void save(const F& filter, const std::filesystem::path& path) {
  const detail::file_image img = filter.image();
  const std::vector<std::byte> prefix = detail::encode_prefix(img);
  const std::span<const std::byte> parts[] = {prefix, img.payload};
  detail::write_file_atomically(path, parts);
}

// The exact bytes save() writes, for callers that ship filters over a network or store them in
// another container.
template <class F>
std::vector<std::byte> serialize(const F& filter) {
  const detail::file_image img = filter.image();
  std::vector<std::byte> out = detail::encode_prefix(img);
  const std::size_t prefix_size = out.size();
  out.resize(prefix_size + img.payload.size());
  if (!img.payload.empty())
    std::memcpy(out.data() + prefix_size, img.payload.data(), img.payload.size());
  return out;
}

// Rebuilds a filter from serialize()'s bytes; throws format_error on any malformed input.
template <class F>
F deserialize(std::span<const std::byte> bytes) {
  const detail::parsed_file parsed = detail::parse(bytes);
  detail::expect_kind<F>(parsed);
  return F::from_image(parsed);
}

// Loads a filter saved by save(). Malformed files throw format_error; I/O failures throw
// std::system_error.
template <class F>
F load(const std::filesystem::path& path) {
  const std::vector<std::byte> bytes = detail::read_file(path);
  try {
    return deserialize<F>(bytes);
  } catch (const format_error& e) {
    throw format_error(std::string(e.what()) + " ('" + path.string() + "')");
  }
}

// A filter queried in place from a memory-mapped file: no copy of the payload. Read-only.
// The file must not be modified while mapped (save() replaces files by rename, which is safe).
template <class F>
class mapped_filter {
 public:
  explicit mapped_filter(const std::filesystem::path& path) : file_(path) {
    try {
      const detail::parsed_file parsed = detail::parse(file_.bytes());
      detail::expect_kind<F>(parsed);
      view_.emplace(F::view_of(parsed));
    } catch (const format_error& e) {
      throw format_error(std::string(e.what()) + " ('" + path.string() + "')");
    }
  }
  const typename F::view& operator*() const { return *view_; }
  const typename F::view* operator->() const { return &*view_; }

 private:
  detail::mapped_file file_;
  std::optional<typename F::view> view_;
};

template <class F>
mapped_filter<F> map_file(const std::filesystem::path& path) {
  return mapped_filter<F>(path);
}

}  // namespace bloomery
