// The one table of filter kinds: each kind's stable file tag, its name (the CLI's word for it) and
// its C++ type. Format checks, the CLI, advise() and any_filter are all derived from it, so a new
// kind is one row here, one entry in `filter_types`, and its own header (docs/architecture.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace bloomery {

// Stable on-disk tags: never renumber.
enum class filter_kind : std::uint32_t {
  bloom = 1,
  blocked_bloom = 2,
  counting_bloom = 3,
  cuckoo = 4,
  scalable_bloom = 5,
  static_filter = 6,
  scalable_cuckoo = 7,
};

struct kind_info {
  filter_kind kind;
  const char* name;
  // Its insert can answer `full` (one table that fills up; a chain of tables grows instead), so
  // the result must be looked at (advise() and the tests read this; docs/architecture.md).
  bool fills_up;
  const char* summary;  // what it is good for, in a phrase (advise() and the CLI's `advise`)
};

// In tag order; `filter_types` below lists the types in the same order. One row per kind, so the
// table is not wrapped to the column limit.
// clang-format off
inline constexpr auto filter_kinds = std::to_array<kind_info>({
    {filter_kind::bloom,           "bloom",           false, "the classic filter: the smallest Bloom filter, ~2 cache misses per absent lookup"},
    {filter_kind::blocked_bloom,   "blocked",         false, "one cache miss per lookup, the fastest; a few % more memory than bloom at 1%"},
    {filter_kind::counting_bloom,  "counting",        false, "deletes with 4-bit counters: about 4x the classic filter's memory"},
    {filter_kind::cuckoo,          "cuckoo",          true,  "deletes; smaller than Bloom filters below ~0.6% FPR; inserts can fail when full"},
    {filter_kind::scalable_bloom,  "scalable",        false, "grows by adding sub-filters; sized here for the initial capacity only"},
    {filter_kind::static_filter,   "static",          false, "build once from all keys: the smallest, but no inserts afterwards"},
    {filter_kind::scalable_cuckoo, "scalable-cuckoo", true,  "deletes and grows by cuckoo sub-filters (RedisBloom's CF); each one adds to the FPR"},
});
// clang-format on

constexpr const kind_info& info_of(filter_kind kind) noexcept {
  for (const kind_info& k : filter_kinds) {
    if (k.kind == kind) return k;
  }
  return filter_kinds[0];  // unreachable for a filter_kind value of this build
}

// Whether a file's kind field names a kind this build knows.
constexpr bool is_known_kind(std::uint32_t tag) noexcept {
  for (const kind_info& k : filter_kinds) {
    if (static_cast<std::uint32_t>(k.kind) == tag) return true;
  }
  return false;
}

// The CLI's name of a kind: bloom, blocked, counting, cuckoo, scalable, static, scalable-cuckoo.
constexpr const char* to_string(filter_kind kind) noexcept {
  for (const kind_info& k : filter_kinds) {
    if (k.kind == kind) return k.name;
  }
  return "unknown";
}

// The inverse of to_string; nullopt for a name that is no kind.
constexpr std::optional<filter_kind> parse_filter_kind(std::string_view name) noexcept {
  for (const kind_info& k : filter_kinds) {
    if (name == k.name) return k.kind;
  }
  return std::nullopt;
}

namespace detail {
struct classic_layout;
struct blocked_layout;
template <class Layout>
class basic_bit_filter;
}  // namespace detail

using bloom_filter = detail::basic_bit_filter<detail::classic_layout>;
using blocked_bloom_filter = detail::basic_bit_filter<detail::blocked_layout>;
class counting_bloom_filter;
class cuckoo_filter;
class scalable_bloom_filter;
class static_filter;
class scalable_cuckoo_filter;

template <class... Fs>
struct type_list {
  static constexpr std::size_t size = sizeof...(Fs);
};

// Every filter type, in the order of `filter_kinds` (any_filter checks that each F::kind matches).
using filter_types =
    type_list<bloom_filter, blocked_bloom_filter, counting_bloom_filter, cuckoo_filter,
              scalable_bloom_filter, static_filter, scalable_cuckoo_filter>;

}  // namespace bloomery
