#include "dump.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include <bloomery/hash.hpp>

namespace bloomery_redis {
namespace {

// The payload is the filters' 64-bit words as they lie in memory, which the format stores
// little-endian; dumps are read straight from the words.
static_assert(std::endian::native == std::endian::little);

constexpr std::uint32_t dump_version = 1;
constexpr std::size_t dump_header_bytes = 24;

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

std::optional<payload_chunk> payload_chunk_at(std::span<const std::byte> payload, long long iter) {
  if (iter < 1 || static_cast<std::uint64_t>(iter - 1) >= payload.size()) return std::nullopt;
  const std::uint64_t offset = static_cast<std::uint64_t>(iter - 1);
  const std::uint64_t length = std::min(max_chunk_bytes, payload.size() - offset);
  return payload_chunk{
      static_cast<long long>(offset + length + 1),
      payload.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(length))};
}

header_chunk read_header_chunk(const dump_kind& kind, std::span<const std::byte> chunk) {
  // The image prefix after the dump header is bloomery's to check (dump_restore: inspect_prefix).
  if (chunk.size() < dump_header_bytes) throw bad_dump("header chunk is too short");
  if (std::memcmp(chunk.data(), kind.magic, sizeof kind.magic) != 0) {
    throw bad_dump("not this type's dump");
  }
  if (read_le<std::uint32_t>(chunk, 8) != dump_version) throw bad_dump("unknown dump version");
  const std::span<const std::byte> prefix = chunk.subspan(dump_header_bytes);
  if (read_le<std::uint64_t>(chunk, 16) != dump_check(chunk.first(16), prefix)) {
    throw bad_dump("dump header check does not match");
  }
  return {read_le<std::uint32_t>(chunk, 12), prefix};
}

}  // namespace bloomery_redis
