// What the fuzz targets share: a reader that turns the fuzzer's bytes into choices (running dry
// yields zeros, so every input is valid), the check that aborts with a message the fuzzer reports,
// the file checksum the format documents (so a target can let mutations past it), and an
// in-memory file whose /proc/self/fd path the library's path-based entry points can open.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <bloomery/format.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace bloomery_fuzz {

[[noreturn]] inline void check_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", what, file, line);
  std::abort();
}

// An invariant of the library: a violation aborts, which libFuzzer reports as a crash.
#define FUZZ_CHECK(cond) \
  ((cond) ? static_cast<void>(0) : ::bloomery_fuzz::check_failed(#cond, __FILE__, __LINE__))

// Consumes the input from the front.
class input {
 public:
  input(const std::uint8_t* data, std::size_t size) : rest_(data, size) {}
  bool empty() const noexcept { return rest_.empty(); }
  std::size_t size() const noexcept { return rest_.size(); }

  std::uint8_t byte() noexcept {
    if (rest_.empty()) return 0;
    const std::uint8_t b = rest_.front();
    rest_ = rest_.subspan(1);
    return b;
  }
  std::uint16_t u16() noexcept { return static_cast<std::uint16_t>(byte() | byte() << 8); }
  std::uint32_t u32() noexcept { return u16() | static_cast<std::uint32_t>(u16()) << 16; }
  std::uint64_t u64() noexcept { return u32() | static_cast<std::uint64_t>(u32()) << 32; }
  // A value in [lo, hi], from as few bytes as the range needs.
  std::uint64_t in_range(std::uint64_t lo, std::uint64_t hi) noexcept {
    const std::uint64_t span = hi - lo;
    const std::uint64_t raw = span < 256 ? byte() : span < 65536 ? u16() : u64();
    return span == UINT64_MAX ? raw : lo + raw % (span + 1);
  }
  // Up to `n` bytes (fewer at the end of the input).
  std::span<const std::uint8_t> take(std::size_t n) noexcept {
    const std::span<const std::uint8_t> out = rest_.first(std::min(n, rest_.size()));
    rest_ = rest_.subspan(out.size());
    return out;
  }
  std::span<const std::uint8_t> rest() noexcept { return take(rest_.size()); }

 private:
  std::span<const std::uint8_t> rest_;
};

inline std::span<const std::byte> as_bytes(std::span<const std::uint8_t> s) noexcept {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// Written into a mutated file so that it reaches the field checks (format.hpp's reseal).
inline void fix_filter_checksum(std::vector<std::byte>& file) {
  bloomery::detail::reseal(file);
}

// A file in memory (memfd): no disk traffic, and path() opens it like any regular file.
class memory_file {
 public:
  memory_file() : fd_(::memfd_create("bloomery-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) check_failed("memfd_create", __FILE__, __LINE__);
  }
  memory_file(const memory_file&) = delete;
  memory_file& operator=(const memory_file&) = delete;
  ~memory_file() { ::close(fd_); }

  // Replaces the content with `bytes`.
  void assign(std::span<const std::byte> bytes) {
    FUZZ_CHECK(::ftruncate(fd_, 0) == 0);
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n =
          ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
      FUZZ_CHECK(n > 0);
      done += static_cast<std::size_t>(n);
    }
  }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

// Whether the targets step over the library defects already reported and kept as reproducers in
// fuzz/regressions/ (each check says which), so that a fuzz run goes on to find new ones. Setting
// BLOOMERY_FUZZ_STRICT (scripts/fuzz.sh does, when it replays fuzz/regressions/) makes those
// reproducers fail until the defect is fixed.
inline bool tolerate_known_defect() {
  static const bool strict = std::getenv("BLOOMERY_FUZZ_STRICT") != nullptr;
  return !strict;
}

// The operations of the differential targets (diff_*.cpp), one input byte each: the low bits
// choose the operation, the top bit whether it acts on filter A or on B (its twin of equal
// parameters, the other side of merges). Keys follow as one byte each (see key()).
enum class op : std::uint8_t {
  insert,
  query,
  remove,
  check_and_insert,
  insert_many,
  query_many,
  merge,
  intersect,
  round_trip,
  clear,
  bad_merge,
  concurrent_insert,
};
inline constexpr unsigned op_count = 12;

struct step {
  op what;
  bool on_b;
};
inline step next_step(input& in) {
  const std::uint8_t b = in.byte();
  return {static_cast<op>((b & 0x7fu) % op_count), (b & 0x80u) != 0};
}

// Keys are small integers, so that the operations keep meeting the same keys.
inline std::uint64_t key(input& in, std::uint64_t key_space) {
  return in.byte() % key_space;
}

// Seeded (the default seed or a small one) or keyed, from one byte.
inline bloomery::hasher pick_hasher(input& in) {
  const std::uint8_t b = in.byte();
  if (b & 1) {
    bloomery::secret_key k;
    for (std::size_t i = 0; i < k.bytes.size(); ++i) {
      k.bytes[i] = static_cast<std::uint8_t>(b * (i + 1));
    }
    return k;
  }
  return b == 0 ? bloomery::hasher() : bloomery::hasher(b >> 1);
}

// A target false-positive rate, from loose to tight.
inline double pick_fpr(input& in) {
  static constexpr double rates[] = {0.5, 0.2, 0.05, 0.01, 1e-3, 1e-5};
  return rates[in.byte() % std::size(rates)];
}

// A hasher that differs from `h`: filters built with it must refuse to merge with h's.
inline bloomery::hasher other_hasher(const bloomery::hasher& h) {
  return h.keyed() ? bloomery::hasher(1) : bloomery::hasher(h.seed() + 1);
}

// serialize() then deserialize() gives the same filter, and the same bytes again.
template <class F>
F round_trip(const F& f) {
  const std::vector<std::byte> bytes = bloomery::serialize(f);
  F g = bloomery::deserialize<F>(bytes);
  FUZZ_CHECK(g == f && g.inserted() == f.inserted());
  FUZZ_CHECK(bloomery::serialize(g) == bytes);
  return g;
}

// A batch of keys from the input: may_contain_many answers each exactly as may_contain does and
// counts the positives.
template <class F>
void check_batch_query(const F& f, input& in, std::uint64_t key_space) {
  std::vector<std::uint64_t> batch(in.byte() % 80);
  for (std::uint64_t& k : batch) k = key(in, key_space);
  std::vector<std::uint8_t> out(batch.size());
  std::size_t positives = 0;
  for (const std::uint64_t k : batch) positives += f.may_contain(k);
  FUZZ_CHECK(f.may_contain_many(batch, out) == positives);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    FUZZ_CHECK((out[i] != 0) == f.may_contain(batch[i]));
  }
}

// A union with `alien` (another hasher) is refused with std::invalid_argument and changes
// nothing, counts included.
template <class F>
void check_refused_merge(F& f, const F& alien) {
  const F before = f;
  FUZZ_CHECK(!f.incompatibility(alien).empty());
  bool threw = false;
  try {
    f |= alien;
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  FUZZ_CHECK(threw && f == before && f.inserted() == before.inserted());
}

}  // namespace bloomery_fuzz
