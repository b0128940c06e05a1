// The dump every filter type of this module shares (SCANDUMP's chunks, the RDB value, the AOF's
// LOADCHUNK commands): a header chunk, then the payload in chunks. The header chunk is a 24-byte
// dump header followed by bloomery's file image up to its payload; the payload is the image's
// payload. Together they are bloomery's checksummed image, so a damaged chunk fails its checksum
// when the last one arrives.
//
//   dump header: 0  8  magic, one per type ("BLMRY-BF", "BLMRY-CF")
//                8  4  u32 version (1)
//                12 4  u32 a word of the type's own (BF: flags; CF: the BUCKETSIZE given)
//                16 8  u64 check: bloomery's hash of bytes 0..16 and the image prefix
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace bloomery_redis {

// The most payload bytes one SCANDUMP reply or AOF command carries (RedisBloom's 16 MiB).
inline constexpr std::uint64_t max_chunk_bytes = std::uint64_t{16} << 20;

// A dump or chunk this module did not write, or one damaged on the way.
class bad_dump : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What tells one type's dumps from another's.
struct dump_kind {
  char magic[8];
  std::uint32_t image_kind;  // the bloomery file kind the image must hold
};

// The header chunk of a dump: the dump header, then `image_prefix`.
std::vector<std::byte> make_header_chunk(const dump_kind& kind, std::uint32_t word,
                                         std::span<const std::byte> image_prefix);

// bloomery's image of a filter cut before its payload, which must be `payload_bytes` long (the
// filter's words, which the dump sends straight from memory).
std::vector<std::byte> image_prefix_of(std::vector<std::byte> image, std::size_t payload_bytes);

// A dump being received: the header chunk checked, the payload collected chunk by chunk.
class dump_restore {
 public:
  // Checks the header chunk. Throws bad_dump, or bloomery::allocation_error when the memory for
  // the image and the filter built from it cannot be had.
  dump_restore(const dump_kind& kind, std::span<const std::byte> header);

  std::uint32_t word() const noexcept { return word_; }
  // Payload bytes at `offset`, which must be where the received bytes end. `rejected`: not the
  // next chunk, or longer than what is missing (nothing changed); `completed`: the image is whole
  // (not yet checked: the caller builds its filter from image()).
  enum class chunk_result { accepted, completed, rejected };
  chunk_result add_chunk(std::uint64_t offset, std::span<const std::byte> data);

  std::span<const std::byte> image() const noexcept { return image_; }
  std::span<const std::byte> image_prefix() const noexcept {
    return std::span(image_).first(static_cast<std::size_t>(payload_offset_));
  }
  std::span<const std::byte> payload() const noexcept {
    return std::span(image_).subspan(static_cast<std::size_t>(payload_offset_));
  }
  std::size_t bytes_held() const noexcept { return image_.size(); }

 private:
  std::uint32_t word_ = 0;
  std::vector<std::byte> image_;  // the bytes received so far
  std::uint64_t image_size_ = 0;
  std::uint64_t payload_offset_ = 0;
};

}  // namespace bloomery_redis
