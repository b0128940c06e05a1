#include "cuckoo_value.hpp"

#include <new>
#include <stdexcept>

#include <bloomery/kinds.hpp>

#include "memory_guard.hpp"

namespace bloomery_redis {
namespace {

// The filter of a new key of this shape, its memory checked first.
bloomery::scalable_cuckoo_filter filter_for(const cuckoo_shape& shape, memory_check check) {
  const bloomery::scalable_cuckoo_parameters p{.initial_capacity = shape.capacity,
                                               .fingerprint_bits = shape.fingerprint_bits,
                                               .max_kicks = shape.max_iterations,
                                               .expansion = shape.expansion,
                                               .max_sub_filters = shape.max_sub_filters,
                                               .semi_sorted = true};
  const std::uint64_t bytes = bloomery::scalable_cuckoo_filter::plan(p).bytes;
  require_memory(check, bytes);
  return bloomery::scalable_cuckoo_filter(p);
}

}  // namespace

cuckoo_value::cuckoo_value(const cuckoo_shape& shape, memory_check check)
    : dumped_value(shape.bucket_size,
                   dumped_filter<bloomery::scalable_cuckoo_filter>(filter_for(shape, check))) {}

cuckoo_value::add_result cuckoo_value::add(std::string_view item, bool unique, memory_check check) {
  bloomery::scalable_cuckoo_filter& f = mutable_filter();
  if (unique && f.may_contain(item)) return add_result::present;
  if (f.sub_filter(f.sub_filter_count() - 1).full) {
    // This insert adds a sub-filter: the storage is reallocated, old and new side by side while
    // the old tables are copied.
    const std::uint64_t next = f.next_sub_filter_bytes();
    if (next == 0) return add_result::full;
    if (!may_allocate(check, f.size_in_bytes() + next)) return add_result::no_memory;
  }
  try {
    return f.insert(item) ? add_result::added : add_result::full;
  } catch (const std::bad_alloc&) {
    return add_result::no_memory;
  }
}

bool cuckoo_value::remove(std::string_view item) noexcept {
  return static_cast<bool>(mutable_filter().remove(item));
}

void cuckoo_value::check_word(std::uint32_t bucket_size) {
  if (bucket_size < 1 || bucket_size > cf_max_bucket_size) {
    throw bad_dump("bucket size out of range");
  }
}

bool cuckoo_value::accepts(std::uint32_t, const bloomery::scalable_cuckoo_filter&) {
  // Every chain bloomery builds: its limit on sub-filters is the creating server's
  // CF_MAX_EXPANSIONS, kept in the filter.
  return true;
}

}  // namespace bloomery_redis
