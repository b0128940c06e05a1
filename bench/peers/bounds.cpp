// bloomery-peer-bounds: where the blocked and static filters' integer-key queries spend their time
// against Boost's and binary fuse's (BENCHMARKS.md, "Peers"). Each variant strips one layer off
// the library's may_contain, timed in one process, rounds interleaved, median: what is left
// after the last layer bounds what a change of that layer could win. Compiled with -march=native
// like the peers. It reaches into detail:: on purpose: it takes the library apart.
//
//   bloomery-peer-bounds [N]   (default 10^5 keys: in cache, where instructions decide)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bloomery/bloomery.hpp"

namespace {

using u64 = std::uint64_t;
namespace d = bloomery::detail;

u64 splitmix(u64 i) {
  u64 z = i * 0x9e3779b97f4a7c15ULL + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

u64 fold(u64 a, u64 b) {
  return d::fold_multiply(a, b);
}

struct variant {
  const char* name;
  std::function<std::size_t()> run;
};

// Times every variant once per round, rotating the order; prints each one's median ns per key.
void compare(const char* title, std::size_t queries, std::vector<variant> vs) {
  const int rounds = 9;
  std::vector<std::vector<double>> ns(vs.size());
  std::vector<std::size_t> hits(vs.size());
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t j = 0; j < vs.size(); ++j) {
      const std::size_t v = (j + static_cast<std::size_t>(r)) % vs.size();
      const auto t0 = std::chrono::steady_clock::now();
      hits[v] = vs[v].run();
      const auto t1 = std::chrono::steady_clock::now();
      ns[v].push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                      static_cast<double>(queries));
    }
  }
  std::printf("%s\n", title);
  for (std::size_t v = 0; v < vs.size(); ++v) {
    std::sort(ns[v].begin(), ns[v].end());
    std::printf("  %-58s %6.2f ns  (%zu positives)\n", vs[v].name, ns[v][rounds / 2], hits[v]);
  }
}

[[gnu::noinline]] std::size_t blocked_library(const bloomery::blocked_bloom_filter& f,
                                              const std::vector<u64>& q) {
  std::size_t s = 0;
  for (const u64 k : q) s += f.may_contain(k);
  return s;
}

// The library's hash and pattern, without the filter's per-key dispatch (hash algorithm, shared
// flag, probe path), through the AVX2 probe or (Avx512) the AVX-512VL one.
template <bool Avx512>
[[gnu::noinline]] std::size_t blocked_direct(const bloomery::blocked_bloom_filter& f,
                                             const std::vector<u64>& q) {
  const u64* w = f.words().data();
  const u64 blocks = f.bit_count() / d::block_bits;
  const std::uint32_t k = f.hash_count();
  const u64 seed = f.hash().seed();
  std::size_t s = 0;
  for (const u64 key : q) {
    const d::block_slot at = d::locate(bloomery::mix_integer(key, seed), blocks);
    const u64* line = w + at.block * bloomery::words_per_line;
    s += Avx512 ? d::block_probe_avx512<false>(line, at.seed, k)
                : d::block_probe_avx2<false>(line, at.seed, k);
  }
  return s;
}

// As blocked_direct with a one-multiply hash, which strided keys defeat (docs/formulas.md): what
// is left is the 512-bit pattern's probe alone.
template <bool Avx512>
[[gnu::noinline]] std::size_t blocked_one_multiply(const bloomery::blocked_bloom_filter& f,
                                                   const std::vector<u64>& q) {
  const u64* w = f.words().data();
  const u64 blocks = f.bit_count() / d::block_bits;
  const std::uint32_t k = f.hash_count();
  const u64 seed = f.hash().seed();
  std::size_t s = 0;
  for (const u64 key : q) {
    const u64 h = fold(key ^ seed, 0x9e3779b97f4a7c15ULL);
    const d::block_slot at = d::locate({h, h}, blocks);
    const u64* line = w + at.block * bloomery::words_per_line;
    s += Avx512 ? d::block_probe_avx512<false>(line, at.seed, k)
                : d::block_probe_avx2<false>(line, at.seed, k);
  }
  return s;
}

[[gnu::noinline]] std::size_t static_library(const bloomery::static_filter& f,
                                             const std::vector<u64>& q) {
  std::size_t s = 0;
  for (const u64 k : q) s += f.may_contain(k);
  return s;
}

// The library's per-key work without the dispatch on fingerprint width, scheme and algorithm.
[[gnu::noinline]] std::size_t static_direct(const bloomery::static_filter& f,
                                            const std::vector<u64>& q) {
  const auto* slots = reinterpret_cast<const unsigned char*>(f.fingerprint_bytes().data());
  const d::fuse_layout l{f.segment_length(), f.segment_count(), f.array_length()};
  const u64 seed = f.hash().seed(), attempt = f.construction_seed();
  std::size_t s = 0;
  for (const u64 key : q) {
    const u64 x = d::fuse_hash<d::fuse_scheme::folded>(bloomery::mix_integer(key, seed), attempt);
    s += d::fuse_probe<std::uint8_t, d::fuse_scheme::folded>(slots, l, x);
  }
  return s;
}

// As static_direct with one multiply for the key's hash instead of mix_integer's two.
[[gnu::noinline]] std::size_t static_one_multiply(const bloomery::static_filter& f,
                                                  const std::vector<u64>& q) {
  const auto* slots = reinterpret_cast<const unsigned char*>(f.fingerprint_bytes().data());
  const d::fuse_layout l{f.segment_length(), f.segment_count(), f.array_length()};
  const u64 seed = f.hash().seed(), attempt = f.construction_seed();
  std::size_t s = 0;
  for (const u64 key : q) {
    const u64 h = fold(key ^ seed, 0x9e3779b97f4a7c15ULL);
    const u64 x = d::fuse_hash<d::fuse_scheme::folded>({h, h}, attempt);
    s += d::fuse_probe<std::uint8_t, d::fuse_scheme::folded>(slots, l, x);
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const u64 n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  if (n == 0) {
    std::fprintf(stderr, "usage: %s [N > 0]\n", argv[0]);
    return 2;
  }
  std::vector<u64> keys(n), q(std::size_t{1} << 20);
  for (u64 i = 0; i < n; ++i) keys[i] = splitmix(i);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = splitmix(i + (u64{1} << 40));
  bloomery::blocked_bloom_filter b({.capacity = n, .fpr = 0.01});
  b.insert_many(keys);
  const auto s = bloomery::static_filter::build(keys, bloomery::fingerprint_width::bits8);
  std::printf("n = %llu, 2^20 absent uint64 keys, one at a time, median of 9 rounds\n",
              static_cast<unsigned long long>(n));
  std::printf("blocked filter's probe path: %s\n",
              bloomery::to_string(bloomery::simd_path_in_use()));
  std::vector<variant> blocked = {
      {"library may_contain", [&] { return blocked_library(b, q); }},
      {"hash + locate + AVX2 probe, no dispatch", [&] { return blocked_direct<false>(b, q); }},
      {"  the same with a one-multiply hash (the probe alone)",
       [&] { return blocked_one_multiply<false>(b, q); }}};
  if (bloomery::best_simd_path() == bloomery::simd_path::avx512) {
    blocked.push_back({"hash + locate + AVX-512VL probe, no dispatch",
                       [&] { return blocked_direct<true>(b, q); }});
    blocked.push_back({"  the same with a one-multiply hash (the probe alone)",
                       [&] { return blocked_one_multiply<true>(b, q); }});
  }
  compare("blocked, 512-bit blocks", q.size(), std::move(blocked));
  compare("static, 8-bit fingerprints", q.size(),
          {{"library may_contain", [&] { return static_library(s, q); }},
           {"hash + fuse_hash + probe, no dispatch", [&] { return static_direct(s, q); }},
           {"  the same with a one-multiply hash", [&] { return static_one_multiply(s, q); }}});
  return 0;
}
