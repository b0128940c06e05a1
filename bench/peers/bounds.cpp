// bloomery-peer-bounds: where the blocked and static filters' integer-key queries spend their time
// against Boost's and binary fuse's (docs/lookup-paths.md). Each variant strips one layer off
// the library's may_contain, timed in one process, rounds interleaved, median: what is left
// after the last layer bounds what a change of that layer could win. Compiled with -march=native
// like the peers. It reaches into detail:: on purpose: it takes the library apart.
//
//   bloomery-peer-bounds [N]   (default 10^5 keys: in cache, where instructions decide)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "bloomery/bloomery.hpp"
#include "workload.hpp"

namespace {

using u64 = std::uint64_t;
namespace d = bloomery::detail;

struct variant {
  const char* name;
  std::function<std::size_t()> run;
};

// Times the variants in peers::run_rounds' interleaved rounds; prints each one's median ns per key.
void compare(const char* title, std::size_t queries, const std::vector<variant>& vs) {
  std::vector<peers::task> tasks;
  for (const variant& v : vs) tasks.push_back({v.name, v.run, queries});
  std::printf("%s\n", title);
  for (const peers::timing& t : peers::run_rounds(tasks, 9)) {
    std::printf("  %-58s %6.2f ns  (%zu positives)\n", t.name.c_str(), t.median_ns, t.positives);
  }
}

// The key's hash as the library computes it (mix_integer), or (OneMultiply) from one multiply,
// which strided keys defeat (docs/formulas.md): what is left is the probe alone.
template <bool OneMultiply>
bloomery::hash128 key_hash(u64 key, u64 seed) {
  if constexpr (OneMultiply) {
    const u64 h = d::fold_multiply(key ^ seed, 0x9e3779b97f4a7c15ULL);
    return {h, h};
  } else {
    return bloomery::mix_integer(key, seed);
  }
}

// The library's may_contain, as its users call it.
template <class F>
[[gnu::noinline]] std::size_t library(const F& f, const std::vector<u64>& q) {
  std::size_t s = 0;
  for (const u64 k : q) s += f.may_contain(k);
  return s;
}

// The library's hash (or the one-multiply one) and pattern, without the filter's per-key dispatch
// (hash algorithm, shared flag, probe path), through the AVX2 probe or (Avx512) the AVX-512VL one.
template <bool Avx512, bool OneMultiply>
[[gnu::noinline]] std::size_t blocked_direct(const bloomery::blocked_bloom_filter& f,
                                             const std::vector<u64>& q) {
  const u64* w = f.words().data();
  const u64 blocks = f.bit_count() / d::block_bits;
  const std::uint32_t k = f.hash_count();
  const u64 seed = f.hash().seed();
  std::size_t s = 0;
  for (const u64 key : q) {
    const d::block_slot at = d::locate(key_hash<OneMultiply>(key, seed), blocks);
    const u64* line = w + at.block * bloomery::words_per_line;
    s += Avx512 ? d::block_probe_avx512<false>(line, at.seed, k)
                : d::block_probe_avx2<false>(line, at.seed, k);
  }
  return s;
}

// The 64-bit finalizer of MurmurHash3 (two 64-bit multiplies), which binary fuse's reference
// applies to key + seed: the static filter's probe under it shows what bloomery's hash (two
// 64x64->128-bit multiplies for mix_integer's round and the fold) costs against the peer's.
[[gnu::noinline]] std::size_t static_murmur(const bloomery::static_filter& f,
                                            const std::vector<u64>& q) {
  const auto* slots = reinterpret_cast<const unsigned char*>(f.fingerprint_bytes().data());
  const d::fuse_layout l{f.segment_length(), f.segment_count(), f.array_length()};
  const u64 attempt = f.construction_seed();
  std::size_t s = 0;
  for (const u64 key : q) {
    u64 x = key + attempt;
    x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdULL;
    x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    s += d::fuse_probe<8, d::fuse_scheme::folded, 3>(slots, l, d::fuse_codec<8>{}, x);
  }
  return s;
}

// The library's per-key work, with its hash or the one-multiply one, without the dispatch on
// fingerprint width, scheme and algorithm.
template <bool OneMultiply>
[[gnu::noinline]] std::size_t static_direct(const bloomery::static_filter& f,
                                            const std::vector<u64>& q) {
  const auto* slots = reinterpret_cast<const unsigned char*>(f.fingerprint_bytes().data());
  const d::fuse_layout l{f.segment_length(), f.segment_count(), f.array_length()};
  const u64 seed = f.hash().seed(), attempt = f.construction_seed();
  std::size_t s = 0;
  for (const u64 key : q) {
    const u64 x = d::fuse_hash<d::fuse_scheme::folded>(key_hash<OneMultiply>(key, seed), attempt);
    s += d::fuse_probe<8, d::fuse_scheme::folded, 3>(slots, l, d::fuse_codec<8>{}, x);
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
  // The keys of bloomery-peers: splitmix64 stream positions [0, n) present, from 2^40 absent.
  const std::vector<u64> keys = peers::u64_keys(0, n);
  const std::vector<u64> q = peers::u64_keys(peers::kAbsentBase, std::size_t{1} << 20);
  bloomery::blocked_bloom_filter b({.capacity = n, .fpr = 0.01});
  b.insert_many(keys);
  const auto s = bloomery::static_filter::build(keys, bloomery::fingerprint_width::bits8);
  std::printf("n = %llu, 2^20 absent uint64 keys, one at a time, median of 9 rounds\n",
              static_cast<unsigned long long>(n));
  std::printf("blocked filter's probe path: %s\n",
              bloomery::to_string(bloomery::simd_path_in_use()));
  std::vector<variant> blocked = {{"library may_contain", [&] { return library(b, q); }},
                                  {"hash + locate + AVX2 probe, no dispatch",
                                   [&] { return blocked_direct<false, false>(b, q); }},
                                  {"  the same with a one-multiply hash (the probe alone)",
                                   [&] { return blocked_direct<false, true>(b, q); }}};
  if (bloomery::best_simd_path() == bloomery::simd_path::avx512) {
    blocked.push_back({"hash + locate + AVX-512VL probe, no dispatch",
                       [&] { return blocked_direct<true, false>(b, q); }});
    blocked.push_back({"  the same with a one-multiply hash (the probe alone)",
                       [&] { return blocked_direct<true, true>(b, q); }});
  }
  compare("blocked, 512-bit blocks", q.size(), blocked);
  compare("static, 8-bit fingerprints", q.size(),
          {{"library may_contain", [&] { return library(s, q); }},
           {"hash + fuse_hash + probe, no dispatch", [&] { return static_direct<false>(s, q); }},
           {"  the same with a one-multiply hash", [&] { return static_direct<true>(s, q); }},
           {"  the same with binary fuse's hash (murmur64 of key + seed)",
            [&] { return static_murmur(s, q); }}});
  return 0;
}
