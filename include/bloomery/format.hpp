// The bloomery file format (docs/file-format.md): encode a filter into a file image and parse one
// back, with every field validated. Pure: no system headers, so every filter can include it; the
// POSIX file layer (save, load, map) is file.hpp. A file is a 128-byte header, the filter kind's
// parameters, zero padding to a 64-byte boundary, and the payload (the filter's storage, exactly as
// in memory).
//
// A filter type F plugs in with:
//   static constexpr filter_kind kind;
//   detail::file_image image() const;                     // what to write
//   static F from_image(const detail::parsed_file&);      // validates params and payload
//   using view = ...; static view view_of(const detail::parsed_file&);  // for map_file
// (detail/filter_file.hpp writes these once for every filter).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bloomery/errors.hpp"
#include "bloomery/hash.hpp"
#include "bloomery/kinds.hpp"

namespace bloomery {

inline constexpr std::uint32_t format_version = 1;
inline constexpr std::size_t header_bytes = 128;
inline constexpr std::size_t payload_alignment = 64;
inline constexpr char format_magic[8] = {'B', 'L', 'O', 'O', 'M', 'E', 'R', 'Y'};

namespace detail {

// Header field offsets (all little-endian).
namespace offs {
inline constexpr std::size_t magic = 0, version = 8, kind = 12, hash_algo = 16, params_size = 20,
                             seed = 24, key = 32, element_count = 64, payload_offset = 72,
                             payload_size = 80, file_size = 88, reserved = 96, checksum = 120;
}
// Kind parameters are tiny; anything larger is a corrupted header, not a filter.
inline constexpr std::uint32_t max_params_bytes = 4096;

inline constexpr std::uint64_t align_up(std::uint64_t v, std::uint64_t a) {
  return (v + a - 1) / a * a;
}

template <class T>
void put(std::byte* at, T v) {
  std::memcpy(at, &v, sizeof v);
}
template <class T>
T get(const std::byte* at) {
  T v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

// Builds a kind's parameter block.
class params_writer {
 public:
  template <class T>
  params_writer& add(T v) {
    const auto at = bytes_.size();
    bytes_.resize(at + sizeof v);
    put(bytes_.data() + at, v);
    return *this;
  }
  std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

// Reads a kind's parameter block; running past its end is a format_error.
class params_reader {
 public:
  explicit params_reader(std::span<const std::byte> b) : bytes_(b) {}
  template <class T>
  T read(const char* what) {
    if (bytes_.size() - pos_ < sizeof(T)) {
      throw format_error(std::string("bloomery: parameter block too short for ") + what);
    }
    const T v = get<T>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return v;
  }
  bool at_end() const noexcept { return pos_ == bytes_.size(); }
  void expect_end(const char* kind) const {
    if (pos_ != bytes_.size()) {
      throw format_error(std::string("bloomery: parameter block of ") + kind + " filter has " +
                         std::to_string(bytes_.size()) + " bytes, expected " +
                         std::to_string(pos_));
    }
  }

 private:
  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
};

// What a filter hands to save().
struct file_image {
  filter_kind kind;
  hasher hash;
  std::uint64_t element_count;
  std::vector<std::byte> params;
  std::span<const std::byte> payload;
};

// A validated file: every header field checked, checksum verified.
struct parsed_file {
  filter_kind kind;
  hasher hash;
  std::uint64_t element_count;
  std::span<const std::byte> params;
  std::span<const std::byte> payload;  // 64-byte aligned when the file's bytes are
};

[[noreturn]] inline void fail(const std::string& msg) {
  throw format_error("bloomery: " + msg);
}

// The checksum is XXH3-64 over every byte of the file except the checksum field itself. Starts
// `state` over `prefix` (at least the header: the header and whatever follows it, typically the
// parameters and padding up to the payload); the bytes after `prefix` are fed in with
// XXH3_64bits_update, so a payload arriving in pieces is summed as it comes (image_reader).
inline void start_checksum(XXH3_state_t& state, std::span<const std::byte> prefix) {
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, prefix.data(), offs::checksum);
  XXH3_64bits_update(&state, prefix.data() + header_bytes, prefix.size() - header_bytes);
}

// The checksum the header declares. `h`: the first header_bytes bytes of an image.
inline std::uint64_t declared_checksum(const std::byte* h) {
  return get<std::uint64_t>(h + offs::checksum);
}

inline std::uint64_t checksum(std::span<const std::byte> header, std::span<const std::byte> rest) {
  XXH3_state_t state;
  start_checksum(state, header);
  if (!rest.empty()) XXH3_64bits_update(&state, rest.data(), rest.size());
  return XXH3_64bits_digest(&state);
}

// Writes into `image` (an image's bytes, edited) the checksum that matches them, whatever its
// other fields say, so that only the field checks can catch the edit: for tests and fuzzers. Bytes
// shorter than a header are left as they are.
inline void reseal(std::span<std::byte> image) {
  if (image.size() < header_bytes) return;
  put<std::uint64_t>(image.data() + offs::checksum, checksum(image, {}));
}

// Header, params and padding for `img`; the payload follows it in the file.
inline std::vector<std::byte> encode_prefix(const file_image& img) {
  if (img.params.size() > max_params_bytes) fail("parameter block too large");
  const std::uint64_t payload_offset =
      align_up(header_bytes + img.params.size(), payload_alignment);
  std::vector<std::byte> out(payload_offset, std::byte{0});
  std::memcpy(out.data() + offs::magic, format_magic, sizeof format_magic);
  put<std::uint32_t>(out.data() + offs::version, format_version);
  put<std::uint32_t>(out.data() + offs::kind, static_cast<std::uint32_t>(img.kind));
  put<std::uint32_t>(out.data() + offs::hash_algo,
                     static_cast<std::uint32_t>(img.hash.algorithm()));
  put<std::uint32_t>(out.data() + offs::params_size, static_cast<std::uint32_t>(img.params.size()));
  put<std::uint64_t>(out.data() + offs::seed, img.hash.seed());
  std::memcpy(out.data() + offs::key, img.hash.key().bytes.data(), img.hash.key().bytes.size());
  put<std::uint64_t>(out.data() + offs::element_count, img.element_count);
  put<std::uint64_t>(out.data() + offs::payload_offset, payload_offset);
  put<std::uint64_t>(out.data() + offs::payload_size, img.payload.size());
  put<std::uint64_t>(out.data() + offs::file_size, payload_offset + img.payload.size());
  if (!img.params.empty())
    std::memcpy(out.data() + header_bytes, img.params.data(), img.params.size());
  put<std::uint64_t>(out.data() + offs::checksum, checksum(out, img.payload));
  return out;
}

// `h`: the first header_bytes bytes of an image. Returns the version (the one this build reads).
inline std::uint32_t check_magic_and_version(const std::byte* h) {
  if (std::memcmp(h + offs::magic, format_magic, sizeof format_magic) != 0) {
    fail("not a bloomery filter file (bad magic)");
  }
  const auto version = get<std::uint32_t>(h + offs::version);
  if (version != format_version) {
    fail("unsupported format version " + std::to_string(version) + " (this build reads version " +
         std::to_string(format_version) + ")");
  }
  return version;
}

// The checks that need only the start of a file (`head`: its first header_bytes bytes, or all of
// it if shorter) and its size: magic, version and the size the header declares. Lets a loader
// refuse a file before reading it whole.
inline void check_head(std::span<const std::byte> head, std::uint64_t file_bytes) {
  if (file_bytes == 0) fail("file is empty, not a bloomery filter");
  if (file_bytes < header_bytes) {
    if (std::memcmp(head.data(), format_magic, std::min(head.size(), sizeof format_magic)) != 0) {
      fail("not a bloomery filter file (bad magic)");
    }
    fail("file is truncated: " + std::to_string(file_bytes) + " bytes, shorter than the " +
         std::to_string(header_bytes) + "-byte header");
  }
  const std::byte* h = head.data();
  check_magic_and_version(h);
  const auto file_size = get<std::uint64_t>(h + offs::file_size);
  if (file_bytes < file_size) {
    fail("file is truncated: header says " + std::to_string(file_size) + " bytes, file has " +
         std::to_string(file_bytes));
  }
  if (file_bytes > file_size) {
    fail("file has " + std::to_string(file_bytes) + " bytes, header says " +
         std::to_string(file_size) + " (trailing data)");
  }
}

// The sizes the header declares, checked to add up: parameters, then padding to the payload's
// 64-byte boundary, then the payload to the end of the file. `h`: the first header_bytes bytes.
struct image_layout {
  std::uint32_t params_size;
  std::uint64_t payload_offset, payload_size, file_size;
};
inline image_layout check_layout(const std::byte* h) {
  const image_layout l{
      get<std::uint32_t>(h + offs::params_size), get<std::uint64_t>(h + offs::payload_offset),
      get<std::uint64_t>(h + offs::payload_size), get<std::uint64_t>(h + offs::file_size)};
  if (l.params_size > max_params_bytes ||
      l.payload_offset != align_up(header_bytes + l.params_size, payload_alignment) ||
      l.payload_offset > l.file_size || l.payload_size != l.file_size - l.payload_offset) {
    fail("header sizes do not add up (params " + std::to_string(l.params_size) + ", payload at " +
         std::to_string(l.payload_offset) + " of " + std::to_string(l.payload_size) +
         " bytes, file " + std::to_string(l.file_size) + " bytes)");
  }
  return l;
}

// The checks of the header and parameter bytes that need no payload (reserved and padding bytes,
// kind, hash), on `prefix`: the image up to its payload. The result's payload is left empty.
inline parsed_file parse_prefix(std::span<const std::byte> prefix, const image_layout& l) {
  const std::byte* h = prefix.data();
  for (std::size_t i = offs::reserved; i < offs::checksum; ++i) {
    if (h[i] != std::byte{0}) fail("reserved header bytes are not zero");
  }
  for (std::size_t i = header_bytes + l.params_size; i < l.payload_offset; ++i) {
    if (h[i] != std::byte{0}) fail("padding bytes are not zero");
  }
  const auto kind = get<std::uint32_t>(h + offs::kind);
  if (!is_known_kind(kind)) fail("unknown filter kind " + std::to_string(kind));
  const auto algo = get<std::uint32_t>(h + offs::hash_algo);
  const auto seed = get<std::uint64_t>(h + offs::seed);
  secret_key key;
  std::memcpy(key.bytes.data(), h + offs::key, key.bytes.size());
  hasher hash;
  if (algo == static_cast<std::uint32_t>(hash_algorithm::xxh3_128_seeded) ||
      algo == static_cast<std::uint32_t>(hash_algorithm::xxh3_128_seeded_intmix)) {
    if (key != secret_key{}) fail("seeded hash with a non-zero key field");
    hash = hasher(seed, static_cast<hash_algorithm>(algo));
  } else if (algo == static_cast<std::uint32_t>(hash_algorithm::xxh3_128_keyed)) {
    if (seed != 0) fail("keyed hash with a non-zero seed field");
    hash = hasher(key);
  } else {
    fail("unknown hash algorithm " + std::to_string(algo));
  }
  return {static_cast<filter_kind>(kind),
          hash,
          get<std::uint64_t>(h + offs::element_count),
          prefix.subspan(header_bytes, l.params_size),
          {}};
}

// Validates a whole file image. Order matters for the messages: structure first (so truncation
// reads as truncation), then the checksum (so a flipped byte reads as corruption), then values.
inline parsed_file parse(std::span<const std::byte> file) {
  check_head(file.first(std::min(file.size(), header_bytes)), file.size());
  const image_layout l = check_layout(file.data());
  const std::span<const std::byte> prefix = file.first(l.payload_offset);
  const std::span<const std::byte> payload = file.subspan(l.payload_offset);
  if (checksum(prefix, payload) != declared_checksum(file.data())) {
    fail("checksum mismatch: the file is corrupted");
  }
  parsed_file parsed = parse_prefix(prefix, l);
  parsed.payload = payload;
  return parsed;
}

template <class F>
void expect_kind(const parsed_file& f) {
  if (f.kind != F::kind) {
    fail(std::string("file holds a ") + to_string(f.kind) + " filter, not a " + to_string(F::kind) +
         " filter");
  }
}

}  // namespace detail

// The exact bytes save() writes, for callers that ship filters over a network or store them in
// another container.
template <class F>
std::vector<std::byte> serialize(const F& filter) {
  const detail::file_image img = filter.image();
  std::vector<std::byte> out = detail::encode_prefix(img);
  const std::size_t prefix_size = out.size();
  out.resize(prefix_size + img.payload.size());
  if (!img.payload.empty())
    std::memcpy(out.data() + prefix_size, img.payload.data(), img.payload.size());
  return out;
}

// The bytes serialize() writes before the payload (header, parameters, padding), without copying
// the payload: serialize(f) is these followed by serialized_payload(f). For writers that send a
// large filter in pieces (a database's dump, a network stream) rather than as one copy.
template <class F>
std::vector<std::byte> serialize_prefix(const F& filter) {
  return detail::encode_prefix(filter.image());
}
template <class F>
std::span<const std::byte> serialized_payload(const F& filter) {
  return filter.image().payload;
}

// What an image's header says, read without its payload: inspect_prefix() for bytes in memory,
// inspect_file() (file.hpp) for a file. Every field has passed the checks that need no payload.
struct image_info {
  filter_kind kind;
  hasher hash;                   // the algorithm with its seed or secret key, ready to use
  std::uint64_t element_count;   // insert calls (merges add them)
  std::uint64_t payload_offset;  // the size of the prefix: header, parameters, padding
  std::uint64_t payload_size;
  std::uint64_t file_size;    // payload_offset + payload_size
  std::uint32_t version;      // the format version (format_version: the only one read)
  hash_algorithm algorithm;   // hash.algorithm(), the header's hash algorithm field
  bool keyed;                 // hash.keyed(): the image holds a secret key (treat it as secret)
  std::uint64_t header_size;  // header_bytes
  std::uint32_t params_size;  // the kind's parameter block, from header_size on
};

namespace detail {

// inspect_prefix() with the parsed header (its payload left empty) for image_reader, which goes on
// to rebuild the filter.
struct inspected_prefix {
  image_info info;
  parsed_file parsed;
};
inline inspected_prefix inspect_prefix_parsed(std::span<const std::byte> prefix) {
  if (prefix.size() < header_bytes) {
    if (std::memcmp(prefix.data(), format_magic, std::min(prefix.size(), sizeof format_magic)) !=
        0) {
      fail("not a bloomery filter image (bad magic)");
    }
    fail("image prefix of " + std::to_string(prefix.size()) + " bytes is shorter than the " +
         std::to_string(header_bytes) + "-byte header");
  }
  const std::uint32_t version = check_magic_and_version(prefix.data());
  const image_layout l = check_layout(prefix.data());
  if (prefix.size() < l.payload_offset) {
    fail("image prefix of " + std::to_string(prefix.size()) + " bytes ends before its " +
         "payload at " + std::to_string(l.payload_offset));
  }
  const parsed_file p = parse_prefix(prefix.first(l.payload_offset), l);
  const image_info info{p.kind,         p.hash,       p.element_count, l.payload_offset,
                        l.payload_size, l.file_size,  version,         p.hash.algorithm(),
                        p.hash.keyed(), header_bytes, l.params_size};
  return {info, p};
}

}  // namespace detail

// Checks every header and parameter-block field that needs no payload and describes the image.
// `prefix`: the image's first bytes, at least up to its payload (serialize_prefix's bytes are
// exactly that; a whole image will do). The checksum, which covers the payload, and the kind's
// own parameter checks are left to deserialize() or image_reader. Throws format_error.
inline image_info inspect_prefix(std::span<const std::byte> prefix) {
  return detail::inspect_prefix_parsed(prefix).info;
}

// Rebuilds a filter from serialize()'s bytes; throws format_error on any malformed input.
template <class F>
F deserialize(std::span<const std::byte> bytes) {
  const detail::parsed_file parsed = detail::parse(bytes);
  detail::expect_kind<F>(parsed);
  return F::from_image(parsed);
}

}  // namespace bloomery
