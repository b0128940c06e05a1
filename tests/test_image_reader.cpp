// serialize_prefix / serialized_payload, inspect_prefix and image_reader: a filter written and read
// in pieces is the filter deserialize() reads from the whole image, with every check it makes.
#include <gtest/gtest.h>
#include <bloomery/bloomery.hpp>

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

using namespace bloomery;

namespace {

template <class F>
F filled(const std::vector<std::uint64_t>& keys) {
  if constexpr (std::is_same_v<F, static_filter>) {
    return static_filter::build(keys, 0.01);
  } else {
    // The scalable kinds at a quarter of the keys, so that they grow.
    constexpr bool scalable =
        std::is_same_v<F, scalable_bloom_filter> || std::is_same_v<F, scalable_cuckoo_filter>;
    F f({.capacity = scalable ? keys.size() / 4 : keys.size(), .fpr = 0.01});
    for (const auto k : keys) {
      if (f.insert(k) == insert_result::full) throw std::logic_error("filter is full");
    }
    return f;
  }
}

template <class F>
F read_in_pieces(std::span<const std::byte> prefix, std::span<const std::byte> payload,
                 std::size_t piece) {
  image_reader<F> reader(prefix);
  EXPECT_EQ(reader.payload_size(), payload.size());
  for (std::size_t at = 0; at < payload.size(); at += piece) {
    EXPECT_FALSE(reader.complete());
    reader.append(payload.subspan(at, std::min(piece, payload.size() - at)));
    EXPECT_EQ(reader.received().size(), std::min(at + piece, payload.size()));
  }
  EXPECT_TRUE(reader.complete());
  return reader.finish();
}

std::string format_error_of(auto&& fn) {
  return test::message_of<format_error>(fn);
}

}  // namespace

template <class F>
class ImageReader : public ::testing::Test {};
using all_kinds =
    ::testing::Types<bloom_filter, blocked_bloom_filter, counting_bloom_filter, cuckoo_filter,
                     scalable_bloom_filter, static_filter, scalable_cuckoo_filter>;
TYPED_TEST_SUITE(ImageReader, all_kinds);

TYPED_TEST(ImageReader, PrefixAndPayloadAreTheSerializedImage) {
  const TypeParam f = filled<TypeParam>(support::present_keys(2000));
  const std::vector<std::byte> whole = serialize(f);
  const std::vector<std::byte> prefix = serialize_prefix(f);
  const std::span<const std::byte> payload = serialized_payload(f);
  ASSERT_EQ(prefix.size() + payload.size(), whole.size());
  EXPECT_EQ(std::memcmp(whole.data(), prefix.data(), prefix.size()), 0);
  EXPECT_EQ(std::memcmp(whole.data() + prefix.size(), payload.data(), payload.size()), 0);

  const image_info info = inspect_prefix(prefix);
  EXPECT_EQ(info.kind, TypeParam::kind);
  EXPECT_EQ(info.element_count, detail::parse(whole).element_count);
  EXPECT_EQ(info.payload_offset, prefix.size());
  EXPECT_EQ(info.payload_size, payload.size());
  EXPECT_EQ(info.file_size, whole.size());
  EXPECT_EQ(info.hash, f.hash());
  // The whole image can be inspected too: only its prefix is read.
  EXPECT_EQ(inspect_prefix(whole).payload_size, payload.size());
}

TYPED_TEST(ImageReader, ReadInPiecesIsWhatDeserializeReads) {
  const auto keys = support::present_keys(2000);
  const TypeParam f = filled<TypeParam>(keys);
  const std::vector<std::byte> prefix = serialize_prefix(f);
  const std::span<const std::byte> payload = serialized_payload(f);
  for (const std::size_t piece :
       {std::size_t{1}, std::size_t{7}, std::size_t{4096}, payload.size()}) {
    SCOPED_TRACE(piece);
    const TypeParam g = read_in_pieces<TypeParam>(prefix, payload, piece);
    EXPECT_EQ(g, f);
    EXPECT_EQ(serialize(g), serialize(f));
    for (const auto k : keys) ASSERT_TRUE(g.may_contain(k));
  }
}

TYPED_TEST(ImageReader, DamageIsRejectedAsDeserializeRejectsIt) {
  const TypeParam f = filled<TypeParam>(support::present_keys(500));
  const std::vector<std::byte> prefix = serialize_prefix(f);
  const std::vector<std::byte> payload(serialized_payload(f).begin(), serialized_payload(f).end());
  // Every byte of the prefix flipped: refused when the prefix arrives, or at the end by the
  // checksum (a flipped checksum or element count is only known wrong then).
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    std::vector<std::byte> bad = prefix;
    bad[i] ^= std::byte{0x10};
    EXPECT_THROW((read_in_pieces<TypeParam>(bad, payload, 4096)), format_error) << "byte " << i;
  }
  // Payload bytes flipped: the checksum.
  for (const std::size_t i : {std::size_t{0}, payload.size() / 2, payload.size() - 1}) {
    std::vector<std::byte> bad = payload;
    bad[i] ^= std::byte{0x01};
    EXPECT_NE(format_error_of([&] {
                read_in_pieces<TypeParam>(prefix, bad, 4096);
              }).find("checksum mismatch"),
              std::string::npos);
  }
  // Too little payload, too much, or a prefix cut short.
  image_reader<TypeParam> short_one(prefix);
  short_one.append(std::span(payload).first(payload.size() - 1));
  EXPECT_NE(format_error_of([&] { (void)short_one.finish(); }).find("truncated"),
            std::string::npos);
  image_reader<TypeParam> long_one(prefix);
  long_one.append(payload);
  const std::byte extra{0};
  EXPECT_NE(format_error_of([&] { long_one.append(std::span(&extra, 1)); }).find("more payload"),
            std::string::npos);
  EXPECT_NE(format_error_of([&] {
              image_reader<TypeParam>(std::span(prefix).first(prefix.size() - 1));
            }).find("ends before its payload"),
            std::string::npos);
  EXPECT_NE(format_error_of([&] {
              (void)inspect_prefix(std::span(prefix).first(100));
            }).find("shorter than the 128-byte header"),
            std::string::npos);
}

TEST(ImageReaderLimits, AnotherKindOrAnAbsurdPayloadIsRefusedBeforeAllocating) {
  const bloom_filter f({.capacity = 100, .fpr = 0.01});
  const std::vector<std::byte> prefix = serialize_prefix(f);
  EXPECT_NE(format_error_of([&] {
              image_reader<cuckoo_filter>{prefix};
            }).find("holds a bloom filter, not a cuckoo filter"),
            std::string::npos);
  // A header that declares 2^61 payload bytes, its sizes consistent: refused as too large, not
  // attempted (the checksum, which would also fail, is only known at the end).
  std::vector<std::byte> forged = prefix;
  const std::uint64_t payload = std::uint64_t{1} << 61;
  detail::put<std::uint64_t>(forged.data() + detail::offs::payload_size, payload);
  detail::put<std::uint64_t>(forged.data() + detail::offs::file_size, prefix.size() + payload);
  EXPECT_EQ(inspect_prefix(forged).payload_size, payload);
  EXPECT_NE(format_error_of([&] { image_reader<bloom_filter>{forged}; }).find("too large"),
            std::string::npos);
}
