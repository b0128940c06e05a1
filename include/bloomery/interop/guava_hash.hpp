// The hashing Guava's BloomFilter is built on, fixed by the streams Guava writes as BIP37's
// MurmurHash3 is by the BIP: MurmurHash3 x64 128-bit with seed 0 (Guava's Hashing.murmur3_128())
// over the bytes a Funnel feeds it. The funnels are Guava's stock ones; a caller with a funnel of
// its own (fields put one after another) hands the bytes that funnel would feed to the *_funneled
// verbs of guava::bloom_filter. The formulas are in docs/interop.md.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace bloomery::interop::guava {

// The two 64-bit halves of a MurmurHash3 x64 128-bit value; Guava's HashCode holds h1's bytes
// little-endian, then h2's.
struct hash128 {
  std::uint64_t h1 = 0;
  std::uint64_t h2 = 0;
  friend constexpr bool operator==(const hash128&, const hash128&) = default;
};

namespace detail {

inline constexpr std::uint64_t murmur3_c1 = 0x87c37b91114253d5ULL;
inline constexpr std::uint64_t murmur3_c2 = 0x4cf5ad432745937fULL;

constexpr std::uint64_t murmur3_fmix(std::uint64_t k) noexcept {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

constexpr std::uint64_t murmur3_mix_k1(std::uint64_t k1) noexcept {
  return std::rotl(k1 * murmur3_c1, 31) * murmur3_c2;
}

constexpr std::uint64_t murmur3_mix_k2(std::uint64_t k2) noexcept {
  return std::rotl(k2 * murmur3_c2, 33) * murmur3_c1;
}

// `count` bytes from `at`, little-endian.
constexpr std::uint64_t load_le(std::span<const std::byte> bytes, std::size_t at,
                                std::size_t count) noexcept {
  std::uint64_t v = 0;
  for (std::size_t b = 0; b < count; ++b) {
    v |= static_cast<std::uint64_t>(bytes[at + b]) << (8 * b);
  }
  return v;
}

}  // namespace detail

// MurmurHash3 x64 128-bit of `data` with seed 0, as Guava's Hashing.murmur3_128() computes it.
constexpr hash128 murmur3_128(std::span<const std::byte> data) noexcept {
  std::uint64_t h1 = 0, h2 = 0;
  const std::size_t n = data.size();
  const std::size_t whole = n / 16 * 16;
  for (std::size_t i = 0; i < whole; i += 16) {
    h1 ^= detail::murmur3_mix_k1(detail::load_le(data, i, 8));
    h1 = std::rotl(h1, 27) + h2;
    h1 = h1 * 5 + 0x52dce729;
    h2 ^= detail::murmur3_mix_k2(detail::load_le(data, i + 8, 8));
    h2 = std::rotl(h2, 31) + h1;
    h2 = h2 * 5 + 0x38495ab5;
  }
  // The 1-15 tail bytes: the first 8 enter as k1, the rest as k2, each little-endian.
  const std::size_t rest = n - whole;
  if (rest > 8) h2 ^= detail::murmur3_mix_k2(detail::load_le(data, whole + 8, rest - 8));
  if (rest > 0) h1 ^= detail::murmur3_mix_k1(detail::load_le(data, whole, rest < 8 ? rest : 8));
  h1 ^= static_cast<std::uint64_t>(n);
  h2 ^= static_cast<std::uint64_t>(n);
  h1 += h2;
  h2 += h1;
  h1 = detail::murmur3_fmix(h1);
  h2 = detail::murmur3_fmix(h2);
  h1 += h2;
  h2 += h1;
  return {h1, h2};
}

// Guava's stock funnels: how a key becomes the bytes that are hashed. The stream does not record
// which one a filter was built with, so a reader names it.
enum class funnel : std::uint8_t {
  string,  // Funnels.stringFunnel(UTF_8) and byteArrayFunnel(): the key's (UTF-8) bytes
  chars,   // Funnels.unencodedCharsFunnel(): each UTF-16 code unit as 2 little-endian bytes
  int64,   // Funnels.longFunnel(): the long's 8 bytes, little-endian
  int32,   // Funnels.integerFunnel(): the int's 4 bytes, little-endian
};

// "string", "chars", "long", "int": the names the CLI and Python use (Java's type names).
constexpr std::string_view to_string(funnel f) noexcept {
  switch (f) {
    case funnel::string:
      return "string";
    case funnel::chars:
      return "chars";
    case funnel::int64:
      return "long";
    case funnel::int32:
      return "int";
  }
  return "?";
}

constexpr std::optional<funnel> parse_funnel(std::string_view name) noexcept {
  for (const funnel f : {funnel::string, funnel::chars, funnel::int64, funnel::int32}) {
    if (to_string(f) == name) return f;
  }
  return std::nullopt;
}

// The UTF-16 code units of UTF-8 text, each as 2 little-endian bytes: what unencodedCharsFunnel
// feeds for the Java String that text decodes to. Strict UTF-8 (no overlong forms, no encoded
// surrogates, nothing past U+10FFFF): a Java String decoded from anything else would hold U+FFFD
// replacements the sender never had, so invalid input is a std::invalid_argument naming the byte.
inline void utf8_to_utf16le(std::string_view text, std::string& out) {
  out.clear();
  const auto bad = [&](std::size_t at) {
    throw std::invalid_argument("bloomery: not valid UTF-8 at byte " + std::to_string(at + 1) +
                                " of the key (the chars funnel decodes keys as UTF-8)");
  };
  const auto unit = [&](std::uint32_t u) {
    out.push_back(static_cast<char>(u & 0xff));
    out.push_back(static_cast<char>(u >> 8));
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto b0 = static_cast<unsigned char>(text[i]);
    std::size_t len = 0;
    std::uint32_t cp = 0, min = 0;
    if (b0 < 0x80) {
      len = 1, cp = b0;
    } else if (b0 >= 0xc2 && b0 < 0xe0) {
      len = 2, cp = b0 & 0x1f, min = 0x80;
    } else if (b0 >= 0xe0 && b0 < 0xf0) {
      len = 3, cp = b0 & 0x0f, min = 0x800;
    } else if (b0 >= 0xf0 && b0 < 0xf5) {
      len = 4, cp = b0 & 0x07, min = 0x10000;
    } else {
      bad(i);
    }
    if (text.size() - i < len) bad(i);
    for (std::size_t j = 1; j < len; ++j) {
      const auto b = static_cast<unsigned char>(text[i + j]);
      if ((b & 0xc0) != 0x80) bad(i + j);
      cp = cp << 6 | (b & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000)) bad(i);
    if (cp < 0x10000) {
      unit(cp);
    } else {
      unit(0xd800 + ((cp - 0x10000) >> 10));
      unit(0xdc00 + ((cp - 0x10000) & 0x3ff));
    }
    i += len;
  }
}

}  // namespace bloomery::interop::guava
