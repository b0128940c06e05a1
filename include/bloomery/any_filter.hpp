// any_filter: a value that holds a filter of any kind, for code that learns the kind at run time
// (a file, a command, a Redis key). Its verbs, reads and writes, dispatch once per call (or per
// batch); visit() reaches the concrete filter for everything else. The variant's alternatives
// come from kinds.hpp's table.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "bloomery/blocked_bloom_filter.hpp"
#include "bloomery/bloom_filter.hpp"
#include "bloomery/concepts.hpp"
#include "bloomery/counting_bloom_filter.hpp"
#include "bloomery/cuckoo_filter.hpp"
#include "bloomery/file.hpp"
#include "bloomery/format.hpp"
#include "bloomery/kinds.hpp"
#include "bloomery/scalable_bloom_filter.hpp"
#include "bloomery/scalable_cuckoo_filter.hpp"
#include "bloomery/static_filter.hpp"

namespace bloomery {
namespace detail {

template <class List>
struct variant_of;
template <class... Fs>
struct variant_of<type_list<Fs...>> {
  using type = std::variant<Fs...>;
};

template <class List>
struct kinds_in_table_order;
template <class... Fs>
struct kinds_in_table_order<type_list<Fs...>> {
  static constexpr bool value = [] {
    const filter_kind kinds[] = {Fs::kind...};
    for (std::size_t i = 0; i < sizeof...(Fs); ++i) {
      if (kinds[i] != filter_kinds[i].kind) return false;
    }
    return sizeof...(Fs) == filter_kinds.size();
  }();
};
static_assert(kinds_in_table_order<filter_types>::value,
              "filter_types must list one type per filter_kinds row, in the same order");

template <class F, class List>
struct is_listed;
template <class F, class... Fs>
struct is_listed<F, type_list<Fs...>> : std::bool_constant<(std::same_as<F, Fs> || ...)> {};

// The error of a verb that a kind does not have, naming both.
[[noreturn]] inline void no_such_verb(filter_kind kind, const char* verb) {
  throw std::logic_error(std::string("bloomery: a ") + to_string(kind) + " filter cannot " + verb);
}

// The read-only verbs of a value that holds one filter, or one filter's view, of any kind
// (any_filter, mapped_any_filter), each dispatched once per call or per batch. Derived supplies
// `alternatives()`, a variant whose alternatives follow filter_kinds' order.
template <class Derived>
class any_reads {
 public:
  filter_kind kind() const noexcept {
    // The alternatives are in filter_kinds' order (checked above against filter_types).
    return filter_kinds[self().alternatives().index()].kind;
  }

  template <hashable_key K>
  bool may_contain(const K& key) const noexcept {
    return visit([&](const auto& f) { return f.may_contain(key); });
  }
  // `out[i]` receives may_contain(keys[i]); returns the number of positives. One dispatch for the
  // whole batch, so each filter's prefetching loop runs as it does on the concrete type.
  template <std::ranges::random_access_range Keys, class Out>
  std::size_t may_contain_many(const Keys& keys, Out&& out) const {
    return visit([&](const auto& f) { return f.may_contain_many(keys, out); });
  }

  filter_stats stats() const {
    return visit([](const auto& f) { return f.stats(); });
  }
  std::uint64_t size_in_bytes() const noexcept {
    return visit([](const auto& f) { return f.size_in_bytes(); });
  }

  // fn(the concrete filter or view): reaches the verbs a kind has and others do not.
  template <class Fn>
  decltype(auto) visit(Fn&& fn) const {
    return std::visit(std::forward<Fn>(fn), self().alternatives());
  }

 private:
  const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
};

}  // namespace detail

// Calls fn.template operator()<F>() for the filter type F of `kind` (the kind table's dispatch
// from a run-time kind to a type); false, calling nothing, for a value that is no kind of this
// build.
template <class Fn>
bool with_filter_type(filter_kind kind, Fn&& fn) {
  return [&]<class... Fs>(type_list<Fs...>) {
    return ((kind == Fs::kind && (fn.template operator()<Fs>(), true)) || ...);
  }(filter_types{});
}

// A filter of one of the kinds in kinds.hpp.
template <class F>
concept listed_filter = detail::is_listed<std::remove_cvref_t<F>, filter_types>::value;

class any_filter : public detail::any_reads<any_filter> {
 public:
  using variant_type = detail::variant_of<filter_types>::type;

  // Implicit on purpose: any filter can be passed where an any_filter is expected.
  template <listed_filter F>
  any_filter(F&& filter) : filter_(std::forward<F>(filter)) {}

  // The reads (kind, may_contain, may_contain_many, stats, size_in_bytes, visit) are any_reads'.
  using detail::any_reads<any_filter>::visit;

  // The writes. A kind without the verb throws std::logic_error naming the kind and the verb: a
  // static filter cannot insert (it is built once from all its keys), and only the counting and
  // cuckoo kinds remove. [[nodiscard]] because the filter may be of a kind that fills up.
  template <hashable_key K>
  [[nodiscard]] insert_result insert(const K& key) {
    return std::visit(
        [&]<class F>(F& f) -> insert_result {
          if constexpr (insertable_filter<F>) {
            return f.insert(key);
          } else {
            detail::no_such_verb(F::kind, "insert");
          }
        },
        filter_);
  }
  template <hashable_key K>
  [[nodiscard]] insert_result check_and_insert(const K& key) {
    return std::visit(
        [&]<class F>(F& f) -> insert_result {
          if constexpr (insertable_filter<F>) {
            return f.check_and_insert(key);
          } else {
            detail::no_such_verb(F::kind, "insert");
          }
        },
        filter_);
  }
  // Inserts keys in order and returns how many went in: all of them, or, when a key is refused
  // (`full`), the count before it (those stay inserted, the rest are not tried). The bit-array
  // kinds take the batch at once, hashed ahead and prefetched, as their own insert_many does.
  template <std::ranges::random_access_range Keys>
  [[nodiscard]] std::size_t insert_many(const Keys& keys) {
    return std::visit(
        [&]<class F>(F& f) -> std::size_t {
          if constexpr (requires { f.insert_many(keys); }) {
            f.insert_many(keys);
            return std::ranges::size(keys);
          } else if constexpr (insertable_filter<F>) {
            std::size_t done = 0;
            for (const auto& key : keys) {
              if (f.insert(key) == insert_result::full) break;
              ++done;
            }
            return done;
          } else {
            detail::no_such_verb(F::kind, "insert");
          }
        },
        filter_);
  }
  template <hashable_key K>
  [[nodiscard]] remove_result remove(const K& key) {
    return std::visit(
        [&]<class F>(F& f) -> remove_result {
          if constexpr (removable_filter<F>) {
            return f.remove(key);
          } else {
            detail::no_such_verb(F::kind, "remove");
          }
        },
        filter_);
  }

  // fn(concrete filter), which may change it.
  template <class Fn>
  decltype(auto) visit(Fn&& fn) {
    return std::visit(std::forward<Fn>(fn), filter_);
  }

  // The filter as F, or nullptr when it is of another kind.
  template <listed_filter F>
  F* get_if() noexcept {
    return std::get_if<F>(&filter_);
  }
  template <listed_filter F>
  const F* get_if() const noexcept {
    return std::get_if<F>(&filter_);
  }

 private:
  friend detail::any_reads<any_filter>;
  const variant_type& alternatives() const noexcept { return filter_; }

  variant_type filter_;
};

// The filter in serialize()'s bytes, whatever its kind: parsed and checksummed once. Throws
// format_error on any malformed input or bytes that are not a bloomery filter.
inline any_filter deserialize_any(std::span<const std::byte> bytes) {
  const detail::parsed_file parsed = detail::parse(bytes);
  std::optional<any_filter> out;
  // parse() has checked the kind against the table.
  with_filter_type(parsed.kind, [&]<class F>() { out.emplace(F::from_image(parsed)); });
  return std::move(*out);
}

// Loads a file saved by save(), whatever its kind. Malformed files throw format_error (naming the
// file); I/O failures throw std::system_error.
inline any_filter load_any(const std::filesystem::path& path) {
  return detail::naming_file(path, [&] { return deserialize_any(read_filter_file(path)); });
}

inline std::vector<std::byte> serialize(const any_filter& filter) {
  return filter.visit([](const auto& f) { return serialize(f); });
}

inline void save(const any_filter& filter, const std::filesystem::path& path) {
  filter.visit([&](const auto& f) { save(f, path); });
}

}  // namespace bloomery
