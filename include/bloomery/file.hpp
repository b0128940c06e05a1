// The POSIX file layer over format.hpp: crash-safe save, load, and a zero-copy view of a mapped
// file, plus the file utilities the library's own I/O is built from (read_file,
// write_file_atomically and file_lock), public so that tools and integrations write files the same
// safe way.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <thread>
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

inline std::filesystem::path dir_of(const std::filesystem::path& path) {
  return path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
}

// A fresh name for a temporary file beside `path`: ".NAME.tmp." and 12 hex digits, unique across
// threads (the counter) and processes (the pid); the clock makes names from a reused pid unlikely
// to collide with a dead process's leftovers.
inline std::string temp_name_beside(const std::filesystem::path& path) {
  static std::atomic<std::uint64_t> counter{0};
  const std::uint64_t tag[] = {
      static_cast<std::uint64_t>(::getpid()), counter.fetch_add(1),
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())};
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(tag, sizeof tag)));
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "." + name + suffix here.
  std::string leaf = ".";
  leaf.append(path.filename().string()).append(".tmp.").append(suffix, 12);
  return (dir_of(path) / leaf).string();
}

// Exclusively creates a named temporary file beside `path` with permission bits `mode` (which the
// kernel reduces by the umask). Not mkstemp: it always creates 0600, and learning the umask to
// widen that again means umask(0) + umask(old), a process-wide race that leaves other threads'
// files world-writable.
inline int create_temp_beside(const std::filesystem::path& path, mode_t mode, std::string& name) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    name = temp_name_beside(path);
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

// Gives the anonymous file `fd` (opened with O_TMPFILE) a temporary name beside `path`, or returns
// "" where this system cannot (linkat by descriptor needs a privilege, by /proc path a mounted
// /proc).
inline std::string name_anonymous(int fd, const std::filesystem::path& path) {
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string name = temp_name_beside(path);
    if (::linkat(fd, "", AT_FDCWD, name.c_str(), AT_EMPTY_PATH) == 0) return name;
    if (errno != EEXIST &&
        ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      return name;
    }
    if (errno != EEXIST) return {};
  }
  return {};
}

}  // namespace detail

// Who may read the files write_file_atomically() writes.
enum class file_access {
  // A replacement keeps the replaced file's permission bits; a new file gets 0666 minus the umask.
  inherit,
  // As inherit, minus every group and other bit, and a new file is 0600: for files that hold a
  // secret (a keyed filter's key), so a save never leaves one readable by others.
  owner_only,
};

// Writes `parts`, concatenated, to `path` crash-safely: a temporary file in the same directory,
// fsync, rename over the target, fsync the directory. A crash at any point leaves either the old or
// the new file, and the permission bits never widen (see file_access). The temporary file is
// anonymous (O_TMPFILE) until just before the rename, so a crash leaves no stray file behind
// except in that instant, or where the file system has no O_TMPFILE (then a ".NAME.tmp.*" file,
// safe to delete when no writer runs). Throws std::system_error.
inline void write_file_atomically(const std::filesystem::path& path,
                                  std::span<const std::span<const std::byte>> parts,
                                  file_access access = file_access::inherit) {
  const std::filesystem::path dir = detail::dir_of(path);
  const mode_t private_bits = access == file_access::owner_only ? 0077 : 0;
  struct stat old {};
  const bool replacing = ::stat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode);
  // A replacement starts private and gets the old bits by fchmod (which ignores the umask); a new
  // file gets its bits from open(), which applies the umask atomically.
  const mode_t mode = replacing ? 0600 : 0666 & ~private_bits;
  // Fills `fd` and renames `name` (the file's name once `named` gives it one) over `path`.
  const auto commit = [&](int fd, std::string& name, auto&& named) {
    const std::string& what = name.empty() ? path.string() : name;
    for (const auto& part : parts) detail::write_all(fd, part, what);
    if (::fsync(fd) != 0) detail::io_fail("cannot fsync a temporary file for", path);
    if (replacing && ::fchmod(fd, old.st_mode & 07777 & ~private_bits) != 0) {
      detail::io_fail("cannot set the permissions of a temporary file for", path);
    }
    if (!named()) return false;
    if (::rename(name.c_str(), path.c_str()) != 0) {
      detail::io_fail("cannot rename a temporary file to", path);
    }
    return true;
  };
  std::string name;
  bool done = false;
  {
    detail::fd_guard anon{::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, mode)};
    if (anon.fd >= 0) {
      try {
        done = commit(anon.fd, name,
                      [&] { return !(name = detail::name_anonymous(anon.fd, path)).empty(); });
      } catch (...) {
        if (!name.empty()) ::unlink(name.c_str());
        throw;
      }
    }
  }
  if (!done) {  // no O_TMPFILE here, or no way to name such a file: a named temporary file
    detail::fd_guard tmp{detail::create_temp_beside(path, mode, name)};
    if (tmp.fd < 0) detail::io_fail("cannot create a temporary file beside", path);
    try {
      commit(tmp.fd, name, [] { return true; });
    } catch (...) {
      ::unlink(name.c_str());
      throw;
    }
  }
  detail::fd_guard d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (d.fd >= 0) ::fsync(d.fd);  // makes the rename durable; best effort where unsupported
}

inline void write_file_atomically(const std::filesystem::path& path,
                                  std::span<const std::byte> bytes,
                                  file_access access = file_access::inherit) {
  const std::span<const std::byte> parts[] = {bytes};
  write_file_atomically(path, parts, access);
}

// An exclusive lock on a file for a read-modify-write (load, change, save): writers that each
// hold it while they read and replace the file run one after another, so none overwrites the
// others' changes. Advisory: it excludes only writers that take it too (the CLI's add, remove,
// merge and intersect do); readers never need it, since a save replaces the file by rename and a
// reader sees the old file or the new one, whole. save() does not take it, so that a caller's
// read-modify-write can hold it around its own load() and save() (a second lock in the same
// process would wait for the first); a plain save beside such writers is last-writer-wins.
//
// It is a flock(2) on the file itself, re-checked once held: a writer that waited may hold the
// lock of a file that the writer before it has meanwhile renamed a new one over, so after
// flock() succeeds it checks that the path still names the file it locked, and otherwise locks
// the new file. Not a lock file beside the target: that would be a second file whose
// permissions, owner and lifetime need rules of their own (it could never be deleted safely).
// Not fcntl(2) record locks: closing any descriptor of the file, as load() does, drops those.
// Local file systems only: on NFS, Linux emulates flock with record locks.
//
// Move-only; the destructor releases the lock. Not for two holders in one process: a second
// file_lock on the same file waits for the first, forever if that one's thread is the waiter.
class file_lock {
 public:
  // Waits as long as another holder keeps the lock. `path` must name an existing regular file.
  // Throws std::system_error.
  explicit file_lock(const std::filesystem::path& path) : path_(path) {
    while (attempt(/*wait=*/true) != outcome::held) {
    }
  }

  // The lock if it can be had within `timeout` (zero: one attempt, no waiting), else nullopt: a
  // holder kept it that long. Throws std::system_error as the constructor does.
  static std::optional<file_lock> try_lock_for(const std::filesystem::path& path,
                                               std::chrono::nanoseconds timeout) {
    file_lock lock(path, adopt{});
    // flock() cannot time out, so a bounded wait polls, backing off from 1 ms to 25 ms.
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::chrono::milliseconds pause{1};
    for (;;) {
      const outcome o = lock.attempt(/*wait=*/false);
      if (o == outcome::held) return lock;
      if (o == outcome::replaced) continue;
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(pause, deadline - now));
      pause = std::min(pause * 2, std::chrono::milliseconds{25});
    }
  }

  file_lock(file_lock&& o) noexcept : path_(std::move(o.path_)), fd_(std::exchange(o.fd_, -1)) {}
  file_lock& operator=(file_lock&& o) noexcept {
    if (this != &o) {
      unlock();
      path_ = std::move(o.path_);
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  file_lock(const file_lock&) = delete;
  file_lock& operator=(const file_lock&) = delete;
  ~file_lock() { unlock(); }

  // Releases the lock early (closing the descriptor releases it).
  void unlock() noexcept {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  }
  bool owns_lock() const noexcept { return fd_ >= 0; }
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  struct adopt {};
  file_lock(const std::filesystem::path& path, adopt) : path_(path) {}

  // busy: another holder has the lock (only when not waiting); replaced: the file we locked is no
  // longer the one `path_` names, so the lock protects nothing and we try again.
  enum class outcome { held, busy, replaced };

  outcome attempt(bool wait) {
    // O_NONBLOCK: opening a FIFO put where the filter should be must not hang.
    detail::fd_guard f{::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
    if (f.fd < 0) detail::io_fail("cannot open for locking", path_);
    struct stat held {};
    if (::fstat(f.fd, &held) != 0) detail::io_fail("cannot stat", path_);
    if (!S_ISREG(held.st_mode)) {
      errno = S_ISDIR(held.st_mode) ? EISDIR : EINVAL;
      detail::io_fail("cannot lock", path_);
    }
    while (::flock(f.fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
      if (errno == EWOULDBLOCK && !wait) return outcome::busy;
      if (errno != EINTR) detail::io_fail("cannot lock", path_);
    }
    struct stat now {};
    if (::stat(path_.c_str(), &now) != 0) {
      if (errno == ENOENT) return outcome::replaced;  // removed: the next open() reports it
      detail::io_fail("cannot stat", path_);
    }
    if (now.st_dev != held.st_dev || now.st_ino != held.st_ino) return outcome::replaced;
    unlock();
    fd_ = std::exchange(f.fd, -1);
    return outcome::held;
  }

  std::filesystem::path path_;
  int fd_ = -1;
};

namespace detail {

// Reads exactly `bytes.size()` bytes from the current offset of `fd`; false if the file ended
// first (it shrank while we read it).
inline bool read_exactly(int fd, std::span<std::byte> bytes, const std::filesystem::path& path) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      io_fail("cannot read", path);
    }
    if (n == 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Opens a regular file for reading and returns its size. Throws std::system_error (a directory
// reads as EISDIR).
inline std::uint64_t open_for_reading(fd_guard& f, const std::filesystem::path& path) {
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) io_fail("cannot open", path);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) io_fail("cannot stat", path);
  if (S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    io_fail("cannot read", path);
  }
  return static_cast<std::uint64_t>(st.st_size);
}

// A zeroed buffer of `size` bytes, or allocation_error naming the file it was for.
inline std::vector<std::byte> file_buffer(std::uint64_t size) {
  try {
    return std::vector<std::byte>(static_cast<std::size_t>(size));
  } catch (const std::bad_alloc&) {
    throw allocation_error(size, "a file's bytes");
  } catch (const std::length_error&) {
    throw allocation_error(size, "a file's bytes");
  }
}

}  // namespace detail

// The whole content of a regular file. Throws std::system_error (a directory reads as EISDIR), or
// allocation_error when the file does not fit in memory.
inline std::vector<std::byte> read_file(const std::filesystem::path& path) {
  detail::fd_guard f;
  std::vector<std::byte> bytes = detail::file_buffer(detail::open_for_reading(f, path));
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

// The bytes of a filter file, read header first: a file that is not a bloomery filter, or whose
// size differs from the one its header declares, is refused (format_error, without the path)
// before anything more than the header is read or allocated. The whole file is validated later,
// by deserialize(). I/O failures throw std::system_error.
inline std::vector<std::byte> read_filter_file(const std::filesystem::path& path) {
  detail::fd_guard f;
  const std::uint64_t size = detail::open_for_reading(f, path);
  std::byte head[header_bytes];
  const auto head_bytes = static_cast<std::size_t>(std::min<std::uint64_t>(size, header_bytes));
  bool whole = detail::read_exactly(f.fd, {head, head_bytes}, path);
  detail::check_head({head, whole ? head_bytes : 0}, whole ? size : 0);
  std::vector<std::byte> bytes = detail::file_buffer(size);
  std::memcpy(bytes.data(), head, head_bytes);
  whole = detail::read_exactly(f.fd, std::span(bytes).subspan(head_bytes), path);
  if (!whole) detail::fail("file is truncated: it shrank while being read");
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

// Describes a filter file without loading it: reads its header, then the rest of its prefix (the
// parameters and padding up to the payload, whose size the header gives), and makes the checks
// inspect_prefix() makes, plus that the file's size is the one its header declares. The payload is
// never read, so the checksum is not verified (load() and map_file() verify it). A file that is
// not a filter or whose prefix is damaged throws format_error naming the file; I/O failures throw
// std::system_error.
inline image_info inspect_file(const std::filesystem::path& path) {
  return detail::naming_file(path, [&] {
    detail::fd_guard f;
    const std::uint64_t size = detail::open_for_reading(f, path);
    std::vector<std::byte> prefix(header_bytes);
    const auto head_bytes = static_cast<std::size_t>(std::min<std::uint64_t>(size, header_bytes));
    const bool whole = detail::read_exactly(f.fd, std::span(prefix).first(head_bytes), path);
    detail::check_head(std::span(prefix).first(whole ? head_bytes : 0), whole ? size : 0);
    // check_head saw the whole header and its file size; the layout says where the payload starts
    // (at most header_bytes + max_params_bytes + padding, so this is never a large read).
    const detail::image_layout l = detail::check_layout(prefix.data());
    prefix.resize(static_cast<std::size_t>(l.payload_offset));
    if (!detail::read_exactly(f.fd, std::span(prefix).subspan(header_bytes), path)) {
      detail::fail("file is truncated: it shrank while being read");
    }
    return inspect_prefix(prefix);
  });
}

// Saves `filter` to `path` crash-safely (write_file_atomically): an interrupted save leaves the
// previous file intact. A keyed filter's file holds its secret key, so it is written owner-only.
template <class F>
void save(const F& filter, const std::filesystem::path& path) {
  const detail::file_image img = filter.image();
  const std::vector<std::byte> prefix = detail::encode_prefix(img);
  const std::span<const std::byte> parts[] = {prefix, img.payload};
  write_file_atomically(path, parts,
                        img.hash.keyed() ? file_access::owner_only : file_access::inherit);
}

// Loads a filter saved by save(). Malformed files throw format_error; I/O failures throw
// std::system_error.
template <class F>
F load(const std::filesystem::path& path) {
  return detail::naming_file(path, [&] { return deserialize<F>(read_filter_file(path)); });
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
