// Boost.Bloom's side of the comparison, compiled with -O3 -march=native as its users compile it
// (fast_multiblock32 takes its AVX2 path only when the compiler may emit AVX2).
#include <boost/bloom/fast_multiblock32.hpp>
#include <boost/bloom/filter.hpp>
#include <boost/container_hash/hash.hpp>

#define XXH_INLINE_ALL  // header-only, as bloomery uses xxHash
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "contender.hpp"
#include "side_common.hpp"

namespace {

using peers::kBatch;

// XXH3-64 over the key's bytes; declared avalanching so Boost.Bloom uses it unmixed.
struct xxh3_hash {
  using is_avalanching = std::true_type;
  std::uint64_t operator()(std::string_view s) const noexcept {
    return XXH3_64bits(s.data(), s.size());
  }
};

template <class K, class Hash = boost::hash<K>>
using multiblock = boost::bloom::filter<K, 1, boost::bloom::fast_multiblock32<8>, 0, Hash>;
template <class K, class Hash = boost::hash<K>>
using classic = boost::bloom::filter<K, 7, boost::bloom::block<unsigned char, 1>, 0, Hash>;

double g_bits_per_key = 10.0;

// Boost.Bloom's adapters for side_common.hpp's contenders.
struct lib {
  template <class F>
  static void* make(std::uint64_t capacity) {
    return new F(
        static_cast<std::size_t>(std::ceil(static_cast<double>(capacity) * g_bits_per_key)));
  }

  template <class F, class K>
  static void insert(void* h, const K* keys, std::size_t count) {
    static_cast<F*>(h)->insert(keys, keys + count);
  }

  // The bulk call over the same batches as bloomery's may_contain_many, with the same output.
  template <class F, class K>
  static std::size_t query_many(const void* h, const K* keys, std::size_t count) {
    const F& f = *static_cast<const F*>(h);
    bool out[kBatch];
    std::size_t hits = 0;
    for (std::size_t base = 0; base < count; base += kBatch) {
      const std::size_t c = std::min(kBatch, count - base);
      std::size_t i = 0;
      f.may_contain(keys + base, keys + base + c, [&](const K&, bool r) {
        out[i++] = r;
        hits += r ? 1 : 0;
      });
      keep(out);
    }
    return hits;
  }

  template <class F>
  static std::uint64_t bytes(const void* h) {
    return static_cast<const F*>(h)->capacity() / 8;
  }
};

}  // namespace

namespace peers {

side boost_side(double bits_per_key) {
  g_bits_per_key = bits_per_key;
  using u64 = std::uint64_t;
  using sv = std::string_view;
  side s;
  s.u64.push_back(growing<lib, multiblock<u64>, u64>("boost fast_multiblock32<8>"));
  s.u64.push_back(growing<lib, classic<u64>, u64>("boost classic k=7"));
  s.str.push_back(growing<lib, multiblock<sv>, sv>("boost fast_multiblock32<8>"));
  s.str.push_back(growing<lib, classic<sv>, sv>("boost classic k=7"));
  s.str.push_back(growing<lib, multiblock<sv, xxh3_hash>, sv>("boost fast_multiblock32<8> xxh3"));
  s.str.push_back(growing<lib, classic<sv, xxh3_hash>, sv>("boost classic k=7 xxh3"));
  return s;
}

}  // namespace peers
