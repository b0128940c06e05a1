// Fuzz target: RedisBloom's Bloom filter chain (interop/redisbloom_bloom.hpp) read from hostile
// bytes the two ways the Redis module receives one. The first input byte chooses: even, the rest
// is a BF.SCANDUMP header and a run of BF.LOADCHUNK chunks; odd, the rest is the fields of an RDB
// value (byte 0 / 2 % 6 its encoding version, 5 being one RedisBloom refuses) read through a
// Source over the bytes. A read must accept or throw format_error (or the Source's own error at
// the end of the input), and a chunk is accepted exactly where an independent reading of the
// stream offsets says. What loads must answer queries and INFO/DEBUG, dump back to the same bytes
// (header, chunks and RDB fields) and load back equal, and keep RedisBloom's promises on writes.
#include <algorithm>
#include <bit>
#include <bloomery/errors.hpp>
#include <bloomery/interop/redisbloom_bloom.hpp>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ops.hpp"

namespace {

using namespace bloomery::interop::redisbloom;
using add_result = bloom_chain::add_result;
using bloomery::allocation_error;
using bloomery::format_error;

// Small enough that a run of inputs measures the parser, not the allocator.
constexpr std::uint64_t max_bytes = std::uint64_t{1} << 20;
// An insert that would add a link bigger than this is not made (it would only allocate).
constexpr std::uint64_t max_growth_bytes = std::uint64_t{1} << 20;

constexpr std::string_view probes[] = {"", "a", "hello", "a01:item:0", "a12:item:3", "\xff\x00"};
constexpr std::string_view new_item = "fuzz-new-item";

// The fields a Source hands over, doubles by their bits so that comparisons are exact.
struct field {
  enum { unsigned_value, double_value, string_value } type;
  std::uint64_t number = 0;
  std::string bytes;
  friend bool operator==(const field&, const field&) = default;
};

struct field_sink {
  std::vector<field> fields;
  void write_unsigned(std::uint64_t v) { fields.push_back({field::unsigned_value, v, {}}); }
  void write_double(double v) {
    fields.push_back({field::double_value, std::bit_cast<std::uint64_t>(v), {}});
  }
  void write_string(std::span<const std::byte> b) {
    fields.push_back(
        {field::string_value, 0, std::string(reinterpret_cast<const char*>(b.data()), b.size())});
  }
};

// What the Sources below throw when the stream ends or holds another type.
struct source_exhausted {};

struct field_source {
  const std::vector<field>& fields;
  std::size_t next = 0;
  const field& take(decltype(field::type) type) {
    if (next == fields.size() || fields[next].type != type) throw source_exhausted{};
    return fields[next++];
  }
  std::uint64_t read_unsigned() { return take(field::unsigned_value).number; }
  double read_double() { return std::bit_cast<double>(take(field::double_value).number); }
  std::string read_string() { return take(field::string_value).bytes; }
};

// The fuzzer's bytes as RDB fields: an unsigned is one byte below 0xf8, else 0xf8 + n - 1 and n
// little-endian bytes (n = 1..8); a double is 8 bytes; a string is an unsigned length and its
// bytes. Every field read is recorded, to compare with what the chain writes back.
struct byte_source {
  bloomery_fuzz::input& in;
  std::vector<field> read;

  std::uint64_t number(std::size_t width) {
    if (in.size() < width) throw source_exhausted{};
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < width; ++i) v |= std::uint64_t{in.byte()} << (8 * i);
    return v;
  }
  std::uint64_t read_unsigned() {
    const std::uint64_t tag = number(1);
    const std::uint64_t v = tag < 0xf8 ? tag : number(static_cast<std::size_t>(tag - 0xf7));
    read.push_back({field::unsigned_value, v, {}});
    return v;
  }
  double read_double() {
    const std::uint64_t bits = number(8);
    read.push_back({field::double_value, bits, {}});
    return std::bit_cast<double>(bits);
  }
  std::string read_string() {
    const std::uint64_t len = read_unsigned();
    read.pop_back();  // recorded as the string's length, not as a field of its own
    if (len > in.size()) throw source_exhausted{};
    const auto b = in.take(static_cast<std::size_t>(len));
    std::string s(reinterpret_cast<const char*>(b.data()), b.size());
    read.push_back({field::string_value, 0, s});
    return s;
  }
};

std::vector<field> rdb_fields(const bloom_chain& c) {
  field_sink sink;
  c.save_rdb(sink);
  return sink.fields;
}

std::vector<bool> answers(const bloom_chain& c) {
  std::vector<bool> out;
  for (const std::string_view p : probes) out.push_back(c.may_contain(p));
  return out;
}

// Whether RedisBloom's LOADCHUNK takes this chain's own header back: it checks the option bits
// and the links' sizes against the chain's, which its RDB loader does not.
bool header_acceptable(const bloom_chain& c) {
  if (c.options() & ~std::uint32_t{15}) return false;
  std::uint64_t sum = 0;
  for (const bloom_chain::link& l : c.links()) {
    if (l.size > std::numeric_limits<std::uint64_t>::max() - sum) return false;
    sum += l.size;
  }
  return sum == c.items();
}

// The SCANDUMP sequence of `c` read back through LOADCHUNK.
void check_scandump_round_trip(const bloom_chain& c) {
  const std::vector<std::byte> header = c.scandump_header();
  FUZZ_CHECK(header.size() == bloom_chain::scandump_header_bytes +
                                  bloom_chain::scandump_link_bytes * c.links().size());
  std::optional<bloom_chain> copy;
  try {
    copy.emplace(bloom_chain::from_scandump_header(header, max_bytes));
  } catch (const format_error&) {
  }
  FUZZ_CHECK(copy.has_value() == header_acceptable(c));
  if (!copy) return;
  FUZZ_CHECK(copy->scandump_header() == header);
  std::uint64_t iter = 1;
  std::uint64_t streamed = 0;
  while (const std::optional<bloom_chain::chunk> chunk = c.scandump_chunk(iter)) {
    FUZZ_CHECK(!chunk->bytes.empty() && chunk->bytes.size() <= bloom_chain::scandump_piece_bytes);
    FUZZ_CHECK(chunk->next_iter == iter + chunk->bytes.size());
    FUZZ_CHECK(copy->load_chunk(chunk->next_iter, chunk->bytes));
    streamed += chunk->bytes.size();
    iter = chunk->next_iter;
  }
  std::uint64_t total = 0;
  for (const bloom_chain::link& l : c.links()) total += l.bytes();
  FUZZ_CHECK(streamed == total);
  FUZZ_CHECK(*copy == c);
}

void check_rdb_round_trip(const bloom_chain& c) {
  const std::vector<field> fields = rdb_fields(c);
  FUZZ_CHECK(fields.size() == 4 + 8 * c.links().size());
  field_source src{fields};
  const bloom_chain back = bloom_chain::load_rdb(bloom_chain::rdb_encoding, src, max_bytes);
  FUZZ_CHECK(src.next == fields.size());
  FUZZ_CHECK(back == c);
  FUZZ_CHECK(rdb_fields(back) == fields);
}

// RedisBloom's promises on an insert: present and inserted items answer 1, a refused one changes
// nothing, and the counts move only for an inserted item.
void check_writes(bloom_chain c) {
  const std::optional<std::uint64_t> growth = c.next_link_bytes();
  if (growth && *growth > max_growth_bytes) {
    if (*growth != std::numeric_limits<std::uint64_t>::max()) return;  // would only allocate
    // Beyond any memory: refused before allocating, the chain unchanged.
    const bloom_chain before = c;
    bool threw = false;
    try {
      (void)c.add(new_item);
    } catch (const allocation_error&) {
      threw = true;
    }
    FUZZ_CHECK(c == before && (threw || before.may_contain(new_item)));
    return;
  }
  const bloom_chain before = c;
  const bool was_present = c.may_contain(new_item);
  const add_result r = c.add(new_item);
  switch (r) {
    case add_result::added:
      FUZZ_CHECK(!was_present && c.may_contain(new_item));
      FUZZ_CHECK(c.items() == before.items() + 1);
      FUZZ_CHECK(c.links().back().size ==
                 (c.filter_count() == before.filter_count() ? before.links().back().size + 1 : 1));
      FUZZ_CHECK(c.filter_count() == before.filter_count() + (growth ? 1 : 0));
      FUZZ_CHECK(c.add(new_item) == add_result::exists);
      break;
    case add_result::exists:
      FUZZ_CHECK(was_present && c == before);
      break;
    case add_result::full:
      FUZZ_CHECK(c == before && !was_present);
      FUZZ_CHECK((c.options() & bloom_chain::option_no_scaling) != 0);
      break;
    case add_result::not_stored:
      FUZZ_CHECK(c == before && !was_present && !growth);
      FUZZ_CHECK(c.add(new_item) == add_result::not_stored);
      break;
  }
}

// Everything a loaded chain must do.
void check_loaded(const bloom_chain& c) {
  FUZZ_CHECK(c.filter_count() >= 1 && c.filter_count() == c.links().size());
  FUZZ_CHECK(c.bytes_held() <= max_bytes);
  const std::vector<std::string> debug = c.debug_lines();
  FUZZ_CHECK(debug.size() == c.filter_count() + 1);
  FUZZ_CHECK(debug[0] == "size:" + std::to_string(c.items()));
  std::uint64_t capacity = 0;
  std::uint64_t size = 32;
  for (const bloom_chain::link& l : c.links()) {
    FUZZ_CHECK(l.bits == l.bytes() * 8 && l.bits != 0 && l.hashes <= bloom_chain::max_hashes);
    capacity += l.entries;
    size += 64 + l.bytes();
  }
  FUZZ_CHECK(c.capacity() == capacity && c.info_size() == size);
  FUZZ_CHECK(c.expansion().has_value() == ((c.options() & bloom_chain::option_no_scaling) == 0));
  const std::vector<bool> before = answers(c);
  check_scandump_round_trip(c);
  check_rdb_round_trip(c);
  FUZZ_CHECK(answers(c) == before);
  check_writes(c);
}

// Where BF.LOADCHUNK puts a chunk, read from the links' sizes alone: the link and the offset in
// it, or nullopt where RedisBloom refuses the chunk.
std::optional<std::pair<std::size_t, std::uint64_t>> chunk_target(const bloom_chain& c,
                                                                  std::uint64_t iter,
                                                                  std::uint64_t len) {
  if (iter == 0 || iter > std::uint64_t{std::numeric_limits<std::int64_t>::max()}) {
    return std::nullopt;
  }
  if (iter < len + 1) return std::nullopt;
  std::uint64_t offset = iter - len - 1;
  for (std::size_t i = 0; i < c.links().size(); ++i) {
    const std::uint64_t bytes = c.links()[i].bytes();
    if (offset < bytes) {
      if (len > bytes - offset) return std::nullopt;
      return std::pair{i, offset};
    }
    offset -= bytes;
  }
  return std::nullopt;
}

void scandump_input(bloomery_fuzz::input& in) {
  const auto header_len = static_cast<std::size_t>(in.u16() % 2048);
  const auto header = bloomery_fuzz::as_bytes(in.take(header_len));
  std::optional<bloom_chain> c;
  try {
    c.emplace(bloom_chain::from_scandump_header(header, max_bytes));
  } catch (const format_error&) {
    return;
  }
  // Every field is kept as it came: the chain's header is the input's, byte for byte.
  FUZZ_CHECK(std::ranges::equal(c->scandump_header(), header));
  for (const bloom_chain::link& l : c->links()) {
    FUZZ_CHECK(std::ranges::all_of(l.bit_array(), [](std::byte b) { return b == std::byte{0}; }));
  }
  // Chunks: mostly in SCANDUMP's order (the iterator follows the data), sometimes at an iterator
  // of the input's choosing.
  std::uint64_t next_offset = 0;
  while (!in.empty()) {
    const std::uint8_t op = in.byte();
    std::uint64_t iter = 0;
    if ((op & 3) == 2) iter = in.u64();
    if ((op & 3) == 3) iter = in.u16();
    const auto data = bloomery_fuzz::as_bytes(in.take(in.u16() % 8192));
    if ((op & 3) < 2) iter = next_offset + data.size() + 1;
    const auto target = chunk_target(*c, iter, data.size());
    const bloom_chain before = *c;
    FUZZ_CHECK(c->load_chunk(iter, data) == target.has_value());
    if (!target) {
      FUZZ_CHECK(*c == before);
      continue;
    }
    const std::span<const std::byte> array = c->links()[target->first].bit_array();
    FUZZ_CHECK(std::ranges::equal(array.subspan(target->second, data.size()), data));
    next_offset = iter - 1;
  }
  check_loaded(*c);
}

void rdb_input(bloomery_fuzz::input& in, int encver) {
  byte_source src{in, {}};
  std::optional<bloom_chain> c;
  try {
    c.emplace(bloom_chain::load_rdb(encver, src, max_bytes));
  } catch (const format_error&) {
    return;
  } catch (const source_exhausted&) {
    return;
  }
  FUZZ_CHECK(encver >= 0 && encver <= bloom_chain::rdb_encoding);
  // Version 4 is what save_rdb writes: the same fields come back, value for value.
  if (encver == bloom_chain::rdb_encoding) FUZZ_CHECK(rdb_fields(*c) == src.read);
  check_loaded(*c);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bloomery_fuzz::input in(data, size);
  const std::uint8_t mode = in.byte();
  if (mode % 2 == 0) {
    scandump_input(in);
  } else {
    rdb_input(in, mode / 2 % 6);
  }
  return 0;
}
