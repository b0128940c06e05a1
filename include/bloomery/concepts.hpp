// What a filter can do, as concepts, so generic code (any_filter, the tests' typed suite, the
// integrations) states which verbs it needs. Each filter's header says which it models; the
// tests check every filter models exactly those (tests/test_filter_concepts.cpp).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "bloomery/format.hpp"
#include "bloomery/kinds.hpp"
#include "bloomery/results.hpp"
#include "bloomery/stats.hpp"

namespace bloomery {

// Answers "possibly present" or "definitely not" for keys of type Key and reports its size and
// estimates. Every filter of the kind table does for text and 64-bit keys; the foreign formats of
// interop/ (whose files are not bloomery's) for the keys their home system takes.
template <class F, class Key>
concept answers_queries = requires(const F& f, const Key& key) {
  { f.may_contain(key) } -> std::same_as<bool>;
  { f.size_in_bytes() } -> std::same_as<std::uint64_t>;
  { f.approximate_count() } -> std::same_as<std::uint64_t>;
  { f.estimated_fpr() } -> std::same_as<double>;
};

// Takes keys of type Key one at a time; insert says whether the key went in.
template <class F, class Key>
concept takes_inserts = answers_queries<F, Key> && requires(F& f, const Key& key) {
  { f.insert(key) } -> std::same_as<insert_result>;
};

// Answers queries, reports its statistics and serializes (save, load, serialize, deserialize).
template <class F>
concept membership_filter = std::copy_constructible<F> && answers_queries<F, std::string_view> &&
    answers_queries<F, std::uint64_t> &&
    requires(const F& f, std::span<const std::uint64_t> keys, std::span<bool> out,
             const detail::parsed_file& parsed) {
  { F::kind } -> std::convertible_to<filter_kind>;
  { f.may_contain_many(keys, out) } -> std::same_as<std::size_t>;
  { f.stats() } -> std::same_as<filter_stats>;
  { f.image() } -> std::same_as<detail::file_image>;
  { F::from_image(parsed) } -> std::same_as<F>;
};

// Takes keys one at a time. insert says whether the key went in (`inserted`, or `full` for the
// kinds whose kind_info::fills_up is set); check_and_insert also says whether the key answered
// "possibly present" before it was inserted (`already_present`).
template <class F>
concept insertable_filter = membership_filter<F> && takes_inserts<F, std::string_view> &&
    takes_inserts<F, std::uint64_t> && requires(F& f, std::string_view s) {
  { f.check_and_insert(s) } -> std::same_as<insert_result>;
  f.clear();
};

// Removes one occurrence of a key inserted before.
template <class F>
concept removable_filter = insertable_filter<F> && requires(F& f, std::string_view s) {
  { f.remove(s) } -> std::same_as<remove_result>;
};

// Union with a filter of the same shape and hashing: afterwards it answers "possibly present" for
// every key either held. incompatibility() says why two filters cannot merge ("" when they can).
template <class F>
concept mergeable_filter = membership_filter<F> && requires(F& a, const F& b) {
  { a |= b } -> std::same_as<F&>;
  { a.incompatibility(b) } -> std::same_as<std::string>;
};

// Grows past its initial capacity without its false-positive rate rising above target.
template <class F>
concept growable_filter = insertable_filter<F> && requires(const F& f) {
  { f.current_capacity() } -> std::same_as<std::uint64_t>;
};

// Intersection: answers "possibly present" for every key both held.
template <class F>
concept intersectable_filter = mergeable_filter<F> && requires(F& a, const F& b) {
  { a &= b } -> std::same_as<F&>;
};

}  // namespace bloomery
