// The read-only form of every filter: the filter's metadata plus a pointer to storage it does not
// own (a memory-mapped file, or a part of another filter). The queries base `Queries<view>` holds
// all the read-only verbs, written once for the owning filter and this view.
#pragma once

#include <utility>

namespace bloomery::detail {

// Queries reads `meta_` and `storage()` from its Derived, the owning filter or this view.
template <template <class> class Queries, class Meta, class Word>
class filter_view : public Queries<filter_view<Queries, Meta, Word>> {
 public:
  filter_view(Meta meta, const Word* storage) : meta_(std::move(meta)), storage_(storage) {}

 private:
  friend class Queries<filter_view>;
  const Word* storage() const noexcept { return storage_; }
  Meta meta_;
  const Word* storage_;
};

}  // namespace bloomery::detail
