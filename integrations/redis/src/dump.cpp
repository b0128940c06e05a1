#include "dump.hpp"

#include <bit>
#include <cstring>
#include <limits>
#include <string>

#include <bloomery/errors.hpp>
#include <bloomery/hash.hpp>

#include "memory_guard.hpp"

namespace bloomery_redis {
namespace {

// The payload is the filters' 64-bit words as they lie in memory, which the format stores
// little-endian; dumps are read straight from the words.
static_assert(std::endian::native == std::endian::little);

constexpr std::uint32_t dump_version = 1;
constexpr std::size_t dump_header_bytes = 24;

// Fields of bloomery's file header (docs/file-format.md) the module reads before the image is
// complete; the full image is validated by bloomery::deserialize.
constexpr char image_magic[8] = {'B', 'L', 'O', 'O', 'M', 'E', 'R', 'Y'};
constexpr std::size_t image_header_bytes = 128;
constexpr std::size_t image_kind_at = 12, image_payload_offset_at = 72, image_payload_size_at = 80,
                      image_file_size_at = 88;
// A parameter block is at most 4096 bytes, padded to 64.
constexpr std::uint64_t image_max_prefix = image_header_bytes + 4096 + 64;

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

}  // namespace

std::vector<std::byte> make_header_chunk(const dump_kind& kind, std::uint32_t word,
                                         std::span<const std::byte> image_prefix) {
  std::vector<std::byte> out(dump_header_bytes + image_prefix.size());
  std::memcpy(out.data(), kind.magic, sizeof kind.magic);
  write_le<std::uint32_t>(out.data() + 8, dump_version);
  write_le<std::uint32_t>(out.data() + 12, word);
  write_le<std::uint64_t>(out.data() + 16, dump_check(std::span(out).first(16), image_prefix));
  if (!image_prefix.empty()) {
    std::memcpy(out.data() + dump_header_bytes, image_prefix.data(), image_prefix.size());
  }
  return out;
}

std::vector<std::byte> image_prefix_of(std::vector<std::byte> image, std::size_t payload_bytes) {
  const auto offset = read_le<std::uint64_t>(image, image_payload_offset_at);
  if (offset > image.size() || image.size() - offset != payload_bytes) {
    throw std::logic_error("bloomery-redis: the image's payload is not the filter's words");
  }
  image.resize(static_cast<std::size_t>(offset));
  return image;
}

dump_restore::dump_restore(const dump_kind& kind, std::span<const std::byte> header) {
  if (header.size() < dump_header_bytes + image_header_bytes) fail("header chunk is too short");
  if (std::memcmp(header.data(), kind.magic, sizeof kind.magic) != 0) fail("not this type's dump");
  if (read_le<std::uint32_t>(header, 8) != dump_version) fail("unknown dump version");
  const std::span<const std::byte> prefix = header.subspan(dump_header_bytes);
  if (read_le<std::uint64_t>(header, 16) != dump_check(header.first(16), prefix)) {
    fail("dump header check does not match");
  }
  if (std::memcmp(prefix.data(), image_magic, sizeof image_magic) != 0) {
    fail("not a bloomery image");
  }
  if (read_le<std::uint32_t>(prefix, image_kind_at) != kind.image_kind) {
    fail("image holds another kind of filter");
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
  // Also keeps the memory check's sum below from wrapping.
  if (file_size > std::vector<std::byte>().max_size() / 2) fail("image too large");
  // The image, then the filter deserialize builds from it.
  if (!memory_available(file_size + payload_size)) {
    throw bloomery::allocation_error(file_size + payload_size,
                                     "a filter (more than the memory available)");
  }
  word_ = read_le<std::uint32_t>(header, 12);
  image_size_ = file_size;
  payload_offset_ = payload_offset;
  // Reserving only maps address space; pages are touched as chunks arrive.
  image_.reserve(static_cast<std::size_t>(file_size));
  image_.assign(prefix.begin(), prefix.end());
}

dump_restore::chunk_result dump_restore::add_chunk(std::uint64_t offset,
                                                   std::span<const std::byte> data) {
  if (offset != image_.size() - payload_offset_ || data.empty() ||
      data.size() > image_size_ - image_.size()) {
    return chunk_result::rejected;
  }
  image_.insert(image_.end(), data.begin(), data.end());
  return image_.size() < image_size_ ? chunk_result::accepted : chunk_result::completed;
}

}  // namespace bloomery_redis
