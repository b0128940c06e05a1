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
//
// Memory: a dump is written from the filter's own fields and words, never from a copy, and a
// restore reads the payload straight into the new filter's storage (bloomery::image_reader), so
// neither holds more than one filter (docs/reliability.md, "Memory discipline").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <bloomery/errors.hpp>
#include <bloomery/format.hpp>
#include <bloomery/image_reader.hpp>

#include "memory_guard.hpp"

namespace bloomery_redis {

// The most payload bytes one SCANDUMP reply, AOF command or RDB string carries (RedisBloom's
// 16 MiB).
inline constexpr std::uint64_t max_chunk_bytes = std::uint64_t{16} << 20;

// A payload chunk as SCANDUMP numbers them: the bytes from `iter` - 1 on (at most
// max_chunk_bytes), and the iter of the next chunk.
struct payload_chunk {
  long long next_iter;
  std::span<const std::byte> bytes;
};
// The chunk at `iter`; none before 1 or past the end.
std::optional<payload_chunk> payload_chunk_at(std::span<const std::byte> payload, long long iter);
// Each chunk in order: the RDB value and the AOF rewrite cut the payload as SCANDUMP does.
template <class Visit>
void for_each_payload_chunk(std::span<const std::byte> payload, Visit&& visit) {
  for (std::optional<payload_chunk> c = payload_chunk_at(payload, 1); c;
       c = payload_chunk_at(payload, c->next_iter)) {
    visit(*c);
  }
}

// A dump or chunk this module did not write, or one damaged on the way.
class bad_dump : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What tells one type's dumps from another's.
struct dump_kind {
  char magic[8];
};

// The header chunk of a dump: the dump header, then `image_prefix`.
std::vector<std::byte> make_header_chunk(const dump_kind& kind, std::uint32_t word,
                                         std::span<const std::byte> image_prefix);

// The header chunk of `filter`'s dump, from its fields (the payload is not copied).
template <class F>
std::vector<std::byte> header_chunk_of(const dump_kind& kind, std::uint32_t word, const F& filter) {
  return make_header_chunk(kind, word, bloomery::serialize_prefix(filter));
}

// A header chunk's parts, its dump header checked (magic, version, check).
struct header_chunk {
  std::uint32_t word;
  std::span<const std::byte> image_prefix;
};
header_chunk read_header_chunk(const dump_kind& kind, std::span<const std::byte> chunk);

// A dump being received: the header chunk checked, the payload read chunk by chunk into the
// storage of the filter it becomes.
template <class F>
class dump_restore {
 public:
  // Checks the header chunk and allocates the filter's storage. Throws bad_dump, or
  // bloomery::allocation_error when the storage is more than `check` lets it have.
  dump_restore(const dump_kind& kind, std::span<const std::byte> header, memory_check check) {
    const header_chunk h = read_header_chunk(kind, header);
    bloomery::image_info info;
    try {
      info = bloomery::inspect_prefix(h.image_prefix);
    } catch (const bloomery::format_error& e) {
      throw bad_dump(e.what());
    }
    if (info.kind != F::kind) throw bad_dump("image holds another kind of filter");
    if (info.payload_offset != h.image_prefix.size()) {
      throw bad_dump("header chunk length does not match the image's payload offset");
    }
    if (info.payload_size == 0) throw bad_dump("image has no payload");
    require_memory(check, info.payload_size);
    word_ = h.word;
    prefix_.assign(h.image_prefix.begin(), h.image_prefix.end());
    try {
      reader_.emplace(prefix_);
    } catch (const bloomery::format_error& e) {
      throw bad_dump(e.what());
    }
  }

  std::uint32_t word() const noexcept { return word_; }
  // Payload bytes at `offset`, which must be where the received bytes end. `rejected`: not the
  // next chunk, or longer than what is missing (nothing changed); `completed`: the payload is
  // whole (not yet checked: finish() does).
  enum class chunk_result { accepted, completed, rejected };
  chunk_result add_chunk(std::uint64_t offset, std::span<const std::byte> data) {
    if (offset != reader_->received().size() || data.empty() ||
        data.size() > reader_->payload_size() - offset) {
      return chunk_result::rejected;
    }
    reader_->append(data);
    return reader_->complete() ? chunk_result::completed : chunk_result::accepted;
  }
  // The filter, once complete; throws bad_dump when the image fails bloomery's checks.
  F finish() {
    try {
      return reader_->finish();
    } catch (const bloomery::format_error& e) {
      throw bad_dump(e.what());
    }
  }

  std::span<const std::byte> image_prefix() const noexcept { return prefix_; }
  std::span<const std::byte> payload() const noexcept { return reader_->received(); }
  // The storage is allocated whole when the header arrives.
  std::size_t bytes_held() const noexcept {
    return prefix_.size() + static_cast<std::size_t>(reader_->payload_size());
  }

 private:
  std::uint32_t word_ = 0;
  std::vector<std::byte> prefix_;
  std::optional<bloomery::image_reader<F>> reader_;
};

// A key's filter, or, while LOADCHUNK restores it, the part of its dump received so far: the dump
// side every value type shares (the BF and CF values hold one, beside the word of their own that
// their dumps carry), so dumps and restores take one path whatever the filter.
template <class F>
class dumped_filter {
 public:
  // While restoring: `rejected`, not the next chunk or longer than what is missing (nothing
  // changed); `completed`, the last chunk, and the image is a valid filter that the value type
  // accepts; `corrupt`, the last chunk, but the image is not (the caller deletes the key).
  enum class chunk_result { accepted, completed, rejected, corrupt };

  explicit dumped_filter(F filter) : filter_(std::move(filter)) {}
  // A restore started from a header chunk, its storage allocated (dump_restore). Throws bad_dump,
  // or bloomery::allocation_error when the storage is more than `check` lets it have.
  dumped_filter(const dump_kind& kind, std::span<const std::byte> header, memory_check check)
      : restore_(std::make_unique<dump_restore<F>>(kind, header, check)) {}

  bool complete() const noexcept { return filter_.has_value(); }
  F& filter() { return *filter_; }
  const F& filter() const { return *filter_; }

  // The header chunk and the payload of the dump (the payload received so far while restoring),
  // from the filter's fields and words: no copy of the filter.
  std::vector<std::byte> dump_header(const dump_kind& kind, std::uint32_t word) const {
    if (!complete()) return make_header_chunk(kind, word, restore_->image_prefix());
    return header_chunk_of(kind, word, *filter_);
  }
  std::span<const std::byte> dump_payload() const {
    if (complete()) return bloomery::serialized_payload(*filter_);
    return restore_->payload();
  }

  // Payload bytes at `offset`, which must be where the received bytes end. Once the payload is
  // whole, the image is checked and `accept(filter)` says whether it is of the shapes the value
  // type creates (its commands assume them).
  template <class Accept>
  chunk_result restore_chunk(std::uint64_t offset, std::span<const std::byte> data,
                             Accept&& accept) {
    if (complete()) return chunk_result::rejected;
    switch (restore_->add_chunk(offset, data)) {
      case dump_restore<F>::chunk_result::rejected:
        return chunk_result::rejected;
      case dump_restore<F>::chunk_result::accepted:
        return chunk_result::accepted;
      case dump_restore<F>::chunk_result::completed:
        break;
    }
    std::optional<F> f;
    try {
      f.emplace(restore_->finish());
    } catch (const bad_dump&) {
      return chunk_result::corrupt;
    }
    if (!accept(static_cast<const F&>(*f))) return chunk_result::corrupt;
    filter_ = std::move(f);
    restore_.reset();
    return chunk_result::completed;
  }

  // Bytes held: the filter's storage and `record_bytes` of bookkeeping per sub-filter, or, while
  // restoring, everything the restore holds (its storage is allocated whole).
  std::size_t memory_usage(std::size_t record_bytes) const noexcept {
    if (!complete()) return sizeof(dump_restore<F>) + restore_->bytes_held();
    return filter_->size_in_bytes() + filter_->sub_filter_count() * record_bytes;
  }

 private:
  std::optional<F> filter_;
  std::unique_ptr<dump_restore<F>> restore_;  // while restoring (its reader is large)
};

}  // namespace bloomery_redis
