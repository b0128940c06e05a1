// The file-format verbs, written once for every filter: a filter's file is its parameter block and
// its storage as the payload (format.hpp), so image(), from_image() and view_of() differ between
// kinds only in the parts each filter supplies.
#pragma once

#include <cstdint>
#include <span>
#include <utility>

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
    auto meta = Derived::read_meta(f);  // validates the payload before it is copied
    return Derived(std::move(meta), bit_array::from_bytes(f.payload));
  }
  static view view_of(const parsed_file& f) {
    return view_over<view>(Derived::read_meta(f), f.payload);
  }
};

}  // namespace bloomery::detail
