// Fuzz target: guava::bloom_filter::from_bytes, the reader of Guava's BloomFilter.writeTo
// streams, against an independent reading of the format (interop/guava.hpp's header comment), on
// the input and again on a copy whose word count is made to fit its size, so that mutations reach
// the checks behind it. Whatever reads must match the model field for field, write back exactly
// its bytes, answer as the strategy's bit rule says for every funnel, and keep every key it took
// through an insert and another trip; whatever fails must fail with format_error.
#include <bloomery/interop/guava.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ops.hpp"

namespace {

namespace guava = bloomery::interop::guava;
using bytes = std::span<const std::uint8_t>;

// The stream as Guava lays it out, read without the library's reader.
struct model {
  std::uint8_t ordinal;
  std::uint32_t hashes;
  std::uint64_t words;
  bytes data;
};

std::uint64_t be(bytes b, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = v << 8 | b[i];
  return v;
}

// The fields of a stream Guava's readFrom accepts and that ends with its last word; nullopt
// otherwise.
std::optional<model> read_model(bytes in) {
  if (in.size() < 6 || in[0] > 1 || in[1] == 0) return std::nullopt;
  const std::uint64_t words = be(in.subspan(2), 4);
  if (words == 0 || words > 0x7fffffff || in.size() != 6 + 8 * words) return std::nullopt;
  return model{in[0], in[1], words, in.subspan(6)};
}

bool model_bit(const model& m, std::uint64_t bit) {
  // Word bit / 64 is big-endian: its bit (bit % 64) lives in byte 7 - (bit % 64) / 8.
  return (m.data[bit / 64 * 8 + 7 - bit % 64 / 8] >> (bit % 8) & 1) != 0;
}

// The strategies' rules, written from the format's description.
bool model_contains(const model& m, std::span<const std::byte> funneled) {
  const guava::hash128 h = guava::murmur3_128(funneled);
  const std::uint64_t bits = m.words * 64;
  for (std::uint32_t j = 0; j < m.hashes; ++j) {
    std::uint64_t bit;
    if (m.ordinal == 1) {
      bit = ((h.h1 + j * h.h2) & 0x7fffffffffffffffULL) % bits;
    } else {
      const std::int64_t a = static_cast<std::int32_t>(h.h1);
      const std::int64_t b = static_cast<std::int32_t>(h.h1 >> 32);
      // The int sum a + (j + 1) * b wraps at 32 bits; negative values are complemented.
      auto c = static_cast<std::int32_t>(static_cast<std::uint32_t>(a + (j + 1) * b));
      if (c < 0) c = ~c;
      bit = static_cast<std::uint64_t>(c) % bits;
    }
    if (!model_bit(m, bit)) return false;
  }
  return true;
}

void check_stream(bytes in) {
  const std::optional<model> m = read_model(in);
  std::optional<guava::bloom_filter> parsed;
  try {
    parsed.emplace(
        guava::bloom_filter::from_bytes(bloomery_fuzz::as_bytes(in), guava::funnel::string));
  } catch (const bloomery::format_error&) {
  }
  FUZZ_CHECK(parsed.has_value() == m.has_value());
  if (!parsed) return;
  guava::bloom_filter& f = *parsed;
  FUZZ_CHECK(static_cast<std::uint8_t>(f.hash_strategy()) == m->ordinal);
  FUZZ_CHECK(f.hashes() == m->hashes && f.bits() == m->words * 64);
  const std::vector<std::byte> out = f.to_bytes();
  FUZZ_CHECK(out.size() == in.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    FUZZ_CHECK(static_cast<std::uint8_t>(out[i]) == in[i]);
  FUZZ_CHECK(f.bits_set() <= f.bits());
  const double fpr = f.estimated_fpr();
  FUZZ_CHECK(fpr >= 0.0 && fpr <= 1.0);
  (void)f.approximate_count();

  // Keys: pieces of the input, through the string funnel (the bytes), and the same bytes read as
  // a long, an int and UTF-16 text, each through its funnel.
  const std::vector<bytes> keys = {bytes{}, in.first(std::min<std::size_t>(in.size(), 3)),
                                   in.last(std::min<std::size_t>(in.size(), 17)), in};
  for (const bytes k : keys) {
    FUZZ_CHECK(f.may_contain_funneled(bloomery_fuzz::as_bytes(k)) ==
               model_contains(*m, bloomery_fuzz::as_bytes(k)));
  }
  std::uint64_t word = 0;
  for (std::size_t i = 0; i < 8 && i < in.size(); ++i) word |= std::uint64_t{in[i]} << (8 * i);
  const auto as_long = static_cast<std::int64_t>(word);
  const auto as_int = static_cast<std::int64_t>(static_cast<std::int32_t>(word));
  const auto l = guava::bloom_filter::from_bytes(out, guava::funnel::int64);
  const auto i32 = guava::bloom_filter::from_bytes(out, guava::funnel::int32);
  std::uint8_t le[8];
  for (std::size_t i = 0; i < 8; ++i) le[i] = static_cast<std::uint8_t>(word >> (8 * i));
  FUZZ_CHECK(l.may_contain(as_long) == model_contains(*m, bloomery_fuzz::as_bytes(bytes(le, 8))));
  FUZZ_CHECK(i32.may_contain(as_int) == model_contains(*m, bloomery_fuzz::as_bytes(bytes(le, 4))));
  std::u16string text;
  for (std::size_t i = 0; i + 1 < in.size() && i < 32; i += 2) {
    text.push_back(static_cast<char16_t>(in[i] | in[i + 1] << 8));
  }
  const auto chars = guava::bloom_filter::from_bytes(out, guava::funnel::chars);
  FUZZ_CHECK(chars.may_contain(std::u16string_view(text)) ==
             model_contains(*m, bloomery_fuzz::as_bytes(in.first(text.size() * 2))));

  // An insert only sets bits: the key and every earlier positive stay positive, and the result
  // still round-trips.
  std::vector<bool> before;
  for (const bytes k : keys) before.push_back(f.may_contain_funneled(bloomery_fuzz::as_bytes(k)));
  const std::uint64_t set_before = f.bits_set();
  (void)f.insert_funneled(bloomery_fuzz::as_bytes(keys[1]));
  FUZZ_CHECK(f.may_contain_funneled(bloomery_fuzz::as_bytes(keys[1])) &&
             f.bits_set() >= set_before);
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (before[k]) FUZZ_CHECK(f.may_contain_funneled(bloomery_fuzz::as_bytes(keys[k])));
  }
  FUZZ_CHECK(guava::bloom_filter::from_bytes(f.to_bytes(), guava::funnel::string) == f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const bytes in(data, size);
  check_stream(in);
  // The same body with its word count made to fit what follows the header, and the strategy
  // and k bytes folded into the valid range, so that mutations of the words reach the reader.
  if (size >= 6) {
    std::vector<std::uint8_t> fitted(in.begin(), in.end());
    fitted.resize(6 + (size - 6) / 8 * 8);
    const std::uint64_t words = (fitted.size() - 6) / 8;
    fitted[0] &= 1;
    if (fitted[1] == 0) fitted[1] = 1;
    for (std::size_t i = 0; i < 4; ++i)
      fitted[2 + i] = static_cast<std::uint8_t>(words >> (8 * (3 - i)));
    check_stream(fitted);
  }
  return 0;
}
