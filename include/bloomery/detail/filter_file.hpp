// The file-format verbs, written once for every filter: a filter's file is its parameter block and
// its storage as the payload (format.hpp), so image(), from_image() and view_of() differ between
// kinds only in the parts each filter supplies.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bloomery/bit_array.hpp"
#include "bloomery/detail/filter_view.hpp"
#include "bloomery/format.hpp"
#include "bloomery/kinds.hpp"

namespace bloomery::detail {

// Derived supplies (and befriends this base for): `meta_`; `words()`, its storage, written as
// the payload; `static params(meta)`, its parameter block; `static read_meta(parsed_file)`, which
// validates the parameters against the payload; a constructor from (meta, bit_array). The kind's
// tag and its read-only form (`view`: map_file's, and a scalable filter's sub-filters) come from
// here.
template <class Derived, filter_kind Kind, template <class> class Queries, class Meta,
          class Word = std::uint64_t>
class filter_file {
 public:
  static constexpr filter_kind kind = Kind;
  using view = filter_view<Queries, Meta, Word>;

  file_image image() const {
    const Derived& d = static_cast<const Derived&>(*this);
    return {Kind, d.hash(), d.inserted(), Derived::params(d.meta_), std::as_bytes(d.words())};
  }
  static Derived from_image(const parsed_file& f) {
    // Copied before read_meta validates it: a serialized filter may sit at any offset of the
    // caller's buffer, and read_meta reads the payload as 64-bit words, which must be aligned.
    return from_storage(f, bit_array::from_bytes(f.payload));
  }
  // The filter over `storage`, which already holds f's payload (f.payload's bytes are ignored):
  // image_reader reads a payload straight into it, so loading needs no second copy.
  static Derived from_storage(const parsed_file& f, bit_array storage) {
    parsed_file aligned = f;
    aligned.payload = std::as_bytes(storage.words()).first(f.payload.size());
    auto meta = Derived::read_meta(aligned);
    return Derived(std::move(meta), std::move(storage));
  }
  static view view_of(const parsed_file& f) {
    // Probed in place as words; a mapped file's payload is always aligned (at 64 bytes).
    if (reinterpret_cast<std::uintptr_t>(f.payload.data()) % alignof(Word) != 0) {
      fail("payload is not " + std::to_string(alignof(Word)) +
           "-byte aligned, so it cannot be viewed in place (deserialize copies it)");
    }
    return view_over<view>(Derived::read_meta(f), f.payload);
  }
  // view_of() for the file this kind would write for `m` with `payload`: how a scalable filter
  // checks each sub-filter as a file of its own, the parameter block written by its kind alone.
  static view view_of(const Meta& m, std::span<const std::byte> payload) {
    const std::vector<std::byte> params = Derived::params(m);
    return view_of(parsed_file{Kind, m.hash, m.inserted, params, payload});
  }
};

}  // namespace bloomery::detail
