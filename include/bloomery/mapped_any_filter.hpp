// mapped_any_filter: a filter file of any kind, memory-mapped and queried in place, for code that
// learns the kind from the file (the CLI, the Python module's open()). map_file(path) without a
// type gives one; map_file<F>(path) (file.hpp) maps a file whose kind is known. Its reads dispatch
// once per call (or per batch), as any_filter's do; visit() reaches the concrete view. The
// variant's alternatives are the views of kinds.hpp's filter_types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <utility>
#include <variant>

#include "bloomery/any_filter.hpp"
#include "bloomery/file.hpp"
#include "bloomery/format.hpp"
#include "bloomery/kinds.hpp"

namespace bloomery {
namespace detail {

template <class List>
struct view_variant_of;
template <class... Fs>
struct view_variant_of<type_list<Fs...>> {
  using type = std::variant<typename Fs::view...>;
};

}  // namespace detail

// A read-only filter of any kind over a memory-mapped file: nothing of the payload is copied. The
// file must not be modified while mapped (save() replaces files by rename, which is safe). Movable;
// the mapping lives as long as the object.
class mapped_any_filter : public detail::any_reads<mapped_any_filter> {
 public:
  using variant_type = detail::view_variant_of<filter_types>::type;

  // Maps `path` and validates it whole (the checksum reads every page once). A file that is not a
  // filter, or a damaged one, throws format_error naming the file; I/O failures throw
  // std::system_error.
  explicit mapped_any_filter(const std::filesystem::path& path)
      : file_(path), view_(detail::naming_file(path, [&] { return view_of(file_.bytes()); })) {}

  // The reads (kind, may_contain, may_contain_many, stats, size_in_bytes, and visit, which reaches
  // the kind's own view F::view) are any_reads'.

  // The view as F's, or nullptr when the file holds another kind.
  template <listed_filter F>
  const typename F::view* get_if() const noexcept {
    return std::get_if<typename F::view>(&view_);
  }

 private:
  friend detail::any_reads<mapped_any_filter>;
  const variant_type& alternatives() const noexcept { return view_; }

  // The view of the kind the parsed header names.
  static variant_type view_of(std::span<const std::byte> bytes) {
    const detail::parsed_file parsed = detail::parse(bytes);
    std::optional<variant_type> out;
    // parse() has checked the kind against the table.
    with_filter_type(parsed.kind, [&]<class F>() { out.emplace(F::view_of(parsed)); });
    return std::move(*out);
  }

  detail::mapped_file file_;  // first: view_ points into it
  variant_type view_;
};

// Maps a filter file of any kind (map_file<F> for a known kind). Throws as mapped_any_filter's
// constructor does.
inline mapped_any_filter map_file(const std::filesystem::path& path) {
  return mapped_any_filter(path);
}

}  // namespace bloomery
