// Fuzz target: RedisBloom cuckoo filter values (interop/redisbloom_cuckoo.hpp) read from untrusted
// bytes, as a CF.SCANDUMP header and CF.LOADCHUNK pieces or as the fields of an RDB value. A
// reader must accept or throw format_error, nothing else. A value that loads must answer queries,
// dump again to the same header, chunks and RDB fields, and take adds, deletes and compaction
// without losing an item that was stored and not deleted.
//
// Input: one mode byte (bit 0: SCANDUMP, else RDB with encoding version (mode >> 1) % 6, where 5
// must be refused), the value, then one byte per operation on it.
#include <algorithm>
#include <array>
#include <bloomery/errors.hpp>
#include <bloomery/interop/redisbloom_cuckoo.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "ops.hpp"

namespace {

using bloomery::format_error;
using bloomery::interop::redisbloom::cuckoo_chain;
using add_result = cuckoo_chain::add_result;
using bloomery_fuzz::input;

// What a loaded value may take. Small, so that the target measures the parsers and not memory.
constexpr std::uint64_t max_bytes = std::uint64_t{1} << 16;
// Compaction costs (sub-filters)^2 per fingerprint, in RedisBloom too: writes run on shorter
// chains only, so that an input cannot time out by asking for 30,000 sub-filters.
constexpr std::uint64_t max_filters_written = 256;

// RDB fields from the input: an unsigned is one byte below 0xf8, else (byte & 7) + 1 more bytes,
// little-endian; a string is such a length and its bytes. Running dry throws format_error, as a
// module's Source reports a short value.
class input_source {
 public:
  explicit input_source(input& in) : in_(in) {}
  std::uint64_t read_unsigned() {
    const std::uint8_t b = next();
    if (b < 0xf8) return b;
    std::uint64_t v = 0;
    for (int i = 0; i < (b & 7) + 1; ++i) v |= std::uint64_t{next()} << (8 * i);
    return v;
  }
  double read_double() {
    const std::uint64_t bits = read_unsigned();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  std::string read_string() {
    const std::uint64_t length = read_unsigned();
    if (length > in_.size()) throw format_error("bloomery: fuzz input ended inside a string");
    const auto bytes = in_.take(static_cast<std::size_t>(length));
    return std::string(bytes.begin(), bytes.end());
  }

 private:
  std::uint8_t next() {
    if (in_.empty()) throw format_error("bloomery: fuzz input ended");
    return in_.byte();
  }
  input& in_;
};

using rdb_field = std::variant<std::uint64_t, double, std::string>;

struct field_sink {
  std::vector<rdb_field> fields;
  void write_unsigned(std::uint64_t v) { fields.emplace_back(v); }
  void write_double(double v) { fields.emplace_back(v); }
  void write_string(std::span<const std::byte> s) {
    fields.emplace_back(std::string(reinterpret_cast<const char*>(s.data()), s.size()));
  }
};

struct field_source {
  const std::vector<rdb_field>& fields;
  std::size_t next = 0;
  const rdb_field& take() {
    FUZZ_CHECK(next < fields.size());
    return fields[next++];
  }
  std::uint64_t read_unsigned() { return std::get<std::uint64_t>(take()); }
  double read_double() { return std::get<double>(take()); }
  std::string read_string() { return std::get<std::string>(take()); }
};

std::vector<std::byte> stream_of(const cuckoo_chain& c) {
  std::vector<std::byte> out;
  for (std::size_t i = 0; i < c.num_filters(); ++i) {
    const auto slots = c.sub_filter_slots(i);
    out.insert(out.end(), slots.begin(), slots.end());
  }
  return out;
}

// Where CF.LOADCHUNK puts `length` bytes sent with iterator `iter`, from the stream's prefix sums:
// inside one sub-filter, or, as RedisBloom's walk over the sub-filters ends, past the end by at
// most the newest sub-filter's size, folded back into it. nullopt where it refuses the piece.
std::optional<std::uint64_t> stream_place(const cuckoo_chain& c, std::uint64_t iter,
                                          std::uint64_t length) {
  if (length == 0 || iter == 0 || iter - 1 < length) return std::nullopt;
  const std::uint64_t at = iter - length - 1;
  std::uint64_t start = 0;
  std::uint64_t last = 0;
  for (std::size_t i = 0; i < c.num_filters(); ++i) {
    last = c.sub_filter_slots(i).size();
    if (at < start + last) {
      if (at + length <= start + last) return at;
      return std::nullopt;
    }
    start += last;
  }
  const std::uint64_t past = at - start;
  if (past > last || past + length > last) return std::nullopt;
  return start - last + past;
}

// Whether CF.LOADCHUNK accepts the value's header (under `limit`), by the rules of
// from_scandump_header's documentation.
bool header_restorable(const cuckoo_chain& c, std::uint64_t limit) {
  const std::uint64_t nb = c.num_buckets();
  if (nb == 0 || nb > cuckoo_chain::max_buckets || (nb & (nb - 1)) != 0) return false;
  if (c.max_iterations() == 0 || (c.expansion() == 0 && c.num_filters() > 1)) return false;
  std::uint64_t need = c.num_filters() * cuckoo_chain::sub_filter_record_bytes();
  std::uint64_t buckets = nb;
  for (std::size_t i = 0; i < c.num_filters(); ++i) {
    if (i > 0) {
      if (c.expansion() != 0 && buckets > cuckoo_chain::max_buckets / c.expansion()) return false;
      buckets *= c.expansion();
    }
    need += buckets * c.bucket_size();
    if (need > limit) return false;
  }
  return true;
}

bool same_counts(const cuckoo_chain& a, const cuckoo_chain& b) {
  if (a.num_filters() != b.num_filters()) return false;
  for (std::size_t i = 0; i < a.num_filters(); ++i) {
    if (a.sub_filter_buckets(i) != b.sub_filter_buckets(i)) return false;
  }
  return true;
}

// The value dumps again as it was read: RDB fields that load back to it, a SCANDUMP stream of its
// slots, and (where CF.LOADCHUNK can express it) a header and chunks that restore it.
void check_dumps(const cuckoo_chain& c) {
  field_sink out;
  c.save_rdb(out);
  field_source in{out.fields};
  const cuckoo_chain back = cuckoo_chain::load_rdb(cuckoo_chain::rdb_encoding, in, c.bytes_held());
  FUZZ_CHECK(in.next == out.fields.size() && back == c);
  field_sink again;
  back.save_rdb(again);
  FUZZ_CHECK(again.fields == out.fields);

  if (c.scandump_refused()) FUZZ_CHECK(!c.scandump_chunk(1).has_value());
  std::vector<std::byte> streamed;
  std::vector<cuckoo_chain::chunk> chunks;
  std::uint64_t iter = 1;
  while (const auto piece = c.stream_chunk(iter)) {
    FUZZ_CHECK(piece->next_iter == iter + piece->bytes.size() && !piece->bytes.empty());
    if (!c.scandump_refused()) {
      const auto same = c.scandump_chunk(iter);
      FUZZ_CHECK(same && same->next_iter == piece->next_iter &&
                 same->bytes.data() == piece->bytes.data());
    }
    streamed.insert(streamed.end(), piece->bytes.begin(), piece->bytes.end());
    chunks.push_back(*piece);
    iter = piece->next_iter;
  }
  FUZZ_CHECK(streamed == stream_of(c));

  const std::vector<std::byte> header = c.scandump_header();
  FUZZ_CHECK(header.size() == cuckoo_chain::scandump_header_bytes);
  const std::uint64_t limit = 2 * c.bytes_held();
  std::optional<cuckoo_chain> restored;
  try {
    restored.emplace(cuckoo_chain::from_scandump_header(header, limit));
  } catch (const format_error&) {
  }
  FUZZ_CHECK(restored.has_value() == header_restorable(c, limit));
  if (!restored) return;
  FUZZ_CHECK(restored->scandump_header() == header);
  if (!same_counts(*restored, c)) return;  // an RDB value's own counts: no header says them
  for (const cuckoo_chain::chunk& piece : chunks) {
    FUZZ_CHECK(restored->load_chunk(piece.next_iter, piece.bytes));
  }
  FUZZ_CHECK(*restored == c);
}

std::string key_of(std::uint8_t b) {
  return std::string{'k', static_cast<char>(b)};
}

void check_queries(const cuckoo_chain& c) {
  for (int b = 0; b < 256; b += 17) {
    const std::string k = key_of(static_cast<std::uint8_t>(b));
    FUZZ_CHECK(c.may_contain(k) == (c.count(k) > 0));
  }
  std::uint64_t size = 40 + 16 * c.num_filters();
  for (std::size_t i = 0; i < c.num_filters(); ++i) {
    size += c.sub_filter_buckets(i) * c.bucket_size();
  }
  FUZZ_CHECK(c.info_size() == size);
  FUZZ_CHECK(!c.debug_string().empty());
}

bool power_of_two(std::uint64_t n) {
  return n != 0 && (n & (n - 1)) == 0;
}

// Whether a stored item stays findable: bucket counts that are powers of two, each dividing the
// next, and so will the next growth's. Then the other bucket of a fingerprint is its own inverse,
// kick-outs and their undoing move fingerprints only between an item's two buckets, and an item's
// two buckets in a newer sub-filter reduce to its two in every older one. A value read from RDB
// can have other counts, where RedisBloom loses items too.
bool keeps_items(const cuckoo_chain& c) {
  std::uint64_t previous = 1;
  for (std::size_t i = 0; i < c.num_filters(); ++i) {
    const std::uint64_t n = c.sub_filter_buckets(i);
    if (!power_of_two(n) || n < previous) return false;
    previous = n;
  }
  const auto next = c.next_sub_filter_buckets();
  return !next || (power_of_two(*next) && *next >= previous);
}

// Adds, deletes and compaction on the value, against a count of the copies of each key stored.
void check_writes(cuckoo_chain c, input& in) {
  std::array<std::uint64_t, 256> stored{};
  bool tracking = true;
  for (int step = 0; step < 64 && !in.empty() && c.num_filters() <= max_filters_written; ++step) {
    tracking = tracking && keeps_items(c);
    const std::uint8_t op = in.byte();
    const std::uint8_t k = in.byte();
    const std::string key = key_of(k);
    const cuckoo_chain before = c;
    switch (op % 6) {
      case 0:
      case 1: {
        // A growth allocates the next sub-filter; keep it as small as the loaded values.
        const auto grows = c.next_sub_filter_bytes();
        if (grows && *grows > max_bytes) break;
        const add_result r = op % 6 == 0 ? c.add(key) : c.add_unique(key);
        // Kick-outs keep every fingerprint in one of its two buckets only where the other-bucket
        // map is its own inverse: power-of-two bucket counts.
        const bool exact_kicks = power_of_two(before.sub_filter_buckets(before.num_filters() - 1));
        if (r == add_result::added) {
          ++stored[k];
          FUZZ_CHECK(c.num_items() == before.num_items() + 1);
          if (exact_kicks) FUZZ_CHECK(c.may_contain(key));
        } else if (r == add_result::exists) {
          FUZZ_CHECK(op % 6 == 1 && before.may_contain(key) && c == before);
        } else {
          FUZZ_CHECK((r == add_result::full) == (before.expansion() == 0));
          if (r == add_result::allocation_failed) {
            FUZZ_CHECK(!before.next_sub_filter_buckets());
          }
          if (exact_kicks) FUZZ_CHECK(c == before);  // the kick-outs were undone
        }
        break;
      }
      case 2: {
        // Deletes a key that is stored: it must be found.
        std::vector<std::uint8_t> keys;
        for (std::size_t i = 0; i < stored.size(); ++i) {
          if (stored[i] > 0) keys.push_back(static_cast<std::uint8_t>(i));
        }
        if (keys.empty() || !tracking) break;
        const std::uint8_t victim = keys[k % keys.size()];
        FUZZ_CHECK(c.remove(key_of(victim)));
        --stored[victim];
        FUZZ_CHECK(c.num_items() == before.num_items() - 1);
        break;
      }
      case 3:
        if (stored[k] > 0 && tracking) {
          FUZZ_CHECK(c.remove(key));
          --stored[k];
        } else if (c.remove(key)) {
          // A key never stored takes a fingerprint equal to its own, maybe a stored key's copy.
          tracking = false;
        } else {
          FUZZ_CHECK(c == before);
          break;
        }
        FUZZ_CHECK(c.num_items() == before.num_items() - 1);
        break;
      case 4:
        c.compact();
        FUZZ_CHECK(c.num_deletes() == 0 && c.num_items() == before.num_items());
        FUZZ_CHECK(c.num_filters() <= before.num_filters());
        break;
      case 5:
        check_dumps(c);
        break;
    }
    if (tracking) {
      for (std::size_t i = 0; i < stored.size(); ++i) {
        if (stored[i] == 0) continue;
        const std::string stored_key = key_of(static_cast<std::uint8_t>(i));
        FUZZ_CHECK(c.may_contain(stored_key) && c.count(stored_key) >= stored[i]);
      }
    }
  }
  check_queries(c);
  check_dumps(c);
}

std::optional<cuckoo_chain> from_chunks(input& in) {
  const auto header = bloomery_fuzz::as_bytes(in.take(cuckoo_chain::scandump_header_bytes));
  std::optional<cuckoo_chain> c;
  try {
    c.emplace(cuckoo_chain::from_scandump_header(header, max_bytes));
  } catch (const format_error&) {
    return std::nullopt;
  }
  FUZZ_CHECK(std::ranges::equal(c->scandump_header(), header));
  FUZZ_CHECK(c->bytes_held() <= max_bytes + sizeof(cuckoo_chain));
  std::uint64_t position = 0;  // the stream offset a SCANDUMP replay would reach next
  const int pieces = in.byte() % 8;
  for (int i = 0; i < pieces; ++i) {
    const std::uint8_t how = in.byte();
    const auto data = bloomery_fuzz::as_bytes(in.take(in.u16() % 2048));
    const std::uint64_t iter = how & 1 ? position + data.size() + 1 : in.u32();
    const auto place = stream_place(*c, iter, data.size());
    std::vector<std::byte> expected = stream_of(*c);
    if (place) std::ranges::copy(data, expected.begin() + static_cast<std::ptrdiff_t>(*place));
    FUZZ_CHECK(c->load_chunk(iter, data) == place.has_value());
    FUZZ_CHECK(stream_of(*c) == expected);
    position += data.size();
  }
  return c;
}

std::optional<cuckoo_chain> from_rdb(input& in, int encver) {
  input_source source(in);
  try {
    cuckoo_chain c = cuckoo_chain::load_rdb(encver, source, max_bytes);
    FUZZ_CHECK(encver <= cuckoo_chain::rdb_encoding);
    FUZZ_CHECK(c.bytes_held() <= max_bytes + sizeof(cuckoo_chain));
    if (encver < cuckoo_chain::rdb_encoding) {
      FUZZ_CHECK(c.num_deletes() == 0 && c.bucket_size() == 2 && c.max_iterations() == 20 &&
                 c.expansion() == 1);
    }
    return c;
  } catch (const format_error&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  input in(data, size);
  const std::uint8_t mode = in.byte();
  const std::optional<cuckoo_chain> c = mode & 1 ? from_chunks(in) : from_rdb(in, (mode >> 1) % 6);
  if (!c) return 0;
  check_queries(*c);
  check_dumps(*c);
  check_writes(*c, in);
  return 0;
}
