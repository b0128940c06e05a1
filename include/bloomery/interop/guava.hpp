// Guava's BloomFilter (com.google.common.hash), bit-exact with Guava 31.1: reads the stream
// BloomFilter.writeTo writes, answers as mightContain, inserts as put, writes streams readFrom
// accepts, and creates filters sized as BloomFilter.create(funnel, expectedInsertions, fpp). Its
// own type, not a row of bloomery's kind table: its file is Guava's. docs/interop.md has the
// format, the formulas and what is checked against the real Guava (tests/guava).
//
//   stream   strategy ordinal (1 signed byte: 0 MURMUR128_MITZ_32, 1 MURMUR128_MITZ_64), k
//            (1 unsigned byte), the number of 64-bit words w (4 bytes, big-endian, signed), then
//            the w words, each big-endian; bit i of the filter is bit i % 64 of word i / 64
//   sizing   m = (long)(-n * ln p / (ln 2)^2) bits, rounded up to whole words (n = 0 counts as
//            1); k = max(1, round(m / n * ln 2)) (later releases, such as Guava 33, take
//            k = max(1, round(-ln p / ln 2)) instead: docs/interop.md)
//   MITZ_64  (h1, h2) = murmur3_128(funneled key); bit j = ((h1 + j * h2) mod 2^64 & (2^63 - 1))
//            mod bits, j = 0..k-1
//   MITZ_32  a, b = the low and high 32 bits of h1; c = a + j * b mod 2^32 as a signed int, ~c
//            when negative; bit j = c mod bits, j = 1..k
//
// Every field of a stream is checked before it is trusted; a bad one is a bloomery::format_error
// starting "bloomery: Guava stream: ". Thread safety: as a std::vector; concurrent queries are
// safe, an insert needs exclusive access (Guava's own filter is lock-free; this one is not).
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bloomery/errors.hpp"
#include "bloomery/file.hpp"
#include "bloomery/interop/guava_hash.hpp"
#include "bloomery/results.hpp"

namespace bloomery::interop::guava {

// BloomFilterStrategies, by the ordinal the stream stores.
enum class strategy : std::uint8_t {
  murmur128_mitz_32 = 0,  // written by Guava 11 only; read, answered and extended, never created
  murmur128_mitz_64 = 1,  // every filter Guava 12 and later creates
};

constexpr std::string_view to_string(strategy s) noexcept {
  return s == strategy::murmur128_mitz_32 ? "MURMUR128_MITZ_32" : "MURMUR128_MITZ_64";
}

// What BloomFilter.create(funnel, n, fpp) allocates: `words` 64-bit words, k = `hashes`.
struct shape {
  std::uint64_t words = 0;
  std::uint32_t hashes = 0;
  std::uint64_t bits() const noexcept { return words * 64; }
};

namespace detail {

// Java's (long) of a double: NaN is 0, values beyond the range saturate.
inline std::int64_t java_d2l(double v) noexcept {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775808.0) return std::numeric_limits<std::int64_t>::max();
  if (v <= -9223372036854775808.0) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(v);
}

// Java's Math.round(double): the nearest long, ties toward positive infinity.
inline std::int64_t java_round(double v) noexcept {
  if (std::isnan(v)) return 0;
  const double f = std::floor(v);
  return java_d2l(v - f >= 0.5 ? f + 1 : f);
}

inline constexpr std::size_t stream_header_bytes = 6;
// LockFreeBitArray holds its words in a Java array: an int count.
inline constexpr std::uint64_t max_words = std::numeric_limits<std::int32_t>::max();
inline constexpr std::uint32_t max_hashes = 255;  // the stream stores k in one byte

// The shortest text that reads back as `p` (std::to_string would print 1e-9 as 0.000000).
inline std::string rate_text(double p) {
  char buf[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, p);
    if (std::strtod(buf, nullptr) == p) break;
  }
  return buf;
}

[[noreturn]] inline void bad_stream(const std::string& what) {
  throw format_error("bloomery: Guava stream: " + what);
}

inline std::uint64_t load_be(const std::byte* p, std::size_t count) noexcept {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < count; ++i) v = v << 8 | static_cast<std::uint64_t>(p[i]);
  return v;
}

inline void store_be(std::byte* p, std::uint64_t v, std::size_t count) noexcept {
  for (std::size_t i = count; i-- > 0; v >>= 8) p[i] = static_cast<std::byte>(v & 0xff);
}

}  // namespace detail

// Guava 31.1's sizing for n expected insertions at false-positive rate fpp, its checks and its
// refusals included (as std::invalid_argument): n < 0 is impossible here, n beyond 2^63 - 1 is
// refused, fpp must lie in (0, 1), and Guava cannot create a filter of 0 bits, of more than
// 2^31 - 1 words, or with k > 255 (fpp below about 1e-77).
inline shape guava_shape(std::uint64_t expected_insertions, double fpp) {
  if (expected_insertions > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    throw std::invalid_argument("bloomery: Guava's expected insertions are a Java long; " +
                                std::to_string(expected_insertions) + " is beyond 2^63 - 1");
  }
  if (!(fpp > 0.0)) {
    throw std::invalid_argument("bloomery: Guava's false positive probability (" +
                                detail::rate_text(fpp) + ") must be > 0.0");
  }
  if (!(fpp < 1.0)) {
    throw std::invalid_argument("bloomery: Guava's false positive probability (" +
                                detail::rate_text(fpp) + ") must be < 1.0");
  }
  const std::int64_t n =
      expected_insertions == 0 ? 1 : static_cast<std::int64_t>(expected_insertions);
  const double ln2 = std::log(2.0);
  // Guava's optimalNumOfBits and optimalNumOfHashFunctions, operation for operation.
  const std::int64_t bits = detail::java_d2l(-static_cast<double>(n) * std::log(fpp) / (ln2 * ln2));
  const auto k = static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(
      detail::java_round(static_cast<double>(bits) / static_cast<double>(n) * ln2))));
  const std::int32_t hashes = k < 1 ? 1 : k;
  const auto words = bits <= 0 ? 0 : (static_cast<std::uint64_t>(bits) + 63) / 64;
  if (words == 0 || words > detail::max_words ||
      static_cast<std::uint32_t>(hashes) > detail::max_hashes) {
    throw std::invalid_argument("bloomery: Guava cannot create a BloomFilter of " +
                                std::to_string(bits) + " bits with " + std::to_string(hashes) +
                                " hash functions (it needs 1 to 2^31 - 1 words and k <= 255)");
  }
  return {words, static_cast<std::uint32_t>(hashes)};
}

// A Guava Bloom filter together with the funnel its keys go through.
class bloom_filter {
 public:
  // BloomFilter.create(funnel, expected_insertions, fpp): MURMUR128_MITZ_64, sized by
  // guava_shape (which see for the refusals), all bits clear.
  bloom_filter(std::uint64_t expected_insertions, double fpp, funnel f = funnel::string)
      : bloom_filter(guava_shape(expected_insertions, fpp), f) {}

  // The filter in a stream BloomFilter.writeTo wrote, read as BloomFilter.readFrom(in, funnel)
  // does. The stream must be whole and nothing more: bytes after the last word are refused.
  static bloom_filter from_bytes(std::span<const std::byte> stream, funnel f) {
    if (stream.size() < detail::stream_header_bytes) {
      detail::bad_stream(std::to_string(stream.size()) +
                         " bytes: truncated (its header alone is 6: strategy, hash functions, "
                         "word count)");
    }
    const auto ordinal = static_cast<std::int8_t>(stream[0]);
    if (ordinal != 0 && ordinal != 1) {
      detail::bad_stream("unknown strategy ordinal " + std::to_string(ordinal) +
                         " (Guava knows 0 MURMUR128_MITZ_32 and 1 MURMUR128_MITZ_64)");
    }
    const auto hashes = static_cast<std::uint32_t>(stream[1]);
    if (hashes == 0) detail::bad_stream("0 hash functions (Guava needs at least 1)");
    const auto words = static_cast<std::int32_t>(
        static_cast<std::uint32_t>(detail::load_be(stream.data() + 2, 4)));
    if (words <= 0) {
      detail::bad_stream("a word count of " + std::to_string(words) + " (Guava needs at least 1)");
    }
    const std::uint64_t want =
        detail::stream_header_bytes + std::uint64_t{8} * static_cast<std::uint64_t>(words);
    if (stream.size() != want) {
      detail::bad_stream(std::to_string(words) + " words declared, so " + std::to_string(want) +
                         " bytes, but it has " + std::to_string(stream.size()) +
                         (stream.size() < want ? " (truncated)" : " (bytes after its end)"));
    }
    bloom_filter filter(static_cast<strategy>(ordinal), hashes, static_cast<std::uint64_t>(words),
                        f);
    const std::byte* p = stream.data() + detail::stream_header_bytes;
    for (std::uint64_t& w : filter.words_) {
      w = detail::load_be(p, 8);
      p += 8;
      filter.bit_count_ += static_cast<std::uint64_t>(std::popcount(w));
    }
    return filter;
  }

  // The stream BloomFilter.writeTo writes for this filter.
  std::vector<std::byte> to_bytes() const {
    std::vector<std::byte> out;
    try {
      out.resize(stream_size());
    } catch (const std::bad_alloc&) {
      throw allocation_error(stream_size(), "a Guava stream");
    }
    out[0] = static_cast<std::byte>(strategy_);
    out[1] = static_cast<std::byte>(hashes_);
    detail::store_be(out.data() + 2, words_.size(), 4);
    std::byte* p = out.data() + detail::stream_header_bytes;
    for (const std::uint64_t w : words_) {
      detail::store_be(p, w, 8);
      p += 8;
    }
    return out;
  }

  // A file holding one stream, and writing one crash-safely (file.hpp's write_file_atomically).
  static bloom_filter load(const std::filesystem::path& path, funnel f) {
    return from_bytes(read_file(path), f);
  }
  void save(const std::filesystem::path& path, file_access access = file_access::inherit) const {
    write_file_atomically(path, to_bytes(), access);
  }

  // put(key): sets the key's bits. `inserted` when a bit changed, `already_present` when none
  // did (the key answered "possibly present" before), as put's boolean says.
  insert_result insert(std::string_view key) { return insert_funneled(text_bytes(key)); }
  insert_result insert(std::u16string_view key) { return insert_funneled(chars_bytes(key)); }
  insert_result insert(std::int64_t key) { return insert_funneled(integer_bytes(key).view()); }
  // The bytes the caller's own funnel fed for the key.
  insert_result insert_funneled(std::span<const std::byte> bytes) {
    bool changed = false;
    for_each_bit(murmur3_128(bytes), [&](std::uint64_t bit) {
      std::uint64_t& w = words_[bit >> 6];
      const std::uint64_t mask = std::uint64_t{1} << (bit & 63);
      if ((w & mask) == 0) {
        w |= mask;
        ++bit_count_;
        changed = true;
      }
      return true;
    });
    return changed ? insert_result::inserted : insert_result::already_present;
  }

  // mightContain(key). The key's type must suit the funnel: text for string and chars (chars
  // decodes it as UTF-8, or takes UTF-16 as it is), an integer for long and int (int: one that
  // fits in 32 bits); anything else is a std::invalid_argument.
  bool may_contain(std::string_view key) const { return may_contain_funneled(text_bytes(key)); }
  bool may_contain(std::u16string_view key) const { return may_contain_funneled(chars_bytes(key)); }
  bool may_contain(std::int64_t key) const {
    return may_contain_funneled(integer_bytes(key).view());
  }
  bool may_contain_funneled(std::span<const std::byte> bytes) const noexcept {
    return for_each_bit(murmur3_128(bytes), [&](std::uint64_t bit) {
      return (words_[bit >> 6] >> (bit & 63) & 1) != 0;
    });
  }

  funnel key_funnel() const noexcept { return funnel_; }
  strategy hash_strategy() const noexcept { return strategy_; }
  std::uint32_t hashes() const noexcept { return hashes_; }
  std::uint64_t bits() const noexcept { return words_.size() * 64; }
  std::uint64_t bits_set() const noexcept { return bit_count_; }
  // The bit array's bytes, and the whole stream's (6 more).
  std::uint64_t size_in_bytes() const noexcept { return words_.size() * 8; }
  std::uint64_t stream_size() const noexcept {
    return detail::stream_header_bytes + size_in_bytes();
  }

  // approximateElementCount(): round(-ln(1 - set/bits) * bits / k), half up; with every bit set
  // (where Guava throws) the largest value.
  std::uint64_t approximate_count() const noexcept {
    const double b = static_cast<double>(bits());
    const double x =
        -std::log1p(-static_cast<double>(bit_count_) / b) * b / static_cast<double>(hashes_);
    if (!(x < 18446744073709551616.0)) return std::numeric_limits<std::uint64_t>::max();
    return static_cast<std::uint64_t>(std::floor(x + 0.5));
  }
  // expectedFpp(): (set / bits)^k.
  double estimated_fpr() const noexcept {
    return std::pow(static_cast<double>(bit_count_) / static_cast<double>(bits()),
                    static_cast<double>(hashes_));
  }

  friend bool operator==(const bloom_filter&, const bloom_filter&) = default;

 private:
  // Up to 8 funneled bytes of an integer key, without a heap allocation.
  struct integer_key {
    std::byte bytes[8];
    std::size_t size;
    std::span<const std::byte> view() const noexcept { return {bytes, size}; }
  };

  bloom_filter(shape s, funnel f)
      : bloom_filter(strategy::murmur128_mitz_64, s.hashes, s.words, f) {}
  bloom_filter(strategy s, std::uint32_t hashes, std::uint64_t words, funnel f)
      : strategy_(s), hashes_(hashes), funnel_(f) {
    try {
      words_.assign(words, 0);
    } catch (const std::bad_alloc&) {
      throw allocation_error(words * 8, "a Guava Bloom filter");
    }
  }

  [[noreturn]] void wrong_key(const char* given) const {
    throw std::invalid_argument(std::string("bloomery: this Guava filter's funnel is ") +
                                std::string(to_string(funnel_)) + "; it takes no " + given +
                                " keys");
  }

  // The bytes the funnel feeds for a text key. The buffer is per thread, so that concurrent
  // queries stay safe and a chars key costs no allocation once it has grown.
  std::span<const std::byte> text_bytes(std::string_view key) const {
    if (funnel_ == funnel::string) return std::as_bytes(std::span(key.data(), key.size()));
    if (funnel_ != funnel::chars) wrong_key("text");
    thread_local std::string units;
    utf8_to_utf16le(key, units);
    return std::as_bytes(std::span(units.data(), units.size()));
  }
  std::span<const std::byte> chars_bytes(std::u16string_view key) const {
    if (funnel_ != funnel::chars) wrong_key("UTF-16");
    thread_local std::string units;
    units.clear();
    for (const char16_t c : key) {
      units.push_back(static_cast<char>(c & 0xff));
      units.push_back(static_cast<char>(c >> 8));
    }
    return std::as_bytes(std::span(units.data(), units.size()));
  }
  integer_key integer_bytes(std::int64_t key) const {
    integer_key k{};
    if (funnel_ == funnel::int64) {
      k.size = 8;
    } else if (funnel_ == funnel::int32) {
      if (key < std::numeric_limits<std::int32_t>::min() ||
          key > std::numeric_limits<std::int32_t>::max()) {
        throw std::invalid_argument("bloomery: " + std::to_string(key) +
                                    " does not fit the int funnel (32 bits)");
      }
      k.size = 4;
    } else {
      wrong_key("integer");
    }
    const auto u = static_cast<std::uint64_t>(key);
    for (std::size_t i = 0; i < k.size; ++i)
      k.bytes[i] = static_cast<std::byte>(u >> (8 * i) & 0xff);
    return k;
  }

  // Calls visit(bit) for the key's bits in the strategy's order while it returns true; returns
  // whether it always did.
  template <class Visit>
  bool for_each_bit(hash128 h, Visit&& visit) const {
    const std::uint64_t bit_size = bits();
    if (strategy_ == strategy::murmur128_mitz_64) {
      std::uint64_t combined = h.h1;
      for (std::uint32_t j = 0; j < hashes_; ++j) {
        if (!visit((combined & 0x7fffffffffffffffULL) % bit_size)) return false;
        combined += h.h2;
      }
      return true;
    }
    // Java int arithmetic, wrapping: done in uint32_t and read back as signed.
    const auto a = static_cast<std::uint32_t>(h.h1);
    const auto b = static_cast<std::uint32_t>(h.h1 >> 32);
    for (std::uint32_t j = 1; j <= hashes_; ++j) {
      auto c = static_cast<std::int32_t>(a + j * b);
      if (c < 0) c = ~c;
      if (!visit(static_cast<std::uint64_t>(c) % bit_size)) return false;
    }
    return true;
  }

  strategy strategy_;
  std::uint32_t hashes_;
  funnel funnel_;
  std::vector<std::uint64_t> words_;
  std::uint64_t bit_count_ = 0;
};

}  // namespace bloomery::interop::guava
