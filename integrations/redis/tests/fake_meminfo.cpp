// LD_PRELOAD shim for the memory tests: the process sees a machine of BLOOMERY_FAKE_MEMORY_BYTES
// bytes of which it is the only user, so that "available" memory falls as the process's own
// resident memory grows. /proc/meminfo, opened by any means, reads
//   MemTotal / MemFree / MemAvailable = total, and total less this process's resident set;
// every other path is opened as usual. The tests simulate a small machine with it rather than
// allocating gigabytes on the one they run on.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

bool is_meminfo(const char* path) {
  return path != nullptr && std::strcmp(path, "/proc/meminfo") == 0;
}

unsigned long long resident_bytes() {
  // /proc/self/statm: size, resident, ... in pages; read with the real open (not interposed:
  // the path differs).
  const int fd = ::open("/proc/self/statm", O_RDONLY);
  if (fd < 0) return 0;
  char buf[128] = {};
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  unsigned long long size = 0, resident = 0;
  if (n <= 0 || std::sscanf(buf, "%llu %llu", &size, &resident) != 2) return 0;
  return resident * static_cast<unsigned long long>(::sysconf(_SC_PAGESIZE));
}

// A memory file holding the simulated /proc/meminfo, positioned at its start; -1 when the
// variable is unset (then the real file is opened).
int fake_meminfo_fd() {
  const char* total_text = std::getenv("BLOOMERY_FAKE_MEMORY_BYTES");
  if (total_text == nullptr) return -1;
  const unsigned long long total = std::strtoull(total_text, nullptr, 10);
  const unsigned long long used = resident_bytes();
  const unsigned long long left = total > used ? total - used : 0;
  char text[256];
  const int len = std::snprintf(text, sizeof text,
                                "MemTotal:       %llu kB\nMemFree:        %llu kB\n"
                                "MemAvailable:   %llu kB\n",
                                total / 1024, left / 1024, left / 1024);
  const int fd = ::memfd_create("fake-meminfo", MFD_CLOEXEC);
  if (fd < 0) return -1;
  if (::write(fd, text, static_cast<std::size_t>(len)) != len || ::lseek(fd, 0, SEEK_SET) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

template <class Fn>
Fn next(const char* name) {
  return reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
}

// open()'s mode argument, present only when the flags create a file.
mode_t mode_of(int flags, va_list ap) {
  return (flags & (O_CREAT | O_TMPFILE)) != 0 ? static_cast<mode_t>(va_arg(ap, int)) : 0;
}

}  // namespace

extern "C" {

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_of(flags, ap);
  va_end(ap);
  if (const int fd = is_meminfo(path) ? fake_meminfo_fd() : -1; fd >= 0) return fd;
  static const auto real = next<int (*)(const char*, int, ...)>("open");
  return real(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return open(path, flags, mode);  // the same call on a 64-bit system
}

int openat(int dir, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_of(flags, ap);
  va_end(ap);
  if (const int fd = is_meminfo(path) ? fake_meminfo_fd() : -1; fd >= 0) return fd;
  static const auto real = next<int (*)(int, const char*, int, ...)>("openat");
  return real(dir, path, flags, mode);
}

int openat64(int dir, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return openat(dir, path, flags, mode);
}

FILE* fopen(const char* path, const char* mode) {
  if (const int fd = is_meminfo(path) ? fake_meminfo_fd() : -1; fd >= 0) return ::fdopen(fd, "r");
  static const auto real = next<FILE* (*)(const char*, const char*)>("fopen");
  return real(path, mode);
}

FILE* fopen64(const char* path, const char* mode) {
  return fopen(path, mode);
}
}
