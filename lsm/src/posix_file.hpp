// The store's own small POSIX layer. bloomery::write_file_atomically writes a whole file in one
// call; the store needs the steps apart: the SSTable writer streams blocks into one descriptor,
// and a flush must be able to stop (flush_hook) between a file's fsync and its rename.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <system_error>
#include <utility>

namespace bloomery::lsm::posix {

// Throws std::system_error for the current errno, naming what failed and the file.
[[noreturn]] inline void fail(const std::string& what, const std::filesystem::path& path) {
  throw std::system_error(errno, std::generic_category(),
                          "bloomery: " + what + " '" + path.string() + "'");
}

// An owned file descriptor, closed when it goes out of scope.
class file {
 public:
  file() = default;
  explicit file(int fd) noexcept : fd_(fd) {}
  file(file&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  file& operator=(file&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~file() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }

 private:
  int fd_ = -1;
};

inline file open_read_only(const std::filesystem::path& path) {
  file f(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (f.get() < 0) fail("cannot open", path);
  return f;
}

// Creates `path`, or truncates it if it exists.
inline file create(const std::filesystem::path& path) {
  file f(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (f.get() < 0) fail("cannot create", path);
  return f;
}

inline void write_all(const file& f, std::span<const std::byte> bytes,
                      const std::filesystem::path& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(f.get(), bytes.data(), std::min<std::size_t>(bytes.size(), 1 << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write", path);
    }
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
}

inline void sync(const file& f, const std::filesystem::path& path) {
  if (::fsync(f.get()) != 0) fail("cannot fsync", path);
}

inline void sync_directory(const std::filesystem::path& dir) {
  const file d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (d.get() < 0) fail("cannot open directory", dir);
  if (::fsync(d.get()) != 0) fail("cannot fsync directory", dir);
}

// Renames `from` over `to` and makes the rename durable (fsync of the directory).
inline void rename_durably(const std::filesystem::path& from, const std::filesystem::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) fail("cannot rename", from);
  sync_directory(to.parent_path());
}

}  // namespace bloomery::lsm::posix
