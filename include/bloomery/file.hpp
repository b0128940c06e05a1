// The POSIX file layer over format.hpp: crash-safe save, load, and a zero-copy view of a mapped
// file, plus the two file utilities the library's own I/O is built from (read_file and
// write_file_atomically), public so that tools and integrations write files the same safe way.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "bloomery/format.hpp"

namespace bloomery {
namespace detail {

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

// The permission bits a replacement of `path` gets: the old file's, so a save never widens them;
// for a new file the usual 0666 minus the umask (mkstemp itself creates 0600).
inline mode_t replacement_mode(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 07777;
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace detail

// Writes `parts`, concatenated, to `path` crash-safely: a temporary file in the same directory,
// fsync, rename over the target, fsync the directory. A crash at any point leaves either the old or
// the new file, and the new file keeps the old one's permission bits. Throws std::system_error.
inline void write_file_atomically(const std::filesystem::path& path,
                                  std::span<const std::span<const std::byte>> parts) {
  const std::filesystem::path dir =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "." + name + suffix here.
  std::string name = ".";
  name.append(path.filename().string()).append(".tmp.XXXXXX");
  std::string tmpl = (dir / name).string();
  const mode_t mode = detail::replacement_mode(path);
  detail::fd_guard tmp{::mkstemp(tmpl.data())};
  if (tmp.fd < 0) detail::io_fail("cannot create a temporary file beside", path);
  try {
    for (const auto& part : parts) detail::write_all(tmp.fd, part, tmpl);
    if (::fsync(tmp.fd) != 0) detail::io_fail("cannot fsync", tmpl);
    if (::fchmod(tmp.fd, mode) != 0) detail::io_fail("cannot set the permissions of", tmpl);
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
      detail::io_fail("cannot rename a temporary file to", path);
    }
  } catch (...) {
    ::unlink(tmpl.c_str());
    throw;
  }
  detail::fd_guard d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY)};
  if (d.fd >= 0) ::fsync(d.fd);  // makes the rename durable; best effort where unsupported
}

inline void write_file_atomically(const std::filesystem::path& path,
                                  std::span<const std::byte> bytes) {
  const std::span<const std::byte> parts[] = {bytes};
  write_file_atomically(path, parts);
}

// The whole content of a regular file. Throws std::system_error (a directory reads as EISDIR).
inline std::vector<std::byte> read_file(const std::filesystem::path& path) {
  detail::fd_guard f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) detail::io_fail("cannot open", path);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) detail::io_fail("cannot stat", path);
  if (S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    detail::io_fail("cannot read", path);
  }
  std::vector<std::byte> bytes(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(f.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      detail::io_fail("cannot read", path);
    }
    if (n == 0) break;  // the file shrank while we read it; parse() reports the truncation
    done += static_cast<std::size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

namespace detail {

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

// Runs `fn`, adding the file's name to a format_error's message.
template <class Fn>
decltype(auto) naming_file(const std::filesystem::path& path, Fn&& fn) {
  try {
    return fn();
  } catch (const format_error& e) {
    throw format_error(std::string(e.what()) + " ('" + path.string() + "')");
  }
}

}  // namespace detail

// Saves `filter` to `path` crash-safely (write_file_atomically): an interrupted save leaves the
// previous file intact.
template <class F>
void save(const F& filter, const std::filesystem::path& path) {
  const detail::file_image img = filter.image();
  const std::vector<std::byte> prefix = detail::encode_prefix(img);
  const std::span<const std::byte> parts[] = {prefix, img.payload};
  write_file_atomically(path, parts);
}

// Loads a filter saved by save(). Malformed files throw format_error; I/O failures throw
// std::system_error.
template <class F>
F load(const std::filesystem::path& path) {
  const std::vector<std::byte> bytes = read_file(path);
  return detail::naming_file(path, [&] { return deserialize<F>(bytes); });
}

// A filter queried in place from a memory-mapped file: no copy of the payload. Read-only.
// The file must not be modified while mapped (save() replaces files by rename, which is safe).
template <class F>
class mapped_filter {
 public:
  explicit mapped_filter(const std::filesystem::path& path) : file_(path) {
    detail::naming_file(path, [&] {
      const detail::parsed_file parsed = detail::parse(file_.bytes());
      detail::expect_kind<F>(parsed);
      view_.emplace(F::view_of(parsed));
    });
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
