// Key -> hash: the one place in bloomery where keys become hashes.
//
// Every filter hashes a key exactly once into 128 bits and derives all of its probe positions from
// that value. Two modes exist:
//   * seeded (default): a 64-bit seed. The default seed is a fixed constant, so filters built
//     independently with the same parameters can be merged. Byte keys go through XXH3-128;
//     integer keys through mix_integer, two folded 64x64->128-bit multiplies, because
//     XXH3 on an 8-byte key cost more than the whole blocked-filter probe (docs/lookup-paths.md).
//     Filters written before that algorithm existed hash integers with XXH3 too and load as such.
//   * keyed: XXH3-128 with a 192-byte secret expanded from a random 256-bit key, for every key
//     type: an attacker without the key cannot evaluate it. Use it for filters that face
//     untrusted keys; see README "Threat model".
#pragma once

#include <sys/random.h>

#include <array>
#include <bit>
#include <cerrno>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL  // header-only use: consumers of bloomery link nothing extra
#endif
// GCC 12 reports its own AVX-512 intrinsics as "maybe uninitialized" where XXH3's long-input loop
// inlines them (-march=native on an AVX-512 CPU): a false positive that -Werror would turn into a
// broken build for our users, so it is silenced for this header alone.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <xxhash.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace bloomery {

static_assert(std::endian::native == std::endian::little,
              "bloomery's file format and integer keys assume a little-endian host");

// The 128 hash bits of one key. `low` and `high` are independent 64-bit halves.
struct hash128 {
  std::uint64_t low = 0;
  std::uint64_t high = 0;
  friend bool operator==(const hash128&, const hash128&) = default;
};

// The hash algorithm is part of a filter's identity and is written to its file.
enum class hash_algorithm : std::uint32_t {
  xxh3_128_seeded = 1,         // every key's bytes through XXH3-128 (integers: 8 LE bytes)
  xxh3_128_keyed = 2,          // the same with a secret instead of a seed
  xxh3_128_seeded_intmix = 3,  // byte keys as 1; integer keys through mix_integer (the default)
};

inline const char* to_string(hash_algorithm a) {
  switch (a) {
    case hash_algorithm::xxh3_128_seeded:
      return "xxh3-128-seeded";
    case hash_algorithm::xxh3_128_keyed:
      return "xxh3-128-keyed";
    case hash_algorithm::xxh3_128_seeded_intmix:
      return "xxh3-128-seeded-intmix";
  }
  return "unknown";
}

// A secret 256-bit key for keyed hashing.
struct secret_key {
  std::array<std::uint8_t, 32> bytes{};
  friend bool operator==(const secret_key&, const secret_key&) = default;
};

// A fresh key from the operating system's entropy source, getrandom(2). Not std::random_device:
// libstdc++'s default one reads the CPU's RDSEED/RDRAND where it has them, not the kernel's pool.
// Throws std::system_error if the kernel cannot supply the bytes.
inline secret_key random_key() {
  secret_key key;
  std::size_t done = 0;
  while (done < key.bytes.size()) {
    const ssize_t n = ::getrandom(key.bytes.data() + done, key.bytes.size() - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "bloomery: getrandom failed");
    }
    done += static_cast<std::size_t>(n);
  }
  return key;
}

namespace detail {
// The full 64x64->128-bit product of a and b, folded to 64 bits by XOR of its halves: every bit of
// a reaches every output bit when b is an odd constant with bits spread over the word.
inline std::uint64_t fold_multiply(std::uint64_t a, std::uint64_t b) noexcept {
  __extension__ const auto p = static_cast<unsigned __int128>(a) * b;
  return static_cast<std::uint64_t>(p) ^ static_cast<std::uint64_t>(p >> 64);
}
}  // namespace detail

// The 128 hash bits of integer key `x` under `seed`. A 64x64->128-bit multiply by an odd constant,
// folded by XOR of its halves, spreads every input bit over the word. One round is not enough:
// strided keys (i << 16) then clumped in a classic filter's bits far beyond chance. So the high
// half is one round and the low half a second round over it; with that they fill filters as
// evenly as XXH3 (docs/formulas.md, "Hashing shortcuts"), at two multiplies. Not a keyed hash:
// anyone who knows the seed can aim keys (README, "Threat model").
inline hash128 mix_integer(std::uint64_t x, std::uint64_t seed) noexcept {
  const std::uint64_t t =
      detail::fold_multiply(x ^ seed ^ 0x243f6a8885a308d3ULL, 0x9e3779b97f4a7c15ULL);
  return {detail::fold_multiply(t ^ 0x13198a2e03707344ULL, 0xc2b2ae3d27d4eb4fULL), t};
}

// The fixed default seed ("bloomery" in ASCII): filters built with it are mergeable anywhere.
inline constexpr std::uint64_t default_seed = 0x7972656d6f6f6c62ULL;

class hasher {
 public:
  // Seeded mode, with the default algorithm. Implicit on purpose: `bloom_filter f(params, 42)`
  // reads naturally.
  hasher(std::uint64_t seed = default_seed) noexcept  // NOLINT(google-explicit-constructor)
      : algorithm_(hash_algorithm::xxh3_128_seeded_intmix), seed_(seed) {}

  // Seeded mode with a chosen algorithm: xxh3_128_seeded builds filters that merge with files
  // written before xxh3_128_seeded_intmix existed. A keyed algorithm needs a key instead.
  hasher(std::uint64_t seed, hash_algorithm a) : algorithm_(a), seed_(seed) {
    if (a != hash_algorithm::xxh3_128_seeded && a != hash_algorithm::xxh3_128_seeded_intmix) {
      throw std::invalid_argument(std::string("bloomery: hash algorithm ") + to_string(a) +
                                  " is not a seeded algorithm; a keyed hasher takes a secret_key");
    }
  }

  // Keyed mode: the 192-byte XXH3 secret is derived from the key with XXH3_generateSecret, which
  // spreads the key's entropy over every secret byte as XXH3 requires.
  hasher(const secret_key& key)  // NOLINT(google-explicit-constructor)
      : algorithm_(hash_algorithm::xxh3_128_keyed), seed_(0), key_(key) {
    if (XXH3_generateSecret(secret_.data(), secret_.size(), key.bytes.data(), key.bytes.size()) !=
        XXH_OK) {
      throw std::runtime_error("bloomery: XXH3_generateSecret failed");
    }
  }

  // The hash of one mode, as a small function object: loops over many keys take it from
  // with_mode() and so decide the mode once instead of once per key.
  struct seeded_fn {
    std::uint64_t seed;
    hash128 operator()(const void* data, std::size_t size) const noexcept {
      const XXH128_hash_t h = XXH3_128bits_withSeed(data, size, seed);
      return {h.low64, h.high64};
    }
  };
  struct intmix_fn {
    std::uint64_t seed;
    hash128 operator()(const void* data, std::size_t size) const noexcept {
      return seeded_fn{seed}(data, size);
    }
    hash128 integer(std::uint64_t x) const noexcept { return mix_integer(x, seed); }
  };
  struct keyed_fn {
    const std::uint8_t* secret;
    hash128 operator()(const void* data, std::size_t size) const noexcept {
      const XXH128_hash_t h = XXH3_128bits_withSecret(data, size, secret, secret_bytes);
      return {h.low64, h.high64};
    }
  };

  // Returns fn(intmix_fn), fn(seeded_fn) or fn(keyed_fn), whichever is this hasher's mode.
  template <class Fn>
  decltype(auto) with_mode(Fn&& fn) const {
    if (algorithm_ == hash_algorithm::xxh3_128_seeded_intmix) return fn(intmix_fn{seed_});
    if (algorithm_ == hash_algorithm::xxh3_128_seeded) return fn(seeded_fn{seed_});
    return fn(keyed_fn{secret_.data()});
  }

  // Not written as with_mode(...): through the lambda GCC stopped inlining the hash into
  // may_contain loops (checked in the assembly of a small consumer), the one-at-a-time hot path.
  // Byte keys hash alike in both seeded algorithms.
  hash128 operator()(const void* data, std::size_t size) const noexcept {
    return algorithm_ != hash_algorithm::xxh3_128_keyed ? seeded_fn{seed_}(data, size)
                                                        : keyed_fn{secret_.data()}(data, size);
  }
  // An integer key, widened to 64 bits (see hash_key).
  hash128 integer(std::uint64_t x) const noexcept {
    if (algorithm_ == hash_algorithm::xxh3_128_seeded_intmix) return mix_integer(x, seed_);
    return (*this)(&x, sizeof x);
  }

  hash_algorithm algorithm() const noexcept { return algorithm_; }
  std::uint64_t seed() const noexcept { return seed_; }
  bool keyed() const noexcept { return algorithm_ == hash_algorithm::xxh3_128_keyed; }
  // Whether integer keys hash as their 8 little-endian bytes, i.e. as that byte string.
  bool integers_as_bytes() const noexcept {
    return algorithm_ != hash_algorithm::xxh3_128_seeded_intmix;
  }
  const secret_key& key() const noexcept { return key_; }

  // Two hashers are equal when they map every key to the same hash.
  friend bool operator==(const hasher& a, const hasher& b) noexcept {
    return a.algorithm_ == b.algorithm_ && a.seed_ == b.seed_ && a.key_ == b.key_;
  }

  // Names the first difference, for error messages of merges; empty when equal.
  friend std::string describe_difference(const hasher& a, const hasher& b) {
    if (a.algorithm_ != b.algorithm_) {
      return std::string("hash algorithm differs (") + to_string(a.algorithm_) + " vs " +
             to_string(b.algorithm_) + ")";
    }
    if (a.seed_ != b.seed_) {
      return "seed differs (" + std::to_string(a.seed_) + " vs " + std::to_string(b.seed_) + ")";
    }
    if (a.key_ != b.key_) return "secret key differs";
    return {};
  }

 private:
  hash_algorithm algorithm_;
  std::uint64_t seed_;
  secret_key key_{};
  static constexpr std::size_t secret_bytes = 192;
  std::array<std::uint8_t, secret_bytes> secret_{};
};

// ---------------------------------------------------------------------------------------------
// Keys. A key is anything `key_hash<K>` can turn into bytes: string-likes and byte spans as their
// bytes, integers as their value widened to 64 bits (two's complement), so int32_t{-7} and
// int64_t{-7} are the same key on every platform. Under xxh3_128_seeded_intmix (the default) that
// value goes to mix_integer, so an integer and its 8 little-endian bytes are different keys; under
// the other algorithms the 8 bytes are hashed, and they are the same key. User types specialize
// `bloomery::key_hash<T>` with a call operator that returns any of those (e.g. a string_view of a
// field, or an integer id); the filter then hashes the result with its own hasher, so seeds and
// keyed mode keep working for user types.
// ---------------------------------------------------------------------------------------------

template <class T>
struct key_hash;  // primary template: specialize for user types

namespace detail {

// The element types a byte range may have: one byte each, hashed as the bytes they are.
template <class T>
inline constexpr bool is_byte_type =
    std::is_same_v<T, std::byte> || std::is_same_v<T, unsigned char> || std::is_same_v<T, char> ||
    std::is_same_v<T, signed char> || std::is_same_v<T, char8_t>;

template <class T>
concept byte_like = is_byte_type<std::remove_cv_t<T>>;

// Integers up to 64 bits: a key is a value in [-2^63, 2^64) hashed as its 64-bit two's complement,
// so -1 and 2^64 - 1 are the same key. Wider integers (__int128 under GNU extensions, where it is
// std::integral) are not keys, rather than being silently truncated to their low 64 bits.
template <class T>
concept integer_key = std::integral<T> && !std::same_as<T, bool> && sizeof(T) <= 8;

template <class T>
concept string_key = std::convertible_to<const T&, std::string_view> && !integer_key<T>;

template <class T>
concept byte_range_key = !string_key<T> && requires(const T& t) {
  std::span(t);
  requires byte_like<typename decltype(std::span(t))::element_type>;
};

template <class T>
concept builtin_key = integer_key<T> || string_key<T> || byte_range_key<T>;

}  // namespace detail

// A key that bloomery knows how to hash: a built-in key, or a type with a key_hash specialization
// that projects it onto a built-in key.
template <class T>
concept hashable_key = detail::builtin_key<T> || requires(const T& t) {
  { key_hash<T>{}(t) } -> detail::builtin_key;
};

// What hash_key hashes with: a hasher, or the function object of one of its modes.
template <class H>
concept key_hasher = std::is_invocable_r_v<hash128, const H&, const void*, std::size_t>;

// Hashes one key with `h` (a hasher, or hasher::with_mode's function object). This is the only
// function that feeds keys to the hash.
template <key_hasher H, hashable_key K>
hash128 hash_key(const H& h, const K& key) noexcept {
  if constexpr (detail::integer_key<K>) {
    // Widen with the value's own signedness, then hash the 8 little-endian bytes.
    const std::uint64_t wide = static_cast<std::uint64_t>(
        static_cast<std::conditional_t<std::is_signed_v<K>, std::int64_t, std::uint64_t>>(key));
    if constexpr (requires { h.integer(wide); }) {
      return h.integer(wide);
    } else {
      return h(&wide, sizeof wide);  // seeded_fn, keyed_fn: the bytes
    }
  } else if constexpr (detail::string_key<K>) {
    const std::string_view s(key);
    return h(s.data(), s.size());
  } else if constexpr (detail::byte_range_key<K>) {
    const auto s = std::span(key);
    return h(s.data(), s.size_bytes());
  } else {
    return hash_key(h, key_hash<K>{}(key));
  }
}

// ---------------------------------------------------------------------------------------------
// MurmurHash3, x86 32-bit variant (Austin Appleby's public-domain hash): the hash Bitcoin's BIP37
// fixes for its filters, and the one exception to the hashing above. Only bip37.hpp uses it; it
// lives here so that this file stays the one place where keys become hashes. Not a hash for new
// filters: 32 bits, and seeds that anyone can aim keys at.
// ---------------------------------------------------------------------------------------------

// The 32-bit MurmurHash3 of `bytes` under `seed`. Blocks of 4 bytes are read little-endian, the
// 1 to 3 tail bytes likewise, and the length taken mod 2^32, as the reference implementation does
// on every platform. Verified against Bitcoin Core's vectors (tests/test_bip37.cpp).
constexpr std::uint32_t murmur3_32(std::span<const std::uint8_t> bytes,
                                   std::uint32_t seed) noexcept {
  constexpr std::uint32_t c1 = 0xcc9e2d51, c2 = 0x1b873593;
  constexpr auto mix_block = [](std::uint32_t k) { return std::rotl(k * c1, 15) * c2; };
  std::uint32_t h = seed;
  const std::size_t whole = bytes.size() / 4 * 4;
  for (std::size_t i = 0; i < whole; i += 4) {
    const std::uint32_t k = std::uint32_t{bytes[i]} | std::uint32_t{bytes[i + 1]} << 8 |
                            std::uint32_t{bytes[i + 2]} << 16 | std::uint32_t{bytes[i + 3]} << 24;
    h = std::rotl(h ^ mix_block(k), 13) * 5 + 0xe6546b64;
  }
  std::uint32_t tail = 0;
  for (std::size_t i = bytes.size(); i > whole; --i) tail = tail << 8 | bytes[i - 1];
  if (bytes.size() != whole) h ^= mix_block(tail);
  h ^= static_cast<std::uint32_t>(bytes.size());
  h = (h ^ h >> 16) * 0x85ebca6b;  // the finalizer: every input bit reaches every output bit
  h = (h ^ h >> 13) * 0xc2b2ae35;
  return h ^ h >> 16;
}

}  // namespace bloomery
