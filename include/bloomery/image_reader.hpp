// Rebuilds a filter from an image that arrives in pieces — a database's dump read value by value,
// chunks over a network — reading the payload straight into the filter's own storage, so that
// loading a filter holds one filter's memory plus one piece, where deserialize() of a whole
// buffer holds the buffer and the filter. Every check deserialize() makes is made: the header and
// parameters when the prefix arrives, the checksum and the kind's payload checks at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bloomery/bit_array.hpp"
#include "bloomery/format.hpp"

namespace bloomery {

template <class F>
class image_reader {
 public:
  // `prefix`: the image up to its payload (serialize_prefix's bytes). Throws format_error for a
  // bad prefix or one of another kind than F, and allocation_error when the storage for the payload
  // it announces cannot be had (allocated here, zeroed, so the memory is taken at once).
  explicit image_reader(std::span<const std::byte> prefix) {
    const detail::inspected_prefix inspected = detail::inspect_prefix_parsed(prefix);
    info_ = inspected.info;
    parsed_ = inspected.parsed;
    if (prefix.size() != info_.payload_offset) {
      detail::fail("image prefix has " + std::to_string(prefix.size()) + " bytes, its payload " +
                   "starts at " + std::to_string(info_.payload_offset));
    }
    if (info_.kind != F::kind) {
      detail::fail(std::string("image holds a ") + to_string(info_.kind) + " filter, not a " +
                   to_string(F::kind) + " filter");
    }
    // The checksum covers the prefix, then the payload as it arrives.
    expected_checksum_ = detail::declared_checksum(prefix.data());
    detail::start_checksum(state_, prefix);
    // The parsed params point into the caller's prefix; the reader keeps its own copy.
    params_.assign(parsed_.params.begin(), parsed_.params.end());
    parsed_.params = params_;
    // A bound far above any filter's payload (at most 2^48 bits or slots) that keeps the bit
    // count below from wrapping.
    if (info_.payload_size > (std::uint64_t{1} << 60)) detail::fail("image payload is too large");
    storage_ = bit_array(info_.payload_size * 8);
  }
  image_reader(const image_reader&) = delete;  // parsed_ points into params_
  image_reader& operator=(const image_reader&) = delete;
  image_reader(image_reader&&) noexcept = default;  // a moved vector keeps its buffer
  image_reader& operator=(image_reader&&) noexcept = default;

  const image_info& info() const noexcept { return info_; }
  std::uint64_t payload_size() const noexcept { return info_.payload_size; }
  // The payload bytes received so far, in place in the storage.
  std::span<const std::byte> received() const noexcept {
    return std::as_bytes(storage_.words()).first(static_cast<std::size_t>(received_));
  }
  bool complete() const noexcept { return received_ == info_.payload_size; }

  // The next payload bytes; more than the payload has left is a format_error (nothing is taken).
  void append(std::span<const std::byte> piece) {
    if (piece.size() > info_.payload_size - received_) {
      detail::fail("image has more payload than its header declares (" +
                   std::to_string(info_.payload_size) + " bytes)");
    }
    if (piece.empty()) return;
    std::byte* at = reinterpret_cast<std::byte*>(storage_.data()) + received_;
    std::memcpy(at, piece.data(), piece.size());
    XXH3_64bits_update(&state_, piece.data(), piece.size());
    received_ += piece.size();
  }

  // The filter, once the whole payload has arrived and passed every check; the reader is spent.
  F finish() {
    if (!complete()) {
      detail::fail("image is truncated: " + std::to_string(received_) + " of its " +
                   std::to_string(info_.payload_size) + " payload bytes arrived");
    }
    if (XXH3_64bits_digest(&state_) != expected_checksum_) {
      detail::fail("checksum mismatch: the file is corrupted");
    }
    parsed_.payload = received();
    return F::from_storage(parsed_, std::move(storage_));
  }

 private:
  image_info info_{};
  detail::parsed_file parsed_{};
  std::vector<std::byte> params_;
  std::uint64_t expected_checksum_ = 0;
  XXH3_state_t state_;
  std::uint64_t received_ = 0;
  bit_array storage_;
};

}  // namespace bloomery
