// bloomery's side of the comparison, written once and compiled twice: bloomery_native.cpp and
// bloomery_o3.cpp each rename the namespace `bloomery` with a macro before including this file,
// so the two copies of the inline library are distinct symbols and the linker keeps both.
//
// Expects BLOOMERY_PEERS_SIDE_FN, the name of the entry function this translation unit defines.
#pragma once

#include <bloomery/bloomery.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "contender.hpp"
#include "side_common.hpp"

#ifndef BLOOMERY_PEERS_SIDE_FN
#error "define BLOOMERY_PEERS_SIDE_FN before including bloomery_side.hpp"
#endif

namespace {

using peers::kBatch;

// Every insertable filter is asked for 1% at its capacity, as the comparison's 10 bits per key.
constexpr double kFpr = 0.01;

// bloomery's adapters for side_common.hpp's contenders.
struct lib {
  template <class F>
  static void* make(std::uint64_t capacity) {
    return new F(bloomery::target{.capacity = capacity, .fpr = kFpr});
  }

  template <class F, class K>
  static void insert(void* h, const K* keys, std::size_t count) {
    F& f = *static_cast<F*>(h);
    if constexpr (requires { f.insert_many(std::span<const K>(keys, count)); }) {
      f.insert_many(std::span<const K>(keys, count));
    } else {
      for (std::size_t i = 0; i < count; ++i) (void)f.insert(keys[i]);
    }
  }

  template <class F, class K>
  static std::size_t query_many(const void* h, const K* keys, std::size_t count) {
    const F& f = *static_cast<const F*>(h);
    std::array<bool, kBatch> out{};
    std::size_t hits = 0;
    for (std::size_t base = 0; base < count; base += kBatch) {
      const std::size_t c = std::min(kBatch, count - base);
      hits += f.may_contain_many(std::span<const K>(keys + base, c), out);
      keep(out.data());
    }
    return hits;
  }

  template <class F>
  static std::uint64_t bytes(const void* h) {
    return static_cast<const F*>(h)->size_in_bytes();
  }
};

// Rate 0: the explicit 8-bit width (three whole-byte slots, binary_fuse8's layout); otherwise a
// build from that rate: 1% gives 7-bit fingerprints, 2^-8 8-bit ones, both in four packed slots.
template <class K, int RateInverse>
void* build_static(const K* keys, std::size_t count) {
  const std::span<const K> span(keys, count);
  if constexpr (RateInverse == 0) {
    return new bloomery::static_filter(
        bloomery::static_filter::build(span, bloomery::fingerprint_width::bits8));
  } else {
    return new bloomery::static_filter(bloomery::static_filter::build(span, 1.0 / RateInverse));
  }
}

template <class K, int RateInverse = 0>
peers::contender<K> built(std::string name) {
  peers::contender<K> c = queried<lib, bloomery::static_filter, K>(std::move(name));
  c.build = build_static<K, RateInverse>;
  return c;
}

}  // namespace

namespace peers {

side BLOOMERY_PEERS_SIDE_FN() {
  using u64 = std::uint64_t;
  using sv = std::string_view;
  side s;
  s.u64.push_back(growing<lib, bloomery::blocked_bloom_filter, u64>("bloomery blocked"));
  s.u64.push_back(growing<lib, bloomery::bloom_filter, u64>("bloomery bloom"));
  s.u64.push_back(built<u64>("bloomery static8"));
  s.u64.push_back(built<u64, 100>("bloomery static7x4"));
  s.u64.push_back(built<u64, 256>("bloomery static8x4"));
  s.u64.push_back(growing<lib, bloomery::counting_bloom_filter, u64>("bloomery counting"));
  s.u64.push_back(growing<lib, bloomery::cuckoo_filter, u64>("bloomery cuckoo"));
  s.u64.push_back(growing<lib, bloomery::scalable_bloom_filter, u64>("bloomery scalable"));
  s.str.push_back(growing<lib, bloomery::blocked_bloom_filter, sv>("bloomery blocked"));
  s.str.push_back(growing<lib, bloomery::bloom_filter, sv>("bloomery bloom"));
  return s;
}

}  // namespace peers
