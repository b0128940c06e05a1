// RedisBloom's Bloom filter chain (include/bloomery/interop/redisbloom_bloom.hpp) against data
// written by the real RedisBloom 2.4.23 (tests/data/redisbloom-golden/README.md): every BF key's
// commands replayed with their replies, INFO, DEBUG, CARD and probes; its SCANDUMP chunks loaded
// and reproduced byte for byte; RDB values of every encoding version; and hostile input.
#include <gtest/gtest.h>
#include <bloomery/errors.hpp>
#include <bloomery/interop/redisbloom_bloom.hpp>
#include <bloomery/interop/redisbloom_hash.hpp>
#include <nlohmann/json.hpp>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

using bloomery::allocation_error;
using bloomery::format_error;
using namespace bloomery::interop::redisbloom;
using add_result = bloom_chain::add_result;
using json = nlohmann::json;

namespace {

// The max_bytes of loads whose budget is not what a test is about.
constexpr std::uint64_t generous = std::uint64_t{1} << 30;
constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

const std::filesystem::path& golden_dir() {
  static const std::filesystem::path dir =
      std::filesystem::path(BLOOMERY_TEST_DATA_DIR) / "redisbloom-golden";
  return dir;
}

std::vector<std::byte> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  const std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto b = std::as_bytes(std::span(s));
  return {b.begin(), b.end()};
}

const json& answers() {
  static const json doc = [] {
    std::ifstream in(golden_dir() / "answers.json");
    if (!in) throw std::runtime_error("cannot open answers.json under " + golden_dir().string());
    return json::parse(in);
  }();
  return doc;
}

std::vector<std::string> bf_keys() {
  std::vector<std::string> out;
  try {
    for (const json& k : answers()["keys"]) {
      if (k["type"] == "bf") out.push_back(k["key"]);
    }
  } catch (const std::exception& e) {
    std::cerr << "golden data unreadable: " << e.what() << "\n";
  }
  return out;
}

const json& key_record(const std::string& name) {
  for (const json& k : answers()["keys"]) {
    if (k["key"] == name) return k;
  }
  throw std::runtime_error("no key " + name);
}

// ---- RDB fields in memory: what RedisModule_Save* / Load* exchange ----

using rdb_field = std::variant<std::uint64_t, double, std::string>;

struct field_sink {
  std::vector<rdb_field> fields;
  void write_unsigned(std::uint64_t v) { fields.emplace_back(v); }
  void write_double(double v) { fields.emplace_back(v); }
  void write_string(std::span<const std::byte> b) {
    fields.emplace_back(std::string(reinterpret_cast<const char*>(b.data()), b.size()));
  }
};

// What a Source throws when the stream is short or holds another type (Redis's load error).
struct rdb_read_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct field_source {
  std::vector<rdb_field> fields;
  std::size_t next = 0;

  template <class T>
  T take() {
    if (next >= fields.size()) throw rdb_read_error("stream ran dry");
    const T* v = std::get_if<T>(&fields[next]);
    if (v == nullptr) throw rdb_read_error("field of another type");
    ++next;
    return *v;
  }
  std::uint64_t read_unsigned() { return take<std::uint64_t>(); }
  double read_double() { return take<double>(); }
  std::string read_string() { return take<std::string>(); }
};

std::vector<rdb_field> rdb_fields(const bloom_chain& c) {
  field_sink sink;
  c.save_rdb(sink);
  return sink.fields;
}

bloom_chain load_fields(int encver, std::vector<rdb_field> fields,
                        std::uint64_t max_bytes = generous) {
  field_source src{std::move(fields)};
  bloom_chain c = bloom_chain::load_rdb(encver, src, max_bytes);
  EXPECT_EQ(src.next, src.fields.size()) << "fields left unread";
  return c;
}

// A field list with one element replaced or removed.
std::vector<rdb_field> with(std::vector<rdb_field> f, std::size_t i, rdb_field v) {
  f.at(i) = std::move(v);
  return f;
}
std::vector<rdb_field> without(std::vector<rdb_field> f, std::size_t i) {
  f.erase(f.begin() + static_cast<std::ptrdiff_t>(i));
  return f;
}

template <class Fn>
std::string format_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const format_error& e) {
    return e.what();
  }
  return "no format_error";
}

// Expects fn to throw format_error whose message starts "bloomery: " and contains `needle`.
template <class Fn>
void expect_format_error(Fn&& fn, const std::string& needle) {
  const std::string msg = format_error_of(fn);
  EXPECT_EQ(msg.rfind("bloomery: ", 0), 0u) << msg;
  EXPECT_NE(msg.find(needle), std::string::npos) << "expected '" << needle << "' in: " << msg;
}

// ---- Replaying RedisBloom's commands ----

json reply_of(add_result r) {
  switch (r) {
    case add_result::added:
    case add_result::not_stored:
      return 1;
    case add_result::exists:
      return 0;
    case add_result::full:
      return json{{"error", "ERR non scaling filter is full"}};
  }
  return nullptr;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// BF.ADD, BF.MADD and BF.INSERT's items: one reply each, the array ending at the first `full`.
json add_items(bloom_chain& c, const std::vector<std::string>& items, bool multi) {
  json out = json::array();
  for (const std::string& item : items) {
    const add_result r = c.add(item);
    if (!multi) return reply_of(r);
    out.push_back(reply_of(r));
    if (r == add_result::full) break;
  }
  return out;
}

struct replay_counts {
  std::size_t commands = 0;
  std::size_t reply_elements = 0;
};

// Runs one command of the golden data on `chain` (the key's value, absent before creation) and
// returns the reply RedisBloom would give.
json run_command(std::optional<bloom_chain>& chain, const std::vector<std::string>& argv) {
  const std::string& cmd = argv.at(0);
  if (cmd == "BF.RESERVE") {
    bloom_chain::parameters p{.capacity = std::stoll(argv.at(3)),
                              .error_rate = std::stod(argv.at(2))};
    for (std::size_t i = 4; i < argv.size(); ++i) {
      if (equals_ignoring_case(argv[i], "NONSCALING")) p.nonscaling = true;
      if (equals_ignoring_case(argv[i], "EXPANSION")) {
        p.expansion = std::stoll(argv.at(++i));
      }
    }
    if (chain) return json{{"error", "ERR item exists"}};
    chain.emplace(p);
    return "OK";
  }
  if (cmd == "BF.ADD" || cmd == "BF.MADD") {
    if (!chain) chain.emplace(bloom_chain::parameters{});
    return add_items(*chain, {argv.begin() + 2, argv.end()}, cmd == "BF.MADD");
  }
  if (cmd == "BF.INSERT") {
    bloom_chain::parameters p;
    bool create = true;
    std::size_t i = 2;
    for (; i < argv.size(); ++i) {
      const std::string& a = argv[i];
      if (equals_ignoring_case(a, "ITEMS")) {
        ++i;
        break;
      }
      if (equals_ignoring_case(a, "CAPACITY")) p.capacity = std::stoll(argv.at(++i));
      if (equals_ignoring_case(a, "ERROR")) p.error_rate = std::stod(argv.at(++i));
      if (equals_ignoring_case(a, "EXPANSION")) {
        p.expansion = std::stoll(argv.at(++i));
      }
      if (equals_ignoring_case(a, "NOCREATE")) create = false;
      if (equals_ignoring_case(a, "NONSCALING")) p.nonscaling = true;
    }
    if (!chain) {
      if (!create) return json{{"error", "ERR not found"}};
      chain.emplace(p);
    }
    return add_items(*chain, {argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end()}, true);
  }
  throw std::runtime_error("command the test does not know: " + cmd);
}

json info_of(const bloom_chain& c) {
  const std::optional<std::uint32_t> e = c.expansion();
  return json::array({"Capacity", c.capacity(), "Size", c.info_size(), "Number of filters",
                      c.filter_count(), "Number of items inserted", c.items(), "Expansion rate",
                      e ? json(*e) : json(nullptr)});
}

// Replays a key's commands, requiring every reply, and returns its value.
bloom_chain replay(const json& key, replay_counts& counts) {
  std::optional<bloom_chain> chain;
  for (const json& command : key["commands"]) {
    const std::vector<std::string> argv = command["argv"];
    const json reply = run_command(chain, argv);
    EXPECT_EQ(reply, command["reply"]) << argv.at(0) << " " << argv.at(1);
    ++counts.commands;
    counts.reply_elements += reply.is_array() ? reply.size() : 1;
  }
  if (!chain) throw std::runtime_error("no command created the key");
  return *std::move(chain);
}

// Every recorded figure and probe of `key` from `c`; returns the number of probes compared.
std::size_t expect_answers(const bloom_chain& c, const json& key) {
  EXPECT_EQ(info_of(c), key["info"]);
  EXPECT_EQ(json(c.debug_lines()), key["debug"]);
  EXPECT_EQ(json(c.items()), key["card"]);
  const json& probes = key["probes"];
  const std::vector<std::string> items = probes["items"];
  const std::vector<int> exists = probes["exists"];
  EXPECT_EQ(items.size(), exists.size());
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (c.may_contain(items[i]) != (exists[i] == 1)) {
      if (++mismatches <= 5) ADD_FAILURE() << "probe " << i << " answered wrongly";
    }
  }
  EXPECT_EQ(mismatches, 0u);
  return items.size();
}

std::vector<std::byte> chunk_file(const json& entry) {
  return read_bytes(golden_dir() / entry["file"].get<std::string>());
}

// True when bit x of the link's array is set.
bool bit(const bloom_chain::link& l, std::uint64_t x) {
  return (std::to_integer<unsigned>(l.bit_array()[x >> 3]) >> (x & 7) & 1) != 0;
}

std::vector<std::uint64_t> set_bits(const bloom_chain::link& l) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t x = 0; x < l.bits; ++x) {
    if (bit(l, x)) out.push_back(x);
  }
  return out;
}

// The fields of an RDB value of one link, built by hand.
struct hand_link {
  std::uint64_t entries;
  double error;
  std::uint64_t hashes;
  double bpe;
  std::uint64_t bits;
  std::uint64_t n2;
  std::string array;
  std::uint64_t size;
};

// Fields for encoding version `encver` (options only from 2, growth only in 4, bits and n2 not
// in 0).
std::vector<rdb_field> hand_fields(int encver, std::uint64_t size, std::uint64_t options,
                                   std::uint64_t growth, const std::vector<hand_link>& links) {
  std::vector<rdb_field> f{size, std::uint64_t{links.size()}};
  if (encver >= 2) f.emplace_back(options);
  if (encver >= 4) f.emplace_back(growth);
  for (const hand_link& l : links) {
    f.emplace_back(l.entries);
    f.emplace_back(l.error);
    f.emplace_back(l.hashes);
    f.emplace_back(l.bpe);
    if (encver != 0) {
      f.emplace_back(l.bits);
      f.emplace_back(l.n2);
    }
    f.emplace_back(l.array);
    f.emplace_back(l.size);
  }
  return f;
}

// The format's positions for old filters, written out independently of the header: 32-bit
// MurmurHash2 with seeds 0x9747b28c and a, then (a + j * b) mod 2^64 mod the modulus.
std::vector<std::uint64_t> old_positions(std::string_view item, std::uint32_t k,
                                         std::uint64_t modulus) {
  const std::uint32_t a = murmur2(bytes_of(item), 0x9747b28cU);
  const std::uint32_t b = murmur2(bytes_of(item), a);
  std::vector<std::uint64_t> out;
  for (std::uint64_t j = 0; j < k; ++j) out.push_back((a + j * std::uint64_t{b}) % modulus);
  return out;
}

void set_in(std::string& array, const std::vector<std::uint64_t>& positions) {
  for (const std::uint64_t x : positions) {
    array[x >> 3] = static_cast<char>(static_cast<unsigned char>(array[x >> 3]) | 1u << (x & 7));
  }
}

bool all_set(const std::string& array, const std::vector<std::uint64_t>& positions) {
  for (const std::uint64_t x : positions) {
    if ((static_cast<unsigned char>(array[x >> 3]) >> (x & 7) & 1) == 0) return false;
  }
  return true;
}

std::string probe_name(int i) {
  return "probe-" + std::to_string(i);
}

// A SCANDUMP header as bytes, for hand-made hostile headers.
struct header_link {
  std::uint64_t bytes, bits, size;
  double error, bpe;
  std::uint32_t hashes;
  std::uint64_t entries;
  std::uint8_t n2;
};

void put(std::vector<std::byte>& out, std::uint64_t v, int width) {
  for (int i = 0; i < width; ++i) out.push_back(static_cast<std::byte>(v >> (8 * i)));
}

std::vector<std::byte> make_header(std::uint64_t size, std::uint32_t options, std::uint32_t growth,
                                   const std::vector<header_link>& links) {
  std::vector<std::byte> out;
  put(out, size, 8);
  put(out, links.size(), 4);
  put(out, options, 4);
  put(out, growth, 4);
  for (const header_link& l : links) {
    put(out, l.bytes, 8);
    put(out, l.bits, 8);
    put(out, l.size, 8);
    put(out, std::bit_cast<std::uint64_t>(l.error), 8);
    put(out, std::bit_cast<std::uint64_t>(l.bpe), 8);
    put(out, l.hashes, 4);
    put(out, l.entries, 8);
    put(out, l.n2, 1);
  }
  return out;
}

// A valid link of 0.01 / 100 (link 0 of BF.RESERVE 0.01 100's defaults, NOROUND | FORCE64).
header_link link_0_01() {
  return {144, 1152, 0, 0.005, 11.027753418256411, 8, 100, 0};
}

}  // namespace

// ---- The hash functions ----

// SMHasher's verification: keys {}, {0}, {0,1}, ..., {0..254} hashed with seed 256 - length, the
// results concatenated little-endian and hashed with seed 0; the low 32 bits are the published
// value (0x27864C1E for MurmurHash2, 0x1F0D3804 for MurmurHash64A).
TEST(RedisBloomHash, MatchSmhasherVerificationValues) {
  std::vector<std::byte> key(256), h32, h64;
  for (int i = 0; i < 256; ++i) {
    key[static_cast<std::size_t>(i)] = static_cast<std::byte>(i);
    const auto prefix = std::span(key).first(static_cast<std::size_t>(i));
    put(h32, murmur2(prefix, static_cast<std::uint32_t>(256 - i)), 4);
    put(h64, murmur64a(prefix, static_cast<std::uint64_t>(256 - i)), 8);
  }
  EXPECT_EQ(murmur2(h32, 0), 0x27864C1Eu);
  EXPECT_EQ(static_cast<std::uint32_t>(murmur64a(h64, 0)), 0x1F0D3804u);
}

// docs/redisbloom-format.md §3.4: the two hashes of a few items.
TEST(RedisBloomHash, ItemHashesMatchTheFormat) {
  using hashes = std::pair<std::uint64_t, std::uint64_t>;
  const auto pair = [](std::span<const std::byte> item) {
    const std::uint64_t a = murmur64a(item, 0xc6a4a7935bd1e995ULL);
    return hashes{a, murmur64a(item, a)};
  };
  EXPECT_EQ(pair(bytes_of("hello")), hashes(0x5ba5b8a59803e699, 0xa7d451d588a0c2a4));
  EXPECT_EQ(pair(bytes_of("")), hashes(0x1ab11ea5a7b2c56e, 0xbbddcb5ab56dd547));
  EXPECT_EQ(pair(bytes_of("a")), hashes(0x4292cee227b9150a, 0x7e9b527031f50c11));
  const std::byte zero[1] = {};
  EXPECT_EQ(pair(zero), (hashes{0x0, 0x5825f5f3bd962979}));
}

// ---- Sizing and the documented vectors ----

// The table of docs/redisbloom-format.md §3.2: link 0 of BF.RESERVE for each rate and capacity.
TEST(RedisBloomBloom, SizesLinksAsTheFormatTable) {
  struct row {
    double rate;
    std::int64_t capacity;
    bool nonscaling;
    double link_rate, bpe;
    std::uint64_t bits, bytes;
    std::uint32_t k;
  };
  const row rows[] = {
      {0.1, 100, false, 0.05, 6.2352242295726885, 640, 80, 5},
      {0.1, 100, true, 0.1, 4.7925291886837229, 512, 64, 4},
      {0.01, 100, false, 0.005, 11.027753418256411, 1152, 144, 8},
      {0.01, 1000, true, 0.01, 9.5850583773674458, 9600, 1200, 7},
      {0.001, 1000, false, 0.0005, 15.820282606940136, 15872, 1984, 11},
      {0.0001, 100000, false, 0.00005, 20.612811795623859, 2061312, 257664, 15},
  };
  for (const row& r : rows) {
    const bloom_chain c({.capacity = r.capacity, .error_rate = r.rate, .nonscaling = r.nonscaling});
    ASSERT_EQ(c.links().size(), 1u);
    const bloom_chain::link& l = c.links()[0];
    EXPECT_EQ(l.error, r.link_rate);
    EXPECT_EQ(l.bpe, r.bpe);
    EXPECT_EQ(l.bits, r.bits);
    EXPECT_EQ(l.bytes(), r.bytes);
    EXPECT_EQ(l.hashes, r.k);
    EXPECT_EQ(l.entries, static_cast<std::uint64_t>(r.capacity));
    EXPECT_EQ(l.n2, 0);
    EXPECT_EQ(c.options(), r.nonscaling ? 13u : 5u);
  }
}

// The vector of docs/redisbloom-format.md §3.4, checked on the real module: the bits `hello` sets.
TEST(RedisBloomBloom, HelloSetsTheDocumentedBits) {
  bloom_chain c({.capacity = 100, .error_rate = 0.01});
  EXPECT_EQ(c.add("hello"), add_result::added);
  EXPECT_EQ(set_bits(c.links()[0]),
            (std::vector<std::uint64_t>{77, 97, 497, 517, 537, 789, 809, 957}));
  EXPECT_EQ(c.add("hello"), add_result::exists);
  EXPECT_EQ(c.items(), 1u);
  EXPECT_EQ(c.links()[0].size, 1u);
}

// k is ceil(0.693147180559945 * bpe), with bloom.c's truncated ln 2: for this bpe the product is
// just below 5, where the exact ln 2 gives just above (k = 6).
TEST(RedisBloomBloom, HashCountUsesTheTruncatedLn2) {
  header_link l = link_0_01();
  l.bpe = 7.213475204444821;
  l.hashes = 5;
  const bloom_chain c = bloom_chain::from_scandump_header(make_header(0, 5, 2, {l}), generous);
  EXPECT_EQ(c.links()[0].hashes, 5u);
  l.hashes = 6;
  expect_format_error(
      [&] { (void)bloom_chain::from_scandump_header(make_header(0, 5, 2, {l}), generous); },
      "hashes 6 is not ceil");
}

TEST(RedisBloomBloom, RefusesWhatRedisBloomRefusesToBuild) {
  const auto expect_invalid = [](bloom_chain::parameters p, const std::string& needle) {
    try {
      bloom_chain c(p);
      ADD_FAILURE() << "accepted " << needle;
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind("bloomery: ", 0), 0u) << msg;
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    }
  };
  expect_invalid({.capacity = 0}, "capacity 0; it must be > 0");
  expect_invalid({.capacity = -5}, "capacity -5; it must be > 0");
  expect_invalid({.error_rate = 0}, "error rate 0 is outside (0, 1)");
  expect_invalid({.error_rate = 1}, "error rate 1 is outside (0, 1)");
  expect_invalid({.error_rate = -0.5}, "error rate -0.5 is outside");
  expect_invalid({.error_rate = std::nan("")}, "is outside (0, 1)");
  // The smallest positive double halves to 0: RedisBloom's "ERR could not create filter".
  expect_invalid({.error_rate = 5e-324}, "rounds to 0");
  // NONSCALING keeps the rate whole, so the same rate builds (k = 1075, the largest there is).
  const bloom_chain tiny({.capacity = 1, .error_rate = 5e-324, .nonscaling = true});
  EXPECT_EQ(tiny.links()[0].hashes, 1075u);
  EXPECT_EQ(tiny.links()[0].bits, 1600u);  // 1549 bits, rounded up to whole words
}

// RedisBloom keeps EXPANSION as a 32-bit unsigned: BF.RESERVE's 2^32 + 3 grows by 3, its -1 by
// 2^32 - 1, and its 2^32 not at all.
TEST(RedisBloomBloom, ExpansionIsKeptModuloTwoToThe32) {
  EXPECT_EQ(bloom_chain({.expansion = (std::int64_t{1} << 32) + 3}).growth(), 3u);
  EXPECT_EQ(bloom_chain({.expansion = -1}).expansion(), 4294967295u);
  bloom_chain c({.capacity = 1, .expansion = std::int64_t{1} << 32});
  EXPECT_EQ(c.expansion(), 0u);
  EXPECT_EQ(c.add("x"), add_result::added);
  EXPECT_EQ(c.add("y"), add_result::not_stored);
}

TEST(RedisBloomBloom, SizesBeyondMemoryAreAllocationErrors) {
  // 2^62 items at 0.5% need 2^65.5 bits: refused before any allocation.
  try {
    bloom_chain c({.capacity = std::int64_t{1} << 62});
    ADD_FAILURE() << "built a chain of 2^62 items";
  } catch (const allocation_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("bloomery: cannot allocate ", 0), 0u) << e.what();
    EXPECT_GT(e.bytes(), std::uint64_t{1} << 62);
  }
}

// ---- EXPANSION 0 and the other chains that cannot grow ----

TEST(RedisBloomBloom, ExpansionZeroRepliesOneAndStoresNothing) {
  bloom_chain c({.capacity = 2, .error_rate = 0.01, .expansion = 0});
  ASSERT_EQ(c.links()[0].bits, 64u);  // trunc(2 * 11.03) = 22 bits, one word
  EXPECT_EQ(c.add("a"), add_result::added);
  EXPECT_EQ(c.add("b"), add_result::added);
  EXPECT_EQ(c.next_link_bytes(), std::nullopt);
  const bloom_chain before = c;
  EXPECT_EQ(c.add("c"), add_result::not_stored);
  EXPECT_EQ(c, before);
  EXPECT_FALSE(c.may_contain("c"));
  EXPECT_EQ(c.items(), 2u);
  EXPECT_EQ(c.filter_count(), 1u);
  EXPECT_EQ(c.expansion(), 0u);
  // A present item is still "present": the check comes before the growth.
  EXPECT_EQ(c.add("a"), add_result::exists);
}

TEST(RedisBloomBloom, RateHalvedToZeroCannotGrow) {
  // Link 0 gets the smallest positive rate; link 1 would get 0, which bloom_init refuses.
  bloom_chain c({.capacity = 1, .error_rate = 1e-323});
  EXPECT_EQ(c.links()[0].error, 5e-324);
  EXPECT_EQ(c.add("x"), add_result::added);
  EXPECT_EQ(c.add("y"), add_result::not_stored);
  EXPECT_EQ(c.filter_count(), 1u);
  EXPECT_EQ(c.items(), 1u);
}

TEST(RedisBloomBloom, NonscalingFullStopsWithoutChange) {
  bloom_chain c({.capacity = 3, .error_rate = 0.01, .nonscaling = true});
  for (const char* item : {"a", "b", "c"}) EXPECT_EQ(c.add(item), add_result::added);
  const bloom_chain before = c;
  EXPECT_EQ(c.add("d"), add_result::full);
  EXPECT_EQ(c, before);
  EXPECT_EQ(c.add("b"), add_result::exists);
  EXPECT_EQ(c.expansion(), std::nullopt);
  EXPECT_EQ(c.growth(), 2u);  // stored and saved all the same
  EXPECT_EQ(c.next_link_bytes(), std::nullopt);
}

TEST(RedisBloomBloom, GrowsByExpansionAndHalvesTheRate) {
  bloom_chain c({.capacity = 100, .error_rate = 0.01, .expansion = 2});
  int i = 0;
  while (c.links()[0].size < 100) (void)c.add("item-" + std::to_string(i++));
  EXPECT_EQ(c.next_link_bytes(), 312u);  // 200 items at 0.0025: 2496 bits
  while (c.filter_count() < 2) (void)c.add("item-" + std::to_string(i++));
  const bloom_chain::link& l = c.links()[1];
  EXPECT_EQ(l.entries, 200u);
  EXPECT_EQ(l.error, 0.0025);
  EXPECT_EQ(l.bits, 2496u);
  EXPECT_EQ(l.hashes, 9u);
  EXPECT_EQ(l.size, 1u);
  EXPECT_EQ(c.items(), 101u);
  EXPECT_EQ(c.capacity(), 300u);
  EXPECT_EQ(c.info_size(), 32u + 64 + 144 + 64 + 312);
  EXPECT_EQ(c.debug_lines().at(2),
            "bytes:312 bits:2496 hashes:9 hashwidth:64 capacity:200 size:1 ratio:0.0025");
}

// ---- (a) Every BF key of the golden data, replayed ----

class GoldenBloomKey : public testing::TestWithParam<std::string> {};

TEST(RedisBloomGolden, HasThirteenBloomKeys) {
  EXPECT_EQ(bf_keys().size(), 13u);
  EXPECT_EQ(answers()["meta"]["producer"]["redisbloom"]["tag"], "v2.4.23");
}

TEST_P(GoldenBloomKey, ReplayAnswersAsRedisBloom) {
  const json& key = key_record(GetParam());
  replay_counts counts;
  const bloom_chain c = replay(key, counts);
  const std::size_t probes = expect_answers(c, key);
  EXPECT_GT(counts.commands, 0u);
  EXPECT_GE(probes, 2000u);
  std::cout << "[ replay   ] " << GetParam() << ": " << counts.commands << " commands, "
            << counts.reply_elements << " replies, " << probes << " probes\n";
}

// ---- (b) SCANDUMP / LOADCHUNK ----

TEST_P(GoldenBloomKey, LoadchunkOfTheGoldenChunksGivesTheReplayedValue) {
  const json& key = key_record(GetParam());
  replay_counts counts;
  const bloom_chain replayed = replay(key, counts);
  const json& dump = key["scandump"];
  ASSERT_GE(dump.size(), 2u);
  ASSERT_EQ(dump[0]["iter"], 1);
  bloom_chain loaded = bloom_chain::from_scandump_header(chunk_file(dump[0]), generous);
  for (std::size_t n = 1; n < dump.size(); ++n) {
    const std::vector<std::byte> data = chunk_file(dump[n]);
    EXPECT_EQ(data.size(), dump[n]["bytes"].get<std::size_t>());
    EXPECT_TRUE(loaded.load_chunk(dump[n]["iter"].get<std::uint64_t>(), data)) << "chunk " << n;
  }
  EXPECT_EQ(loaded, replayed);
  expect_answers(loaded, key);
  std::cout << "[ loadchunk] " << GetParam() << ": header + " << dump.size() - 1 << " chunks\n";
}

TEST_P(GoldenBloomKey, ScandumpReproducesTheGoldenChunks) {
  const json& key = key_record(GetParam());
  replay_counts counts;
  const bloom_chain c = replay(key, counts);
  const json& dump = key["scandump"];
  EXPECT_EQ(c.scandump_header(), chunk_file(dump[0]));
  std::uint64_t iter = 1;  // the header's reply
  for (std::size_t n = 1; n < dump.size(); ++n) {
    const std::optional<bloom_chain::chunk> chunk = c.scandump_chunk(iter);
    ASSERT_TRUE(chunk.has_value()) << "chunk " << n;
    EXPECT_EQ(chunk->next_iter, dump[n]["iter"].get<std::uint64_t>());
    const std::vector<std::byte> expected = chunk_file(dump[n]);
    EXPECT_TRUE(std::ranges::equal(chunk->bytes, expected)) << "chunk " << n;
    iter = chunk->next_iter;
  }
  EXPECT_EQ(key["scandump_end"], json::array({0, ""}));
  EXPECT_EQ(c.scandump_chunk(iter), std::nullopt);
}

// ---- (c) RDB ----

TEST_P(GoldenBloomKey, RdbRoundTripIsExact) {
  const json& key = key_record(GetParam());
  replay_counts counts;
  const bloom_chain c = replay(key, counts);
  const std::vector<rdb_field> fields = rdb_fields(c);
  ASSERT_EQ(fields.size(), 4 + 8 * c.links().size());
  EXPECT_EQ(std::get<std::uint64_t>(fields[0]), c.items());
  EXPECT_EQ(std::get<std::uint64_t>(fields[1]), c.filter_count());
  const bloom_chain back = load_fields(bloom_chain::rdb_encoding, fields);
  EXPECT_EQ(back, c);
  EXPECT_EQ(rdb_fields(back), fields);
  expect_answers(back, key);
}

INSTANTIATE_TEST_SUITE_P(RedisBloom, GoldenBloomKey, testing::ValuesIn(bf_keys()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

// The field sequence of docs/redisbloom-format.md §3.5, on the empty key a11 (BF.RESERVE 0.01
// 1000 EXPANSION 4).
TEST(RedisBloomRdb, WritesVersionFourFieldsInOrder) {
  const bloom_chain c({.capacity = 1000, .error_rate = 0.01, .expansion = 4});
  const std::vector<rdb_field> expected{
      std::uint64_t{0}, std::uint64_t{1},        std::uint64_t{5},
      std::uint64_t{4}, std::uint64_t{1000},     0.005,
      std::uint64_t{8}, 11.027753418256411,      std::uint64_t{11072},
      std::uint64_t{0}, std::string(1384, '\0'), std::uint64_t{0}};
  EXPECT_EQ(rdb_fields(c), expected);
  EXPECT_EQ(bloom_chain::rdb_encoding, 4);
  EXPECT_EQ(bloom_chain::redis_type_name, "MBbloom--");
}

// Versions 2 and 3 have no growth field (growth 2); their options are read.
TEST(RedisBloomRdb, VersionsTwoAndThreeDefaultTheGrowth) {
  replay_counts counts;
  const bloom_chain c = replay(key_record("a03-bf-e0.001-c100-x4"), counts);
  ASSERT_EQ(c.growth(), 4u);
  for (const int encver : {2, 3}) {
    const bloom_chain old = load_fields(encver, without(rdb_fields(c), 3));
    EXPECT_EQ(old.growth(), 2u);
    EXPECT_EQ(old.expansion(), 2u);
    EXPECT_EQ(old.options(), 5u);
    EXPECT_TRUE(std::ranges::equal(old.links(), c.links()));
    EXPECT_EQ(old.items(), c.items());
  }
}

// Version 1: no options (0: 32-bit MurmurHash2, positions mod 2^n2 when n2 > 0), growth 2.
TEST(RedisBloomRdb, VersionOneLinkHashesAsOldFilters) {
  const double bpe = 9.5850583773674458;  // 0.01's, so k = 7
  hand_link l{100, 0.01, 7, bpe, 2048, 10, std::string(256, '\0'), 2};
  set_in(l.array, old_positions("alpha", 7, 1024));
  set_in(l.array, old_positions("beta", 7, 1024));
  const bloom_chain c = load_fields(1, hand_fields(1, 2, 0, 0, {l}));
  EXPECT_EQ(c.options(), 0u);
  EXPECT_EQ(c.growth(), 2u);
  EXPECT_EQ(c.links()[0].n2, 10);
  EXPECT_EQ(c.debug_lines().at(1),
            "bytes:256 bits:2048 hashes:7 hashwidth:32 capacity:100 size:2 ratio:0.01");
  EXPECT_TRUE(c.may_contain("alpha"));
  EXPECT_TRUE(c.may_contain("beta"));
  // Bits 1024 and up are never used: every answer is the formula's, on the low 1024 bits only.
  int positives = 0;
  for (int i = 0; i < 2000; ++i) {
    const bool expected = all_set(l.array, old_positions(probe_name(i), 7, 1024));
    ASSERT_EQ(c.may_contain(probe_name(i)), expected) << i;
    positives += expected;
  }
  EXPECT_LT(positives, 20);  // 14 of 1024 bits set, k = 7: a handful of false positives at most
  // The same bits read with 64-bit hashing (a FORCE64 chain) answer otherwise.
  const bloom_chain modern = load_fields(2, hand_fields(2, 2, 4, 0, {l}));
  EXPECT_FALSE(modern.may_contain("alpha") && modern.may_contain("beta"));
}

// Version 0: no bits or n2 fields; bits = entries * bpe, which must be 8 per array byte.
TEST(RedisBloomRdb, VersionZeroDerivesTheBitCount) {
  hand_link l{100, 0.02, 6, 8.0, 0, 0, std::string(100, '\0'), 1};
  set_in(l.array, old_positions("gamma", 6, 800));
  const bloom_chain c = load_fields(0, hand_fields(0, 1, 0, 0, {l}));
  EXPECT_EQ(c.links()[0].bits, 800u);
  EXPECT_EQ(c.links()[0].n2, 0);
  EXPECT_EQ(c.options(), 0u);
  EXPECT_EQ(c.growth(), 2u);
  EXPECT_TRUE(c.may_contain("gamma"));
  for (int i = 0; i < 500; ++i) {
    ASSERT_EQ(c.may_contain(probe_name(i)), all_set(l.array, old_positions(probe_name(i), 6, 800)));
  }
  // 100 * 8.01 = 801 bits: not 8 per byte of a 101-byte array.
  hand_link odd = l;
  odd.bpe = 8.01;
  odd.array = std::string(101, '\0');
  expect_format_error([&] { (void)load_fields(0, hand_fields(0, 1, 0, 0, {odd})); },
                      "801 bits for 101 bytes");
}

// An old chain grows by the branch its options select: rounding up to a power of two.
TEST(RedisBloomRdb, OldChainGrowsByRoundingToAPowerOfTwo) {
  hand_link l{100, 0.01, 7, 9.5850583773674458, 2048, 10, std::string(256, '\0'), 100};
  bloom_chain c = load_fields(1, hand_fields(1, 100, 0, 0, {l}));
  EXPECT_EQ(c.next_link_bytes(), 512u);
  ASSERT_EQ(c.add("delta"), add_result::added);
  ASSERT_EQ(c.filter_count(), 2u);
  const bloom_chain::link& grown = c.links()[1];
  // 200 items at 0.005: 2205.55 bits round up to 2^12; the 1890 spare bits hold 171 more items.
  EXPECT_EQ(grown.n2, 12);
  EXPECT_EQ(grown.bits, 4096u);
  EXPECT_EQ(grown.bytes(), 512u);
  EXPECT_EQ(grown.entries, 371u);
  EXPECT_EQ(grown.hashes, 8u);
  EXPECT_EQ(grown.error, 0.005);
  std::string expected(512, '\0');
  set_in(expected, old_positions("delta", 8, 4096));
  EXPECT_EQ(grown.array, expected);
  EXPECT_EQ(c.items(), 101u);
}

// ENTS_IS_BITS (option 2): the capacity is log2 of the bit count, at most 64.
TEST(RedisBloomRdb, EntsIsBitsChainGrowsOnlyWhileSmall) {
  const double bpe = 9.5850583773674458;
  hand_link small{10, 0.01, 7, bpe, 64, 0, std::string(8, '\0'), 10};
  bloom_chain c = load_fields(2, hand_fields(2, 10, 2 | 4, 0, {small}));
  ASSERT_EQ(c.add("epsilon"), add_result::added);
  const bloom_chain::link& grown = c.links().back();
  EXPECT_EQ(grown.n2, 20);  // capacity 20: 2^20 bits
  EXPECT_EQ(grown.bits, 1048576u);
  EXPECT_EQ(grown.entries, 95085u);  // 2^20 / bpe(0.005)
  EXPECT_EQ(grown.hashes, 8u);

  hand_link big{100, 0.01, 7, bpe, 64, 0, std::string(8, '\0'), 100};
  bloom_chain d = load_fields(2, hand_fields(2, 100, 2 | 4, 0, {big}));
  const bloom_chain before = d;
  EXPECT_EQ(d.add("epsilon"), add_result::not_stored);  // capacity 200 > 64
  EXPECT_EQ(d, before);

  // 2^64 bits would shift by 64 (undefined in C): refused as RedisBloom refuses 65 and up.
  hand_link l32{32, 0.01, 7, bpe, 64, 0, std::string(8, '\0'), 32};
  bloom_chain e = load_fields(2, hand_fields(2, 32, 2 | 4, 0, {l32}));
  EXPECT_EQ(e.next_link_bytes(), std::nullopt);
  EXPECT_EQ(e.add("epsilon"), add_result::not_stored);
  // 2^63 bits: beyond any memory.
  hand_link l21{21, 0.01, 7, bpe, 64, 0, std::string(8, '\0'), 21};
  bloom_chain f = load_fields(4, hand_fields(4, 21, 2 | 4, 3, {l21}));
  EXPECT_EQ(f.next_link_bytes(), u64_max);
  EXPECT_THROW((void)f.add("epsilon"), allocation_error);
}

// The capacity times the growth wraps in 64 bits, as RedisBloom's size_t product does.
TEST(RedisBloomRdb, GrowthProductWrapsAndHugeLinksAreAllocationErrors) {
  hand_link l{std::uint64_t{1} << 62, 0.01, 7, 9.5850583773674458, 64, 0, std::string(8, '\0'),
              std::uint64_t{1} << 62};
  bloom_chain wraps = load_fields(4, hand_fields(4, l.size, 5, 4, {l}));  // 2^64 wraps to 0
  EXPECT_EQ(wraps.next_link_bytes(), std::nullopt);
  EXPECT_EQ(wraps.add("zeta"), add_result::not_stored);

  bloom_chain huge = load_fields(4, hand_fields(4, l.size, 5, 2, {l}));  // 2^63 items
  EXPECT_EQ(huge.next_link_bytes(), u64_max);
  const bloom_chain before = huge;
  EXPECT_THROW((void)huge.add("zeta"), allocation_error);
  EXPECT_EQ(huge, before);
}

// RedisBloom's RDB loader checks neither the chain's size against its links' nor the option
// bits; its LOADCHUNK does, so such a value loads but its SCANDUMP header is refused.
TEST(RedisBloomRdb, AcceptsWhatRedisBloomsLoaderAccepts) {
  const header_link h = link_0_01();
  const hand_link l{h.entries, h.error, h.hashes, h.bpe, h.bits, 0, std::string(144, '\0'), 3};
  const bloom_chain sizes = load_fields(4, hand_fields(4, 7, 5, 2, {l}));
  EXPECT_EQ(sizes.items(), 7u);
  expect_format_error(
      [&] { (void)bloom_chain::from_scandump_header(sizes.scandump_header(), generous); },
      "the links hold 3 items but the chain says 7");
  const bloom_chain options = load_fields(4, hand_fields(4, 3, 5 | 16, 2, {l}));
  EXPECT_EQ(options.options(), 21u);
  expect_format_error(
      [&] { (void)bloom_chain::from_scandump_header(options.scandump_header(), generous); },
      "unknown option bits in 21");
}

// ---- (d) Hostile input ----

TEST(RedisBloomHostile, RdbFieldsOutOfRange) {
  replay_counts counts;
  const bloom_chain c = replay(key_record("a01-bf-e0.1-c100-x2"), counts);
  const std::vector<rdb_field> good = rdb_fields(c);
  // Link 0's fields start at 4: entries, error, hashes, bpe, bits, n2, array, size.
  const auto refused = [&](int encver, const std::vector<rdb_field>& f, const std::string& needle) {
    expect_format_error([&] { (void)load_fields(encver, f); }, needle);
  };
  refused(5, good, "RDB encoding version 5 is not one RedisBloom 2.4 reads");
  refused(-1, good, "RDB encoding version -1");
  refused(4, with(good, 1, std::uint64_t{0}), "0 links");
  refused(4, with(good, 2, std::uint64_t{1} << 32 | 5), "options 4294967301 does not fit");
  refused(4, with(good, 3, std::uint64_t{1} << 32 | 2), "growth 4294967298 does not fit");
  refused(4, with(good, 5, 0.0), "link 0: error rate 0 is outside (0, 1)");
  refused(4, with(good, 5, 1.0), "error rate 1 is outside");
  refused(4, with(good, 5, std::nan("")), "error rate nan is outside");
  refused(4, with(good, 6, std::uint64_t{6}), "hashes 6 is not ceil");
  refused(4, with(good, 6, (std::uint64_t{1} << 32) + 5), "does not fit RedisBloom's 32 bits");
  refused(4, with(good, 7, std::nan("")), "hashes 5 is not ceil");
  refused(4, with(good, 8, std::uint64_t{632}), "632 bits for 80 bytes");
  refused(4, with(good, 8, std::uint64_t{648}), "80 bytes cannot hold 648 bits");
  refused(4, with(good, 8, std::uint64_t{0}), "0 bits");
  refused(4, with(good, 8, std::uint64_t{641 * 8}), "cannot hold 5128 bits");
  refused(4, with(good, 9, std::uint64_t{64}), "n2 64 is over 63");
  refused(4, with(good, 9, std::uint64_t{256}), "n2 256 is over 63");  // RedisBloom: 0
  refused(4, with(good, 9, std::uint64_t{10}), "640 bits cannot hold 2^10 positions");
  refused(4, with(good, 10, std::string(79, '\0')), "cannot hold 640 bits");
  refused(4, with(good, 10, std::string(88, '\0')), "640 bits for 88 bytes");
  // A negative bpe: RedisBloom's k would wrap to 2^32 - 6, beyond the loop limit.
  refused(4, with(with(good, 7, -10.0), 6, std::uint64_t{4294967290}), "is over 4096");
  refused(4, with(with(good, 7, 1e4), 6, std::uint64_t{6932}), "hashes 6932 is over 4096");
  refused(4, with(with(good, 7, 1e300), 6, std::uint64_t{1} << 31), "is not ceil");
  // Version 0 derives bits from a product that must be a count.
  const hand_link l{100, 0.01, 7, 9.5850583773674458, 0, 0, std::string(8, '\0'), 0};
  hand_link neg = l;
  neg.bpe = -1.0;
  neg.hashes = 0;
  refused(0, hand_fields(0, 0, 0, 0, {neg}), "entries * bpe = -100 is not a bit count");
  hand_link vast = l;
  vast.entries = u64_max;
  vast.bpe = 2.0;
  vast.hashes = 2;
  refused(0, hand_fields(0, 0, 0, 0, {vast}), "is not a bit count");
}

TEST(RedisBloomHostile, RdbMemoryIsBoundedBeforeAllocation) {
  const header_link h = link_0_01();
  const hand_link l{h.entries, h.error, h.hashes, h.bpe, h.bits, 0, std::string(144, '\0'), 0};
  // 2^60 links: refused from the count alone, before any link is read.
  std::vector<rdb_field> vast = hand_fields(4, 0, 5, 2, {l});
  vast[1] = std::uint64_t{1} << 60;
  field_source src{vast};
  expect_format_error([&] { (void)bloom_chain::load_rdb(4, src, generous); },
                      "1152921504606846976 links need more than");
  EXPECT_EQ(src.next, 4u);
  // The budget counts what the chain holds: exactly enough passes, a byte less does not.
  const bloom_chain one = load_fields(4, hand_fields(4, 0, 5, 2, {l}));
  const std::uint64_t need = one.bytes_held();
  EXPECT_EQ(load_fields(4, hand_fields(4, 0, 5, 2, {l}), need), one);
  expect_format_error([&] { (void)load_fields(4, hand_fields(4, 0, 5, 2, {l}), need - 1); },
                      "bytes allowed");
  // A short stream is the Source's error, passed through unchanged.
  for (std::size_t cut = 0; cut < vast.size(); ++cut) {
    std::vector<rdb_field> part = hand_fields(4, 0, 5, 2, {l});
    part.resize(cut);
    field_source s{part};
    EXPECT_THROW((void)bloom_chain::load_rdb(4, s, generous), rdb_read_error) << cut;
  }
}

TEST(RedisBloomHostile, ScandumpHeaders) {
  replay_counts counts;
  const bloom_chain c = replay(key_record("a05-bf-e0.01-c100-x2-6filters"), counts);
  const std::vector<std::byte> good = c.scandump_header();
  ASSERT_EQ(good.size(), 20u + 6 * 53);
  // Every truncation, and one byte too many.
  for (std::size_t n = 0; n < good.size(); ++n) {
    EXPECT_THROW((void)bloom_chain::from_scandump_header(std::span(good).first(n), generous),
                 format_error)
        << n;
  }
  std::vector<std::byte> longer = good;
  longer.push_back(std::byte{0});
  expect_format_error([&] { (void)bloom_chain::from_scandump_header(longer, generous); },
                      "SCANDUMP header of 339 bytes for 6 links; it must be 338");
  // Garbage: a length that matches no link count.
  std::vector<std::byte> garbage(100);
  for (std::size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<std::byte>(i * 37 + 11);
  EXPECT_THROW((void)bloom_chain::from_scandump_header(garbage, generous), format_error);

  const header_link ok = link_0_01();
  const auto refused = [](const std::vector<std::byte>& h, const std::string& needle) {
    expect_format_error([&] { (void)bloom_chain::from_scandump_header(h, generous); }, needle);
  };
  EXPECT_NO_THROW((void)bloom_chain::from_scandump_header(make_header(0, 5, 2, {ok}), generous));
  refused(make_header(0, 5, 2, {}), "0 links");
  refused(make_header(1, 5, 2, {ok}), "the links hold 0 items but the chain says 1");
  refused(make_header(0, 5 | 32, 2, {ok}), "unknown option bits in 37");
  header_link l = ok;
  l.size = std::uint64_t{1} << 63;
  refused(make_header(0, 5, 2, {l, l}), "sizes overflow 64 bits");
  // 2^60 bytes (and its 2^63 bits): consistent, but over the budget; nothing is allocated.
  l = ok;
  l.bytes = std::uint64_t{1} << 60;
  l.bits = std::uint64_t{1} << 63;
  refused(make_header(0, 5, 2, {l}), "bytes allowed");
  // bytes * 8 wraps: RedisBloom's check would pass and its calloc abort.
  l.bytes = (std::uint64_t{1} << 61) + 18;
  l.bits = 144;
  refused(make_header(0, 5, 2, {l}), "144 bits for 2305843009213693970 bytes");
  l = ok;
  l.bits = 1153;
  refused(make_header(0, 5, 2, {l}), "1153 bits for 144 bytes");
  l = ok;
  l.n2 = 64;
  refused(make_header(0, 5, 2, {l}), "n2 64 is over 63");
  l.n2 = 11;
  refused(make_header(0, 5, 2, {l}), "1152 bits cannot hold 2^11 positions");
  l = ok;
  l.hashes = 9;
  refused(make_header(0, 5, 2, {l}), "hashes 9 is not ceil");
  l = ok;
  l.error = std::nan("");
  refused(make_header(0, 5, 2, {l}), "error rate nan");
  l = ok;
  l.bpe = std::nan("");
  l.hashes = 0x80000000u;  // what x86 makes of (int)ceil(NaN), which RedisBloom would accept
  refused(make_header(0, 5, 2, {l}), "is not ceil");
  // k = 0 matches every item (RedisBloom accepts it: a bpe in (-1.44, 0]).
  l = ok;
  l.bpe = 0;
  l.hashes = 0;
  const bloom_chain everything =
      bloom_chain::from_scandump_header(make_header(0, 5, 2, {l}), generous);
  EXPECT_TRUE(everything.may_contain("anything"));
  // The budget: exactly enough passes, one byte less does not.
  const std::vector<std::byte> h = make_header(0, 5, 2, {ok});
  const std::uint64_t need = bloom_chain::from_scandump_header(h, generous).bytes_held();
  EXPECT_NO_THROW((void)bloom_chain::from_scandump_header(h, need));
  expect_format_error([&] { (void)bloom_chain::from_scandump_header(h, need - 1); },
                      "bytes allowed");
}

TEST(RedisBloomHostile, ChunksAtBadOffsets) {
  // Four links of 80, 192, 456 and 1064 bytes: link 0 is stream offsets 0-79.
  replay_counts counts;
  const bloom_chain golden = replay(key_record("a01-bf-e0.1-c100-x2"), counts);
  bloom_chain c = bloom_chain::from_scandump_header(golden.scandump_header(), generous);
  const bloom_chain empty = c;
  const std::vector<std::byte> ten(10, std::byte{0xff});
  EXPECT_FALSE(c.load_chunk(0, {}));
  EXPECT_FALSE(c.load_chunk(u64_max, ten));  // a negative iterator, cast
  EXPECT_FALSE(c.load_chunk(std::uint64_t{1} << 63, ten));
  EXPECT_FALSE(c.load_chunk(9, ten));   // smaller than the chunk
  EXPECT_FALSE(c.load_chunk(10, ten));  // offset -1
  EXPECT_FALSE(c.load_chunk(86, ten));  // offset 75: runs 5 bytes into the next link
  EXPECT_FALSE(c.load_chunk(82, ten));  // offset 71: runs 1 byte into the next link
  std::uint64_t total = 0;
  for (const bloom_chain::link& l : c.links()) total += l.bytes();
  ASSERT_EQ(total, 80u + 192 + 456 + 1064);
  EXPECT_FALSE(c.load_chunk(total + 11, ten));  // offset total: past the end
  EXPECT_FALSE(c.load_chunk(total + 10, ten));  // offset total - 1: 9 bytes past the end
  EXPECT_FALSE(c.load_chunk(total + 1, {}));    // an empty chunk past the end
  EXPECT_EQ(c, empty);                          // every refusal left the chain unchanged
  EXPECT_TRUE(c.load_chunk(81, ten));           // offset 70: the last 10 bytes of link 0
  EXPECT_TRUE(c.load_chunk(total, {}));         // an empty chunk at the last byte
  EXPECT_TRUE(c.load_chunk(total + 1, std::span(ten).first(1)));  // the very last byte
  EXPECT_EQ(c.links()[0].bit_array()[69], std::byte{0});
  EXPECT_EQ(c.links()[0].bit_array()[70], std::byte{0xff});
  EXPECT_EQ(c.links().back().bit_array().back(), std::byte{0xff});

  EXPECT_EQ(c.scandump_chunk(0), std::nullopt);
  EXPECT_EQ(c.scandump_chunk(total + 1), std::nullopt);
  EXPECT_EQ(c.scandump_chunk(u64_max), std::nullopt);
  // A chunk from the middle of a link runs to that link's end only.
  const auto mid = c.scandump_chunk(71);
  ASSERT_TRUE(mid.has_value());
  EXPECT_EQ(mid->bytes.size(), 10u);
  EXPECT_EQ(mid->next_iter, 81u);
}

// A link over 16 MiB travels in pieces of at most 16 MiB.
TEST(RedisBloomBloom, LargeLinkScandumpsInSixteenMibChunks) {
  bloom_chain c({.capacity = 20'000'000, .error_rate = 0.01, .nonscaling = true});
  ASSERT_EQ(c.links()[0].bytes(), 23'962'648u);  // trunc(2e7 * 9.585...) = 191,701,167 bits
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(c.add(probe_name(i)), add_result::added);
  const auto first = c.scandump_chunk(1);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->bytes.size(), 16'777'216u);
  EXPECT_EQ(first->next_iter, 16'777'217u);
  const auto second = c.scandump_chunk(first->next_iter);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->bytes.size(), 7'185'432u);
  EXPECT_EQ(second->next_iter, 23'962'649u);
  EXPECT_EQ(c.scandump_chunk(second->next_iter), std::nullopt);
  EXPECT_EQ(c.scandump_chunk(5)->bytes.size(), 16'777'216u);  // from offset 4, still capped

  bloom_chain copy = bloom_chain::from_scandump_header(c.scandump_header(), generous);
  EXPECT_TRUE(copy.load_chunk(first->next_iter, first->bytes));
  EXPECT_TRUE(copy.load_chunk(second->next_iter, second->bytes));
  EXPECT_EQ(copy, c);
  EXPECT_TRUE(copy.may_contain(probe_name(999)));
}
