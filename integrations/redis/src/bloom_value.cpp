#include "bloom_value.hpp"

#include <cmath>
#include <new>
#include <optional>
#include <stdexcept>

#include <bloomery/bloom_filter.hpp>
#include <bloomery/kinds.hpp>

#include "memory_guard.hpp"

namespace bloomery_redis {
namespace {

// Bytes of the sub-filter a scaling filter adds next (its capacity and rate follow the scalable
// filter's documented n_i and p_i); 0 when bloomery cannot add one, which insert then reports.
std::uint64_t next_sub_filter_bytes(const bloomery::scalable_bloom_filter& f) {
  const bloomery::scalable_options& o = f.options();
  double capacity = static_cast<double>(f.capacity());
  double fpr = f.target_fpr() * (1.0 - o.tightening);
  for (std::size_t i = 0; i < f.sub_filter_count(); ++i) {
    capacity *= o.growth;
    fpr *= o.tightening;
  }
  if (!(capacity < 9.2e18) || !(fpr > 0.0)) return 0;
  try {
    return bloomery::bloom_filter::plan({static_cast<std::uint64_t>(std::ceil(capacity)), fpr})
        .bytes;
  } catch (const std::invalid_argument&) {
    return 0;
  }
}

}  // namespace

single_layer_bound bound_for_single_layer(double error_rate) {
  // r = 2^-k keeps 1 - r exact; the first k with p = e / (1 - r) below 1 whose product rounds back
  // to e (p or a neighbour) is taken, so sub-filter 0 is sized for exactly the requested rate.
  std::optional<single_layer_bound> nearest;
  for (int k = 1; k <= 60; ++k) {
    const double r = std::ldexp(1.0, -k);
    const double p = error_rate / (1.0 - r);
    for (const double candidate : {p, std::nextafter(p, 0.0), std::nextafter(p, 1.0)}) {
      if (!(candidate < 1.0)) continue;
      if (candidate * (1.0 - r) == error_rate) return {candidate, r};
      if (!nearest) nearest = single_layer_bound{candidate, r};
    }
  }
  return nearest.value_or(single_layer_bound{error_rate, 0.5});
}

namespace {

// The filter of a new key of this shape, its memory checked first.
bloomery::scalable_bloom_filter filter_for(const bloom_shape& shape, memory_check check) {
  bloomery::target t{shape.capacity, shape.error_rate};
  bloomery::scalable_options o{.growth = static_cast<double>(shape.expansion), .tightening = 0.5};
  if (shape.nonscaling) {
    const single_layer_bound b = bound_for_single_layer(shape.error_rate);
    t.fpr = b.fpr;
    o = {.growth = 1.0, .tightening = b.tightening};
  }
  require_memory(check, bloomery::scalable_bloom_filter::plan(t, o).bytes);
  return bloomery::scalable_bloom_filter(t, o);
}

}  // namespace

bloom_value::bloom_value(const bloom_shape& shape, memory_check check)
    : dumped_value(shape.nonscaling ? flag_nonscaling : 0,
                   dumped_filter<bloomery::scalable_bloom_filter>(filter_for(shape, check))) {}

bloom_value::add_result bloom_value::add(std::string_view item, memory_check check) {
  bloomery::scalable_bloom_filter& f = mutable_filter();
  const bloomery::bloom_filter::view newest = f.sub_filter(f.sub_filter_count() - 1);
  if (newest.inserted() >= newest.capacity()) {
    // A new item would need a new sub-filter: none for NONSCALING, else only if memory allows
    // (the storage is reallocated, old and new side by side while the old bits are copied).
    if (f.may_contain(item)) return add_result::present;
    if (nonscaling()) return add_result::full;
    const std::uint64_t next = next_sub_filter_bytes(f);
    if (next != 0 && !may_allocate(check, f.size_in_bytes() + next)) return add_result::no_memory;
  }
  try {
    return f.check_and_insert(item) ? add_result::added : add_result::present;
  } catch (const std::length_error&) {
    return add_result::cannot_grow;
  } catch (const std::bad_alloc&) {
    return add_result::no_memory;
  }
}

void bloom_value::check_word(std::uint32_t flags) {
  if ((flags & ~flag_nonscaling) != 0) throw bad_dump("unknown dump flags");
}

bool bloom_value::accepts(std::uint32_t flags, const bloomery::scalable_bloom_filter& f) {
  // Only shapes this module creates: INFO and further inserts assume them.
  const bloomery::scalable_options& o = f.options();
  return (flags & flag_nonscaling) != 0 ? f.sub_filter_count() == 1 && f.inserted() <= f.capacity()
                                        : o.tightening == 0.5 && o.growth == std::floor(o.growth);
}

}  // namespace bloomery_redis
