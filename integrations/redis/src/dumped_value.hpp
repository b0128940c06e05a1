// What the BF and CF values share: a key's filter (or, while LOADCHUNK restores one, the part of
// its dump received so far: dumped_filter) and a word of the type's own that its dumps carry.
//
// `Derived` (bloom_value, cuckoo_value) adds its commands' operations and says, as static
// members a friend may read: `dump`, its dump_kind; `check_word(word)`, which throws bad_dump for
// a word it never writes; `accepts(word, filter)`, whether a restored filter is of the shapes it
// creates (its commands assume them); `sub_filter_record_bytes`, bloomery's bookkeeping per
// sub-filter beside the bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "dump.hpp"
#include "memory_guard.hpp"

namespace bloomery_redis {

template <class Derived, class Filter>
class dumped_value {
 public:
  using chunk_result = typename dumped_filter<Filter>::chunk_result;

  // A key being restored from a dump's header chunk, its storage allocated; throws bad_dump, or
  // std::bad_alloc when the filter's memory is more than `check` lets it have.
  static std::unique_ptr<Derived> restore_from_header(std::span<const std::byte> header,
                                                      memory_check check) {
    const std::uint32_t word = read_header_chunk(Derived::dump, header).word;
    Derived::check_word(word);
    return std::unique_ptr<Derived>(
        new Derived(word, dumped_filter<Filter>(Derived::dump, header, check)));
  }

  bool complete() const noexcept { return state_.complete(); }
  const Filter& filter() const { return state_.filter(); }

  // The header chunk and the payload of this value's dump (dumped_filter's).
  std::vector<std::byte> dump_header() const { return state_.dump_header(Derived::dump, word_); }
  std::span<const std::byte> dump_payload() const { return state_.dump_payload(); }
  // While restoring: dumped_filter::restore_chunk, accepting only the shapes `Derived` creates.
  chunk_result restore_chunk(std::uint64_t offset, std::span<const std::byte> data) {
    return state_.restore_chunk(offset, data,
                                [&](const Filter& f) { return Derived::accepts(word_, f); });
  }

  // A copy of a complete value (COPY); null for a key being restored. Throws std::bad_alloc.
  std::unique_ptr<Derived> copy() const {
    if (!complete()) return nullptr;
    return std::unique_ptr<Derived>(new Derived(word_, dumped_filter<Filter>(state_.filter())));
  }

  // Bytes this value holds: the filter's storage and its bookkeeping (MEMORY USAGE, INFO's Size).
  std::size_t memory_usage() const noexcept {
    return sizeof(Derived) + state_.memory_usage(Derived::sub_filter_record_bytes);
  }

 protected:
  dumped_value(std::uint32_t word, dumped_filter<Filter> state)
      : word_(word), state_(std::move(state)) {}

  std::uint32_t word() const noexcept { return word_; }
  Filter& mutable_filter() { return state_.filter(); }

 private:
  std::uint32_t word_;
  dumped_filter<Filter> state_;
};

}  // namespace bloomery_redis
