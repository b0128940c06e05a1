// What the sides of the comparison share (bloomery_side.hpp, boost_side.cpp): the parts of a
// contender that are the same whatever the library. Everything here has internal linkage, so each
// side's translation unit keeps its own copy, compiled with that side's flags.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "contender.hpp"

namespace {

// Keeps the compiler from dropping answers that are written but never read.
inline void keep(const void* p) {
  asm volatile("" : : "r"(p) : "memory");
}

template <class F, class K>
std::size_t query_one(const void* h, const K* keys, std::size_t count) {
  const F& f = *static_cast<const F*>(h);
  std::size_t hits = 0;
  for (std::size_t i = 0; i < count; ++i) hits += f.may_contain(keys[i]) ? 1 : 0;
  return hits;
}

template <class F>
void destroy(void* h) {
  delete static_cast<F*>(h);
}

// A contender that queries a filter of type F. `Lib` holds the library's own adapters as static
// member templates: query_many<F, K> and bytes<F>, and for a growing filter make<F> and
// insert<F, K>.
template <class Lib, class F, class K>
peers::contender<K> queried(std::string name) {
  peers::contender<K> c;
  c.name = std::move(name);
  c.query_one = query_one<F, K>;
  c.query_many = Lib::template query_many<F, K>;
  c.bytes = Lib::template bytes<F>;
  c.destroy = destroy<F>;
  return c;
}

// A filter made for a capacity and grown by inserts.
template <class Lib, class F, class K>
peers::contender<K> growing(std::string name) {
  peers::contender<K> c = queried<Lib, F, K>(std::move(name));
  c.make = Lib::template make<F>;
  c.insert = Lib::template insert<F, K>;
  return c;
}

}  // namespace
