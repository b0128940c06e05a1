// Whether the memory for a filter is there before the module asks for it.
//
// Debian's redis-server runs on jemalloc, which grants huge allocations without backing them, and
// bloomery zeroes a new filter's bits: a filter larger than the free memory would not fail to
// allocate, the kernel's OOM killer would end the server while the pages are touched. So the
// module checks the size before it builds, grows, restores or copies a filter for a client, and
// leaves a headroom free: the server must survive what it admits (the load argument
// MEMORY_HEADROOM; docs/redis.md).
#pragma once

#include <cstdint>

namespace bloomery_redis {

// Memory the system can still give this process: /proc/meminfo's MemAvailable, lowered to what
// is left under the process's cgroup limit and its address-space limit (RLIMIT_AS) when they are
// set. UINT64_MAX when unknown.
std::uint64_t available_memory_bytes();

// The fraction of the available memory a client's new filter must leave free.
inline constexpr double default_memory_headroom = 0.2;
inline constexpr double max_memory_headroom = 0.9;
void set_memory_headroom(double fraction);  // in [0, max_memory_headroom]

// Whether an allocation is judged by the admission check. A client's new data is; data the server
// already holds elsewhere is not: an RDB or AOF being loaded (a server must load what it saved)
// and a replica applying its master's writes (the master admitted them; refusing them here would
// leave the replica answering from another filter than its master's).
enum class memory_check { admission, none };

// `bytes` leave the headroom of the available memory free.
bool admits(std::uint64_t bytes);

inline bool may_allocate(memory_check check, std::uint64_t bytes) {
  return check == memory_check::none || admits(bytes);
}

// The most bytes `check` lets a new filter have (UINT64_MAX when it does not judge): the bound a
// foreign value's parser checks each size against before it allocates.
std::uint64_t admissible_bytes(memory_check check);

// A new filter's storage, checked before it is built: throws bloomery::allocation_error (a
// std::bad_alloc) unless `check` lets `bytes` be had.
void require_memory(memory_check check, std::uint64_t bytes);

}  // namespace bloomery_redis
