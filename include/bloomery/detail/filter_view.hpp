// The read-only form of every filter: the filter's metadata plus a pointer to storage it does not
// own (a memory-mapped file, or a part of another filter). The queries base `Queries<view>` holds
// all the read-only verbs, written once for the owning filter and this view.
#pragma once

#include <cstddef>
#include <span>
#include <utility>

namespace bloomery::detail {

// A queries base as its Derived (the owning filter or its view), for reading `meta_` and storage.
template <class Derived, class Base>
const Derived& as_derived(const Base& base) noexcept {
  return static_cast<const Derived&>(base);
}

// Queries reads `meta_` and `storage()` from its Derived, the owning filter or this view.
template <template <class> class Queries, class Meta, class Word>
class filter_view : public Queries<filter_view<Queries, Meta, Word>> {
 public:
  using word_type = Word;
  filter_view(Meta meta, const Word* storage) : meta_(std::move(meta)), storage_(storage) {}

 private:
  friend Queries<filter_view>;  // not "friend class": clang rejects an alias template there
  const Word* storage() const noexcept { return storage_; }
  Meta meta_;
  const Word* storage_;
};

// The view of a parsed file: its payload holds the filter's storage exactly as in memory, and is
// probed in place (filter_file::view_of has checked its alignment and read_meta its contents).
template <class View, class Meta>
View view_over(Meta meta, std::span<const std::byte> payload) {
  return View(std::move(meta), reinterpret_cast<const typename View::word_type*>(payload.data()));
}

}  // namespace bloomery::detail
