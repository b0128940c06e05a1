// Regression tests for the defects the hardening review found (docs/reliability.md): each fails
// on the code before its fix. Saves never touch the process umask and never widen permissions;
// keyed filters' files are owner-only; random keys come from getrandom(2); a loader refuses a
// file by its header before reading it whole; a serialized filter deserializes from any offset
// of a buffer; integer keys follow one documented rule.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bloomery/bloomery.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "test_support.hpp"

// Interposed on the C library for this test binary: calls from bloomery's inline code bind to
// these, which count them and forward to the kernel.
namespace {
std::atomic<int> umask_calls{0};
std::atomic<int> getrandom_calls{0};
}  // namespace

extern "C" mode_t umask(mode_t mask) noexcept {
  ++umask_calls;
  return static_cast<mode_t>(::syscall(SYS_umask, mask));
}

extern "C" ssize_t getrandom(void* buffer, size_t length, unsigned int flags) {
  ++getrandom_calls;
  return ::syscall(SYS_getrandom, buffer, length, flags);
}

using namespace bloomery;
using test::present_keys;
using test::temp_dir;

namespace {

mode_t mode_of(const std::filesystem::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

// Sets the umask for one test and restores it.
struct scoped_umask {
  explicit scoped_umask(mode_t m) : old(::umask(m)) {}
  ~scoped_umask() { ::umask(old); }
  mode_t old;
};

bloom_filter small_filter(hasher h = {}) {
  bloom_filter f({.capacity = 100, .fpr = 0.01}, std::move(h));
  for (std::uint64_t k : present_keys(50)) f.insert(k);
  return f;
}

// --- 1. saves and the umask ------------------------------------------------------------------

TEST(Hardening, SaveNeverReadsOrChangesTheUmask) {
  scoped_umask mask(022);
  temp_dir dir;
  const int before = umask_calls.load();
  save(small_filter(), dir / "new.bf");  // a new file
  save(small_filter(), dir / "new.bf");  // a replacement
  const std::byte bytes[] = {std::byte{1}, std::byte{2}};
  write_file_atomically(dir / "raw", bytes);
  EXPECT_EQ(umask_calls.load(), before);
  EXPECT_EQ(mode_of(dir / "new.bf"), mode_t{0644});
  EXPECT_EQ(mode_of(dir / "raw"), mode_t{0644});
}

TEST(Hardening, NewFilesGetTheUmaskAppliedByTheKernel) {
  scoped_umask mask(027);
  temp_dir dir;
  save(small_filter(), dir / "a.bf");
  EXPECT_EQ(mode_of(dir / "a.bf"), mode_t{0640});
}

// --- 2. files holding a secret key are owner-only -------------------------------------------

TEST(Hardening, KeyedFilterFilesAreOwnerOnly) {
  scoped_umask mask(022);
  temp_dir dir;
  const auto keyed = small_filter(hasher(random_key()));
  save(keyed, dir / "new.bf");
  EXPECT_EQ(mode_of(dir / "new.bf"), mode_t{0600});

  // Re-saving over a file someone made readable by all takes the group and other bits away...
  ASSERT_EQ(::chmod((dir / "new.bf").c_str(), 0644), 0);
  save(keyed, dir / "new.bf");
  EXPECT_EQ(mode_of(dir / "new.bf"), mode_t{0600});
  // ...and never adds any: an owner-read-only file stays so.
  ASSERT_EQ(::chmod((dir / "new.bf").c_str(), 0400), 0);
  save(keyed, dir / "new.bf");
  EXPECT_EQ(mode_of(dir / "new.bf"), mode_t{0400});

  // Through any_filter too, and for every keyed kind (any_filter's save dispatches to save()).
  const any_filter any(blocked_bloom_filter({.capacity = 10, .fpr = 0.01}, hasher(random_key())));
  save(any, dir / "any.bf");
  EXPECT_EQ(mode_of(dir / "any.bf"), mode_t{0600});
  EXPECT_EQ(load_any(dir / "any.bf").stats().keyed, true);
}

TEST(Hardening, SeededFilterFilesKeepTheModeTheyHad) {
  scoped_umask mask(022);
  temp_dir dir;
  for (const mode_t m : {mode_t{0600}, mode_t{0640}, mode_t{0664}}) {
    save(small_filter(), dir / "f.bf");
    ASSERT_EQ(::chmod((dir / "f.bf").c_str(), m), 0);
    save(small_filter(), dir / "f.bf");
    EXPECT_EQ(mode_of(dir / "f.bf"), m);
  }
}

TEST(Hardening, OwnerOnlyWritesStripGroupAndOtherBits) {
  scoped_umask mask(0);
  temp_dir dir;
  const std::byte bytes[] = {std::byte{7}};
  write_file_atomically(dir / "s", bytes, file_access::owner_only);
  EXPECT_EQ(mode_of(dir / "s"), mode_t{0600});
  ASSERT_EQ(::chmod((dir / "s").c_str(), 0755), 0);
  write_file_atomically(dir / "s", bytes, file_access::owner_only);
  EXPECT_EQ(mode_of(dir / "s"), mode_t{0700});
  write_file_atomically(dir / "p", bytes);
  EXPECT_EQ(mode_of(dir / "p"), mode_t{0666});
}

TEST(Hardening, SavesLeaveNoTemporaryFiles) {
  temp_dir dir;
  for (int i = 0; i < 20; ++i) save(small_filter(), dir / "f.bf");
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u);
}

// --- 4. loaders read the header first --------------------------------------------------------

// A good filter file extended by a 64 GiB hole: refused as trailing data from its header alone,
// where reading it whole first asked for 64 GiB (std::bad_alloc here, an abort under ASan).
TEST(Hardening, LoadRefusesAFileByItsHeaderBeforeReadingIt) {
  temp_dir dir;
  const auto path = dir / "holey.bf";
  save(small_filter(), path);
  ASSERT_EQ(::truncate(path.c_str(), off_t{64} << 30), 0);
  test::expect_throw_with<format_error>([&] { (void)load<bloom_filter>(path); }, "trailing data");
  test::expect_throw_with<format_error>([&] { (void)load_any(path); }, "trailing data");
  test::expect_throw_with<format_error>([&] { (void)read_filter_file(path); }, "header says");

  // A hole with no header at all is "bad magic" at once.
  const auto zeros = dir / "zeros.bf";
  { std::ofstream(zeros.string()).put('\0'); }
  ASSERT_EQ(::truncate(zeros.c_str(), off_t{64} << 30), 0);
  test::expect_throw_with<format_error>([&] { (void)load<bloom_filter>(zeros); }, "bad magic");
  test::expect_throw_with<format_error>([&] { (void)load_any(zeros); }, "bad magic");
}

TEST(Hardening, ReadFilterFileReturnsExactlyTheFile) {
  temp_dir dir;
  const auto f = small_filter();
  save(f, dir / "f.bf");
  EXPECT_EQ(read_filter_file(dir / "f.bf"), serialize(f));
  // Short files get the same messages as deserialize() gives their bytes.
  const std::byte three[] = {std::byte{'B'}, std::byte{'L'}, std::byte{'O'}};
  write_file_atomically(dir / "short", three);
  test::expect_throw_with<format_error>([&] { (void)read_filter_file(dir / "short"); },
                                        "shorter than the 128-byte header");
  write_file_atomically(dir / "empty", std::span<const std::byte>{});
  test::expect_throw_with<format_error>([&] { (void)read_filter_file(dir / "empty"); },
                                        "file is empty");
  EXPECT_THROW((void)read_filter_file(dir / "missing"), std::system_error);
  EXPECT_THROW((void)read_filter_file(dir.path()), std::system_error);
}

// Explicit parameters whose modelled FPR rounds to 1 (255 hashes into one bit or counter) once
// saved a target of exactly 1, which the loader refuses: the filter saved but did not load.
TEST(Hardening, FiltersWithExtremeExplicitParametersLoadAfterSaving) {
  temp_dir dir;
  bloom_filter b({.bits = 1, .hashes = 255});
  b.insert(1);
  EXPECT_LT(b.target_fpr(), 1.0);
  save(b, dir / "b.bf");
  EXPECT_EQ(load<bloom_filter>(dir / "b.bf"), b);
  counting_bloom_filter c({.counters = 1, .hashes = 255});
  c.insert(1);
  EXPECT_LT(c.target_fpr(), 1.0);
  save(c, dir / "c.bf");
  EXPECT_TRUE(load<counting_bloom_filter>(dir / "c.bf").may_contain(1));
  cuckoo_filter k({.fingerprint_bits = 4, .buckets = 1});
  EXPECT_GT(k.target_fpr(), 0.0);
  EXPECT_LT(k.target_fpr(), 1.0);
  save(k, dir / "k.bf");
  EXPECT_NO_THROW((void)load_any(dir / "k.bf"));
}

// --- 5. random keys come from the kernel -----------------------------------------------------

TEST(Hardening, RandomKeyDrawsFromGetrandom) {
  const int before = getrandom_calls.load();
  const secret_key a = random_key();
  EXPECT_GT(getrandom_calls.load(), before);
  EXPECT_NE(a, random_key());
  EXPECT_NE(a, secret_key{});
}

// --- 6. deserialize from any offset ----------------------------------------------------------

template <class F>
class AnyOffset : public ::testing::Test {};
using all_kinds = ::testing::Types<bloom_filter, blocked_bloom_filter, counting_bloom_filter,
                                   cuckoo_filter, scalable_bloom_filter, static_filter>;
TYPED_TEST_SUITE(AnyOffset, all_kinds);

template <class F>
F filled(const std::vector<std::uint64_t>& keys) {
  if constexpr (std::is_same_v<F, static_filter>) {
    return static_filter::build(keys, 0.01);
  } else {
    F f({.capacity = std::is_same_v<F, scalable_bloom_filter> ? keys.size() / 4 : keys.size(),
         .fpr = 0.01});
    for (const auto k : keys) {
      if constexpr (std::is_same_v<F, bloom_filter> || std::is_same_v<F, blocked_bloom_filter> ||
                    std::is_same_v<F, counting_bloom_filter>) {
        f.insert(k);
      } else {
        if (f.insert(k) == insert_result::full) throw std::logic_error("filter is full");
      }
    }
    return f;
  }
}

// A serialized filter inside a message buffer sits at whatever offset the message put it; reading
// its payload as words in place was undefined behaviour (UBSan: misaligned load).
TYPED_TEST(AnyOffset, DeserializesFromAMisalignedBuffer) {
  const auto keys = present_keys(3000);
  const TypeParam f = filled<TypeParam>(keys);
  const std::vector<std::byte> bytes = serialize(f);
  for (const std::size_t offset : {1, 3, 4, 7, 9, 33}) {
    SCOPED_TRACE(offset);
    std::vector<std::byte> message(offset + bytes.size() + 5, std::byte{0x5a});
    std::memcpy(message.data() + offset, bytes.data(), bytes.size());
    const std::span<const std::byte> at(message.data() + offset, bytes.size());
    const TypeParam copy = deserialize<TypeParam>(at);
    EXPECT_EQ(copy, f);
    const any_filter any = deserialize_any(at);
    for (const auto k : keys) {
      ASSERT_TRUE(copy.may_contain(k));
      ASSERT_TRUE(any.may_contain(k));
    }
    EXPECT_EQ(serialize(copy), bytes);
  }
}

// --- 7. integer keys -------------------------------------------------------------------------

TEST(Hardening, IntegerKeysAreTheir64BitTwosComplement) {
  bloom_filter f({.capacity = 100, .fpr = 0.001});
  f.insert(-1);
  EXPECT_TRUE(f.may_contain(std::numeric_limits<std::uint64_t>::max()));
  EXPECT_TRUE(f.may_contain(std::int8_t{-1}));
  EXPECT_EQ(hash_key(f.hash(), std::int32_t{-7}), hash_key(f.hash(), std::int64_t{-7}));
  EXPECT_EQ(hash_key(f.hash(), std::uint16_t{65535}), hash_key(f.hash(), std::uint64_t{65535}));
  EXPECT_NE(hash_key(f.hash(), std::uint16_t{65535}), hash_key(f.hash(), std::int16_t{-1}));
  static_assert(hashable_key<std::int64_t> && hashable_key<std::uint64_t> && hashable_key<char>);
  static_assert(!hashable_key<bool>);
}

}  // namespace
