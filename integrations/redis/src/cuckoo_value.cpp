#include "cuckoo_value.hpp"

#include <new>
#include <stdexcept>

#include <bloomery/errors.hpp>
#include <bloomery/format.hpp>
#include <bloomery/kinds.hpp>

#include "memory_guard.hpp"

namespace bloomery_redis {
namespace {

constexpr dump_kind cf_dump = {{'B', 'L', 'M', 'R', 'Y', '-', 'C', 'F'},
                               static_cast<std::uint32_t>(bloomery::filter_kind::scalable_cuckoo)};

// The record bloomery keeps per sub-filter beside its table (shape, counts, stash, hasher).
constexpr std::size_t sub_filter_record_bytes = 328;

}  // namespace

cuckoo_value::cuckoo_value(const cuckoo_shape& shape) : bucket_size_(shape.bucket_size) {
  const bloomery::scalable_cuckoo_parameters p{.initial_capacity = shape.capacity,
                                               .fingerprint_bits = shape.fingerprint_bits,
                                               .max_kicks = shape.max_iterations,
                                               .expansion = shape.expansion,
                                               .max_sub_filters = cf_max_sub_filters,
                                               .semi_sorted = true};
  const std::uint64_t bytes = bloomery::scalable_cuckoo_filter::plan(p).bytes;
  if (!memory_available(bytes)) {
    throw bloomery::allocation_error(bytes, "a filter (more than the memory available)");
  }
  filter_.emplace(p);
}

cuckoo_value::add_result cuckoo_value::add(std::string_view item, bool unique) {
  bloomery::scalable_cuckoo_filter& f = *filter_;
  if (unique && f.may_contain(item)) return add_result::present;
  if (f.sub_filter(f.sub_filter_count() - 1).full) {
    // This insert adds a sub-filter: the storage is reallocated, old and new side by side while
    // the old tables are copied.
    const std::uint64_t next = f.next_sub_filter_bytes();
    if (next == 0) return add_result::full;
    if (!memory_available(f.size_in_bytes() + next)) return add_result::no_memory;
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
  // bloomery's public API gives the image whole; the payload part is dropped again here.
  return make_header_chunk(
      cf_dump, bucket_size_,
      image_prefix_of(bloomery::serialize(*filter_), filter_->words().size_bytes()));
}

std::span<const std::byte> cuckoo_value::dump_payload() const {
  if (complete()) return std::as_bytes(filter_->words());
  return restore_->payload();
}

std::unique_ptr<cuckoo_value> cuckoo_value::restore_from_header(std::span<const std::byte> header) {
  dump_restore restore(cf_dump, header);
  if (restore.word() < 1 || restore.word() > cf_max_bucket_size) {
    throw bad_dump("bucket size out of range");
  }
  std::unique_ptr<cuckoo_value> v(new cuckoo_value());
  v->bucket_size_ = restore.word();
  v->restore_.emplace(std::move(restore));
  return v;
}

cuckoo_value::chunk_result cuckoo_value::restore_chunk(std::uint64_t offset,
                                                       std::span<const std::byte> data) {
  if (complete()) return chunk_result::rejected;
  switch (restore_->add_chunk(offset, data)) {
    case dump_restore::chunk_result::rejected:
      return chunk_result::rejected;
    case dump_restore::chunk_result::accepted:
      return chunk_result::accepted;
    case dump_restore::chunk_result::completed:
      break;
  }
  return finish_restore() ? chunk_result::completed : chunk_result::corrupt;
}

bool cuckoo_value::finish_restore() {
  std::optional<bloomery::scalable_cuckoo_filter> f;
  try {
    f.emplace(bloomery::deserialize<bloomery::scalable_cuckoo_filter>(restore_->image()));
  } catch (const bloomery::format_error&) {
    return false;
  }
  // Only chains this module creates: CF.INFO and the limits on growth assume RedisBloom's 32.
  if (f->max_sub_filters() != cf_max_sub_filters) return false;
  filter_ = std::move(f);
  restore_.reset();
  return true;
}

std::size_t cuckoo_value::memory_usage() const noexcept {
  if (!complete()) return sizeof(*this) + restore_->bytes_held();
  return sizeof(*this) + filter_->size_in_bytes() +
         filter_->sub_filter_count() * sub_filter_record_bytes;
}

}  // namespace bloomery_redis
