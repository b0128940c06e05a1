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

}  // namespace

cuckoo_value::cuckoo_value(const cuckoo_shape& shape, memory_check check)
    : bucket_size_(shape.bucket_size) {
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
  filter_.emplace(p);
}

cuckoo_value::add_result cuckoo_value::add(std::string_view item, bool unique, memory_check check) {
  bloomery::scalable_cuckoo_filter& f = *filter_;
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
  return static_cast<bool>(filter_->remove(item));
}

std::vector<std::byte> cuckoo_value::dump_header() const {
  if (!complete()) return make_header_chunk(cf_dump, bucket_size_, restore_->image_prefix());
  return header_chunk_of(cf_dump, bucket_size_, *filter_);
}

std::span<const std::byte> cuckoo_value::dump_payload() const {
  if (complete()) return bloomery::serialized_payload(*filter_);
  return restore_->payload();
}

std::unique_ptr<cuckoo_value> cuckoo_value::restore_from_header(std::span<const std::byte> header,
                                                                memory_check check) {
  const std::uint32_t bucket_size = read_header_chunk(cf_dump, header).word;
  if (bucket_size < 1 || bucket_size > cf_max_bucket_size) {
    throw bad_dump("bucket size out of range");
  }
  std::unique_ptr<cuckoo_value> v(new cuckoo_value());
  v->bucket_size_ = bucket_size;
  v->restore_ = std::make_unique<restore_type>(cf_dump, header, check);
  return v;
}

cuckoo_value::chunk_result cuckoo_value::restore_chunk(std::uint64_t offset,
                                                       std::span<const std::byte> data) {
  if (complete()) return chunk_result::rejected;
  switch (restore_->add_chunk(offset, data)) {
    case restore_type::chunk_result::rejected:
      return chunk_result::rejected;
    case restore_type::chunk_result::accepted:
      return chunk_result::accepted;
    case restore_type::chunk_result::completed:
      break;
  }
  return finish_restore() ? chunk_result::completed : chunk_result::corrupt;
}

bool cuckoo_value::finish_restore() {
  std::optional<bloomery::scalable_cuckoo_filter> f;
  try {
    f.emplace(restore_->finish());
  } catch (const bad_dump&) {
    return false;
  }
  // Only chains this module creates: CF.INFO and the limits on growth assume RedisBloom's 32.
  if (f->max_sub_filters() != cf_max_sub_filters) return false;
  filter_ = std::move(f);
  restore_.reset();
  return true;
}

std::unique_ptr<cuckoo_value> cuckoo_value::copy() const {
  if (!complete()) return nullptr;
  std::unique_ptr<cuckoo_value> v(new cuckoo_value());
  v->bucket_size_ = bucket_size_;
  v->filter_ = filter_;
  return v;
}

std::size_t cuckoo_value::memory_usage() const noexcept {
  if (!complete()) return sizeof(*this) + sizeof(restore_type) + restore_->bytes_held();
  return sizeof(*this) + filter_->size_in_bytes() +
         filter_->sub_filter_count() * sub_filter_record_bytes;
}

}  // namespace bloomery_redis
