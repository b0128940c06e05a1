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

#ifndef BLOOMERY_PEERS_SIDE_FN
#error "define BLOOMERY_PEERS_SIDE_FN before including bloomery_side.hpp"
#endif

namespace {

using peers::kBatch;

// Every insertable filter is asked for 1% at its capacity, as the comparison's 10 bits per key.
constexpr double kFpr = 0.01;

// Keeps the compiler from dropping answers that are written but never read.
inline void keep(const void* p) {
  asm volatile("" : : "r"(p) : "memory");
}

template <class F>
void* make(std::uint64_t capacity) {
  return new F(bloomery::target{.capacity = capacity, .fpr = kFpr});
}

template <class F, class K>
void insert(void* h, const K* keys, std::size_t count) {
  F& f = *static_cast<F*>(h);
  if constexpr (requires { f.insert_many(std::span<const K>(keys, count)); }) {
    f.insert_many(std::span<const K>(keys, count));
  } else {
    for (std::size_t i = 0; i < count; ++i) (void)f.insert(keys[i]);
  }
}

template <class K>
void* build_static(const K* keys, std::size_t count) {
  return new bloomery::static_filter(bloomery::static_filter::build(
      std::span<const K>(keys, count), bloomery::fingerprint_width::bits8));
}

template <class F, class K>
std::size_t query_one(const void* h, const K* keys, std::size_t count) {
  const F& f = *static_cast<const F*>(h);
  std::size_t hits = 0;
  for (std::size_t i = 0; i < count; ++i) hits += f.may_contain(keys[i]) ? 1 : 0;
  return hits;
}

template <class F, class K>
std::size_t query_many(const void* h, const K* keys, std::size_t count) {
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
std::uint64_t bytes(const void* h) {
  return static_cast<const F*>(h)->size_in_bytes();
}

template <class F>
void destroy(void* h) {
  delete static_cast<F*>(h);
}

template <class F, class K>
peers::contender<K> growing(std::string name) {
  peers::contender<K> c;
  c.name = std::move(name);
  c.make = make<F>;
  c.insert = insert<F, K>;
  c.query_one = query_one<F, K>;
  c.query_many = query_many<F, K>;
  c.bytes = bytes<F>;
  c.destroy = destroy<F>;
  return c;
}

template <class K>
peers::contender<K> built(std::string name) {
  using F = bloomery::static_filter;
  peers::contender<K> c;
  c.name = std::move(name);
  c.build = build_static<K>;
  c.query_one = query_one<F, K>;
  c.query_many = query_many<F, K>;
  c.bytes = bytes<F>;
  c.destroy = destroy<F>;
  return c;
}

}  // namespace

namespace peers {

side BLOOMERY_PEERS_SIDE_FN() {
  using u64 = std::uint64_t;
  using sv = std::string_view;
  side s;
  s.u64.push_back(growing<bloomery::blocked_bloom_filter, u64>("bloomery blocked"));
  s.u64.push_back(growing<bloomery::bloom_filter, u64>("bloomery bloom"));
  s.u64.push_back(built<u64>("bloomery static8"));
  s.u64.push_back(growing<bloomery::counting_bloom_filter, u64>("bloomery counting"));
  s.u64.push_back(growing<bloomery::cuckoo_filter, u64>("bloomery cuckoo"));
  s.u64.push_back(growing<bloomery::scalable_bloom_filter, u64>("bloomery scalable"));
  s.str.push_back(growing<bloomery::blocked_bloom_filter, sv>("bloomery blocked"));
  s.str.push_back(growing<bloomery::bloom_filter, sv>("bloomery bloom"));
  return s;
}

}  // namespace peers
