// Guava's BloomFilter (interop/guava.hpp) against facts from the real Guava 31.1: hashes and
// streams it wrote (printed by a Java program, hex below), its sizing, and the stream reader's
// refusals. tests/guava/ compares every funnel and both strategies probe by probe with Guava
// running beside; this file keeps the facts that need no JVM.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <bloomery/concepts.hpp>
#include <bloomery/interop/guava.hpp>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace guava = bloomery::interop::guava;

static_assert(bloomery::takes_inserts<guava::bloom_filter, std::string_view>);
static_assert(bloomery::takes_inserts<guava::bloom_filter, std::u16string_view>);
static_assert(bloomery::takes_inserts<guava::bloom_filter, std::int64_t>);
// Not a row of the kind table: no bloomery file image.
static_assert(!bloomery::membership_filter<guava::bloom_filter>);

namespace {

std::vector<std::byte> from_hex(std::string_view hex) {
  std::vector<std::byte> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::byte>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

std::string to_hex(std::span<const std::byte> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s;
  for (const std::byte b : bytes) {
    s.push_back(digits[static_cast<unsigned>(b) >> 4]);
    s.push_back(digits[static_cast<unsigned>(b) & 15]);
  }
  return s;
}

// Hashing.murmur3_128().hashString(s, UTF_8).toString(): h1's bytes little-endian, then h2's.
std::string guava_hash_text(std::string_view s) {
  const guava::hash128 h = guava::murmur3_128(std::as_bytes(std::span(s.data(), s.size())));
  std::vector<std::byte> bytes;
  for (const std::uint64_t half : {h.h1, h.h2}) {
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<std::byte>(half >> (8 * i) & 0xff));
  }
  return to_hex(bytes);
}

TEST(GuavaHash, MatchesGuavasMurmur3_128) {
  // Printed by Guava 31.1; lengths 0, 1, 5, 16 (one block), 17 (block + tail), 43.
  EXPECT_EQ(guava_hash_text(""), "00000000000000000000000000000000");
  EXPECT_EQ(guava_hash_text("a"), "897859f6655555855a890e51483ab5e6");
  EXPECT_EQ(guava_hash_text("hello"), "029bbd41b3a7d8cb191dae486a901e5b");
  EXPECT_EQ(guava_hash_text("0123456789abcdef"), "a7d14acf946de04bda08a7635c5bc387");
  EXPECT_EQ(guava_hash_text("0123456789abcdefg"), "def945aa2d61328eee72c306c2f40008");
  EXPECT_EQ(guava_hash_text("The quick brown fox jumps over the lazy dog"),
            "6c1b07bc7bbc4be347939ac4a93c437a");
}

TEST(GuavaHash, Utf8ToUtf16) {
  std::string units;
  guava::utf8_to_utf16le("k\xc3\xa9y\xf0\x9f\x94\x91", units);  // "kéy" and U+1F511
  EXPECT_EQ(to_hex(std::as_bytes(std::span(units.data(), units.size()))), "6b00e90079003dd811dd");
  for (const std::string_view bad : {"\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80",
                                     "\xf4\x90\x80\x80", "\xc3", "\xf0\x9f\x94", "a\xffz"}) {
    EXPECT_THROW(guava::utf8_to_utf16le(bad, units), std::invalid_argument)
        << to_hex(std::as_bytes(std::span(bad.data(), bad.size())));
  }
}

TEST(GuavaFunnel, NamesRoundTrip) {
  for (const auto f :
       {guava::funnel::string, guava::funnel::chars, guava::funnel::int64, guava::funnel::int32}) {
    EXPECT_EQ(guava::parse_funnel(guava::to_string(f)), f);
  }
  EXPECT_FALSE(guava::parse_funnel("bytes").has_value());
}

// Streams Guava 31.1 wrote for create(funnel, 20, 0.05) (MITZ_32 through the package-private
// factory) after the puts named.
constexpr std::string_view fruit_mitz32 = "0004000000022101040c000400002028202400002080";
constexpr std::string_view fruit_mitz64 = "01040000000202100000080402812080048100401020";
constexpr std::string_view longs_mitz64 = "0104000000020000400400010001000c000000120000";
constexpr std::string_view chars_mitz64 = "01040000000200001000000000000002000004000008";
constexpr std::string_view fruits[] = {"apple", "banana", "cherry", "durian"};

TEST(GuavaFilter, WritesGuavasBytes) {
  guava::bloom_filter f(20, 0.05);
  for (const std::string_view k : fruits) EXPECT_EQ(f.insert(k), bloomery::insert_result::inserted);
  EXPECT_EQ(to_hex(f.to_bytes()), fruit_mitz64);
  EXPECT_EQ(f.insert("apple"), bloomery::insert_result::already_present);

  guava::bloom_filter longs(20, 0.05, guava::funnel::int64);
  (void)longs.insert(std::int64_t{-1});
  (void)longs.insert(std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(to_hex(longs.to_bytes()), longs_mitz64);

  guava::bloom_filter chars(20, 0.05, guava::funnel::chars);
  (void)chars.insert("k\xc3\xa9y\xf0\x9f\x94\x91");
  EXPECT_EQ(to_hex(chars.to_bytes()), chars_mitz64);
  guava::bloom_filter utf16(20, 0.05, guava::funnel::chars);
  (void)utf16.insert(std::u16string_view(u"k\u00e9y\U0001F511"));
  EXPECT_EQ(utf16, chars);
}

TEST(GuavaFilter, ReadsBothStrategies) {
  for (const std::string_view hex : {fruit_mitz32, fruit_mitz64}) {
    const auto f = guava::bloom_filter::from_bytes(from_hex(hex), guava::funnel::string);
    EXPECT_EQ(f.hashes(), 4u);
    EXPECT_EQ(f.bits(), 128u);
    for (const std::string_view k : fruits) EXPECT_TRUE(f.may_contain(k)) << hex << " " << k;
    EXPECT_EQ(to_hex(f.to_bytes()), hex);
  }
  const auto f = guava::bloom_filter::from_bytes(from_hex(fruit_mitz64), guava::funnel::string);
  EXPECT_EQ(f.hash_strategy(), guava::strategy::murmur128_mitz_64);
  // Guava printed approximateElementCount 4 and expectedFpp 1.885928213596344E-4.
  EXPECT_EQ(f.approximate_count(), 4u);
  EXPECT_NEAR(f.estimated_fpr(), 1.885928213596344e-4, 1e-18);
  EXPECT_EQ(guava::bloom_filter::from_bytes(from_hex(fruit_mitz32), guava::funnel::string)
                .hash_strategy(),
            guava::strategy::murmur128_mitz_32);
}

TEST(GuavaFilter, KeysMustSuitTheFunnel) {
  guava::bloom_filter text(10, 0.01);
  EXPECT_THROW((void)text.may_contain(std::int64_t{1}), std::invalid_argument);
  EXPECT_THROW((void)text.may_contain(std::u16string_view(u"x")), std::invalid_argument);
  guava::bloom_filter ints(10, 0.01, guava::funnel::int32);
  EXPECT_THROW((void)ints.insert(std::int64_t{1} << 31), std::invalid_argument);
  EXPECT_THROW((void)ints.may_contain("1"), std::invalid_argument);
  EXPECT_NO_THROW((void)ints.insert(std::int64_t{std::numeric_limits<std::int32_t>::min()}));
  guava::bloom_filter chars(10, 0.01, guava::funnel::chars);
  EXPECT_THROW((void)chars.insert("\xff"), std::invalid_argument);
}

TEST(GuavaSizing, AsGuava31) {
  // optimalNumOfBits(1000, 0.01) = 9585 -> 150 words; k = round(9585 / 1000 * ln 2) = 7.
  EXPECT_EQ(guava::guava_shape(1000, 0.01).words, 150u);
  EXPECT_EQ(guava::guava_shape(1000, 0.01).hashes, 7u);
  EXPECT_EQ(guava::guava_shape(0, 0.03).words, guava::guava_shape(1, 0.03).words);
  EXPECT_EQ(guava::guava_shape(20, 0.05).hashes, 4u);
  for (const double p : {0.0, 1.0, -0.5, std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_THROW((void)guava::guava_shape(100, p), std::invalid_argument) << p;
  }
  EXPECT_THROW((void)guava::guava_shape(1, 0.99), std::invalid_argument);    // 0 bits
  EXPECT_THROW((void)guava::guava_shape(10, 1e-80), std::invalid_argument);  // k > 255
  EXPECT_THROW((void)guava::guava_shape(std::uint64_t{1} << 40, 0.01), std::invalid_argument);
  EXPECT_THROW((void)guava::guava_shape(std::numeric_limits<std::uint64_t>::max(), 0.01),
               std::invalid_argument);
}

void expect_refused(const std::vector<std::byte>& stream, std::string_view part) {
  try {
    (void)guava::bloom_filter::from_bytes(stream, guava::funnel::string);
    ADD_FAILURE() << "accepted " << to_hex(stream);
  } catch (const bloomery::format_error& e) {
    EXPECT_NE(std::string(e.what()).find("bloomery: Guava stream: "), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(GuavaStream, RefusesDamage) {
  const std::vector<std::byte> good = from_hex(fruit_mitz64);
  expect_refused({}, "truncated");
  for (std::size_t n = 1; n < good.size(); ++n) {
    expect_refused({good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n)}, "truncated");
  }
  auto trailing = good;
  trailing.push_back(std::byte{0});
  expect_refused(trailing, "after its end");
  for (const std::uint8_t s : {2, 0x7f, 0x80, 0xff}) {
    auto bad = good;
    bad[0] = std::byte{s};
    expect_refused(bad, "strategy");
  }
  auto no_hashes = good;
  no_hashes[1] = std::byte{0};
  expect_refused(no_hashes, "0 hash functions");
  for (const std::string_view words : {"00000000", "ffffffff", "80000000", "7fffffff"}) {
    expect_refused(from_hex(std::string("0104") + std::string(words)), "word");
  }
}

// Whatever a stream holds, reading it never crashes or allocates beyond its own size, and a
// stream read back is the same stream.
RC_GTEST_PROP(GuavaStream, AnyBytesReadOrRefused, (std::vector<std::uint8_t> raw)) {
  std::vector<std::byte> bytes(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) bytes[i] = static_cast<std::byte>(raw[i]);
  try {
    const auto f = guava::bloom_filter::from_bytes(bytes, guava::funnel::string);
    RC_ASSERT(f.to_bytes() == bytes);
  } catch (const bloomery::format_error&) {
  }
}

// No false negative for any funnel, before and after a trip through the stream.
RC_GTEST_PROP(GuavaFilter, NoFalseNegatives,
              (std::vector<std::string> text, std::vector<std::int64_t> numbers)) {
  guava::bloom_filter s(text.size(), 0.01);
  guava::bloom_filter l(numbers.size(), 0.01, guava::funnel::int64);
  guava::bloom_filter i(numbers.size(), 0.01, guava::funnel::int32);
  for (const auto& k : text) (void)s.insert(k);
  for (const auto k : numbers) {
    (void)l.insert(k);
    (void)i.insert(static_cast<std::int64_t>(static_cast<std::int32_t>(k)));
  }
  const auto s2 = guava::bloom_filter::from_bytes(s.to_bytes(), guava::funnel::string);
  const auto l2 = guava::bloom_filter::from_bytes(l.to_bytes(), guava::funnel::int64);
  const auto i2 = guava::bloom_filter::from_bytes(i.to_bytes(), guava::funnel::int32);
  for (const auto& k : text) RC_ASSERT(s.may_contain(k) && s2.may_contain(k));
  for (const auto k : numbers) {
    RC_ASSERT(l.may_contain(k) && l2.may_contain(k));
    const auto k32 = static_cast<std::int64_t>(static_cast<std::int32_t>(k));
    RC_ASSERT(i.may_contain(k32) && i2.may_contain(k32));
  }
}

}  // namespace
