// The interface between the drivers (peers.cpp, curve.cpp) and the translation units that compile
// each library: plain functions over an opaque handle, gathered in a table per contender. No
// library header is included here, so every side is compiled only with its own flags.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace peers {

// Keys per batched call: every batched query hands a library this many keys at once.
inline constexpr std::size_t kBatch = 1024;

// A filter over keys of type K (std::uint64_t or std::string_view). A contender either grows by
// inserts (`make` then `insert`) or is built from its whole key set (`build`); the other pair is
// null. `query_one` sums one-at-a-time answers over a key array; `query_many` answers the same
// keys in batches of kBatch through the library's batched call (null when it has none).
template <class K>
struct contender {
  std::string name;
  void* (*make)(std::uint64_t capacity) = nullptr;
  void (*insert)(void* h, const K* keys, std::size_t count) = nullptr;
  void* (*build)(const K* keys, std::size_t count) = nullptr;
  std::size_t (*query_one)(const void* h, const K* keys, std::size_t count) = nullptr;
  std::size_t (*query_many)(const void* h, const K* keys, std::size_t count) = nullptr;
  std::uint64_t (*bytes)(const void* h) = nullptr;
  void (*destroy)(void* h) = nullptr;
};

using u64_contender = contender<std::uint64_t>;
using str_contender = contender<std::string_view>;

// Which filters a side offers; names are "<library> <filter>" and unique within a side.
struct side {
  std::vector<u64_contender> u64;
  std::vector<str_contender> str;
};

// bloomery compiled twice (bloomery_native.cpp with -march=native, bloomery_o3.cpp with plain
// -O3), each under its own namespace name; every bloomery filter of the family.
side bloomery_native_side();
side bloomery_o3_side();
// Boost.Bloom's fast_multiblock32<8> and classic k = 7 filters (boost_side.cpp), sized at
// `bits_per_key` bits per key; string keys with boost::hash and with an XXH3 functor.
side boost_side(double bits_per_key);
// FastFilter's binary fuse filter with 8-bit fingerprints (fuse_side.cpp): build only.
side fuse_side();

}  // namespace peers
