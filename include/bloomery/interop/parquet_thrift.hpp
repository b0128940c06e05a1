// The Thrift compact protocol, as far as reading Parquet's footer and Bloom filter headers needs
// it: varints, zigzag integers, field headers, lists, and skipping whatever a reader does not
// want. Every read is bounded by the buffer, lists cannot claim more elements than bytes remain,
// and nesting stops at max_depth, so hostile bytes end in a format_error, never a crash, a hang or
// a large allocation. docs/interop.md has the encoding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "bloomery/errors.hpp"

namespace bloomery::interop::parquet {

// Compact-protocol type codes (the low nibble of a field header).
enum class thrift_type : std::uint8_t {
  stop = 0,
  bool_true = 1,
  bool_false = 2,
  byte = 3,
  i16 = 4,
  i32 = 5,
  i64 = 6,
  double_ = 7,
  binary = 8,
  list = 9,
  set = 10,
  map = 11,
  struct_ = 12,
};

class thrift_reader {
 public:
  // Structs nest deeper than this only in hostile data (Parquet's deepest is 5).
  static constexpr int max_depth = 64;

  thrift_reader(std::span<const std::byte> bytes, std::string what)
      : bytes_(bytes), what_(std::move(what)) {}

  std::size_t position() const noexcept { return pos_; }

  [[noreturn]] void fail(const std::string& why) const {
    throw format_error("bloomery: " + what_ + ": " + why + " (at byte " + std::to_string(pos_) +
                       ")");
  }

  std::uint8_t byte() {
    if (pos_ >= bytes_.size()) fail("truncated");
    return static_cast<std::uint8_t>(bytes_[pos_++]);
  }

  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const std::uint8_t b = byte();
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    fail("a varint longer than 10 bytes");
  }

  std::int64_t zigzag() {
    const std::uint64_t v = varint();
    return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
  }

  std::int32_t i32() {
    const std::int64_t v = zigzag();
    if (v < INT32_MIN || v > INT32_MAX) fail("an i32 out of range");
    return static_cast<std::int32_t>(v);
  }

  std::string_view binary() {
    const std::uint64_t n = varint();
    if (n > bytes_.size() - pos_) fail("a string of " + std::to_string(n) + " bytes past the end");
    const auto* p = reinterpret_cast<const char*>(bytes_.data() + pos_);
    pos_ += static_cast<std::size_t>(n);
    return {p, static_cast<std::size_t>(n)};
  }

  // A struct's next field: its type (stop at the end) and id, given the previous field's id.
  struct field {
    thrift_type type;
    std::int16_t id;
  };
  field next_field(std::int16_t& last_id) {
    const std::uint8_t header = byte();
    const auto type = static_cast<thrift_type>(header & 0x0f);
    if (type == thrift_type::stop) return {type, 0};
    if (static_cast<std::uint8_t>(type) > 12)
      fail("an unknown field type " + std::to_string(header & 0x0f));
    const int delta = header >> 4;
    std::int64_t id = delta != 0 ? last_id + delta : zigzag();
    if (id < INT16_MIN || id > INT16_MAX) fail("a field id out of range");
    last_id = static_cast<std::int16_t>(id);
    return {type, last_id};
  }

  // A list's (or set's) element type and count; the count is checked against the bytes left.
  struct list_header {
    thrift_type element;
    std::size_t size;
  };
  list_header list() {
    const std::uint8_t header = byte();
    std::uint64_t size = header >> 4;
    if (size == 15) size = varint();
    const auto element = static_cast<thrift_type>(header & 0x0f);
    if (static_cast<std::uint8_t>(element) > 12) fail("an unknown list element type");
    // Every element takes at least one byte (even an empty struct: its stop byte).
    if (size > bytes_.size() - pos_)
      fail("a list of " + std::to_string(size) + " elements past the end");
    return {element, static_cast<std::size_t>(size)};
  }

  // Enters a struct (counting the depth); leave() when its stop byte has been read.
  void enter() {
    if (++depth_ > max_depth) fail("structs nested deeper than " + std::to_string(max_depth));
  }
  void leave() noexcept { --depth_; }

  // Skips a value of `type`. List elements of bool are one byte each.
  void skip(thrift_type type) {
    switch (type) {
      case thrift_type::bool_true:
      case thrift_type::bool_false:
        return;
      case thrift_type::byte:
        (void)byte();
        return;
      case thrift_type::i16:
      case thrift_type::i32:
      case thrift_type::i64:
        (void)varint();
        return;
      case thrift_type::double_:
        for (int i = 0; i < 8; ++i) (void)byte();
        return;
      case thrift_type::binary:
        (void)binary();
        return;
      case thrift_type::list:
      case thrift_type::set: {
        const list_header h = list();
        enter();
        for (std::size_t i = 0; i < h.size; ++i) skip_element(h.element);
        leave();
        return;
      }
      case thrift_type::map: {
        const std::uint64_t size = varint();
        if (size == 0) return;
        const std::uint8_t kv = byte();
        if (size > bytes_.size() - pos_) fail("a map past the end");
        enter();
        for (std::uint64_t i = 0; i < size; ++i) {
          skip_element(static_cast<thrift_type>(kv >> 4));
          skip_element(static_cast<thrift_type>(kv & 0x0f));
        }
        leave();
        return;
      }
      case thrift_type::struct_: {
        enter();
        std::int16_t last = 0;
        for (field f = next_field(last); f.type != thrift_type::stop; f = next_field(last)) {
          skip(f.type);
        }
        leave();
        return;
      }
      case thrift_type::stop:
        break;
    }
    fail("an unknown type");
  }

  // A list element: as skip(), except that a bool takes a byte of its own.
  void skip_element(thrift_type type) {
    if (type == thrift_type::bool_true || type == thrift_type::bool_false) {
      (void)byte();
      return;
    }
    if (type == thrift_type::stop || static_cast<std::uint8_t>(type) > 12)
      fail("an unknown element type");
    skip(type);
  }

 private:
  std::span<const std::byte> bytes_;
  std::string what_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace bloomery::interop::parquet
