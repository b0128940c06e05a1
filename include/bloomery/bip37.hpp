// Bitcoin's BIP37 filter ("connection Bloom filtering"): the Bloom filter a light client sends a
// full node in a `filterload` message, byte-exact with BIP 37 and with Bitcoin Core's CBloomFilter.
//
// BIP37 is the one exception to bloomery's hashing: the BIP fixes the hash,
// so this filter does not use hash.hpp's hasher, seeds or keyed mode. Hash function i (0 <= i <
// nHashFuncs) is MurmurHash3 x86 32-bit (hash.hpp's murmur3_32) seeded with
// i * 0xFBA4C795 + nTweak mod 2^32; its value mod the filter's bit count (filter bytes * 8) is the
// bit it sets, and bit j is bit j % 8 (least significant first) of byte j / 8. Nor is it stored in
// bloomery's file format: its serialization is the `filterload` body.
//
//   compact size  filter length L (1 byte below 0xfd, else 0xfd and 2 bytes LE)
//   L bytes       the filter's bits
//   uint32 LE     nHashFuncs, at most 50
//   uint32 LE     nTweak
//   uint8         nFlags: 0 BLOOM_UPDATE_NONE, 1 BLOOM_UPDATE_ALL, 2 BLOOM_UPDATE_P2PUBKEY_ONLY
//
// The limits are the BIP's: at most 36,000 filter bytes and 50 hash functions. Sizing from a
// capacity N and rate P is the BIP's rule exactly as Bitcoin Core computes it, integer truncations
// included (see bip37_filter::size_for). As in Bitcoin Core, a filter of 0 bytes or 0 hash
// functions matches everything. The sizing rule itself gives such filters: 0 bytes when
// N * -ln P < 8 * ln(2)^2, and 0 hash functions when the filter has fewer than 2 bits per element
// (P above about 0.38, or N over 144,000 once the 36,000-byte cap applies).
//
// Keys are byte strings: string-likes and byte ranges (std::span<const std::uint8_t>,
// std::vector<std::byte>, ...), hashed as the bytes they are. The flags say how a node updates the
// filter when a transaction matches (the BIP's matching rules are a full node's, and live in
// examples/spv_wallet); the filter stores and serializes them. Thread safety: as a std::vector,
// concurrent queries are safe, an insert needs exclusive access.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <ranges>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bloomery/errors.hpp"
#include "bloomery/hash.hpp"
#include "bloomery/sizing.hpp"

namespace bloomery {

// The BIP's limits (Bitcoin Core's MAX_BLOOM_FILTER_SIZE and MAX_HASH_FUNCS).
inline constexpr std::uint32_t bip37_max_filter_bytes = 36'000;
inline constexpr std::uint32_t bip37_max_hash_funcs = 50;
// The step between the seeds of consecutive hash functions.
inline constexpr std::uint32_t bip37_seed_step = 0xFBA4C795;

// The seed of hash function i under nTweak: i * 0xFBA4C795 + nTweak mod 2^32 (BIP 37's example:
// with a tweak of 5, function 1's seed is 4221880218).
constexpr std::uint32_t bip37_hash_seed(std::uint32_t i, std::uint32_t tweak) noexcept {
  return i * bip37_seed_step + tweak;
}

// nFlags: what a full node adds to the filter when a transaction's output matches.
enum class bip37_update : std::uint8_t {
  none = 0,           // BLOOM_UPDATE_NONE: nothing
  all = 1,            // BLOOM_UPDATE_ALL: the matched output's outpoint
  p2pubkey_only = 2,  // BLOOM_UPDATE_P2PUBKEY_ONLY: its outpoint if it pays to a pubkey or multisig
};

inline const char* to_string(bip37_update u) {
  switch (u) {
    case bip37_update::none:
      return "BLOOM_UPDATE_NONE";
    case bip37_update::all:
      return "BLOOM_UPDATE_ALL";
    case bip37_update::p2pubkey_only:
      return "BLOOM_UPDATE_P2PUBKEY_ONLY";
  }
  return "unknown";
}

// Explicit filter parameters: `bip37_filter f({.filter_bytes = 3, .hash_funcs = 5});`.
struct bip37_parameters {
  std::uint32_t filter_bytes = 0;  // [0, 36000]
  std::uint32_t hash_funcs = 0;    // nHashFuncs, [0, 50]
  friend bool operator==(const bip37_parameters&, const bip37_parameters&) = default;
};

namespace detail {

// What a BIP37 key may be: the bytes of a string-like or of a byte range.
template <class K>
concept bip37_key = string_key<K> || byte_range_key<K>;

template <bip37_key K>
std::span<const std::uint8_t> bip37_bytes(const K& key) noexcept {
  if constexpr (string_key<K>) {
    const std::string_view s(key);
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
  } else {
    const auto s = std::span(key);
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size_bytes()};
  }
}

// ln(2)^2 as the double nearest to it, which is what Bitcoin Core's LN2SQUARED literal is. The
// product std::numbers::ln2 * std::numbers::ln2 rounds one ulp lower, and the sizing rule
// truncates, so the difference could change a filter's size.
inline constexpr double bip37_ln2_squared = 0.48045301391820144;

[[noreturn]] inline void bip37_format_error(const std::string& what) {
  throw format_error("bloomery: BIP37 filterload: " + what);
}

inline std::uint32_t bip37_read_le32(const std::uint8_t* p) noexcept {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}

}  // namespace detail

class bip37_filter {
 public:
  // The BIP's sizing, as Bitcoin Core's CBloomFilter computes it: the bit count
  // -1 / ln(2)^2 * N * ln(P), truncated to an integer and capped at 36,000 * 8, divided by 8
  // (truncating) for the filter bytes; then nHashFuncs = (filter bytes * 8 / N, an integer
  // division) * ln 2, truncated and capped at 50. N (the capacity) must fit Core's 32-bit element
  // count, [1, 2^32 - 1]; P must be in (0, 1).
  static bip37_parameters size_for(target t) {
    if (t.capacity == 0 || t.capacity > 0xFFFFFFFFu) {
      detail::invalid("capacity", std::to_string(t.capacity),
                      "allowed range is [1, 4294967295] (BIP37 counts elements in 32 bits)");
    }
    detail::check_fpr(t.fpr);
    const double n = static_cast<double>(t.capacity);
    // Capped before the conversion (Core converts first): the same result, without converting a
    // double beyond 2^32 to an integer, which is undefined behaviour.
    const double bits = std::min(-1.0 / detail::bip37_ln2_squared * n * std::log(t.fpr),
                                 double{bip37_max_filter_bytes} * 8);
    const auto bytes = static_cast<std::uint32_t>(bits) / 8;
    const std::uint64_t bits_per_element = std::uint64_t{bytes} * 8 / t.capacity;
    const double k = std::min(static_cast<double>(bits_per_element) * std::numbers::ln2,
                              double{bip37_max_hash_funcs});
    return {bytes, static_cast<std::uint32_t>(k)};
  }

  // A filter for `t.capacity` elements at rate `t.fpr`, sized by the BIP's rule (size_for).
  explicit bip37_filter(target t, std::uint32_t tweak = 0, bip37_update flags = bip37_update::none)
      : bip37_filter(size_for(t), tweak, flags) {}

  // A filter of explicit parameters. Throws std::invalid_argument past the BIP's limits or for
  // flags other than 0, 1 and 2.
  explicit bip37_filter(bip37_parameters p, std::uint32_t tweak = 0,
                        bip37_update flags = bip37_update::none)
      : hash_funcs_(p.hash_funcs), tweak_(tweak), flags_(flags) {
    check(p, static_cast<std::uint8_t>(flags));
    data_.assign(p.filter_bytes, 0);
  }

  // Sets the element's bits. A filter that matches everything has none to set.
  template <detail::bip37_key K>
  void insert(const K& key) {
    if (data_.empty()) return;
    const auto bytes = detail::bip37_bytes(key);
    for (std::uint32_t i = 0; i < hash_funcs_; ++i) {
      const std::uint32_t bit = bit_index(i, bytes);
      data_[bit >> 3] |= static_cast<std::uint8_t>(1u << (bit & 7));
    }
  }

  // False only when the element was certainly never inserted.
  template <detail::bip37_key K>
  bool may_contain(const K& key) const noexcept {
    if (data_.empty()) return true;
    const auto bytes = detail::bip37_bytes(key);
    for (std::uint32_t i = 0; i < hash_funcs_; ++i) {
      const std::uint32_t bit = bit_index(i, bytes);
      if ((data_[bit >> 3] & (1u << (bit & 7))) == 0) return false;
    }
    return true;
  }

  // `out[i]` receives may_contain(keys[i]); returns the number of positives.
  template <std::ranges::random_access_range Keys, class Out>
  std::size_t may_contain_many(const Keys& keys, Out&& out) const {
    std::size_t positives = 0;
    for (std::size_t i = 0; i < std::ranges::size(keys); ++i) {
      const bool hit = may_contain(keys[i]);
      out[i] = hit;
      positives += hit ? 1 : 0;
    }
    return positives;
  }

  // Clears every bit; the parameters stay.
  void clear() noexcept { std::ranges::fill(data_, std::uint8_t{0}); }

  std::uint32_t filter_bytes() const noexcept { return static_cast<std::uint32_t>(data_.size()); }
  std::uint64_t bit_count() const noexcept { return std::uint64_t{data_.size()} * 8; }
  std::uint32_t hash_funcs() const noexcept { return hash_funcs_; }
  std::uint32_t tweak() const noexcept { return tweak_; }
  bip37_update flags() const noexcept { return flags_; }
  bip37_parameters parameters() const noexcept { return {filter_bytes(), hash_funcs_}; }
  // The filter's bytes as they go on the wire.
  std::span<const std::uint8_t> data() const noexcept { return data_; }
  std::uint64_t size_in_bytes() const noexcept { return data_.size(); }
  // Whether every query answers "possibly present": 0 bytes or 0 hash functions (Bitcoin Core's
  // "match-all" filter).
  bool matches_everything() const noexcept { return data_.empty() || hash_funcs_ == 0; }

  std::uint64_t set_bit_count() const noexcept {
    std::uint64_t n = 0;
    for (const std::uint8_t b : data_) n += static_cast<std::uint64_t>(std::popcount(b));
    return n;
  }
  // Set bits / bits; 1 for a filter of 0 bytes.
  double fill_ratio() const noexcept {
    if (data_.empty()) return 1.0;
    return static_cast<double>(set_bit_count()) / static_cast<double>(bit_count());
  }
  // The false-positive rate the filter has now: fill^k (1 when it matches everything).
  double estimated_fpr() const noexcept {
    if (matches_everything()) return 1.0;
    return fpr_from_fill(fill_ratio(), hash_funcs_);
  }
  // Distinct elements estimated from the bits, -(m/k) ln(1 - X/m); 0 when it matches everything,
  // and UINT64_MAX once every bit is set.
  std::uint64_t approximate_count() const noexcept {
    if (matches_everything()) return 0;
    const double n = count_from_fill(set_bit_count(), bit_count(), hash_funcs_);
    if (!(n < 1.8e19)) return std::numeric_limits<std::uint64_t>::max();
    return static_cast<std::uint64_t>(std::llround(n));
  }

  // The `filterload` message's body (header comment).
  std::vector<std::uint8_t> serialize() const {
    std::vector<std::uint8_t> out;
    out.reserve(3 + data_.size() + 9);
    if (data_.size() < 0xfd) {
      out.push_back(static_cast<std::uint8_t>(data_.size()));
    } else {  // at most 36,000: two bytes
      out.push_back(0xfd);
      out.push_back(static_cast<std::uint8_t>(data_.size()));
      out.push_back(static_cast<std::uint8_t>(data_.size() >> 8));
    }
    out.insert(out.end(), data_.begin(), data_.end());
    for (const std::uint32_t v : {hash_funcs_, tweak_}) {
      for (int shift = 0; shift < 32; shift += 8)
        out.push_back(static_cast<std::uint8_t>(v >> shift));
    }
    out.push_back(static_cast<std::uint8_t>(flags_));
    return out;
  }

  // Parses a `filterload` body. Every field is checked before it is trusted: a truncated body, a
  // non-canonical length (Bitcoin Core rejects those too), bytes after the body, more than 36,000
  // filter bytes or 50 hash functions, or flags other than 0, 1 and 2 throw format_error naming
  // the field. (Core masks nFlags with 3 and ignores the other bits; this filter refuses them, so
  // a parsed filter always serializes back to the bytes it came from.)
  static bip37_filter deserialize(std::span<const std::uint8_t> in) {
    if (in.empty()) detail::bip37_format_error("empty input: expected at least 10 bytes");
    std::size_t pos = 1;
    std::uint64_t length = in[0];
    if (in[0] >= 0xfd) {
      const std::size_t width = in[0] == 0xfd ? 2 : in[0] == 0xfe ? 4 : 8;
      if (in.size() < 1 + width) {
        detail::bip37_format_error("truncated in the filter length: " + std::to_string(in.size()) +
                                   " bytes, the compact size needs " + std::to_string(1 + width));
      }
      length = 0;
      for (std::size_t i = width; i > 0; --i) length = length << 8 | in[i];
      const std::uint64_t smallest = width == 2 ? 0xfd : width == 4 ? 0x10000 : 0x100000000;
      if (length < smallest) {
        detail::bip37_format_error("non-canonical filter length: " + std::to_string(length) +
                                   " written in " + std::to_string(1 + width) + " bytes");
      }
      pos += width;
    }
    if (length > bip37_max_filter_bytes) {
      detail::bip37_format_error("filter of " + std::to_string(length) +
                                 " bytes is over the BIP37 maximum of " +
                                 std::to_string(bip37_max_filter_bytes));
    }
    const std::size_t expected = pos + static_cast<std::size_t>(length) + 9;
    if (in.size() != expected) {
      detail::bip37_format_error(
          std::string(in.size() < expected ? "truncated" : "trailing bytes") + ": " +
          std::to_string(in.size()) + " bytes, but a filter of " + std::to_string(length) +
          " bytes makes a body of " + std::to_string(expected));
    }
    const std::uint8_t* tail = in.data() + pos + length;
    const std::uint32_t hash_funcs = detail::bip37_read_le32(tail);
    if (hash_funcs > bip37_max_hash_funcs) {
      detail::bip37_format_error("nHashFuncs = " + std::to_string(hash_funcs) +
                                 " is over the BIP37 maximum of " +
                                 std::to_string(bip37_max_hash_funcs));
    }
    const std::uint8_t flags = tail[8];
    if (flags > 2) {
      detail::bip37_format_error("nFlags = " + std::to_string(flags) +
                                 " is invalid; allowed are 0 (BLOOM_UPDATE_NONE), 1 "
                                 "(BLOOM_UPDATE_ALL) and 2 (BLOOM_UPDATE_P2PUBKEY_ONLY)");
    }
    bip37_filter f(bip37_parameters{static_cast<std::uint32_t>(length), hash_funcs},
                   detail::bip37_read_le32(tail + 4), static_cast<bip37_update>(flags));
    std::copy(in.begin() + static_cast<std::ptrdiff_t>(pos),
              in.begin() + static_cast<std::ptrdiff_t>(pos + length), f.data_.begin());
    return f;
  }
  static bip37_filter deserialize(std::span<const std::byte> in) {
    return deserialize(
        std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(in.data()), in.size()));
  }

  friend bool operator==(const bip37_filter&, const bip37_filter&) = default;

 private:
  static void check(bip37_parameters p, std::uint8_t flags) {
    if (p.filter_bytes > bip37_max_filter_bytes) {
      detail::invalid("filter_bytes", std::to_string(p.filter_bytes),
                      "allowed range is [0, 36000] (the BIP37 maximum)");
    }
    if (p.hash_funcs > bip37_max_hash_funcs) {
      detail::invalid("hash_funcs", std::to_string(p.hash_funcs),
                      "allowed range is [0, 50] (the BIP37 maximum)");
    }
    if (flags > 2) {
      detail::invalid("flags", std::to_string(flags),
                      "allowed are 0 (BLOOM_UPDATE_NONE), 1 (BLOOM_UPDATE_ALL) and 2 "
                      "(BLOOM_UPDATE_P2PUBKEY_ONLY)");
    }
  }

  // The bit hash function i gives the element's bytes.
  std::uint32_t bit_index(std::uint32_t i, std::span<const std::uint8_t> bytes) const noexcept {
    return static_cast<std::uint32_t>(murmur3_32(bytes, bip37_hash_seed(i, tweak_)) %
                                      (data_.size() * 8));
  }

  std::vector<std::uint8_t> data_;
  std::uint32_t hash_funcs_;
  std::uint32_t tweak_;
  bip37_update flags_;
};

}  // namespace bloomery
