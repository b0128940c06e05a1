#include <gtest/gtest.h>
#include <sys/stat.h>
#include <bloomery/bloomery.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace bloomery;
using namespace bloomery::support;

namespace {

bloom_filter small_filter(hasher h = {}) {
  bloom_filter f({.capacity = 100, .fpr = 0.01}, std::move(h));
  for (int i = 0; i < 100; ++i) f.insert("key-" + std::to_string(i));
  return f;
}

std::string format_error_of(auto&& fn) {
  return test::message_of<format_error>(fn);
}

}  // namespace

TEST(Format, SaveLoadRoundTripIsExact) {
  temp_dir dir;
  const bloom_filter f = small_filter();
  // The bytes are what serialize() gives, and deserialize() reads them back.
  const auto g = test::expect_saved_copy(f, dir / "f.bloom");
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(g.may_contain("key-" + std::to_string(i)));
}

TEST(Format, KeyedFilterRoundTripsWithItsKey) {
  temp_dir dir;
  const bloom_filter f = small_filter(random_key());
  save(f, dir / "k.bloom");
  const auto g = load<bloom_filter>(dir / "k.bloom");
  EXPECT_EQ(g, f);
  EXPECT_TRUE(g.hash().keyed());
  EXPECT_TRUE(g.may_contain("key-7"));
}

TEST(Format, LayoutIsDocumented) {
  // docs/file-format.md: magic, version, kind, hash algorithm, then a 64-byte-aligned payload.
  const bloom_filter f = small_filter(5);
  const auto bytes = serialize(f);
  ASSERT_GE(bytes.size(), 192u);
  EXPECT_EQ(std::memcmp(bytes.data(), "BLOOMERY", 8), 0);
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 8), 1u);     // version
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 12), 1u);    // kind: bloom
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 16), 3u);    // xxh3-128 seeded intmix
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 24), 5u);    // seed
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 64), 100u);  // element count
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 72), 192u);  // payload offset
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 80), f.size_in_bytes());
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 88), bytes.size());
  EXPECT_EQ(detail::get<std::uint64_t>(bytes.data() + 128), f.bit_count());
  EXPECT_EQ(detail::get<std::uint32_t>(bytes.data() + 136), f.hash_count());
}

TEST(Format, MappedViewAnswersInPlace) {
  temp_dir dir;
  bloom_filter f({.capacity = 50'000, .fpr = 0.01});
  const auto keys = test::present_keys(50'000);
  for (auto k : keys) f.insert(k);
  save(f, dir / "m.bloom");
  const auto mapped = map_file<bloom_filter>(dir / "m.bloom");
  EXPECT_EQ(mapped->bit_count(), f.bit_count());
  EXPECT_EQ(mapped->hash_count(), f.hash_count());
  EXPECT_EQ(mapped->approximate_count(), f.approximate_count());
  EXPECT_EQ(mapped->inserted(), 50'000u);
  for (auto k : keys) ASSERT_TRUE(mapped->may_contain(k));
  const auto absent = test::absent_keys(20'000);
  std::vector<bool> a(absent.size()), b(absent.size());
  EXPECT_EQ(mapped->may_contain_many(absent, a), f.may_contain_many(absent, b));
  EXPECT_EQ(a, b);
}

TEST(Format, EveryTruncationAndFlippedByteIsRejected) {
  // Every prefix and every byte flipped with three masks; a sample of prefixes also as real files,
  // through load() and the mapped view.
  const auto bytes = serialize(small_filter());
  test::expect_all_damage_rejected<bloom_filter>(bytes);
  EXPECT_NE(format_error_of([&] {
              deserialize<bloom_filter>(std::span(bytes).first(150));
            }).find("truncated"),
            std::string::npos);
  EXPECT_NE(
      format_error_of([&] { deserialize<bloom_filter>(std::span(bytes).first(0)); }).find("empty"),
      std::string::npos);
}

TEST(Format, TrailingDataAndWrongContentAreRejectedWithReasons) {
  auto bytes = serialize(small_filter());
  auto longer = bytes;
  longer.push_back(std::byte{0});
  EXPECT_NE(format_error_of([&] { deserialize<bloom_filter>(longer); }).find("trailing data"),
            std::string::npos);
  auto bad_magic = bytes;
  bad_magic[0] = std::byte{'X'};
  EXPECT_NE(format_error_of([&] { deserialize<bloom_filter>(bad_magic); }).find("bad magic"),
            std::string::npos);
  const std::string text = "key-1\nkey-2\n";
  EXPECT_NE(format_error_of([&] {
              deserialize<bloom_filter>(std::as_bytes(std::span(text)));
            }).find("bad magic"),
            std::string::npos);
  auto corrupted = bytes;
  corrupted[bytes.size() - 1] ^= std::byte{4};
  EXPECT_NE(format_error_of([&] { deserialize<bloom_filter>(corrupted); }).find("checksum"),
            std::string::npos);
  auto future = bytes;
  future[8] = std::byte{2};
  EXPECT_NE(format_error_of([&] {
              deserialize<bloom_filter>(future);
            }).find("unsupported format version 2"),
            std::string::npos);
}

TEST(Format, ValuesAreValidatedEvenWithAGoodChecksum) {
  const auto good = serialize(small_filter());
  const auto with = [&](std::size_t offset, auto value) {
    return test::edited_image_error<bloom_filter>(good, offset, value);
  };
  EXPECT_NE(with(12, std::uint32_t{99}).find("unknown filter kind 99"), std::string::npos);
  EXPECT_NE(with(12, std::uint32_t{3}).find("holds a counting filter, not a bloom filter"),
            std::string::npos);
  EXPECT_NE(with(16, std::uint32_t{7}).find("unknown hash algorithm 7"), std::string::npos);
  EXPECT_NE(with(128, std::uint64_t{0}).find("bits = 0 is invalid"), std::string::npos);
  EXPECT_NE(with(128, std::uint64_t{5000}).find("payload has"), std::string::npos);
  EXPECT_NE(with(136, std::uint32_t{0}).find("hashes = 0 is invalid"), std::string::npos);
  EXPECT_NE(with(136, std::uint32_t{1000}).find("hashes = 1000 is invalid"), std::string::npos);
  EXPECT_NE(with(144, std::uint64_t{0}).find("capacity is zero"), std::string::npos);
  EXPECT_NE(with(152, 1.5).find("target fpr"), std::string::npos);
  EXPECT_NE(with(20, std::uint32_t{200}).find("sizes do not add up"), std::string::npos);
  EXPECT_NE(with(100, std::uint8_t{1}).find("reserved header bytes"), std::string::npos);
}

TEST(Format, IoErrorsAreSystemErrors) {
  temp_dir dir;
  EXPECT_THROW(load<bloom_filter>(dir / "missing.bloom"), std::system_error);
  EXPECT_THROW(map_file<bloom_filter>(dir / "missing.bloom"), std::system_error);
  EXPECT_THROW(load<bloom_filter>(dir.path()), std::system_error);
  EXPECT_THROW(save(small_filter(), dir / "no-such-dir" / "f.bloom"), std::system_error);
  try {
    load<bloom_filter>(dir / "missing.bloom");
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.bloom"), std::string::npos) << e.what();
  }
}

TEST(Format, SaveReplacesAtomicallyAndLeavesNoTemporaries) {
  temp_dir dir;
  const auto path = dir / "f.bloom";
  save(small_filter(1), path);
  save(small_filter(2), path);
  EXPECT_EQ(load<bloom_filter>(path).hash().seed(), 2u);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u);
  // A save that fails (here: the directory is read-only, unless we are root) keeps the old file.
  if (::geteuid() != 0) {
    std::filesystem::permissions(
        dir.path(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    EXPECT_THROW(save(small_filter(3), path), std::system_error);
    std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all);
    EXPECT_EQ(load<bloom_filter>(path).hash().seed(), 2u);
  }
}

TEST(Format, FailedSaveKeepsThePreviousFile) {
  // A save whose rename fails (the target is a non-empty directory) must leave the old content and
  // no temporary behind, whoever runs the test.
  temp_dir dir;
  std::filesystem::create_directory(dir / "target");
  std::ofstream(dir / "target" / "keep") << "x";
  EXPECT_THROW(save(small_filter(), dir / "target"), std::system_error);
  EXPECT_TRUE(std::filesystem::is_directory(dir / "target"));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u);
}
