// file_lock (file.hpp): one holder at a time, bounded waits that give up, a waiter that follows
// the file a rename put in place of the one it waited on, and read-modify-writes from several
// threads that lose no update. Label concurrency: it runs under ThreadSanitizer too.
#include <gtest/gtest.h>
#include <bloomery/bloomery.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace bloomery;
using namespace std::chrono_literals;

namespace {

void write_text(const std::filesystem::path& path, const std::string& text) {
  write_file_atomically(path, std::as_bytes(std::span(text)));
}

std::string read_text(const std::filesystem::path& path) {
  const std::vector<std::byte> bytes = read_file(path);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// Whether some other holder has the lock: one attempt, without waiting.
bool locked_elsewhere(const std::filesystem::path& path) {
  return !file_lock::try_lock_for(path, 0ns).has_value();
}

int error_of(const std::filesystem::path& path) {
  try {
    file_lock lock(path);
  } catch (const std::system_error& e) {
    return e.code().value();
  }
  return 0;
}

}  // namespace

TEST(FileLock, OneHolderAtATimeUntilReleased) {
  test::temp_dir dir("bloomery-lock");
  const auto f = dir / "f.bloom";
  write_text(f, "0");
  std::optional<file_lock> held;
  held.emplace(f);
  EXPECT_TRUE(held->owns_lock());
  EXPECT_EQ(held->path(), f);
  EXPECT_TRUE(locked_elsewhere(f));

  // A move hands the lock over; the moved-from object has nothing left to release.
  file_lock moved = std::move(*held);
  held.reset();
  EXPECT_TRUE(moved.owns_lock());
  EXPECT_TRUE(locked_elsewhere(f));
  moved.unlock();
  EXPECT_FALSE(moved.owns_lock());
  EXPECT_FALSE(locked_elsewhere(f));
  {
    const file_lock again(f);
    EXPECT_TRUE(locked_elsewhere(f));
  }
  EXPECT_FALSE(locked_elsewhere(f));
}

TEST(FileLock, ABoundedWaitGivesUpAfterItsTimeout) {
  test::temp_dir dir("bloomery-lock");
  const auto f = dir / "f.bloom";
  write_text(f, "0");
  const file_lock held(f);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(file_lock::try_lock_for(f, 120ms).has_value());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 120ms);
}

TEST(FileLock, ABoundedWaitGetsTheLockOnceReleased) {
  test::temp_dir dir("bloomery-lock");
  const auto f = dir / "f.bloom";
  write_text(f, "0");
  std::optional<file_lock> held(std::in_place, f);
  std::thread releaser([&] {
    std::this_thread::sleep_for(50ms);
    held.reset();
  });
  const std::optional<file_lock> got = file_lock::try_lock_for(f, 30s);
  releaser.join();
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->owns_lock());
}

// The case a lock on the file alone gets wrong: a waiter blocked on the old file, which the
// holder then replaces by rename, must end up holding the new file's lock, not the old one's.
TEST(FileLock, AWaiterFollowsTheFileARenamePutInPlace) {
  test::temp_dir dir("bloomery-lock");
  const auto f = dir / "f.bloom";
  write_text(f, "old");
  std::optional<file_lock> held(std::in_place, f);
  std::atomic<bool> waiter_has_it{false};
  std::optional<file_lock> waiter_lock;
  std::thread waiter([&] {
    waiter_lock.emplace(f);
    waiter_has_it = true;
  });
  std::this_thread::sleep_for(100ms);  // lets the waiter block on the old file
  EXPECT_FALSE(waiter_has_it.load());
  write_text(f, "new");
  held.reset();
  waiter.join();
  ASSERT_TRUE(waiter_lock && waiter_lock->owns_lock());
  EXPECT_TRUE(locked_elsewhere(f));  // the file the path names now is the one locked
  EXPECT_EQ(read_text(f), "new");
}

// What the lock is for: each thread loads a counter, adds one and saves it by rename, many times;
// under the lock no increment is lost.
TEST(FileLock, ReadModifyWritesUnderTheLockLoseNoUpdate) {
  test::temp_dir dir("bloomery-lock");
  const auto f = dir / "counter";
  write_text(f, "0");
  constexpr int threads = 4, per_thread = 15;
  std::vector<std::thread> writers;
  for (int t = 0; t < threads; ++t) {
    writers.emplace_back([&] {
      for (int i = 0; i < per_thread; ++i) {
        const file_lock lock(f);
        write_text(f, std::to_string(std::stoi(read_text(f)) + 1));
      }
    });
  }
  for (auto& w : writers) w.join();
  EXPECT_EQ(read_text(f), std::to_string(threads * per_thread));
  // The lock is taken on the file itself: no lock file is left beside it.
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST(FileLock, TakingItLeavesTheFileAsItWas) {
  test::temp_dir dir("bloomery-lock");
  const auto f = dir / "f.bloom";
  write_text(f, "content");
  ASSERT_EQ(::chmod(f.c_str(), 0640), 0);
  { const file_lock lock(f); }
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(read_text(f), "content");
}

TEST(FileLock, WhatIsNotAnExistingRegularFileIsAnError) {
  test::temp_dir dir("bloomery-lock");
  EXPECT_EQ(error_of(dir / "missing"), ENOENT);
  EXPECT_EQ(error_of(dir.path()), EISDIR);
  const auto fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of(fifo), EINVAL);  // at once: opening it must not wait for a writer
  EXPECT_THROW((void)file_lock::try_lock_for(dir / "missing", 1s), std::system_error);
}
