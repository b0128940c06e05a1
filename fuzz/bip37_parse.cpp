// Fuzz target: bip37_filter::deserialize, the parser of BIP37 `filterload` bodies, against an
// independent reading of the format (bip37.hpp's header comment), on the input and again on a
// copy whose length prefix is made to fit its size, so that mutations reach the checks of
// nHashFuncs and nFlags. Whatever parses must match the model field for field, serialize back to
// exactly its bytes, answer queries as the BIP's bit rule says (single and batched alike), and
// keep its promises through an insert and a clear; whatever fails must fail with format_error.
#include <algorithm>
#include <bloomery/bip37.hpp>
#include <bloomery/hash.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "ops.hpp"

namespace {

using namespace bloomery;
using bytes = std::span<const std::uint8_t>;

// The body as the BIP lays it out, read without the library's parser.
struct model {
  std::uint32_t filter_bytes;
  std::uint32_t hash_funcs;
  std::uint32_t tweak;
  std::uint8_t flags;
  bytes data;
};

std::uint32_t le32(bytes b) {
  return std::uint32_t{b[0]} | std::uint32_t{b[1]} << 8 | std::uint32_t{b[2]} << 16 |
         std::uint32_t{b[3]} << 24;
}

// The compact size at the front of `in`: its value and width, if `in` holds it whole.
std::optional<std::pair<std::uint64_t, std::size_t>> compact_size(bytes in) {
  if (in.empty()) return std::nullopt;
  if (in[0] < 0xfd) return std::pair{std::uint64_t{in[0]}, std::size_t{1}};
  const std::size_t width = in[0] == 0xfd ? 3 : in[0] == 0xfe ? 5 : 9;
  if (in.size() < width) return std::nullopt;
  std::uint64_t v = 0;
  for (std::size_t i = width - 1; i >= 1; --i) v = v << 8 | in[i];
  return std::pair{v, width};
}

// The fields of a valid body, or nullopt for one the BIP (with this library's stricter nFlags)
// refuses: a truncated length, a non-canonical one, over 36,000 filter bytes, any size but the
// exact one, over 50 hash functions, flags above 2.
std::optional<model> read_model(bytes in) {
  const auto cs = compact_size(in);
  if (!cs) return std::nullopt;
  const auto [length, width] = *cs;
  const std::uint64_t smallest = width == 1   ? 0
                                 : width == 3 ? 0xfd
                                 : width == 5 ? 0x10000
                                              : 1ull << 32;
  if (length < smallest || length > 36'000) return std::nullopt;
  if (in.size() != width + length + 9) return std::nullopt;
  const bytes tail = in.subspan(width + length);
  const model m{static_cast<std::uint32_t>(length), le32(tail), le32(tail.subspan(4)), tail[8],
                in.subspan(width, length)};
  if (m.hash_funcs > 50 || m.flags > 2) return std::nullopt;
  return m;
}

// The BIP's membership rule: hash function i (seed i * 0xFBA4C795 + nTweak) picks bit
// murmur3_32 mod the bit count, bit j being bit j % 8 of byte j / 8; no bytes matches everything.
bool model_contains(const model& m, bytes key) {
  if (m.filter_bytes == 0) return true;
  for (std::uint32_t i = 0; i < m.hash_funcs; ++i) {
    const std::uint32_t bit = murmur3_32(key, i * 0xFBA4C795u + m.tweak) % (m.filter_bytes * 8);
    if ((m.data[bit / 8] >> (bit % 8) & 1) == 0) return false;
  }
  return true;
}

bool valid_rate(double x) {
  return x >= 0.0 && x <= 1.0;  // false for NaN
}

void check_body(bytes in) {
  const std::optional<model> m = read_model(in);
  std::optional<bip37_filter> parsed;
  try {
    parsed.emplace(bip37_filter::deserialize(in));
  } catch (const format_error&) {
  }
  FUZZ_CHECK(parsed.has_value() == m.has_value());
  // The std::byte overload reads the same bytes the same way.
  std::optional<bip37_filter> as_bytes;
  try {
    as_bytes.emplace(bip37_filter::deserialize(bloomery_fuzz::as_bytes(in)));
  } catch (const format_error&) {
  }
  FUZZ_CHECK(as_bytes.has_value() == parsed.has_value());
  if (!parsed) return;
  const bip37_filter& f = *parsed;
  FUZZ_CHECK(*as_bytes == f);

  FUZZ_CHECK(f.filter_bytes() == m->filter_bytes && f.hash_funcs() == m->hash_funcs);
  FUZZ_CHECK(f.tweak() == m->tweak && static_cast<std::uint8_t>(f.flags()) == m->flags);
  FUZZ_CHECK(std::ranges::equal(f.data(), m->data));
  FUZZ_CHECK(f.bit_count() == std::uint64_t{m->filter_bytes} * 8);
  FUZZ_CHECK(f.matches_everything() == (m->filter_bytes == 0 || m->hash_funcs == 0));
  const std::vector<std::uint8_t> out = f.serialize();
  FUZZ_CHECK(std::ranges::equal(out, in));
  FUZZ_CHECK(bip37_filter::deserialize(out) == f);
  // A filter made from its parameters and given the same bits is the same filter.
  bip37_filter rebuilt(f.parameters(), f.tweak(), f.flags());
  FUZZ_CHECK(rebuilt.set_bit_count() == 0);

  FUZZ_CHECK(f.set_bit_count() <= f.bit_count());
  FUZZ_CHECK(valid_rate(f.fill_ratio()) && valid_rate(f.estimated_fpr()));
  if (f.matches_everything()) FUZZ_CHECK(f.estimated_fpr() == 1.0 && f.approximate_count() == 0);
  (void)f.approximate_count();

  // Keys: the empty one, the shapes the BIP puts in filters (a 20-byte hash, a 36-byte outpoint),
  // and pieces of the input, so that some hit the bits the input set.
  std::vector<bytes> keys = {bytes{},
                             in.first(std::min<std::size_t>(in.size(), 1)),
                             in.first(std::min<std::size_t>(in.size(), 20)),
                             in.last(std::min<std::size_t>(in.size(), 36)),
                             in,
                             m->data.first(std::min<std::size_t>(m->data.size(), 4))};
  std::vector<bool> single;
  for (const bytes k : keys) {
    single.push_back(f.may_contain(k));
    FUZZ_CHECK(single.back() == model_contains(*m, k));
    if (f.matches_everything()) FUZZ_CHECK(single.back());
  }
  std::vector<bool> batched(keys.size());
  const std::size_t positives = f.may_contain_many(keys, batched);
  FUZZ_CHECK(batched == single);
  FUZZ_CHECK(positives == static_cast<std::size_t>(std::ranges::count(single, true)));

  // An insert only sets bits: the inserted key and every earlier positive stay positive, the
  // parameters stay, and the result still round-trips.
  bip37_filter g = f;
  const bytes added = in.subspan(in.size() / 2);
  g.insert(added);
  FUZZ_CHECK(g.may_contain(added));
  FUZZ_CHECK(g.parameters() == f.parameters() && g.tweak() == f.tweak() && g.flags() == f.flags());
  for (std::size_t i = 0; i < f.filter_bytes(); ++i) FUZZ_CHECK((f.data()[i] & ~g.data()[i]) == 0);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (single[i]) FUZZ_CHECK(g.may_contain(keys[i]));
  }
  if (f.matches_everything()) FUZZ_CHECK(g == f);  // nothing to set
  rebuilt.insert(added);
  for (std::size_t i = 0; i < f.filter_bytes(); ++i) {
    FUZZ_CHECK((rebuilt.data()[i] & ~g.data()[i]) == 0);  // the key's own bits are among g's
  }
  const std::vector<std::uint8_t> g_out = g.serialize();
  FUZZ_CHECK(g_out.size() == in.size());
  FUZZ_CHECK(bip37_filter::deserialize(g_out) == g);

  g.clear();
  FUZZ_CHECK(g.set_bit_count() == 0 && g.parameters() == f.parameters());
  for (const bytes k : keys) FUZZ_CHECK(g.may_contain(k) == f.matches_everything());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const bytes in(data, size);
  check_body(in);
  // The same bytes behind a canonical length prefix that fits their size (when that size is a
  // body the BIP allows): most mutations break the exact size, and this copy gets past it to
  // nHashFuncs, nFlags and the bits.
  if (size >= 9 && size - 9 <= 36'000) {
    const std::size_t length = size - 9;
    std::vector<std::uint8_t> fixed;
    if (length < 0xfd) {
      fixed.push_back(static_cast<std::uint8_t>(length));
    } else {
      fixed.insert(fixed.end(), {0xfd, static_cast<std::uint8_t>(length),
                                 static_cast<std::uint8_t>(length >> 8)});
    }
    fixed.insert(fixed.end(), data, data + size);
    check_body(fixed);
  }
  return 0;
}
