#include "bloom_value.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <string>

#include <bloomery/bloom_filter.hpp>
#include <bloomery/errors.hpp>
#include <bloomery/format.hpp>
#include <bloomery/hash.hpp>

#include "memory_guard.hpp"

namespace bloomery_redis {
namespace {

// The payload is the filter's 64-bit words as they lie in memory, which the format stores
// little-endian; dumps are read straight from the words.
static_assert(std::endian::native == std::endian::little);

constexpr char dump_magic[8] = {'B', 'L', 'M', 'R', 'Y', '-', 'B', 'F'};
constexpr std::uint32_t dump_version = 1;
constexpr std::uint32_t flag_nonscaling = 1;
constexpr std::size_t dump_header_bytes = 24;

// Fields of bloomery's file header (docs/file-format.md) the module reads before the image is
// complete; the full image is validated by bloomery::deserialize.
constexpr char image_magic[8] = {'B', 'L', 'O', 'O', 'M', 'E', 'R', 'Y'};
constexpr std::size_t image_header_bytes = 128;
constexpr std::size_t image_kind_at = 12, image_payload_offset_at = 72, image_payload_size_at = 80,
                      image_file_size_at = 88;
constexpr std::uint32_t image_kind_scalable = 5;
// A parameter block is at most 4096 bytes, padded to 64.
constexpr std::uint64_t image_max_prefix = image_header_bytes + 4096 + 64;

// The per-sub-filter record bloomery keeps beside the bits (six 8-byte fields).
constexpr std::size_t sub_filter_record_bytes = 48;

template <class T>
T read_le(std::span<const std::byte> bytes, std::size_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}
template <class T>
void write_le(std::byte* at, T v) {
  std::memcpy(at, &v, sizeof v);
}

// Covers the whole header chunk, so a damaged one is refused at once rather than at the last
// chunk (the image's own checksum, which also covers the payload, is only known then).
std::uint64_t dump_check(std::span<const std::byte> dump_fields,
                         std::span<const std::byte> image_prefix) {
  std::vector<std::byte> buf(dump_fields.begin(), dump_fields.begin() + 16);
  buf.insert(buf.end(), image_prefix.begin(), image_prefix.end());
  return bloomery::hash_key(bloomery::hasher{}, std::span<const std::byte>(buf)).low;
}

[[noreturn]] void fail(const std::string& why) {
  throw bad_dump(why);
}

void reserve_or_throw(std::uint64_t bytes) {
  if (!memory_available(bytes)) {
    throw bloomery::allocation_error(bytes, "a filter (more than the memory available)");
  }
}

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

bloom_value::bloom_value(const bloom_shape& shape) : nonscaling_(shape.nonscaling) {
  bloomery::target t{shape.capacity, shape.error_rate};
  bloomery::scalable_options o{.growth = static_cast<double>(shape.expansion), .tightening = 0.5};
  if (shape.nonscaling) {
    const single_layer_bound b = bound_for_single_layer(shape.error_rate);
    t.fpr = b.fpr;
    o = {.growth = 1.0, .tightening = b.tightening};
  }
  reserve_or_throw(bloomery::scalable_bloom_filter::plan(t, o).bytes);
  filter_.emplace(t, o);
}

bloom_value::add_result bloom_value::add(std::string_view item) {
  bloomery::scalable_bloom_filter& f = *filter_;
  const bloomery::bloom_filter::view newest = f.sub_filter(f.sub_filter_count() - 1);
  if (newest.inserted() >= newest.capacity()) {
    // A new item would need a new sub-filter: none for NONSCALING, else only if memory allows
    // (the storage is reallocated, old and new side by side while the old bits are copied).
    if (f.may_contain(item)) return add_result::present;
    if (nonscaling_) return add_result::full;
    const std::uint64_t next = next_sub_filter_bytes(f);
    if (next != 0 && !memory_available(f.size_in_bytes() + next)) return add_result::cannot_grow;
  }
  try {
    return f.insert(item) ? add_result::added : add_result::present;
  } catch (const std::length_error&) {
    return add_result::cannot_grow;
  } catch (const std::bad_alloc&) {
    return add_result::cannot_grow;
  }
}

std::vector<std::byte> bloom_value::dump_header() const {
  std::vector<std::byte> image_prefix;
  if (complete()) {
    // bloomery's public API gives the image whole; the payload part is dropped again here.
    std::vector<std::byte> image = bloomery::serialize(*filter_);
    const auto offset = read_le<std::uint64_t>(image, image_payload_offset_at);
    if (image.size() - offset != filter_->words().size_bytes()) {
      throw std::logic_error("bloomery-redis: the image's payload is not the filter's words");
    }
    image.resize(offset);
    image_prefix = std::move(image);
  } else {
    image_prefix.assign(image_.begin(),
                        image_.begin() + static_cast<std::ptrdiff_t>(payload_offset_));
  }
  std::vector<std::byte> out(dump_header_bytes + image_prefix.size());
  std::memcpy(out.data(), dump_magic, sizeof dump_magic);
  write_le<std::uint32_t>(out.data() + 8, dump_version);
  write_le<std::uint32_t>(out.data() + 12, nonscaling_ ? flag_nonscaling : 0);
  write_le<std::uint64_t>(out.data() + 16,
                          dump_check(std::span(out).first(16), std::span(image_prefix)));
  std::memcpy(out.data() + dump_header_bytes, image_prefix.data(), image_prefix.size());
  return out;
}

std::span<const std::byte> bloom_value::dump_payload() const {
  if (complete()) return std::as_bytes(filter_->words());
  return std::span(image_).subspan(payload_offset_);
}

std::unique_ptr<bloom_value> bloom_value::restore_from_header(std::span<const std::byte> header) {
  if (header.size() < dump_header_bytes + image_header_bytes) fail("header chunk is too short");
  if (std::memcmp(header.data(), dump_magic, sizeof dump_magic) != 0) fail("not a BF dump");
  if (read_le<std::uint32_t>(header, 8) != dump_version) fail("unknown dump version");
  const auto flags = read_le<std::uint32_t>(header, 12);
  if ((flags & ~flag_nonscaling) != 0) fail("unknown dump flags");
  const std::span<const std::byte> prefix = header.subspan(dump_header_bytes);
  if (read_le<std::uint64_t>(header, 16) != dump_check(header.first(16), prefix)) {
    fail("dump header check does not match");
  }
  if (std::memcmp(prefix.data(), image_magic, sizeof image_magic) != 0)
    fail("not a bloomery image");
  if (read_le<std::uint32_t>(prefix, image_kind_at) != image_kind_scalable) {
    fail("image is not a scalable Bloom filter");
  }
  const auto payload_offset = read_le<std::uint64_t>(prefix, image_payload_offset_at);
  const auto payload_size = read_le<std::uint64_t>(prefix, image_payload_size_at);
  const auto file_size = read_le<std::uint64_t>(prefix, image_file_size_at);
  if (payload_offset != prefix.size() || payload_offset > image_max_prefix) {
    fail("header chunk length does not match the image's payload offset");
  }
  if (payload_size == 0 || payload_size % 64 != 0 ||
      payload_size > std::numeric_limits<std::uint64_t>::max() - payload_offset ||
      file_size != payload_offset + payload_size) {
    fail("image sizes do not add up");
  }
  if (file_size > std::vector<std::byte>().max_size() / 2) fail("image too large");
  // The image, then the filter deserialize builds from it.
  reserve_or_throw(file_size + payload_size);

  std::unique_ptr<bloom_value> v(new bloom_value());
  v->nonscaling_ = (flags & flag_nonscaling) != 0;
  v->image_size_ = file_size;
  v->payload_offset_ = payload_offset;
  // Reserving only maps address space; pages are touched as chunks arrive.
  v->image_.reserve(static_cast<std::size_t>(file_size));
  v->image_.assign(prefix.begin(), prefix.end());
  return v;
}

bloom_value::chunk_result bloom_value::restore_chunk(std::uint64_t offset,
                                                     std::span<const std::byte> data) {
  if (complete() || offset != image_.size() - payload_offset_ || data.empty() ||
      data.size() > image_size_ - image_.size()) {
    return chunk_result::rejected;
  }
  image_.insert(image_.end(), data.begin(), data.end());
  if (image_.size() < image_size_) return chunk_result::accepted;
  return finish_restore() ? chunk_result::completed : chunk_result::corrupt;
}

bool bloom_value::finish_restore() {
  std::optional<bloomery::scalable_bloom_filter> f;
  try {
    f.emplace(bloomery::deserialize<bloomery::scalable_bloom_filter>(image_));
  } catch (const bloomery::format_error&) {
    return false;
  }
  const bloomery::scalable_options& o = f->options();
  // Only shapes this module creates: INFO and further inserts assume them.
  if (nonscaling_ ? (f->sub_filter_count() != 1 || f->inserted() > f->capacity())
                  : (o.tightening != 0.5 || o.growth != std::floor(o.growth))) {
    return false;
  }
  filter_ = std::move(f);
  std::vector<std::byte>().swap(image_);
  return true;
}

std::size_t bloom_value::memory_usage() const noexcept {
  if (!complete()) return sizeof(*this) + image_.size();
  return sizeof(*this) + filter_->size_in_bytes() +
         filter_->sub_filter_count() * sub_filter_record_bytes;
}

}  // namespace bloomery_redis
