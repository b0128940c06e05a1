#include "memory_guard.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <optional>
#include <string>

#include <bloomery/errors.hpp>

namespace bloomery_redis {
namespace {

constexpr std::uint64_t unknown = std::numeric_limits<std::uint64_t>::max();

std::optional<std::uint64_t> read_number(const std::string& path) {
  std::ifstream in(path);
  std::uint64_t v = 0;
  if (in >> v) return v;
  return std::nullopt;  // missing, or "max"
}

// The value of `name` in a file of "name value" lines (/proc/meminfo, a cgroup's memory.stat).
std::optional<std::uint64_t> read_field(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(name) && line.size() > name.size() &&
        (line[name.size()] == ' ' || line[name.size()] == ':')) {
      return std::stoull(line.substr(name.size() + 1));
    }
  }
  return std::nullopt;
}

std::uint64_t meminfo_available() {
  const std::optional<std::uint64_t> kib = read_field("/proc/meminfo", "MemAvailable");
  return kib ? *kib * 1024 : unknown;
}

// What is left under a cgroup's limit; reclaimable page cache counts as free, as it does in
// MemAvailable.
std::uint64_t left_under(const std::string& limit_file, const std::string& usage_file,
                         const std::string& stat_file, const std::string& cache_field) {
  const std::optional<std::uint64_t> limit = read_number(limit_file);
  const std::optional<std::uint64_t> usage = read_number(usage_file);
  if (!limit || !usage) return unknown;
  const std::uint64_t cache = read_field(stat_file, cache_field).value_or(0);
  const std::uint64_t used = *usage > cache ? *usage - cache : 0;
  return *limit > used ? *limit - used : 0;
}

// The limits of this process's cgroups, v2 ("0::/path") and v1 ("N:memory:/path").
std::uint64_t cgroup_available() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  std::uint64_t left = unknown;
  while (std::getline(in, line)) {
    if (line.starts_with("0::")) {
      for (const std::string& d :
           {"/sys/fs/cgroup" + line.substr(3), std::string("/sys/fs/cgroup")}) {
        left = std::min(left, left_under(d + "/memory.max", d + "/memory.current",
                                         d + "/memory.stat", "inactive_file"));
      }
    } else if (const std::size_t at = line.find(":memory:"); at != std::string::npos) {
      const std::string root = "/sys/fs/cgroup/memory";
      for (const std::string& d : {root + line.substr(at + 8), root}) {
        left = std::min(left, left_under(d + "/memory.limit_in_bytes", d + "/memory.usage_in_bytes",
                                         d + "/memory.stat", "total_inactive_file"));
      }
    }
  }
  return left;
}

// What is left of the address-space limit (ulimit -v, prlimit --as): the limit less the mapped
// size, /proc/self/statm's first field. Conservative: address space jemalloc keeps after a free
// counts as used, though it will serve the next allocation.
std::uint64_t address_space_available() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return unknown;
  const std::optional<std::uint64_t> pages = read_number("/proc/self/statm");
  if (!pages) return unknown;
  const std::uint64_t mapped = *pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return limit.rlim_cur > mapped ? limit.rlim_cur - mapped : 0;
}

double headroom = default_memory_headroom;

}  // namespace

std::uint64_t available_memory_bytes() {
  return std::min({meminfo_available(), cgroup_available(), address_space_available()});
}

void set_memory_headroom(double fraction) {
  headroom = fraction;
}

bool admits(std::uint64_t bytes) {
  const std::uint64_t available = available_memory_bytes();
  if (available == unknown) return true;
  return static_cast<double>(bytes) <= static_cast<double>(available) * (1.0 - headroom);
}

std::uint64_t admissible_bytes(memory_check check) {
  const std::uint64_t available = available_memory_bytes();
  if (check == memory_check::none || available == unknown) return unknown;
  return static_cast<std::uint64_t>(static_cast<double>(available) * (1.0 - headroom));
}

void require_memory(memory_check check, std::uint64_t bytes) {
  if (!may_allocate(check, bytes)) {
    throw bloomery::allocation_error(bytes, "a filter (more than the memory available)");
  }
}

}  // namespace bloomery_redis
