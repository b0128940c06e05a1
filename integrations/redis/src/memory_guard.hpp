// Whether the memory for a filter is there before the module asks for it.
//
// Debian's redis-server runs on jemalloc, which grants huge allocations without backing them, and
// bloomery zeroes a new filter's bits: a filter larger than the free memory would not fail to
// allocate, the kernel's OOM killer would end the server while the pages are touched. So the
// module checks the size before it builds, grows, restores or copies a filter.
#pragma once

#include <cstdint>

namespace bloomery_redis {

// Memory the system can still give this process: /proc/meminfo's MemAvailable, lowered to what
// is left under the process's cgroup (v2) limit when one is set. UINT64_MAX when unknown.
std::uint64_t available_memory_bytes();

inline bool memory_available(std::uint64_t bytes) {
  return bytes <= available_memory_bytes();
}

}  // namespace bloomery_redis
