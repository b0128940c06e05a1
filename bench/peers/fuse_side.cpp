// FastFilter's binary fuse filter (8-bit fingerprints), compiled with -O3 -march=native as in its
// own benchmarks. Built from the whole key set; it has no batched query.
#include <binaryfusefilter_singleheader.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <vector>

#include "contender.hpp"

namespace {

// populate may sort the array it is given (to drop duplicates), so it gets a copy: the same work
// as bloomery's build, which hashes the keys into an array of its own first.
void* build(const std::uint64_t* keys, std::size_t count) {
  std::vector<std::uint64_t> copy(keys, keys + count);
  auto* f = new binary_fuse8_t;
  const auto n = static_cast<std::uint32_t>(count);
  if (!binary_fuse8_allocate(n, f)) {
    delete f;
    throw std::bad_alloc();
  }
  if (!binary_fuse8_populate(copy.data(), n, f)) {
    binary_fuse8_free(f);
    delete f;
    throw std::runtime_error("binary_fuse8_populate failed");
  }
  return f;
}

std::size_t query_one(const void* h, const std::uint64_t* keys, std::size_t count) {
  const auto* f = static_cast<const binary_fuse8_t*>(h);
  std::size_t hits = 0;
  for (std::size_t i = 0; i < count; ++i) hits += binary_fuse8_contain(keys[i], f) ? 1 : 0;
  return hits;
}

std::uint64_t bytes(const void* h) {
  return binary_fuse8_size_in_bytes(static_cast<const binary_fuse8_t*>(h));
}

void destroy(void* h) {
  auto* f = static_cast<binary_fuse8_t*>(h);
  binary_fuse8_free(f);
  delete f;
}

}  // namespace

namespace peers {

side fuse_side() {
  side s;
  u64_contender c;
  c.name = "fastfilter binary_fuse8";
  c.build = build;
  c.query_one = query_one;
  c.bytes = bytes;
  c.destroy = destroy;
  s.u64.push_back(c);
  return s;
}

}  // namespace peers
