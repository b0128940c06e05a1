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
class mapped_any_filter {
 public:
  using variant_type = detail::view_variant_of<filter_types>::type;

  // Maps `path` and validates it whole (the checksum reads every page once). A file that is not a
  // filter, or a damaged one, throws format_error naming the file; I/O failures throw
  // std::system_error.
  explicit mapped_any_filter(const std::filesystem::path& path)
      : file_(path), view_(detail::naming_file(path, [&] { return view_of(file_.bytes()); })) {}

  filter_kind kind() const noexcept {
    // The alternatives are in filter_kinds' order (any_filter.hpp checks filter_types against it).
    return filter_kinds[view_.index()].kind;
  }

  template <hashable_key K>
  bool may_contain(const K& key) const noexcept {
    return std::visit([&](const auto& v) { return v.may_contain(key); }, view_);
  }
  // `out[i]` receives may_contain(keys[i]); returns the number of positives (one dispatch).
  template <std::ranges::random_access_range Keys, class Out>
  std::size_t may_contain_many(const Keys& keys, Out&& out) const {
    return std::visit([&](const auto& v) { return v.may_contain_many(keys, out); }, view_);
  }

  filter_stats stats() const {
    return std::visit([](const auto& v) { return v.stats(); }, view_);
  }
  std::uint64_t size_in_bytes() const noexcept {
    return std::visit([](const auto& v) { return v.size_in_bytes(); }, view_);
  }

  // fn(concrete view, F::view for the file's kind F): reaches every read-only verb of the kind.
  template <class Fn>
  decltype(auto) visit(Fn&& fn) const {
    return std::visit(std::forward<Fn>(fn), view_);
  }

  // The view as F's, or nullptr when the file holds another kind.
  template <listed_filter F>
  const typename F::view* get_if() const noexcept {
    return std::get_if<typename F::view>(&view_);
  }

 private:
  // The view of the kind the parsed header names.
  static variant_type view_of(std::span<const std::byte> bytes) {
    const detail::parsed_file parsed = detail::parse(bytes);
    std::optional<variant_type> out;
    [&]<class... Fs>(type_list<Fs...>) {
      (void)((parsed.kind == Fs::kind && (out.emplace(Fs::view_of(parsed)), true)) || ...);
    }(filter_types{});
    if (!out) {
      detail::fail("unknown filter kind " +
                   std::to_string(static_cast<std::uint32_t>(parsed.kind)));
    }
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
