#include "cuckoo_value.hpp"

#include <new>
#include <stdexcept>

#include <bloomery/errors.hpp>
#include <bloomery/kinds.hpp>

#include "memory_guard.hpp"

namespace bloomery_redis {
namespace {

constexpr dump_kind cf_dump = {{'B', 'L', 'M', 'R', 'Y', '-', 'C', 'F'}};

// The record bloomery keeps per sub-filter beside its table (shape, counts, stash, hasher).
constexpr std::size_t sub_filter_record_bytes = 328;

// The filter of a new key of this shape, its memory checked first.
bloomery::scalable_cuckoo_filter filter_for(const cuckoo_shape& shape, memory_check check) {
  const bloomery::scalable_cuckoo_parameters p{.initial_capacity = shape.capacity,
                                               .fingerprint_bits = shape.fingerprint_bits,
                                               .max_kicks = shape.max_iterations,
                                               .expansion = shape.expansion,
                                               .max_sub_filters = cf_max_sub_filters,
                                               .semi_sorted = true};
  const std::uint64_t bytes = bloomery::scalable_cuckoo_filter::plan(p).bytes;
  if (!may_allocate(check, bytes)) {
    throw bloomery::allocation_error(bytes, "a filter (more than the memory available)");
  }
  return bloomery::scalable_cuckoo_filter(p);
}

}  // namespace

cuckoo_value::cuckoo_value(const cuckoo_shape& shape, memory_check check)
    : bucket_size_(shape.bucket_size), state_(filter_for(shape, check)) {}

cuckoo_value::add_result cuckoo_value::add(std::string_view item, bool unique, memory_check check) {
  bloomery::scalable_cuckoo_filter& f = state_.filter();
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
  return static_cast<bool>(state_.filter().remove(item));
}

std::vector<std::byte> cuckoo_value::dump_header() const {
  return state_.dump_header(cf_dump, bucket_size_);
}

std::span<const std::byte> cuckoo_value::dump_payload() const {
  return state_.dump_payload();
}

std::unique_ptr<cuckoo_value> cuckoo_value::restore_from_header(std::span<const std::byte> header,
                                                                memory_check check) {
  const std::uint32_t bucket_size = read_header_chunk(cf_dump, header).word;
  if (bucket_size < 1 || bucket_size > cf_max_bucket_size) {
    throw bad_dump("bucket size out of range");
  }
  return std::unique_ptr<cuckoo_value>(new cuckoo_value(bucket_size, {cf_dump, header, check}));
}

cuckoo_value::chunk_result cuckoo_value::restore_chunk(std::uint64_t offset,
                                                       std::span<const std::byte> data) {
  // Only chains this module creates: CF.INFO and the limits on growth assume RedisBloom's 32.
  return state_.restore_chunk(offset, data, [](const bloomery::scalable_cuckoo_filter& f) {
    return f.max_sub_filters() == cf_max_sub_filters;
  });
}

std::unique_ptr<cuckoo_value> cuckoo_value::copy() const {
  if (!complete()) return nullptr;
  return std::unique_ptr<cuckoo_value>(
      new cuckoo_value(bucket_size_, dumped_filter(state_.filter())));
}

std::size_t cuckoo_value::memory_usage() const noexcept {
  return sizeof(*this) + state_.memory_usage(sub_filter_record_bytes);
}

}  // namespace bloomery_redis
