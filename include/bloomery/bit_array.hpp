// Bit storage shared by every bit-array filter: 64-bit words, 64-bit bit indices, cache-line
// aligned, with plain and atomic set/test.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <utility>

#include "bloomery/errors.hpp"

namespace bloomery {

inline constexpr std::size_t cache_line_bytes = 64;
inline constexpr std::size_t words_per_line = cache_line_bytes / sizeof(std::uint64_t);

namespace detail {

// Relaxed atomic loads and ORs: on x86-64 and AArch64 a relaxed load is an ordinary load, so the
// single-threaded paths pay nothing, and queries may run beside concurrent inserts without a data
// race. GCC/Clang builtins are used because std::atomic_ref cannot wrap const (mapped) memory.
inline std::uint64_t load_word(const std::uint64_t* w) noexcept {
  return __atomic_load_n(w, __ATOMIC_RELAXED);
}
inline void or_word_atomic(std::uint64_t* w, std::uint64_t mask) noexcept {
  __atomic_fetch_or(w, mask, __ATOMIC_RELAXED);
}

inline bool test_bit(const std::uint64_t* words, std::uint64_t i) noexcept {
  return (load_word(words + (i >> 6)) >> (i & 63)) & 1;
}

inline std::uint64_t count_set_bits(std::span<const std::uint64_t> words) noexcept {
  std::uint64_t n = 0;
  for (const std::uint64_t& w : words)
    n += static_cast<std::uint64_t>(std::popcount(load_word(&w)));
  return n;
}

// Always inlined, as is every function that only prefetches (the batched-query policies'
// prefetch()): GCC sees no side effect in such a function and, unless it is inlined early,
// deletes its calls as dead code, which silently turns a batched loop into a one-at-a-time one.
[[gnu::always_inline]] inline void prefetch(const void* p) noexcept {
  __builtin_prefetch(p, 0, 3);
}
[[gnu::always_inline]] inline void prefetch_for_write(const void* p) noexcept {
  __builtin_prefetch(p, 1, 3);
}

// Lines of 64 bytes needed for `bits` bits; storage is always whole cache lines so a payload can
// be mapped and probed in place with every line aligned.
inline constexpr std::uint64_t words_for_bits(std::uint64_t bits) noexcept {
  return (bits / 512 + (bits % 512 != 0)) * words_per_line;  // no overflow even for 2^64 - 1 bits
}

}  // namespace detail

namespace detail {
// Cache-line-aligned memory, freed with std::free; from 2 MiB on 2 MiB-aligned and advised for
// huge pages (MADV_HUGEPAGE). Large arrays are probed at random, and huge pages remove most TLB
// misses from lookups and most page faults from a construction that touches every page once.
// Uninitialised.
inline void* huge_page_alloc(std::size_t bytes, const char* what) {
  constexpr std::size_t huge = std::size_t{2} << 20;
  const std::size_t align = bytes >= huge ? huge : cache_line_bytes;
  const std::size_t rounded = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  if (p == nullptr) throw allocation_error(bytes, what);
  if (align == huge) ::madvise(p, rounded, MADV_HUGEPAGE);  // advisory: failure is harmless
  return p;
}
}  // namespace detail

// An owning, zero-initialized array of bits rounded up to whole cache lines.
class bit_array {
 public:
  bit_array() = default;
  explicit bit_array(std::uint64_t bits) : words_(detail::words_for_bits(bits)) {
    data_ = allocate(words_);
  }
  bit_array(const bit_array& other) : words_(other.words_) {
    data_ = allocate(words_);
    if (words_ != 0) std::memcpy(data_, other.data_, words_ * sizeof(std::uint64_t));
  }
  bit_array(bit_array&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), words_(std::exchange(other.words_, 0)) {}
  bit_array& operator=(bit_array other) noexcept {
    std::swap(data_, other.data_);
    std::swap(words_, other.words_);
    return *this;
  }
  ~bit_array() { std::free(data_); }

  // A copy of a file's payload: whole 64-bit words, exactly as save() wrote them.
  static bit_array from_bytes(std::span<const std::byte> bytes) {
    bit_array a(bytes.size() * 8);
    if (!bytes.empty()) std::memcpy(a.data_, bytes.data(), bytes.size());
    return a;
  }

  std::uint64_t* data() noexcept { return data_; }
  const std::uint64_t* data() const noexcept { return data_; }
  std::uint64_t word_count() const noexcept { return words_; }
  std::uint64_t size_in_bytes() const noexcept { return words_ * sizeof(std::uint64_t); }
  std::span<std::uint64_t> words() noexcept { return {data_, words_}; }
  std::span<const std::uint64_t> words() const noexcept { return {data_, words_}; }

  void clear() noexcept {
    if (words_ != 0) std::memset(data_, 0, size_in_bytes());
  }

  // Word-wise OR / AND; the caller guarantees equal sizes.
  void or_with(const bit_array& o) noexcept {
    for (std::uint64_t i = 0; i < words_; ++i) data_[i] |= o.data_[i];
  }
  void and_with(const bit_array& o) noexcept {
    for (std::uint64_t i = 0; i < words_; ++i) data_[i] &= o.data_[i];
  }
  friend bool operator==(const bit_array& a, const bit_array& b) noexcept {
    return a.words_ == b.words_ &&
           (a.words_ == 0 || std::memcmp(a.data_, b.data_, a.size_in_bytes()) == 0);
  }

 private:
  static std::uint64_t* allocate(std::uint64_t words) {
    if (words == 0) return nullptr;
    // words_for_bits() of at most 2^64 bits is at most 2^58 words, so this cannot overflow.
    const std::size_t bytes = words * sizeof(std::uint64_t);
    void* p = detail::huge_page_alloc(bytes, "a filter's storage");
    std::memset(p, 0, bytes);
    return static_cast<std::uint64_t*>(p);
  }

  std::uint64_t* data_ = nullptr;
  std::uint64_t words_ = 0;
};

}  // namespace bloomery
