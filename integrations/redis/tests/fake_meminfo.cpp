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

}  // namespace

extern "C" {

#define BLOOMERY_FAKE_OPEN(name)                                          \
  int name(const char* path, int flags, ...) {                            \
    mode_t mode = 0;                                                      \
    if ((flags & (O_CREAT | O_TMPFILE)) != 0) {                           \
      va_list ap;                                                         \
      va_start(ap, flags);                                                \
      mode = static_cast<mode_t>(va_arg(ap, int));                        \
      va_end(ap);                                                         \
    }                                                                     \
    if (is_meminfo(path)) {                                               \
      if (const int fd = fake_meminfo_fd(); fd >= 0) return fd;           \
    }                                                                     \
    static const auto real = next<int (*)(const char*, int, ...)>(#name); \
    return real(path, flags, mode);                                       \
  }
BLOOMERY_FAKE_OPEN(open)
BLOOMERY_FAKE_OPEN(open64)
#undef BLOOMERY_FAKE_OPEN

#define BLOOMERY_FAKE_OPENAT(name)                                             \
  int name(int dir, const char* path, int flags, ...) {                        \
    mode_t mode = 0;                                                           \
    if ((flags & (O_CREAT | O_TMPFILE)) != 0) {                                \
      va_list ap;                                                              \
      va_start(ap, flags);                                                     \
      mode = static_cast<mode_t>(va_arg(ap, int));                             \
      va_end(ap);                                                              \
    }                                                                          \
    if (is_meminfo(path)) {                                                    \
      if (const int fd = fake_meminfo_fd(); fd >= 0) return fd;                \
    }                                                                          \
    static const auto real = next<int (*)(int, const char*, int, ...)>(#name); \
    return real(dir, path, flags, mode);                                       \
  }
BLOOMERY_FAKE_OPENAT(openat)
BLOOMERY_FAKE_OPENAT(openat64)
#undef BLOOMERY_FAKE_OPENAT

#define BLOOMERY_FAKE_FOPEN(name)                                              \
  FILE* name(const char* path, const char* mode) {                             \
    if (is_meminfo(path)) {                                                    \
      if (const int fd = fake_meminfo_fd(); fd >= 0) return ::fdopen(fd, "r"); \
    }                                                                          \
    static const auto real = next<FILE* (*)(const char*, const char*)>(#name); \
    return real(path, mode);                                                   \
  }
BLOOMERY_FAKE_FOPEN(fopen)
BLOOMERY_FAKE_FOPEN(fopen64)
#undef BLOOMERY_FAKE_FOPEN
}
