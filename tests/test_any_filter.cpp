// any_filter and the kind-agnostic file functions: every kind round-trips through serialize /
// deserialize_any and save / load_any with identical answers, stats and bytes; what is not a
// bloomery filter is a format_error; a save keeps the permission bits of the file it replaces.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <bloomery/bloomery.hpp>
#include <bloomery/support/keys.hpp>
#include <bloomery/support/temp_dir.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <system_error>
#include <vector>

#include "test_support.hpp"

using namespace bloomery;
using support::absent_keys;
using support::present_keys;

namespace {

// One filter of every kind, each holding `keys`.
std::vector<any_filter> one_of_each(const std::vector<std::uint64_t>& keys) {
  const target t{.capacity = keys.size(), .fpr = 0.01};
  std::vector<any_filter> all;
  bloom_filter b(t);
  blocked_bloom_filter bl(t, hasher(random_key()));
  counting_bloom_filter c(t);
  cuckoo_filter k(t);
  scalable_bloom_filter s({.capacity = keys.size() / 4, .fpr = 0.01});
  scalable_cuckoo_filter sc({.capacity = keys.size() / 4, .fpr = 0.01});
  for (const auto key : keys) {
    b.insert(key);
    bl.insert(key);
    c.insert(key);
    if (!k.insert(key)) throw std::logic_error("cuckoo filter sized for the keys is full");
    (void)s.insert(key);
    if (!sc.insert(key)) throw std::logic_error("scalable cuckoo filter is full");
  }
  if (sc.sub_filter_count() < 2) throw std::logic_error("scalable cuckoo filter did not grow");
  all.emplace_back(std::move(b));
  all.emplace_back(std::move(bl));
  all.emplace_back(std::move(c));
  all.emplace_back(std::move(k));
  all.emplace_back(std::move(s));
  all.emplace_back(static_filter::build(keys, 0.01));
  all.emplace_back(std::move(sc));
  return all;
}

std::vector<bool> answers(const any_filter& f, const std::vector<std::uint64_t>& keys) {
  std::vector<bool> out;
  for (const auto k : keys) out.push_back(f.may_contain(k));
  return out;
}

TEST(AnyFilter, HoldsEveryKindInTableOrder) {
  const auto all = one_of_each(present_keys(2000));
  ASSERT_EQ(all.size(), filter_kinds.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].kind(), filter_kinds[i].kind);
    EXPECT_EQ(all[i].stats().kind, filter_kinds[i].kind);
    EXPECT_EQ(all[i].size_in_bytes(), all[i].stats().size_in_bytes);
  }
}

TEST(AnyFilter, AnswersAsTheConcreteFilterAndHasNoFalseNegatives) {
  const auto keys = present_keys(3000);
  const auto others = absent_keys(20000);
  for (const any_filter& f : one_of_each(keys)) {
    SCOPED_TRACE(to_string(f.kind()));
    for (const auto k : keys) ASSERT_TRUE(f.may_contain(k));
    std::vector<char> out(keys.size());
    EXPECT_EQ(f.may_contain_many(keys, out), keys.size());
    std::vector<char> out_absent(others.size());
    const std::size_t positives = f.may_contain_many(others, out_absent);
    std::size_t single = 0;
    for (std::size_t i = 0; i < others.size(); ++i) {
      const bool concrete = f.visit([&](const auto& x) { return x.may_contain(others[i]); });
      ASSERT_EQ(static_cast<bool>(out_absent[i]), concrete);
      single += concrete;
    }
    EXPECT_EQ(positives, single);
    // 1% target; 20,000 absent keys: far below 3% unless the filter is broken.
    EXPECT_LT(positives, others.size() * 3 / 100);
  }
}

TEST(AnyFilter, SerializeAndDeserializeAnyRoundTripEveryKind) {
  const auto keys = present_keys(2000);
  const auto probe = absent_keys(5000);
  for (const any_filter& f : one_of_each(keys)) {
    SCOPED_TRACE(to_string(f.kind()));
    const std::vector<std::byte> bytes = serialize(f);
    EXPECT_EQ(bytes, f.visit([](const auto& x) { return serialize(x); }));
    const any_filter back = deserialize_any(bytes);
    EXPECT_EQ(back.kind(), f.kind());
    EXPECT_EQ(serialize(back), bytes);
    EXPECT_EQ(answers(back, keys), answers(f, keys));
    EXPECT_EQ(answers(back, probe), answers(f, probe));
    EXPECT_EQ(back.stats().inserted, f.stats().inserted);
    EXPECT_EQ(back.stats().params.size(), f.stats().params.size());
  }
}

TEST(AnyFilter, SaveAndLoadAnyRoundTripEveryKind) {
  const support::temp_dir dir;
  const auto keys = present_keys(1500);
  for (const any_filter& f : one_of_each(keys)) {
    SCOPED_TRACE(to_string(f.kind()));
    const auto path = dir / (std::string(to_string(f.kind())) + ".bloom");
    save(f, path);
    const any_filter back = load_any(path);
    EXPECT_EQ(serialize(back), serialize(f));
    EXPECT_EQ(back.kind(), f.kind());
  }
}

TEST(AnyFilter, VisitAndGetIfReachTheConcreteFilter) {
  any_filter f = cuckoo_filter({.capacity = 100, .fpr = 0.01});
  ASSERT_NE(f.get_if<cuckoo_filter>(), nullptr);
  EXPECT_EQ(f.get_if<bloom_filter>(), nullptr);
  EXPECT_TRUE(f.get_if<cuckoo_filter>()->insert(std::string_view("a")));
  EXPECT_TRUE(f.may_contain(std::string_view("a")));
  const bool removed = f.visit([](auto& x) {
    if constexpr (removable_filter<std::remove_cvref_t<decltype(x)>>) {
      return static_cast<bool>(x.remove(std::string_view("a")));
    } else {
      return false;
    }
  });
  EXPECT_TRUE(removed);
  EXPECT_FALSE(f.may_contain(std::string_view("a")));
}

TEST(AnyFilter, BytesThatAreNoFilterAreAFormatError) {
  const std::vector<std::byte> empty;
  EXPECT_THROW((void)deserialize_any(empty), format_error);
  std::vector<std::byte> junk(300, std::byte{0x42});
  EXPECT_THROW((void)deserialize_any(junk), format_error);

  // A real file with its kind field changed to an unknown tag, checksum made right again: still a
  // format_error (the kind table is checked), never a crash.
  std::vector<std::byte> bytes = serialize(bloom_filter({.capacity = 10, .fpr = 0.01}));
  detail::put<std::uint32_t>(bytes.data() + detail::offs::kind, 9);
  detail::reseal(bytes);
  try {
    (void)deserialize_any(bytes);
    FAIL() << "no exception";
  } catch (const format_error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown filter kind 9"), std::string::npos) << e.what();
  }
  // A flipped payload byte is a checksum error for every kind.
  for (const any_filter& f : one_of_each(present_keys(200))) {
    std::vector<std::byte> b = serialize(f);
    b.back() ^= std::byte{1};
    EXPECT_THROW((void)deserialize_any(b), format_error) << to_string(f.kind());
    b.resize(b.size() - 1);
    EXPECT_THROW((void)deserialize_any(b), format_error) << to_string(f.kind());
  }
}

TEST(AnyFilter, LoadAnyNamesTheFileAndSeparatesIoErrors) {
  const support::temp_dir dir;
  EXPECT_THROW((void)load_any(dir / "missing.bloom"), std::system_error);
  const auto junk = dir / "junk.bloom";
  const std::vector<std::byte> garbage(200, std::byte{7});
  write_file_atomically(junk, garbage);
  try {
    (void)load_any(junk);
    FAIL() << "no exception";
  } catch (const format_error& e) {
    EXPECT_NE(std::string(e.what()).find("junk.bloom"), std::string::npos) << e.what();
  }
}

TEST(AnyFilter, WithFilterTypeFindsEachKindsTypeAndNothingForOtherValues) {
  for (const kind_info& row : filter_kinds) {
    int calls = 0;
    filter_kind seen{};
    EXPECT_TRUE(with_filter_type(row.kind, [&]<class F>() {
      ++calls;
      seen = F::kind;
    }));
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(seen, row.kind);
  }
  std::uint32_t past_last = 0;
  for (const kind_info& row : filter_kinds) {
    past_last = std::max(past_last, static_cast<std::uint32_t>(row.kind) + 1);
  }
  int calls = 0;
  for (const std::uint32_t tag : {0U, past_last, 0xffffffffU}) {
    EXPECT_FALSE(with_filter_type(static_cast<filter_kind>(tag), [&]<class F>() { ++calls; }));
  }
  EXPECT_EQ(calls, 0);
}

TEST(MappedAnyFilter, EveryKindMapsAndAnswersAsTheLoadedFilter) {
  const support::temp_dir dir;
  const auto keys = present_keys(3000);
  const auto others = absent_keys(10000);
  for (const any_filter& f : one_of_each(keys)) {
    SCOPED_TRACE(to_string(f.kind()));
    const auto path = dir / (std::string(to_string(f.kind())) + ".bloom");
    save(f, path);
    const any_filter loaded = load_any(path);
    const mapped_any_filter mapped = map_file(path);
    EXPECT_EQ(mapped.kind(), f.kind());
    EXPECT_EQ(mapped.stats().kind, f.kind());
    EXPECT_EQ(mapped.stats().inserted, loaded.stats().inserted);
    EXPECT_EQ(mapped.size_in_bytes(), loaded.size_in_bytes());
    for (const auto k : keys) ASSERT_TRUE(mapped.may_contain(k));
    EXPECT_EQ(answers(loaded, others), [&] {
      std::vector<bool> out;
      for (const auto k : others) out.push_back(mapped.may_contain(k));
      return out;
    }());
    std::vector<char> batch(others.size());
    const std::size_t positives = mapped.may_contain_many(others, batch);
    std::size_t expected = 0;
    for (std::size_t i = 0; i < others.size(); ++i) {
      ASSERT_EQ(static_cast<bool>(batch[i]), loaded.may_contain(others[i]));
      expected += batch[i] != 0;
    }
    EXPECT_EQ(positives, expected);
    // visit() reaches the kind's own view.
    const bool same_view = mapped.visit([&]<class V>(const V& v) {
      return loaded.visit([&]<class F>(const F&) { return std::same_as<V, typename F::view>; }) &&
             v.may_contain(keys.front());
    });
    EXPECT_TRUE(same_view);
  }
}

TEST(MappedAnyFilter, GetIfGivesTheViewOfTheFilesKindOnly) {
  const support::temp_dir dir;
  const auto path = dir / "c.bloom";
  cuckoo_filter c({.capacity = 100, .fpr = 0.01});
  ASSERT_TRUE(c.insert(std::string_view("x")));
  save(c, path);
  const mapped_any_filter m = map_file(path);
  ASSERT_NE(m.get_if<cuckoo_filter>(), nullptr);
  EXPECT_EQ(m.get_if<bloom_filter>(), nullptr);
  EXPECT_TRUE(m.get_if<cuckoo_filter>()->may_contain(std::string_view("x")));
  // The typed map_file is still there beside the any-kind one.
  EXPECT_TRUE(map_file<cuckoo_filter>(path)->may_contain(std::string_view("x")));
  // A move keeps the mapping (the view points into it).
  const mapped_any_filter moved = std::move(const_cast<mapped_any_filter&>(m));
  EXPECT_TRUE(moved.may_contain(std::string_view("x")));
}

TEST(MappedAnyFilter, ForeignAndDamagedFilesAreFormatErrorsNamingTheFile) {
  const support::temp_dir dir;
  const auto expect_named_error = [](const std::filesystem::path& path, const std::string& what) {
    try {
      (void)map_file(path);
      FAIL() << "no exception for " << path;
    } catch (const format_error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(path.filename().string()), std::string::npos) << msg;
      EXPECT_NE(msg.find(what), std::string::npos) << msg;
    }
  };
  const auto junk = dir / "junk.bin";
  write_file_atomically(junk, std::vector<std::byte>(300, std::byte{0x42}));
  expect_named_error(junk, "bad magic");
  const auto empty = dir / "empty.bin";
  write_file_atomically(empty, std::vector<std::byte>{});
  expect_named_error(empty, "empty");

  const auto damaged = dir / "damaged.bloom";
  for (const any_filter& f : one_of_each(present_keys(200))) {
    SCOPED_TRACE(to_string(f.kind()));
    std::vector<std::byte> bytes = serialize(f);
    bytes[bytes.size() / 2] ^= std::byte{0x10};
    write_file_atomically(damaged, bytes);
    expect_named_error(damaged, "checksum mismatch");
    bytes.resize(bytes.size() - 64);
    write_file_atomically(damaged, bytes);
    expect_named_error(damaged, "truncated");
  }
  EXPECT_THROW((void)map_file(dir / "missing.bloom"), std::system_error);
  EXPECT_THROW((void)map_file(dir.path()), std::system_error);
}

TEST(InspectFile, DescribesEveryKindsFileFromItsHeaderAlone) {
  const support::temp_dir dir;
  for (const any_filter& f : one_of_each(present_keys(2000))) {
    SCOPED_TRACE(to_string(f.kind()));
    const auto path = dir / (std::string(to_string(f.kind())) + ".bloom");
    save(f, path);
    const std::vector<std::byte> bytes = serialize(f);
    const image_info info = inspect_file(path);
    EXPECT_EQ(info.kind, f.kind());
    EXPECT_EQ(info.version, format_version);
    EXPECT_TRUE(info.hash == f.visit([](const auto& g) { return g.hash(); }));
    EXPECT_EQ(info.algorithm, f.stats().hash);
    EXPECT_EQ(info.keyed, f.stats().keyed);
    EXPECT_EQ(info.element_count, f.stats().inserted);
    EXPECT_EQ(info.file_size, bytes.size());
    EXPECT_EQ(info.payload_offset + info.payload_size, info.file_size);
    EXPECT_EQ(info.payload_offset % 64, 0U);
    EXPECT_LE(info.header_size + info.params_size, info.payload_offset);
    EXPECT_EQ(info.payload_size,
              f.visit([](const auto& g) { return serialized_payload(g).size(); }));
    // The same description as the bytes in memory give.
    const image_info from_bytes = inspect_prefix(bytes);
    EXPECT_EQ(from_bytes.kind, info.kind);
    EXPECT_EQ(from_bytes.payload_offset, info.payload_offset);
    EXPECT_EQ(from_bytes.params_size, info.params_size);
  }
}

TEST(InspectFile, ReadsNoPayloadButRefusesWhatIsNoFilterOrCut) {
  const support::temp_dir dir;
  const auto path = dir / "f.bloom";
  bloom_filter b({.capacity = 5000, .fpr = 0.01});
  b.insert(std::string_view("x"));
  std::vector<std::byte> bytes = serialize(b);
  // A damaged payload is not seen (the checksum needs the payload): load and map_file see it.
  bytes.back() ^= std::byte{1};
  write_file_atomically(path, bytes);
  EXPECT_EQ(inspect_file(path).kind, filter_kind::bloom);
  EXPECT_THROW((void)load_any(path), format_error);
  const auto expect_named_error = [&](const std::string& what) {
    try {
      (void)inspect_file(path);
      FAIL() << "no exception";
    } catch (const format_error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("f.bloom"), std::string::npos) << msg;
      EXPECT_NE(msg.find(what), std::string::npos) << msg;
    }
  };
  bytes.resize(bytes.size() - 8);  // the size the header declares is no longer the file's
  write_file_atomically(path, bytes);
  expect_named_error("truncated");
  bytes.resize(40);
  write_file_atomically(path, bytes);
  expect_named_error("truncated");
  write_file_atomically(path, std::vector<std::byte>(4096, std::byte{0x42}));
  expect_named_error("bad magic");
  write_file_atomically(path, std::vector<std::byte>{});
  expect_named_error("empty");
  EXPECT_THROW((void)inspect_file(dir / "missing.bloom"), std::system_error);
  EXPECT_THROW((void)inspect_file(dir.path()), std::system_error);
}

TEST(FileLayer, SaveNeverWidensTheReplacedFilesPermissions) {
  const support::temp_dir dir;
  const auto path = dir / "secret.bloom";
  const bloom_filter f({.capacity = 10, .fpr = 0.01}, hasher(random_key()));
  save(f, path);
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  save(f, path);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(load<bloom_filter>(path), f);
}

// The static filter that build(keys, 0.01) wrote before any width: 8-bit fingerprints in three
// slots, its target 0.01. Today a rate of 1% builds 7 bits in four slots, so the explicit 8-bit
// width builds it, and only the target rate the file records (2^-8 for an explicit width) is set
// back to 0.01, and the checksum recomputed.
std::vector<std::byte> static_8bit_at_one_percent(const std::vector<std::uint64_t>& keys,
                                                  const hasher& h) {
  auto bytes = serialize(static_filter::build(keys, fingerprint_width::bits8, h));
  EXPECT_EQ(test::field_at<double>(bytes, 168), 1.0 / 256);  // the block's target rate
  test::rewrite_field(bytes, 168, 0.01);
  return bytes;
}

// The bytes every kind serializes to for fixed inputs, recorded from format version 1 as written
// before filters shared one interface (commit 599b414): the same inputs must give bit-identical
// files forever, so files written by any earlier build keep loading and answering the same.
TEST(FileFormat, EveryKindIsBitIdenticalToWhatEarlierBuildsWrote) {
  struct golden {
    const char* name;
    std::size_t bytes;
    std::uint64_t digest;
  };
  const golden expected[] = {
      {"bloom", 3840, 0x1148b9e4c451005dULL},
      {"blocked keyed", 3968, 0xfb406dc79bc1714dULL},
      {"counting 8-bit", 28992, 0x5c3358a9a23c1215ULL},
      {"cuckoo", 3904, 0x2efa08b6a7030dcfULL},
      {"cuckoo plain", 6208, 0xb6294fa65da0d7fdULL},
      {"scalable", 6592, 0xcea22e75817bf4d5ULL},
      {"static 8-bit", 4288, 0x6cf3c562f5c45a02ULL},
      {"static 16-bit", 8384, 0xe4e1c5a5fb26965fULL},
  };
  std::vector<std::uint64_t> keys;
  for (std::uint64_t i = 0; i < 3000; ++i) keys.push_back(i * 0x9e3779b97f4a7c15ULL);
  secret_key key;
  for (std::size_t i = 0; i < key.bytes.size(); ++i)
    key.bytes[i] = static_cast<std::uint8_t>(i * 7 + 1);
  const target t{.capacity = 3000, .fpr = 0.01};
  // Those builds hashed integer keys as their 8 bytes: today that is the legacy seeded algorithm.
  const auto old = [](std::uint64_t seed) { return hasher(seed, hash_algorithm::xxh3_128_seeded); };
  bloom_filter b(t, old(default_seed));
  blocked_bloom_filter bl(t, hasher(key));
  counting_bloom_filter c(t, counting_options{.counter_bits = 8}, old(default_seed));
  cuckoo_filter k(t, old(default_seed));
  cuckoo_filter k2(cuckoo_parameters{.fingerprint_bits = 12, .buckets = 1000, .semi_sorted = false},
                   old(7));
  scalable_bloom_filter s({.capacity = 500, .fpr = 0.01}, old(default_seed));
  for (const auto x : keys) {
    b.insert(x);
    bl.insert(x);
    c.insert(x);
    ASSERT_TRUE(k.insert(x));
    ASSERT_TRUE(k2.insert(x));
    (void)s.insert(x);
  }
  for (std::size_t i = 0; i < 100; ++i) {
    ASSERT_TRUE(c.remove(keys[i]));
    ASSERT_TRUE(k.remove(keys[i]));
  }
  const std::vector<std::byte> files[] = {
      serialize(b),
      serialize(bl),
      serialize(c),
      serialize(k),
      serialize(k2),
      serialize(s),
      static_8bit_at_one_percent(keys, old(default_seed)),
      serialize(static_filter::build(keys, fingerprint_width::bits16, old(99)))};
  for (std::size_t i = 0; i < std::size(expected); ++i) {
    SCOPED_TRACE(expected[i].name);
    EXPECT_EQ(files[i].size(), expected[i].bytes);
    EXPECT_EQ(XXH3_64bits(files[i].data(), files[i].size()), expected[i].digest);
    EXPECT_EQ(serialize(deserialize_any(files[i])), files[i]);
  }
}

}  // namespace
