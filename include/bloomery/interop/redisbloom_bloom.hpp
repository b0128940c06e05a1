// RedisBloom's Bloom filter (Redis data type `MBbloom--`), bit-exact with RedisBloom 2.4: one value
// as RedisBloom holds it, answering and growing as RedisBloom does, and its two encodings (the RDB
// value and the BF.SCANDUMP / BF.LOADCHUNK stream). The facts, with references into RedisBloom's
// source, are in docs/redisbloom-format.md §3 (and what this type refuses that RedisBloom accepts,
// with the reasons, in §5.2), and tests/data/redisbloom-golden holds data written by the real
// module; this comment is the summary a reader of the code needs.
//
// A value is a chain of links (sub-filters), oldest first. A link has a capacity (`entries`), a
// false-positive rate (`error`), bits per entry (`bpe`), k (`hashes`), a bit array of `bytes`
// bytes holding `bits` = 8 * bytes bits, `n2` (0, or log2 of the modulus in filters written by old
// versions) and the number of items added to it (`size`). The chain holds the items added in all
// (`size`), `options` (1 NOROUND, 2 ENTS_IS_BITS, 4 FORCE64, 8 NO_SCALING) and `growth` (the
// EXPANSION).
//
//   sizing   bpe = -ln(error) / 0.480453013918201; bits = trunc(entries * bpe) (at least 1),
//            rounded up to whole 64-bit words; k = ceil(0.693147180559945 * bpe); computed in
//            double precision exactly as the C code does, truncations included
//   hashing  a = MurmurHash64A(item, 0xc6a4a7935bd1e995), b = MurmurHash64A(item, a) with FORCE64
//            (every filter RedisBloom 2.x creates); else 32-bit MurmurHash2 with 0x9747b28c and a.
//            Bit j of a link is (a + j * b) mod 2^64 mod M, M = 2^n2 if n2 > 0 else bits; bit x
//            is bit x % 8 of byte x / 8
//   add      "exists" if any link has all its bits; otherwise a full newest link (size >=
//            entries) makes the chain grow (capacity * growth, rate / 2) or, NONSCALING, answers
//            "full"; then the bits go into the newest link
//
// Every field read from outside is checked before it is trusted: what RedisBloom checks (so a
// value RedisBloom refuses is refused here), and what would make RedisBloom misbehave: a value
// wider than the C field it lands in (RedisBloom would truncate it), a NaN rate, a double whose
// conversion C leaves undefined, more than `max_hashes` hash functions (a query would loop that
// many times per link), sizes whose products overflow, and more memory than the caller's
// `max_bytes`. Every refusal is a bloomery::format_error whose message starts "bloomery: ".
//
// Thread safety: as a std::vector; concurrent queries are safe, a write needs exclusive access.
#pragma once

#include <bit>
#include <climits>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bloomery/errors.hpp"
#include "bloomery/interop/redisbloom_hash.hpp"

namespace bloomery::interop::redisbloom {

namespace detail {

// bloom.c's constants, which are ln(2)^2 and ln(2) rounded to 15 digits: the sizing depends on
// these exact doubles, not on the nearest ones.
inline constexpr double bloom_ln2_squared = 0.480453013918201;
inline constexpr double bloom_ln2 = 0.693147180559945;
// Each new link's rate is the previous one's times this (sb.c's ERROR_TIGHTENING_RATIO).
inline constexpr double bloom_tightening = 0.5;
inline constexpr std::uint64_t bloom_murmur64_seed = 0xc6a4a7935bd1e995ULL;
inline constexpr std::uint32_t bloom_murmur32_seed = 0x9747b28cU;
// 2^63 and 2^64 as doubles, the bounds of the conversions below.
inline constexpr double bloom_two_63 = 9223372036854775808.0;
inline constexpr double bloom_two_64 = 18446744073709551616.0;

[[noreturn]] inline void bloom_bad_data(const std::string& what) {
  throw format_error("bloomery: RedisBloom Bloom filter: " + what);
}

// Bits per entry for a rate, as bloom.c's calc_bpe computes it.
inline double bloom_bpe(double error) {
  const double num = std::log(error);
  double bpe = -(num / bloom_ln2_squared);
  if (bpe < 0) bpe = -bpe;
  return bpe;
}

// RedisBloom's k for a bpe, (int)ceil(LN2 * bpe) compared with a uint32_t (so a negative value
// wraps); nullopt where that C conversion is undefined (NaN, or beyond int).
inline std::optional<std::uint32_t> bloom_hashes_for(double bpe) {
  const double c = std::ceil(bloom_ln2 * bpe);
  if (!(c >= double{INT_MIN} && c <= double{INT_MAX})) return std::nullopt;
  return static_cast<std::uint32_t>(static_cast<std::int32_t>(c));
}

// One link's parameters, as bloom_init computes them.
struct bloom_shape {
  std::uint64_t entries = 0;
  double error = 0;
  double bpe = 0;
  std::uint32_t hashes = 0;
  std::uint64_t bits = 0;
  std::uint64_t bytes = 0;
  std::uint8_t n2 = 0;
};

enum class bloom_sizing_status {
  ok,
  refused,    // bloom_init returns an error: RedisBloom creates no link
  too_large,  // 2^63 bits or more: beyond any memory (and C's conversions overflow there)
};

struct bloom_sizing {
  bloom_sizing_status status = bloom_sizing_status::refused;
  bloom_shape shape{};
  std::uint64_t bytes_wanted = 0;  // for too_large: about what it would have allocated
};

inline bloom_sizing bloom_too_large(double bits) {
  const double bytes = bits / 8;
  return {bloom_sizing_status::too_large,
          {},
          bytes < bloom_two_64 ? static_cast<std::uint64_t>(bytes)
                               : std::numeric_limits<std::uint64_t>::max()};
}

// bloom_init's sizing of a link for `entries` items at `error` under the chain's options: the
// NOROUND branch for every filter RedisBloom 2.x creates, and the two branches of old filters
// (ENTS_IS_BITS, and rounding up to a power of two), which a loaded old chain uses to grow.
inline bloom_sizing bloom_size_link(std::uint64_t entries, double error, std::uint32_t options) {
  if (entries < 1 || !(error > 0 && error < 1)) return {};
  bloom_shape s{.entries = entries, .error = error, .bpe = bloom_bpe(error)};
  std::uint64_t bits = 0;
  if (options & 2) {  // ENTS_IS_BITS: entries is log2 of the bit count
    // RedisBloom refuses more than 64; 64 itself would shift by 64, undefined in C.
    if (entries > 63) return {};
    if (entries == 63) return bloom_too_large(bloom_two_63);
    s.n2 = static_cast<std::uint8_t>(entries);
    bits = std::uint64_t{1} << s.n2;
    s.entries = static_cast<std::uint64_t>(static_cast<double>(bits) / s.bpe);
  } else if (options & 1) {  // NOROUND
    const double wanted = static_cast<double>(entries) * s.bpe;
    if (!(wanted < bloom_two_63)) return bloom_too_large(wanted);
    bits = static_cast<std::uint64_t>(wanted);
    if (bits == 0) bits = 1;
  } else {  // rounded up to a power of two, the spare bits counted as extra capacity
    const double wanted = static_cast<double>(entries) * s.bpe;
    const double bn2 = std::logb(wanted);
    if (bn2 > 63 || bn2 == HUGE_VAL) return {};
    if (bn2 >= 62) return bloom_too_large(wanted);
    // A rate below 1/2 (every grown link's) gives bpe > 1.44, so wanted >= 1 and bn2 >= 0; below
    // -1 the conversion to n2 would be undefined in C.
    if (bn2 < -1) return {};
    s.n2 = static_cast<std::uint8_t>(bn2 + 1);
    bits = std::uint64_t{1} << s.n2;
    const auto bit_diff = static_cast<std::uint64_t>(static_cast<double>(bits) - wanted);
    const auto item_diff = static_cast<std::uint64_t>(static_cast<double>(bit_diff) / s.bpe);
    s.entries += item_diff;
  }
  s.bytes = bits % 64 != 0 ? (bits / 64 + 1) * 8 : bits / 8;
  s.bits = s.bytes * 8;
  s.hashes = *bloom_hashes_for(s.bpe);  // bpe here is at most about 1550: always defined
  return {bloom_sizing_status::ok, s, 0};
}

// A zeroed bit array; failure to allocate is an allocation_error naming the size.
inline std::string bloom_zeroed(std::uint64_t bytes) {
  try {
    if (bytes > std::string().max_size()) throw std::length_error("too large");
    return std::string(static_cast<std::size_t>(bytes), '\0');
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  throw allocation_error(bytes, "a RedisBloom Bloom filter link");
}

inline std::uint64_t bloom_load_le(const std::byte* p, int width) noexcept {
  std::uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = v << 8 | std::to_integer<std::uint64_t>(p[i]);
  return v;
}

inline void bloom_store_le(std::vector<std::byte>& out, std::uint64_t v, int width) {
  for (int i = 0; i < width; ++i) out.push_back(static_cast<std::byte>(v >> (8 * i)));
}

template <class S>
concept bloom_rdb_source = requires(S& s) {
  { s.read_unsigned() } -> std::convertible_to<std::uint64_t>;
  { s.read_double() } -> std::convertible_to<double>;
  { s.read_string() } -> std::convertible_to<std::string>;
};

template <class S>
concept bloom_rdb_sink = requires(S& s, std::uint64_t u, double d, std::span<const std::byte> b) {
  s.write_unsigned(u);
  s.write_double(d);
  s.write_string(b);
};

}  // namespace detail

class bloom_chain {
 public:
  // The encoding version RedisBloom 2.4 writes (BF_MIN_GROWTH_ENC); load_rdb reads 0 to this.
  static constexpr int rdb_encoding = 4;
  // The Redis type name: Redis finds the loader of an RDB value by it.
  static constexpr std::string_view redis_type_name = "MBbloom--";

  // RedisBloom's defaults (its module arguments INITIAL_SIZE and ERROR_RATE, and EXPANSION): the
  // parameters of a key BF.ADD / BF.MADD create, and of BF.INSERT's and BF.RESERVE's missing
  // options.
  static constexpr std::int64_t default_capacity = 100;
  static constexpr double default_error_rate = 0.01;
  static constexpr std::int64_t default_expansion = 2;

  static constexpr std::uint32_t option_noround = 1;
  static constexpr std::uint32_t option_ents_is_bits = 2;
  static constexpr std::uint32_t option_force64 = 4;
  static constexpr std::uint32_t option_no_scaling = 8;

  // SCANDUMP's layout: a 20-byte chain header, 53 bytes per link, pieces of at most 16 MiB.
  static constexpr std::size_t scandump_header_bytes = 20;
  static constexpr std::size_t scandump_link_bytes = 53;
  static constexpr std::uint64_t scandump_piece_bytes = std::uint64_t{16} << 20;
  // The most hash functions a loaded link may have. RedisBloom's sizing never exceeds 1,075 (the
  // k of the smallest positive rate), but it accepts any k that matches the stored bpe; more than
  // this would make every query loop that many times per link.
  static constexpr std::uint32_t max_hashes = 4096;

  // BF.RESERVE's and BF.INSERT's arguments, integers as signed 64-bit because that is how the
  // commands parse them. RedisBloom keeps EXPANSION in 32 bits, modulo 2^32, and BF.RESERVE takes
  // 0 and negative values (a chain of growth 0 cannot grow); BF.INSERT's own refusal of an
  // EXPANSION below 1 is the command's, before it builds anything.
  struct parameters {
    std::int64_t capacity = default_capacity;
    double error_rate = default_error_rate;
    std::int64_t expansion = default_expansion;
    bool nonscaling = false;
  };

  // What an add did, told apart where RedisBloom's replies differ.
  enum class add_result {
    added,       // reply 1: the item's bits were set in the newest link
    exists,      // reply 0: a link already had all the item's bits; nothing changed
    full,        // reply "ERR non scaling filter is full" (in BF.MADD / BF.INSERT that error is
                 // the array's last element): a NONSCALING chain's link is full; nothing changed
    not_stored,  // reply 1, although nothing changed: the chain had to grow and RedisBloom's
                 // sizing refused the new link (EXPANSION 0, a rate halved to 0, an old chain's
                 // options)
  };

  // One link, with the fields of RedisBloom's `struct bloom` and `SBLink`.
  struct link {
    std::uint64_t entries = 0;  // capacity
    double error = 0;           // false-positive rate
    double bpe = 0;             // bits per entry
    std::uint32_t hashes = 0;   // k
    std::uint64_t bits = 0;     // 8 * bytes()
    std::uint8_t n2 = 0;        // 0, or log2 of the positions' modulus (filters of old versions)
    std::uint64_t size = 0;     // items added to this link
    std::string array;          // the bit array; a string so an RDB string moves in uncopied

    std::uint64_t bytes() const noexcept { return array.size(); }
    std::span<const std::byte> bit_array() const noexcept {
      return std::as_bytes(std::span<const char>(array.data(), array.size()));
    }
    friend bool operator==(const link&, const link&) = default;
  };

  // A SCANDUMP chunk: the next iterator and the bytes, a view into the chain's bit arrays.
  struct chunk {
    std::uint64_t next_iter = 0;
    std::span<const std::byte> bytes;
  };

  // A new chain as BF.RESERVE / BF.INSERT / BF.ADD create it: options NOROUND | FORCE64 (and
  // NO_SCALING), link 0 of the capacity at the rate (halved unless NONSCALING). Throws
  // std::invalid_argument where RedisBloom refuses (a capacity below 1, a rate outside (0, 1), or
  // a rate that halves to 0), and allocation_error when the bit array cannot be allocated.
  explicit bloom_chain(const parameters& p)
      : options_(option_noround | option_force64 | (p.nonscaling ? option_no_scaling : 0)),
        growth_(static_cast<std::uint32_t>(p.expansion)) {
    if (p.capacity < 1) {
      throw std::invalid_argument("bloomery: RedisBloom Bloom filter: capacity " +
                                  std::to_string(p.capacity) + "; it must be > 0");
    }
    if (!(p.error_rate > 0 && p.error_rate < 1)) {
      throw std::invalid_argument("bloomery: RedisBloom Bloom filter: error rate " +
                                  format_double(p.error_rate) + " is outside (0, 1)");
    }
    const double rate = p.error_rate * (p.nonscaling ? 1 : detail::bloom_tightening);
    const detail::bloom_sizing s =
        detail::bloom_size_link(static_cast<std::uint64_t>(p.capacity), rate, options_);
    if (s.status == detail::bloom_sizing_status::refused) {
      throw std::invalid_argument("bloomery: RedisBloom Bloom filter: error rate " +
                                  format_double(p.error_rate) +
                                  " is too small: the first link's rate rounds to 0");
    }
    links_.push_back(make_link(s));
  }

  // The bytes of the bit array a new chain of these parameters allocates (what a server's memory
  // guard weighs before creating one): nullopt where the constructor refuses the parameters,
  // UINT64_MAX beyond any memory.
  static std::optional<std::uint64_t> first_link_bytes(const parameters& p) {
    if (p.capacity < 1 || !(p.error_rate > 0 && p.error_rate < 1)) return std::nullopt;
    const double rate = p.error_rate * (p.nonscaling ? 1 : detail::bloom_tightening);
    return sizing_bytes(detail::bloom_size_link(static_cast<std::uint64_t>(p.capacity), rate,
                                                option_noround | option_force64));
  }

  // BF.ADD of one item (BF.MADD and BF.INSERT: one call per item, stopping after `full`).
  // Throws allocation_error when a new link cannot be allocated (the chain is then unchanged).
  add_result add(std::span<const std::byte> item) {
    const hash_pair h = hash(item);
    for (auto l = links_.rbegin(); l != links_.rend(); ++l) {
      if (has(*l, h)) return add_result::exists;
    }
    if (links_.back().size >= links_.back().entries) {
      if (options_ & option_no_scaling) return add_result::full;
      const detail::bloom_sizing s = next_link_sizing();
      if (s.status == detail::bloom_sizing_status::refused) return add_result::not_stored;
      links_.push_back(make_link(s));
    }
    link& cur = links_.back();
    if (!set(cur, h)) return add_result::exists;
    ++cur.size;
    ++size_;
    return add_result::added;
  }
  add_result add(std::string_view item) { return add(bytes_of(item)); }

  // BF.EXISTS: whether any link has all the item's bits.
  bool may_contain(std::span<const std::byte> item) const noexcept {
    const hash_pair h = hash(item);
    for (auto l = links_.rbegin(); l != links_.rend(); ++l) {
      if (has(*l, h)) return true;
    }
    return false;
  }
  bool may_contain(std::string_view item) const noexcept { return may_contain(bytes_of(item)); }

  // BF.INFO's fields, computed as RedisBloom computes them (in unsigned 64-bit arithmetic;
  // RedisBloom replies them as signed 64-bit integers).
  // Capacity: the links' capacities summed.
  std::uint64_t capacity() const noexcept {
    std::uint64_t sum = 0;
    for (const link& l : links_) sum += l.entries;
    return sum;
  }
  // Size: RedisBloom's memory figure, its chain struct (32 bytes on x86-64) plus per link its link
  // struct (64) and bit array. Not this object's memory (bytes_held).
  std::uint64_t info_size() const noexcept {
    std::uint64_t sum = 32;
    for (const link& l : links_) sum += 64 + l.bytes();
    return sum;
  }
  // Number of filters.
  std::uint64_t filter_count() const noexcept { return links_.size(); }
  // Number of items inserted, also BF.CARD: the adds that answered `added`.
  std::uint64_t items() const noexcept { return size_; }
  // Expansion rate: nullopt (a nil reply) for a NONSCALING chain.
  std::optional<std::uint32_t> expansion() const noexcept {
    if (options_ & option_no_scaling) return std::nullopt;
    return growth_;
  }

  // BF.DEBUG's reply, one string per element: "size:<items>", then one line per link.
  std::vector<std::string> debug_lines() const {
    std::vector<std::string> out;
    out.push_back(debug_size_line(size_));
    const unsigned width = (options_ & option_force64) ? 64 : 32;
    for (const link& l : links_) {
      out.push_back(
          debug_link_line(l.bytes(), l.bits, l.hashes, width, l.entries, l.size, l.error));
    }
    return out;
  }

  // BF.DEBUG's two line formats, for a caller that reports another filter the same way.
  static std::string debug_size_line(std::uint64_t items) {
    return "size:" + std::to_string(items);
  }
  static std::string debug_link_line(std::uint64_t bytes, std::uint64_t bits, std::uint32_t hashes,
                                     unsigned hash_width, std::uint64_t capacity,
                                     std::uint64_t items, double rate) {
    return "bytes:" + std::to_string(bytes) + " bits:" + std::to_string(bits) +
           " hashes:" + std::to_string(hashes) + " hashwidth:" + std::to_string(hash_width) +
           " capacity:" + std::to_string(capacity) + " size:" + std::to_string(items) +
           " ratio:" + format_double(rate);
  }

  std::uint32_t options() const noexcept { return options_; }
  // The stored EXPANSION, kept (and saved) for NONSCALING chains too.
  std::uint32_t growth() const noexcept { return growth_; }
  std::span<const link> links() const noexcept { return links_; }

  // The bytes of the link an add would append now: nullopt unless the newest link is full, the
  // chain may scale and RedisBloom's sizing accepts the next link (UINT64_MAX beyond any memory).
  // A caller that bounds memory checks this before an add.
  std::optional<std::uint64_t> next_link_bytes() const {
    if (links_.back().size < links_.back().entries || (options_ & option_no_scaling)) {
      return std::nullopt;
    }
    return sizing_bytes(next_link_sizing());
  }

  // This object's memory: the chain, its links and their bit arrays (the figure a load's
  // max_bytes bounds).
  std::uint64_t bytes_held() const noexcept {
    std::uint64_t sum = sizeof(bloom_chain) + links_.capacity() * sizeof(link);
    for (const link& l : links_) sum += l.bytes();
    return sum;
  }

  // ---- RDB value (RedisBloom's BFRdbSave / BFRdbLoad) ----

  // Writes the value as encoding version 4: size, link count, options, growth, then per link
  // entries, error (double), hashes, bpe (double), bits, n2, the bit array (string), size.
  template <detail::bloom_rdb_sink Sink>
  void save_rdb(Sink& out) const {
    out.write_unsigned(size_);
    out.write_unsigned(links_.size());
    out.write_unsigned(options_);
    out.write_unsigned(growth_);
    for (const link& l : links_) {
      out.write_unsigned(l.entries);
      out.write_double(l.error);
      out.write_unsigned(l.hashes);
      out.write_double(l.bpe);
      out.write_unsigned(l.bits);
      out.write_unsigned(l.n2);
      out.write_string(l.bit_array());
      out.write_unsigned(l.size);
    }
  }

  // Reads a value of encoding version `encver` (0 to 4, as RedisBloom 2.4 does): options only
  // from version 2 (else 0: 32-bit hashing), growth only in version 4 (else 2), and no bits or n2
  // in version 0 (bits = entries * bpe). Throws format_error for a value RedisBloom refuses or
  // that breaks the checks of the header comment, or when the chain would hold more than
  // `max_bytes` (bytes_held); the Source's own exceptions (short input) pass through.
  template <detail::bloom_rdb_source Source>
  static bloom_chain load_rdb(int encver, Source& in, std::uint64_t max_bytes) {
    if (encver < 0 || encver > rdb_encoding) {
      detail::bloom_bad_data("RDB encoding version " + std::to_string(encver) +
                             " is not one RedisBloom 2.4 reads (0 to 4)");
    }
    const std::uint64_t size = in.read_unsigned();
    const std::uint64_t count = in.read_unsigned();
    if (count == 0) detail::bloom_bad_data("RDB value with 0 links");
    const std::uint32_t options = encver >= 2 ? narrow32(in.read_unsigned(), "options") : 0;
    bloom_chain c(options, encver >= 4 ? narrow32(in.read_unsigned(), "growth") : 2);
    c.size_ = size;
    std::uint64_t held = structure_bytes(count, max_bytes);
    c.links_.reserve(static_cast<std::size_t>(count));
    for (std::uint64_t i = 0; i < count; ++i) {
      link l;
      l.entries = in.read_unsigned();
      l.error = in.read_double();
      const std::uint64_t hashes = in.read_unsigned();
      l.bpe = in.read_double();
      std::uint64_t n2 = 0;
      if (encver == 0) {
        const double bits = static_cast<double>(l.entries) * l.bpe;
        if (!(bits >= 0 && bits < detail::bloom_two_64)) {
          detail::bloom_bad_data("link " + std::to_string(i) + ": entries * bpe = " +
                                 format_double(bits) + " is not a bit count");
        }
        l.bits = static_cast<std::uint64_t>(bits);
      } else {
        l.bits = in.read_unsigned();
        n2 = in.read_unsigned();
      }
      l.array = in.read_string();
      if (l.array.size() > max_bytes - held) over_budget(max_bytes);
      held += l.array.size();
      // RedisBloom's own check, in its double arithmetic: bits/8 rounded up must fit the array.
      if (static_cast<double>(l.array.size()) < std::ceil(static_cast<double>(l.bits) / 8.0)) {
        detail::bloom_bad_data("link " + std::to_string(i) + ": a bit array of " +
                               std::to_string(l.array.size()) + " bytes cannot hold " +
                               std::to_string(l.bits) + " bits");
      }
      if (hashes > std::numeric_limits<std::uint32_t>::max()) {
        detail::bloom_bad_data("link " + std::to_string(i) + ": hashes " + std::to_string(hashes) +
                               " does not fit RedisBloom's 32 bits");
      }
      l.hashes = static_cast<std::uint32_t>(hashes);
      check_link(i, l.error, l.bpe, l.hashes, l.bits, l.array.size(), n2);
      l.n2 = static_cast<std::uint8_t>(n2);
      l.size = in.read_unsigned();
      c.links_.push_back(std::move(l));
    }
    return c;
  }

  // ---- BF.SCANDUMP / BF.LOADCHUNK ----

  // The header chunk (BF.SCANDUMP iterator 0, replied with iterator 1): 20 bytes (u64 size, u32
  // link count, u32 options, u32 growth), then per link 53 bytes (u64 bytes, u64 bits, u64 size,
  // f64 error, f64 bpe, u32 hashes, u64 entries, u8 n2), all little-endian.
  std::vector<std::byte> scandump_header() const {
    std::vector<std::byte> out;
    out.reserve(scandump_header_bytes + scandump_link_bytes * links_.size());
    detail::bloom_store_le(out, size_, 8);
    detail::bloom_store_le(out, links_.size(), 4);
    detail::bloom_store_le(out, options_, 4);
    detail::bloom_store_le(out, growth_, 4);
    for (const link& l : links_) {
      detail::bloom_store_le(out, l.bytes(), 8);
      detail::bloom_store_le(out, l.bits, 8);
      detail::bloom_store_le(out, l.size, 8);
      detail::bloom_store_le(out, std::bit_cast<std::uint64_t>(l.error), 8);
      detail::bloom_store_le(out, std::bit_cast<std::uint64_t>(l.bpe), 8);
      detail::bloom_store_le(out, l.hashes, 4);
      detail::bloom_store_le(out, l.entries, 8);
      detail::bloom_store_le(out, l.n2, 1);
    }
    return out;
  }

  // BF.SCANDUMP with iterator `iter` >= 1: the bit arrays are one stream, oldest link first, and
  // the chunk is the bytes from stream offset iter - 1 to the end of the link holding it, at most
  // 16 MiB; its next_iter is iter plus its length. nullopt past the end (RedisBloom's [0, ""]),
  // and for 0 (the header's iterator) and iterators beyond a signed 64-bit integer, which
  // RedisBloom cannot receive.
  std::optional<chunk> scandump_chunk(std::uint64_t iter) const {
    if (iter == 0 || iter > max_iter) return std::nullopt;
    const auto found = find(iter - 1);
    if (!found) return std::nullopt;
    const link& l = links_[found->first];
    const std::uint64_t len = std::min(scandump_piece_bytes, l.bytes() - found->second);
    return chunk{iter + len, l.bit_array().subspan(static_cast<std::size_t>(found->second),
                                                   static_cast<std::size_t>(len))};
  }

  // BF.LOADCHUNK with iterator 1 on a missing key: a chain of the header's parameters with zeroed
  // bit arrays. Throws format_error where RedisBloom refuses the header (a length other than 20 +
  // 53 per link, no links, a link that fails its checks, an unknown option bit, link sizes that
  // do not add up to the chain's) or the checks of the header comment fail, including bit arrays
  // that would take the chain past `max_bytes`.
  static bloom_chain from_scandump_header(std::span<const std::byte> header,
                                          std::uint64_t max_bytes) {
    if (header.size() < scandump_header_bytes) {
      detail::bloom_bad_data("SCANDUMP header of " + std::to_string(header.size()) +
                             " bytes; it needs at least 20");
    }
    const std::uint64_t count = detail::bloom_load_le(header.data() + 8, 4);
    if (count == 0) detail::bloom_bad_data("SCANDUMP header with 0 links");
    if (header.size() != scandump_header_bytes + scandump_link_bytes * count) {
      detail::bloom_bad_data("SCANDUMP header of " + std::to_string(header.size()) + " bytes for " +
                             std::to_string(count) + " links; it must be " +
                             std::to_string(scandump_header_bytes + scandump_link_bytes * count));
    }
    bloom_chain c(static_cast<std::uint32_t>(detail::bloom_load_le(header.data() + 12, 4)),
                  static_cast<std::uint32_t>(detail::bloom_load_le(header.data() + 16, 4)));
    c.size_ = detail::bloom_load_le(header.data(), 8);
    if (c.options_ & ~(option_noround | option_ents_is_bits | option_force64 | option_no_scaling)) {
      detail::bloom_bad_data("SCANDUMP header with unknown option bits in " +
                             std::to_string(c.options_));
    }
    // Every link is checked, and the memory counted, before any bit array is allocated.
    std::uint64_t held = structure_bytes(count, max_bytes);
    std::vector<link> links(static_cast<std::size_t>(count));
    std::uint64_t sizes = 0;
    for (std::size_t i = 0; i < links.size(); ++i) {
      const std::byte* p = header.data() + scandump_header_bytes + scandump_link_bytes * i;
      link& l = links[i];
      const std::uint64_t bytes = detail::bloom_load_le(p, 8);
      l.bits = detail::bloom_load_le(p + 8, 8);
      l.size = detail::bloom_load_le(p + 16, 8);
      l.error = std::bit_cast<double>(detail::bloom_load_le(p + 24, 8));
      l.bpe = std::bit_cast<double>(detail::bloom_load_le(p + 32, 8));
      l.hashes = static_cast<std::uint32_t>(detail::bloom_load_le(p + 40, 4));
      l.entries = detail::bloom_load_le(p + 44, 8);
      l.n2 = static_cast<std::uint8_t>(detail::bloom_load_le(p + 52, 1));
      check_link(i, l.error, l.bpe, l.hashes, l.bits, bytes, l.n2);
      if (bytes > max_bytes - held) over_budget(max_bytes);
      held += bytes;
      if (l.size > std::numeric_limits<std::uint64_t>::max() - sizes) {
        detail::bloom_bad_data("SCANDUMP header: the links' sizes overflow 64 bits");
      }
      sizes += l.size;
    }
    if (sizes != c.size_) {
      detail::bloom_bad_data("SCANDUMP header: the links hold " + std::to_string(sizes) +
                             " items but the chain says " + std::to_string(c.size_));
    }
    for (link& l : links) l.array = detail::bloom_zeroed(l.bits / 8);
    c.links_ = std::move(links);
    return c;
  }

  // BF.LOADCHUNK with iterator `iter` and a data chunk: copies it to stream offset
  // iter - len - 1. False where RedisBloom refuses the chunk (then nothing changed): an iterator
  // of 0 or beyond a signed 64-bit integer (a negative one cast to unsigned lands there), one
  // smaller than the chunk plus 1, an offset past the end, or a chunk running past its link.
  bool load_chunk(std::uint64_t iter, std::span<const std::byte> data) {
    if (iter == 0 || iter > max_iter || iter < data.size()) return false;
    const std::uint64_t stream_iter = iter - data.size();
    if (stream_iter < 1) return false;
    const auto found = find(stream_iter - 1);
    if (!found) return false;
    link& l = links_[found->first];
    if (data.size() > l.bytes() - found->second) return false;
    if (!data.empty()) {
      std::memcpy(l.array.data() + found->second, data.data(), data.size());
    }
    return true;
  }

  friend bool operator==(const bloom_chain&, const bloom_chain&) = default;

 private:
  struct hash_pair {
    std::uint64_t a;
    std::uint64_t b;
  };
  // RedisBloom parses iterators as signed 64-bit integers.
  static constexpr std::uint64_t max_iter = std::numeric_limits<std::int64_t>::max();

  // A chain without links, for the loaders to fill. Two parameters, so that `bloom_chain c({})`
  // can only mean the public constructor's.
  bloom_chain(std::uint32_t options, std::uint32_t growth) : options_(options), growth_(growth) {}

  static std::string format_double(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", v);  // printf's %g, as BF.DEBUG prints a rate
    return buf;
  }

  static std::uint32_t narrow32(std::uint64_t v, const char* field) {
    if (v > std::numeric_limits<std::uint32_t>::max()) {
      detail::bloom_bad_data(std::string("RDB ") + field + " " + std::to_string(v) +
                             " does not fit RedisBloom's 32 bits");
    }
    return static_cast<std::uint32_t>(v);
  }

  [[noreturn]] static void over_budget(std::uint64_t max_bytes) {
    detail::bloom_bad_data("the value needs more than the " + std::to_string(max_bytes) +
                           " bytes allowed");
  }

  // The chain's own bytes for `count` links, before any bit array; refused past max_bytes.
  static std::uint64_t structure_bytes(std::uint64_t count, std::uint64_t max_bytes) {
    if (max_bytes < sizeof(bloom_chain) ||
        count > (max_bytes - sizeof(bloom_chain)) / sizeof(link)) {
      detail::bloom_bad_data(std::to_string(count) + " links need more than the " +
                             std::to_string(max_bytes) + " bytes allowed");
    }
    return sizeof(bloom_chain) + count * sizeof(link);
  }

  // RedisBloom's bloom_validate_integrity, and this header's checks beyond it.
  static void check_link(std::uint64_t i, double error, double bpe, std::uint32_t hashes,
                         std::uint64_t bits, std::uint64_t bytes, std::uint64_t n2) {
    const std::string where = "link " + std::to_string(i) + ": ";
    if (!(error > 0 && error < 1)) {
      detail::bloom_bad_data(where + "error rate " + format_double(error) + " is outside (0, 1)");
    }
    if (n2 > 63) detail::bloom_bad_data(where + "n2 " + std::to_string(n2) + " is over 63");
    if (bits == 0) detail::bloom_bad_data(where + "0 bits");
    if (n2 != 0 && bits < (std::uint64_t{1} << n2)) {
      detail::bloom_bad_data(where + std::to_string(bits) + " bits cannot hold 2^" +
                             std::to_string(n2) + " positions");
    }
    if (bytes > std::numeric_limits<std::uint64_t>::max() / 8 || bits != bytes * 8) {
      detail::bloom_bad_data(where + std::to_string(bits) + " bits for " + std::to_string(bytes) +
                             " bytes; it must be 8 per byte");
    }
    const std::optional<std::uint32_t> k = detail::bloom_hashes_for(bpe);
    if (!k || hashes != *k) {
      detail::bloom_bad_data(where + "hashes " + std::to_string(hashes) +
                             " is not ceil(0.693147180559945 * bpe) for bpe " + format_double(bpe));
    }
    if (hashes > max_hashes) {
      detail::bloom_bad_data(where + "hashes " + std::to_string(hashes) + " is over " +
                             std::to_string(max_hashes));
    }
  }

  link make_link(const detail::bloom_sizing& s) const {
    if (s.status == detail::bloom_sizing_status::too_large) {
      throw allocation_error(s.bytes_wanted, "a RedisBloom Bloom filter link");
    }
    link l;
    l.entries = s.shape.entries;
    l.error = s.shape.error;
    l.bpe = s.shape.bpe;
    l.hashes = s.shape.hashes;
    l.bits = s.shape.bits;
    l.n2 = s.shape.n2;
    l.array = detail::bloom_zeroed(s.shape.bytes);
    return l;
  }

  // The link a full chain grows by: capacity times growth (wrapping, as RedisBloom's size_t
  // product does), half the newest link's rate.
  // A sizing's bytes for a memory guard: nullopt when refused, UINT64_MAX beyond any memory.
  static std::optional<std::uint64_t> sizing_bytes(const detail::bloom_sizing& s) {
    switch (s.status) {
      case detail::bloom_sizing_status::ok:
        return s.shape.bytes;
      case detail::bloom_sizing_status::too_large:
        return std::numeric_limits<std::uint64_t>::max();
      case detail::bloom_sizing_status::refused:
        break;
    }
    return std::nullopt;
  }

  detail::bloom_sizing next_link_sizing() const {
    const link& cur = links_.back();
    return detail::bloom_size_link(cur.entries * std::uint64_t{growth_},
                                   cur.error * detail::bloom_tightening, options_);
  }

  hash_pair hash(std::span<const std::byte> item) const noexcept {
    if (options_ & option_force64) {
      const std::uint64_t a = murmur64a(item, detail::bloom_murmur64_seed);
      return {a, murmur64a(item, a)};
    }
    const std::uint32_t a = murmur2(item, detail::bloom_murmur32_seed);
    return {a, murmur2(item, a)};
  }

  // The modulus of a link's positions.
  static std::uint64_t modulus(const link& l) noexcept {
    return l.n2 > 0 ? std::uint64_t{1} << l.n2 : l.bits;
  }

  static bool has(const link& l, hash_pair h) noexcept {
    const std::uint64_t m = modulus(l);
    for (std::uint64_t j = 0; j < l.hashes; ++j) {
      const std::uint64_t x = (h.a + j * h.b) % m;
      if ((static_cast<unsigned char>(l.array[x >> 3]) & (1u << (x & 7))) == 0) return false;
    }
    return true;
  }

  // Sets the item's bits; true if one of them was unset.
  static bool set(link& l, hash_pair h) noexcept {
    const std::uint64_t m = modulus(l);
    bool found_unset = false;
    for (std::uint64_t j = 0; j < l.hashes; ++j) {
      const std::uint64_t x = (h.a + j * h.b) % m;
      const auto mask = static_cast<unsigned char>(1u << (x & 7));
      char& byte = l.array[x >> 3];
      if ((static_cast<unsigned char>(byte) & mask) == 0) {
        byte = static_cast<char>(static_cast<unsigned char>(byte) | mask);
        found_unset = true;
      }
    }
    return found_unset;
  }

  // The link holding stream offset `pos` and the offset inside it; nullopt past the end.
  std::optional<std::pair<std::size_t, std::uint64_t>> find(std::uint64_t pos) const noexcept {
    std::uint64_t start = 0;
    for (std::size_t i = 0; i < links_.size(); ++i) {
      if (pos - start < links_[i].bytes()) return std::pair{i, pos - start};
      start += links_[i].bytes();
    }
    return std::nullopt;
  }

  std::vector<link> links_;
  std::uint64_t size_ = 0;
  std::uint32_t options_ = 0;
  std::uint32_t growth_ = 0;
};

}  // namespace bloomery::interop::redisbloom
