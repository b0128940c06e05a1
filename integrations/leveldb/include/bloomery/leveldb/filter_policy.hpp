// A leveldb::FilterPolicy backed by bloomery: LevelDB asks it for one small filter per ~2 KiB of
// table data, stores the bytes in the table's filter block, and consults them before reading a
// data block on Get. docs/leveldb.md has the usage, the encoding, and the measurements behind the
// defaults.
//
//   namespace bl = bloomery::leveldb_integration;
//   auto policy = bl::new_filter_policy();  // classic Bloom filter, 10 bits/key
//   leveldb::Options options;
//   options.filter_policy = policy.get();   // must outlive every DB opened with it
//
// Encoding of one filter (LevelDB appends it to the filter block; the block records its length):
//
//   [bit array: A bytes][trailer: 1 byte = kind << 5 | k]
//
// kind 1 is the classic Bloom filter: m = 8A bits, A >= 8, probed exactly as bloomery::bloom_filter
// probes its words (bit i is bit i%8 of byte i/8, the little-endian image of bloomery's 64-bit
// words). kind 2 is the cache-line-blocked filter: A is a positive multiple of 64, one 512-bit
// block per 64 bytes, probed as bloomery::blocked_bloom_filter. Keys are hashed with XXH3-128 and
// bloomery's fixed default seed, so any process reads any table. Kinds 0 and 3..7, k out of range
// and sizes the kind never writes all read as "may match": never a false negative for a filter
// this code cannot interpret.
#pragma once

#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <numbers>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "bloomery/blocked_bloom_filter.hpp"
#include "bloomery/bloom_filter.hpp"
#include "bloomery/hash.hpp"
#include "bloomery/sizing.hpp"

namespace bloomery::leveldb_integration {

// Which bloomery filter backs each LevelDB filter. The values are the format's kind codes (the top
// three bits of the trailer byte), so they never change.
enum class policy_kind : std::uint8_t {
  bloom = 1,          // classic Bloom filter, byte-granular size: the default (docs/leveldb.md)
  blocked_bloom = 2,  // one 64-byte block per 512 bits; all k bits of a key in one block
};

struct policy_options {
  policy_kind kind = policy_kind::bloom;
  // Bits of bit array per key, as LevelDB's own NewBloomFilterPolicy(bits_per_key) counts them
  // (the 1-byte trailer comes on top, also as in LevelDB). Allowed range [1, 64].
  double bits_per_key = 10.0;
};

// The name LevelDB files the filters under ("filter.bloomery.v1" in each table's metaindex). One
// name for every kind: the trailer says which kind a filter is, so a database keeps using its
// filters when the kind or bits_per_key changes. It must change only if the trailer scheme itself
// changes; LevelDB silently skips filters filed under another name.
inline constexpr const char* policy_name = "bloomery.v1";

namespace encoding {

inline constexpr unsigned kind_shift = 5;
inline constexpr std::uint8_t k_mask = 0x1f;
// The classic filter's probe limit: k = 30 is optimal at 43 bits/key, where FPR is about 1e-9;
// more probes cost time and buy nothing measurable. It also keeps k within the trailer's 5 bits.
inline constexpr std::uint32_t max_bloom_probes = 30;
// A floor for the classic filter's array (LevelDB uses the same 64 bits): a table block holding
// one or two keys otherwise gets a filter of a byte or two whose FPR is far above target.
inline constexpr std::size_t min_bloom_bytes = 8;
inline constexpr std::size_t block_bytes = blocked_bloom_filter::bits_multiple / 8;

inline char trailer(policy_kind kind, std::uint32_t k) noexcept {
  return static_cast<char>((static_cast<unsigned>(kind) << kind_shift) | k);
}

inline std::uint32_t max_probes(policy_kind kind) noexcept {
  return kind == policy_kind::bloom ? max_bloom_probes : blocked_bloom_filter::max_hash_count;
}

}  // namespace encoding

class filter_policy final : public leveldb::FilterPolicy {
 public:
  // Throws std::invalid_argument for an unknown kind or bits_per_key outside [1, 64] (NaN too).
  explicit filter_policy(policy_options options = {}) : options_(options) {
    if (options.kind != policy_kind::bloom && options.kind != policy_kind::blocked_bloom) {
      throw std::invalid_argument(
          "bloomery: leveldb policy kind = " + std::to_string(static_cast<unsigned>(options.kind)) +
          " is invalid; allowed kinds are bloom and blocked_bloom");
    }
    if (!(options.bits_per_key >= 1.0 && options.bits_per_key <= 64.0)) {
      char given[32];
      std::snprintf(given, sizeof given, "%g", options.bits_per_key);
      throw std::invalid_argument(std::string("bloomery: bits_per_key = ") + given +
                                  " is invalid; allowed range is [1, 64]");
    }
    // k = round(bits_per_key ln 2), the optimum for the configured density (docs/formulas.md).
    const auto k = std::lround(options.bits_per_key * std::numbers::ln2);
    hashes_ = static_cast<std::uint32_t>(
        std::clamp<long>(k, 1, static_cast<long>(encoding::max_probes(options.kind))));
  }

  const char* Name() const override { return policy_name; }

  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    const std::size_t count = n > 0 ? static_cast<std::size_t>(n) : 0;
    const std::size_t array = array_bytes(count);
    // Build the filter with bloomery's own filter type, then append the first `array` bytes of its
    // words: the array holds exactly 8 * array bits, so nothing past them is ever set.
    if (options_.kind == policy_kind::bloom) {
      append(build<bloom_filter>(keys, count, array), array, dst);
    } else {
      append(build<blocked_bloom_filter>(keys, count, array), array, dst);
    }
    dst->push_back(encoding::trailer(options_.kind, hashes_));
  }

  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    if (filter.size() < 2) return true;  // no trailer, or no bit array behind it
    const auto* bytes = reinterpret_cast<const unsigned char*>(filter.data());
    const std::size_t array = filter.size() - 1;
    const std::uint8_t tail = bytes[array];
    const std::uint32_t k = tail & encoding::k_mask;
    const auto kind = static_cast<policy_kind>(tail >> encoding::kind_shift);
    const std::string_view key_bytes(key.data(), key.size());
    // LevelDB's filter bytes are neither 8-byte aligned nor a whole number of words: the filters'
    // byte-image probes read them as they are.
    const std::span<const unsigned char> bits(bytes, array);
    switch (kind) {
      case policy_kind::bloom:
        if (k == 0 || k > encoding::max_bloom_probes || array < encoding::min_bloom_bytes ||
            array > max_bits / 8) {
          return true;
        }
        return bloom_filter::may_contain_bytes(bits, k, hash_key(hash_, key_bytes));
      case policy_kind::blocked_bloom:
        if (k == 0 || k > blocked_bloom_filter::max_hash_count ||
            array % encoding::block_bytes != 0 || array > max_bits / 8) {
          return true;
        }
        return blocked_bloom_filter::may_contain_bytes(bits, k, hash_key(hash_, key_bytes));
    }
    return true;  // a kind from a newer format: answer "may match" rather than guess
  }

  policy_kind kind() const noexcept { return options_.kind; }
  double bits_per_key() const noexcept { return options_.bits_per_key; }
  std::uint32_t hash_count() const noexcept { return hashes_; }

  // Bytes of bit array for n keys. Classic: ceil(n * bits_per_key / 8), at least 8, the same
  // count LevelDB's built-in filter uses, so the two compare at equal size byte for byte.
  // Blocked: n * bits_per_key / 512 blocks rounded to the nearest, at least one; rounding up
  // instead would spend up to a whole 64-byte block more than asked on every filter.
  std::size_t array_bytes(std::size_t n) const noexcept {
    const double bits = static_cast<double>(n) * options_.bits_per_key;
    if (options_.kind == policy_kind::bloom) {
      return std::max(encoding::min_bloom_bytes, static_cast<std::size_t>(std::ceil(bits / 8)));
    }
    const auto blocks =
        static_cast<std::size_t>(std::llround(bits / blocked_bloom_filter::bits_multiple));
    return std::max<std::size_t>(1, blocks) * encoding::block_bytes;
  }
  // Bytes CreateFilter appends for n keys, trailer included.
  std::size_t filter_bytes(std::size_t n) const noexcept { return array_bytes(n) + 1; }

 private:
  template <class Filter>
  Filter build(const leveldb::Slice* keys, std::size_t count, std::size_t array) const {
    Filter f({.bits = std::uint64_t{array} * 8, .hashes = hashes_}, hash_);
    for (std::size_t i = 0; i < count; ++i) {
      f.insert(std::string_view(keys[i].data(), keys[i].size()));
    }
    return f;
  }
  template <class Filter>
  static void append(const Filter& f, std::size_t array, std::string* dst) {
    dst->append(reinterpret_cast<const char*>(f.words().data()), array);
  }

  policy_options options_;
  std::uint32_t hashes_ = 0;
  hasher hash_;  // XXH3-128 with bloomery's default seed: part of the format, never configurable
};

// The policy for LevelDB's Options::filter_policy. Keep it alive until every database opened with
// it is closed (LevelDB holds the raw pointer).
inline std::unique_ptr<const leveldb::FilterPolicy> new_filter_policy(policy_options options = {}) {
  return std::make_unique<const filter_policy>(options);
}

}  // namespace bloomery::leveldb_integration
