// RedisBloom 2.4's cuckoo filter (interop/redisbloom_cuckoo.hpp) against data the real module
// wrote (tests/data/redisbloom-golden): every CF key's creation commands replayed with their
// replies, INFO, DEBUG and every probe's CF.EXISTS and CF.COUNT answer; CF.LOADCHUNK of the
// recorded chunks and CF.SCANDUMP reproducing them byte for byte; the RDB value, in encoding 4 and
// the older ones; and hostile headers, fields and chunks.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bloomery/errors.hpp>
#include <bloomery/interop/redisbloom_cuckoo.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace {

namespace rb = bloomery::interop::redisbloom;
using rb::cuckoo_chain;
using add_result = cuckoo_chain::add_result;
using json = nlohmann::json;

const std::filesystem::path golden_dir =
    std::filesystem::path(BLOOMERY_TEST_DATA_DIR) / "redisbloom-golden";

// Every cuckoo key of the golden set; AllCuckooKeysAreTested checks the list against the data.
constexpr std::array<std::string_view, 15> cf_keys = {
    "a21-cf-c1000-b2",
    "a22-cf-c1000-b1-x2",
    "a23-cf-c500-b4-mi50-x4",
    "a24-cf-c100-b2-mi5-x1",
    "a25-cf-addnx-c2000-b4",
    "a26-cf-duplicates-c1000",
    "a27-cf-del-compact-c200-x2",
    "a28-cf-insert-insertnx-c3000",
    "a29-cf-add-autocreate-defaults",
    "a30-cf-c64-b2-x0-full",
    "a31-cf-compact-cmd-c100-b1-x1",
    "a32-cf-c100000-b4",
    "a33-cf-c1000-b4-x2-empty",
    "a34-cf-edge-items",
    "a35-cf-c4-b2-mi1-x1-max-expansions",
};

constexpr std::uint64_t generous = std::uint64_t{1} << 30;  // a max_bytes no golden value nears

std::vector<std::byte> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  std::transform(chars.begin(), chars.end(), out.begin(),
                 [](char c) { return static_cast<std::byte>(c); });
  return out;
}

std::string string_of(std::span<const std::byte> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

const json& answers() {
  static const json all = [] {
    std::ifstream in(golden_dir / "answers.json");
    if (!in) throw std::runtime_error("cannot open the golden answers.json");
    return json::parse(in);
  }();
  return all;
}

const json& entry(std::string_view key) {
  for (const json& k : answers()["keys"]) {
    if (k["key"].get_ref<const std::string&>() == key) return k;
  }
  throw std::runtime_error("no golden key " + std::string(key));
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

json error(const char* text) {
  return json{{"error", text}};
}

// The Redis module's part of each CF command, as far as the library leaves it to the module:
// arguments, creating missing keys, the 32-filter limit, and the reply for each outcome.
class replayer {
 public:
  json run(const json& argv) {
    const std::string command = upper(argv[0].get<std::string>());
    if (command == "CF.RESERVE") return reserve(argv);
    if (command == "CF.ADD" || command == "CF.ADDNX") {
      return add(command == "CF.ADDNX", cuckoo_chain::default_capacity, true, argv.begin() + 2,
                 argv.end(), false);
    }
    if (command == "CF.INSERT" || command == "CF.INSERTNX") return insert(argv, command);
    if (command == "CF.DEL") {
      if (!value) return error("Not found");
      return value->remove(argv[2].get_ref<const std::string&>()) ? 1 : 0;
    }
    if (command == "CF.COMPACT") {
      if (!value) return error("Cuckoo filter was not found");
      value->compact();
      return "OK";
    }
    ADD_FAILURE() << "the replay does not know " << command;
    return nullptr;
  }

  std::optional<cuckoo_chain> value;

 private:
  json reserve(const json& argv) {
    if (value) return error("ERR item exists");
    cuckoo_chain::parameters p{.capacity = std::stoll(argv[2].get<std::string>())};
    for (std::size_t i = 3; i + 1 < argv.size(); i += 2) {
      const std::string name = upper(argv[i].get<std::string>());
      const std::int64_t v = std::stoll(argv[i + 1].get<std::string>());
      if (name == "BUCKETSIZE") p.bucket_size = v;
      if (name == "MAXITERATIONS") p.max_iterations = v;
      if (name == "EXPANSION") p.expansion = v;
    }
    value.emplace(p);
    return "OK";
  }

  json insert(const json& argv, const std::string& command) {
    std::int64_t capacity = cuckoo_chain::default_capacity;
    bool create = true;
    std::size_t pos = 2;
    while (pos < argv.size()) {
      const char c = static_cast<char>(std::tolower(argv[pos].get_ref<const std::string&>()[0]));
      if (c == 'c') {
        capacity = std::stoll(argv[pos + 1].get<std::string>());
        pos += 2;
      } else if (c == 'n') {
        create = false;
        ++pos;
      } else {
        ++pos;  // ITEMS
        break;
      }
    }
    return add(command == "CF.INSERTNX", capacity, create, argv.begin() + static_cast<long>(pos),
               argv.end(), true);
  }

  json add(bool unique, std::int64_t capacity, bool create, json::const_iterator first,
           json::const_iterator last, bool multi) {
    if (!value) {
      if (!create) return error("ERR not found");
      value.emplace(cuckoo_chain::parameters{.capacity = capacity});
    }
    if (value->at_max_expansions()) return error("Maximum expansions reached");
    json replies = json::array();
    for (auto it = first; it != last; ++it) {
      const std::string& item = it->get_ref<const std::string&>();
      const add_result r = unique ? value->add_unique(item) : value->add(item);
      switch (r) {
        case add_result::added:
          replies.push_back(1);
          break;
        case add_result::exists:
          replies.push_back(0);
          break;
        case add_result::full:
          if (!multi) return error("Filter is full");
          replies.push_back(-1);
          break;
        case add_result::allocation_failed:
          if (!multi) return error("Memory allocation failure");
          replies.push_back(-1);
          break;
      }
    }
    return multi ? replies : replies.at(0);
  }
};

cuckoo_chain replayed(const json& key) {
  replayer r;
  for (const json& c : key["commands"]) r.run(c["argv"]);
  if (!r.value) throw std::runtime_error("the commands made no value");
  return std::move(*r.value);
}

// Compares every INFO field with RedisBloom's reply; returns how many were compared.
std::size_t expect_info(const cuckoo_chain& f, const json& info) {
  const std::array<std::pair<const char*, std::uint64_t>, 8> ours = {{
      {"Size", f.info_size()},
      {"Number of buckets", f.num_buckets()},
      {"Number of filters", f.num_filters()},
      {"Number of items inserted", f.num_items()},
      {"Number of items deleted", f.num_deletes()},
      {"Bucket size", f.bucket_size()},
      {"Expansion rate", f.expansion()},
      {"Max iterations", f.max_iterations()},
  }};
  EXPECT_EQ(info.size(), 2 * ours.size());
  std::size_t compared = 0;
  for (std::size_t i = 0; i + 1 < info.size(); i += 2) {
    const std::string& name = info[i].get_ref<const std::string&>();
    const auto it = std::find_if(ours.begin(), ours.end(),
                                 [&](const auto& field) { return name == field.first; });
    if (it == ours.end()) {
      ADD_FAILURE() << "unknown INFO field " << name;
      continue;
    }
    EXPECT_EQ(it->second, info[i + 1].get<std::uint64_t>()) << name;
    ++compared;
  }
  return compared;
}

// Compares every probe's EXISTS and COUNT answer; returns how many probes were compared.
std::size_t expect_probes(const cuckoo_chain& f, const json& probes) {
  const json& items = probes["items"];
  const json& exists = probes["exists"];
  const json& count = probes["count"];
  EXPECT_EQ(exists.size(), items.size());
  EXPECT_EQ(count.size(), items.size());
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string& item = items[i].get_ref<const std::string&>();
    const int e = f.may_contain(item) ? 1 : 0;
    const std::uint64_t n = f.count(item);
    if (e != exists[i].get<int>() || n != count[i].get<std::uint64_t>()) {
      if (++mismatches <= 5) {
        ADD_FAILURE() << "probe " << i << " " << json(item) << ": EXISTS " << e << " COUNT " << n
                      << ", RedisBloom answered " << exists[i] << " and " << count[i];
      }
    }
  }
  EXPECT_EQ(mismatches, 0u);
  return items.size();
}

using rdb_field = std::variant<std::uint64_t, double, std::string>;

// An RDB value as its typed fields, in order (what RedisModule_Save* / Load* see).
struct field_sink {
  std::vector<rdb_field> fields;
  void write_unsigned(std::uint64_t v) { fields.emplace_back(v); }
  void write_double(double v) { fields.emplace_back(v); }
  void write_string(std::span<const std::byte> s) { fields.emplace_back(string_of(s)); }
};

struct field_source {
  std::vector<rdb_field> fields;
  std::size_t next = 0;
  const rdb_field& take() {
    if (next == fields.size()) throw std::out_of_range("test RDB input ended");
    return fields[next++];
  }
  std::uint64_t read_unsigned() { return std::get<std::uint64_t>(take()); }
  double read_double() { return std::get<double>(take()); }
  std::string read_string() { return std::get<std::string>(take()); }
};

cuckoo_chain load_fields(int encver, std::vector<rdb_field> fields,
                         std::uint64_t max_bytes = generous) {
  field_source in{std::move(fields)};
  cuckoo_chain c = cuckoo_chain::load_rdb(encver, in, max_bytes);
  EXPECT_EQ(in.next, in.fields.size()) << "fields left unread";
  return c;
}

// A 38-byte SCANDUMP header.
std::vector<std::byte> header(std::uint64_t items, std::uint64_t buckets, std::uint64_t deletes,
                              std::uint64_t filters, std::uint16_t bucket_size,
                              std::uint16_t max_iterations, std::uint16_t expansion) {
  std::vector<std::byte> out;
  const auto put = [&](std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(static_cast<std::byte>(v >> (8 * i)));
  };
  put(items, 8);
  put(buckets, 8);
  put(deletes, 8);
  put(filters, 8);
  put(bucket_size, 2);
  put(max_iterations, 2);
  put(expansion, 2);
  return out;
}

// Runs `f`, which must throw format_error whose message starts "bloomery: " and holds `part`.
template <class F>
void expect_format_error(F&& f, std::string_view part) {
  try {
    f();
    ADD_FAILURE() << "no format_error; expected one mentioning '" << part << "'";
  } catch (const bloomery::format_error& e) {
    const std::string_view what = e.what();
    EXPECT_TRUE(what.starts_with("bloomery: ")) << what;
    EXPECT_NE(what.find(part), std::string_view::npos) << what;
  }
}

// ---- the golden keys ----------------------------------------------------------------------------

class GoldenCuckoo : public testing::TestWithParam<std::string_view> {};

std::string test_name(const testing::TestParamInfo<std::string_view>& info) {
  std::string s(info.param);
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

INSTANTIATE_TEST_SUITE_P(RedisBloom, GoldenCuckoo, testing::ValuesIn(cf_keys), test_name);

TEST(RedisBloomCuckoo, AllCuckooKeysAreTested) {
  std::vector<std::string> in_data;
  for (const json& k : answers()["keys"]) {
    if (k["type"] == "cf") {
      in_data.push_back(k["key"].get<std::string>());
      EXPECT_EQ(k["redis_type"].get<std::string>(), cuckoo_chain::redis_type_name);
    }
  }
  EXPECT_EQ(in_data, std::vector<std::string>(cf_keys.begin(), cf_keys.end()));
}

TEST_P(GoldenCuckoo, ReplayGivesRedisBloomsRepliesInfoDebugAndProbes) {
  const json& key = entry(GetParam());
  replayer r;
  std::size_t replies = 0;
  for (const json& c : key["commands"]) {
    EXPECT_EQ(r.run(c["argv"]), c["reply"])
        << "command " << replies << ": " << c["argv"][0] << " " << c["argv"].dump().substr(0, 120);
    ++replies;
  }
  EXPECT_EQ(replies, key["commands"].size());
  ASSERT_TRUE(r.value.has_value());
  EXPECT_EQ(expect_info(*r.value, key["info"]), 8u);
  EXPECT_EQ(r.value->debug_string(), key["debug"].get<std::string>());
  EXPECT_GE(expect_probes(*r.value, key["probes"]), 2000u);
}

TEST_P(GoldenCuckoo, LoadChunkOfTheRecordedChunksGivesTheSameValue) {
  const json& key = entry(GetParam());
  const cuckoo_chain expected = replayed(key);
  const json& dump = key["scandump"];
  if (dump.empty()) {
    // An empty filter has no SCANDUMP; the AOF rewrite's header and chunks still restore it.
    EXPECT_EQ(expected.num_items(), 0u);
    cuckoo_chain restored =
        cuckoo_chain::from_scandump_header(expected.scandump_header(), generous);
    std::uint64_t iter = 1;
    std::size_t chunks = 0;
    while (const auto c = expected.stream_chunk(iter)) {
      EXPECT_TRUE(restored.load_chunk(c->next_iter, c->bytes));
      iter = c->next_iter;
      ++chunks;
    }
    EXPECT_EQ(chunks, expected.num_filters());
    EXPECT_EQ(restored, expected);
    EXPECT_EQ(expect_probes(restored, key["probes"]), 2000u);
    return;
  }
  ASSERT_EQ(dump[0]["iter"], 1);
  cuckoo_chain loaded = cuckoo_chain::from_scandump_header(
      read_bytes(golden_dir / dump[0]["file"].get<std::string>()), generous);
  for (std::size_t n = 1; n < dump.size(); ++n) {
    const std::vector<std::byte> data = read_bytes(golden_dir / dump[n]["file"].get<std::string>());
    ASSERT_EQ(data.size(), dump[n]["bytes"].get<std::size_t>());
    EXPECT_TRUE(loaded.load_chunk(dump[n]["iter"].get<std::uint64_t>(), data)) << "chunk " << n;
  }
  EXPECT_EQ(loaded, expected);
  EXPECT_EQ(expect_info(loaded, key["info"]), 8u);
  EXPECT_EQ(loaded.debug_string(), key["debug"].get<std::string>());
  EXPECT_GE(expect_probes(loaded, key["probes"]), 2000u);
}

TEST_P(GoldenCuckoo, ScandumpReproducesTheRecordedChunks) {
  const json& key = entry(GetParam());
  const cuckoo_chain f = replayed(key);
  const json& dump = key["scandump"];
  EXPECT_EQ(key["scandump_end"], json::parse("[0, null]"));
  if (dump.empty()) {
    EXPECT_TRUE(f.scandump_refused());
    EXPECT_FALSE(f.scandump_chunk(1).has_value());
    EXPECT_FALSE(f.scandump_chunk(2).has_value());
    return;
  }
  EXPECT_FALSE(f.scandump_refused());
  EXPECT_EQ(f.scandump_header(), read_bytes(golden_dir / dump[0]["file"].get<std::string>()));
  std::uint64_t iter = 1;
  for (std::size_t n = 1; n < dump.size(); ++n) {
    const auto c = f.scandump_chunk(iter);
    ASSERT_TRUE(c.has_value()) << "chunk " << n;
    EXPECT_EQ(c->next_iter, dump[n]["iter"].get<std::uint64_t>()) << "chunk " << n;
    EXPECT_EQ(string_of(c->bytes),
              string_of(read_bytes(golden_dir / dump[n]["file"].get<std::string>())))
        << "chunk " << n;
    iter = c->next_iter;
  }
  EXPECT_FALSE(f.scandump_chunk(iter).has_value());
}

TEST_P(GoldenCuckoo, RdbEncoding4RoundTrips) {
  const cuckoo_chain f = replayed(entry(GetParam()));
  field_sink out;
  f.save_rdb(out);
  ASSERT_EQ(out.fields.size(), 7 + 2 * f.num_filters());
  const cuckoo_chain back = load_fields(cuckoo_chain::rdb_encoding, out.fields, f.bytes_held());
  EXPECT_EQ(back, f);
  field_sink again;
  back.save_rdb(again);
  EXPECT_EQ(again.fields, out.fields);
}

// ---- hashing, sizing and the verbs --------------------------------------------------------------

TEST(RedisBloomCuckoo, FormatDocumentVectors) {
  EXPECT_EQ(cuckoo_chain::hash_of("hello"), 0x1e68d17c457bf117u);
  const cuckoo_chain::position hello = cuckoo_chain::position_of("hello");
  EXPECT_EQ(hello.fingerprint, 159);
  EXPECT_EQ(hello.index1 % 512, 279u);
  EXPECT_EQ(hello.index2 % 512, 156u);
  cuckoo_chain c({.capacity = 1000});
  ASSERT_EQ(c.num_buckets(), 512u);
  EXPECT_EQ(c.add("hello"), add_result::added);
  EXPECT_EQ(c.sub_filter_slots(0)[279 * 2], std::byte{159});
  EXPECT_EQ(c.add(""), add_result::added);  // the empty item hashes to 0: fingerprint 1, bucket 0
  EXPECT_EQ(c.sub_filter_slots(0)[0], std::byte{1});
  EXPECT_EQ(std::count(c.sub_filter_slots(0).begin(), c.sub_filter_slots(0).end(), std::byte{0}),
            1024 - 2);
}

TEST(RedisBloomCuckoo, ReserveSizingAndRounding) {
  EXPECT_EQ(cuckoo_chain({.capacity = 1000}).num_buckets(), 512u);
  EXPECT_EQ(cuckoo_chain({.capacity = 500, .bucket_size = 4}).num_buckets(), 128u);
  EXPECT_EQ(cuckoo_chain({.capacity = 4}).num_buckets(), 2u);
  EXPECT_EQ(cuckoo_chain({.capacity = 1025, .bucket_size = 1}).num_buckets(), 2048u);
  const std::array<std::pair<std::int64_t, std::uint16_t>, 6> rounding = {
      {{0, 0}, {1, 1}, {3, 4}, {5, 8}, {1000, 1024}, {32768, 32768}}};
  for (const auto& [asked, stored] : rounding) {
    EXPECT_EQ(cuckoo_chain({.capacity = 100, .expansion = asked}).expansion(), stored) << asked;
  }
  EXPECT_EQ(cuckoo_chain::slot_bytes_for({.capacity = 1000, .bucket_size = 4}), 1024u);
  const cuckoo_chain d(cuckoo_chain::parameters{});
  EXPECT_EQ(d.debug_string(),
            "bktsize:2 buckets:512 items:0 deletes:0 filters:1 max_iterations:20 expansion:1");
  EXPECT_EQ(d.info_size(), 40u + 16 + 1024);
}

TEST(RedisBloomCuckoo, ReserveRefusesWhatRedisBloomRefuses) {
  const std::array<cuckoo_chain::parameters, 9> refused = {{
      {.capacity = 100, .max_iterations = 0},
      {.capacity = 100, .max_iterations = 65536},
      {.capacity = 100, .bucket_size = 0},
      {.capacity = 1000, .bucket_size = 256},
      {.capacity = 100, .expansion = -1},
      {.capacity = 100, .expansion = 32769},
      {.capacity = 3},
      {.capacity = 9, .bucket_size = 5},
      {.capacity = -4},
  }};
  for (const auto& p : refused) {
    try {
      cuckoo_chain c(p);
      ADD_FAILURE() << "accepted capacity " << p.capacity << " bucket size " << p.bucket_size
                    << " max iterations " << p.max_iterations << " expansion " << p.expansion;
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(std::string_view(e.what()).starts_with("bloomery: ")) << e.what();
    }
  }
  EXPECT_EQ(cuckoo_chain({.capacity = 10, .bucket_size = 5}).num_buckets(), 2u);
  // More than 2^56 - 1 buckets: RedisBloom's "Insufficient memory to create filter".
  EXPECT_THROW(
      cuckoo_chain({.capacity = std::numeric_limits<std::int64_t>::max(), .bucket_size = 1}),
      bloomery::allocation_error);
}

TEST(RedisBloomCuckoo, AddNxStoresNothingForAPossiblyPresentItem) {
  cuckoo_chain c({.capacity = 100});
  EXPECT_EQ(c.add_unique("x"), add_result::added);
  const cuckoo_chain before = c;
  EXPECT_EQ(c.add_unique("x"), add_result::exists);
  EXPECT_EQ(c, before);
  EXPECT_EQ(c.add("x"), add_result::added);  // CF.ADD stores another copy
  EXPECT_EQ(c.count("x"), 2u);
  EXPECT_EQ(c.num_items(), 2u);
}

TEST(RedisBloomCuckoo, CountTwiceWhereBothIndicesNameOneBucket) {
  // In a sub-filter of 2 buckets an even fingerprint gives both indices the same parity (the
  // multiplier 0x5bd1e995 is odd), so the bucket is counted twice.
  std::string item;
  for (int i = 0; i < 1000 && item.empty(); ++i) {
    std::string candidate = "k";
    candidate += std::to_string(i);
    if (cuckoo_chain::position_of(candidate).fingerprint % 2 == 0) item = candidate;
  }
  ASSERT_FALSE(item.empty());
  cuckoo_chain c({.capacity = 4});
  ASSERT_EQ(c.num_buckets(), 2u);
  EXPECT_EQ(c.add(item), add_result::added);
  EXPECT_TRUE(c.may_contain(item));
  EXPECT_EQ(c.count(item), 2u);
  EXPECT_TRUE(c.remove(item));
  EXPECT_EQ(c.count(item), 0u);
}

TEST(RedisBloomCuckoo, DeleteTakesTheNewestCopyThenCompacts) {
  const std::uint8_t fp = cuckoo_chain::position_of("a").fingerprint;
  // Two sub-filters of one bucket of two slots: the fingerprint in sub-filter 0 slot 0 and in
  // sub-filter 1 slot 1.
  cuckoo_chain c = cuckoo_chain::from_scandump_header(header(2, 1, 0, 2, 2, 1, 1), 1 << 20);
  const std::array<std::byte, 2> first = {std::byte{fp}, std::byte{0}};
  const std::array<std::byte, 2> second = {std::byte{0}, std::byte{fp}};
  ASSERT_TRUE(c.load_chunk(3, first));
  ASSERT_TRUE(c.load_chunk(5, second));
  EXPECT_EQ(c.count("a"), 4u);  // one bucket per sub-filter: each copy counted twice
  EXPECT_TRUE(c.remove("a"));
  // The newest copy went; then 1 delete > 1 item * 0.1 compacted: sub-filter 1 emptied and went.
  EXPECT_EQ(c.num_filters(), 1u);
  EXPECT_EQ(c.num_items(), 1u);
  EXPECT_EQ(c.num_deletes(), 0u);
  EXPECT_EQ(c.sub_filter_slots(0)[0], std::byte{fp});
  EXPECT_TRUE(c.remove("a"));
  EXPECT_EQ(c.num_deletes(), 1u);  // one sub-filter: no compaction
  EXPECT_FALSE(c.remove("a"));
  EXPECT_EQ(c.num_items(), 0u);
}

TEST(RedisBloomCuckoo, DeleteTakesTheFirstBucketsLowestSlot) {
  std::string item;
  cuckoo_chain::position p{};
  for (int i = 0; p.index1 % 4 == p.index2 % 4; ++i) {
    item = "del:" + std::to_string(i);
    p = cuckoo_chain::position_of(item);
  }
  const std::size_t b1 = p.index1 % 4;
  const std::size_t b2 = p.index2 % 4;
  // One sub-filter of four buckets of two slots; the fingerprint in both slots of the first
  // bucket and in slot 0 of the second.
  cuckoo_chain c = cuckoo_chain::from_scandump_header(header(3, 4, 0, 1, 2, 1, 1), 1 << 20);
  std::array<std::byte, 8> slots{};
  slots[2 * b1] = slots[2 * b1 + 1] = slots[2 * b2] = std::byte{p.fingerprint};
  ASSERT_TRUE(c.load_chunk(9, slots));
  EXPECT_EQ(c.count(item), 3u);
  const auto at = [&](std::size_t i) { return c.sub_filter_slots(0)[i]; };
  EXPECT_TRUE(c.remove(item));
  EXPECT_EQ(at(2 * b1), std::byte{0});
  EXPECT_EQ(at(2 * b1 + 1), std::byte{p.fingerprint});
  EXPECT_TRUE(c.remove(item));
  EXPECT_EQ(at(2 * b1 + 1), std::byte{0});
  EXPECT_EQ(at(2 * b2), std::byte{p.fingerprint});
  EXPECT_TRUE(c.remove(item));
  EXPECT_EQ(at(2 * b2), std::byte{0});
  EXPECT_FALSE(c.remove(item));
  EXPECT_EQ(c.num_items(), 0u);
  EXPECT_EQ(c.num_deletes(), 3u);
}

TEST(RedisBloomCuckoo, CompactionAfterADeleteStopsWhereCompactGoesOn) {
  // Three sub-filters of two one-slot buckets. Even fingerprints have both indices in one bucket
  // (the multiplier 0x5bd1e995 is odd), so each of 100-106 can live in one bucket only.
  std::string item;
  std::uint8_t fp = 0;
  for (int i = 0; fp % 2 == 0 || (fp >= 100 && fp <= 106); ++i) {
    item = "item:" + std::to_string(i);
    fp = cuckoo_chain::position_of(item).fingerprint;
  }
  const std::size_t b = cuckoo_chain::position_of(item).index1 % 2;
  const auto slots = [&](std::uint8_t at_b, std::uint8_t other) {
    std::array<std::byte, 2> s{};
    s[b] = std::byte{at_b};
    s[1 - b] = std::byte{other};
    return s;
  };
  cuckoo_chain c = cuckoo_chain::from_scandump_header(header(5, 2, 0, 3, 1, 1, 1), 1 << 20);
  ASSERT_TRUE(c.load_chunk(3, slots(0, 100)));
  ASSERT_TRUE(c.load_chunk(5, slots(104, 102)));
  ASSERT_TRUE(c.load_chunk(7, slots(fp, 106)));
  // The delete leaves 1 delete > 4 items * 0.1: sub-filter 2 keeps 106 (both older buckets are
  // full), so the compaction stops there and 104 stays in sub-filter 1.
  EXPECT_TRUE(c.remove(item));
  EXPECT_EQ(c.num_items(), 4u);
  EXPECT_EQ(c.num_deletes(), 0u);
  EXPECT_EQ(c.num_filters(), 3u);
  EXPECT_EQ(string_of(c.sub_filter_slots(0)), string_of(slots(0, 100)));
  EXPECT_EQ(string_of(c.sub_filter_slots(1)), string_of(slots(104, 102)));
  EXPECT_EQ(string_of(c.sub_filter_slots(2)), string_of(slots(0, 106)));
  // CF.COMPACT goes on to sub-filter 1 and moves 104 into sub-filter 0; 102 cannot move.
  c.compact();
  EXPECT_EQ(c.num_filters(), 3u);
  EXPECT_EQ(string_of(c.sub_filter_slots(0)), string_of(slots(104, 100)));
  EXPECT_EQ(string_of(c.sub_filter_slots(1)), string_of(slots(0, 102)));
  EXPECT_EQ(string_of(c.sub_filter_slots(2)), string_of(slots(0, 106)));
}

TEST(RedisBloomCuckoo, FullFilterWithExpansionZeroIsLeftUnchanged) {
  cuckoo_chain f = replayed(entry("a30-cf-c64-b2-x0-full"));
  const std::string last = entry("a30-cf-c64-b2-x0-full")["commands"].back()["argv"][2];
  const cuckoo_chain before = f;
  EXPECT_EQ(f.add(last), add_result::full);
  EXPECT_EQ(f, before);
  EXPECT_FALSE(f.next_sub_filter_buckets().has_value());
}

TEST(RedisBloomCuckoo, GrowthRefusalsAnswerAllocationFailedAndChangeNothing) {
  // Base count 2^55 and expansion 2: the next sub-filter would have 2^56 buckets.
  cuckoo_chain wide =
      load_fields(4, {1u, std::uint64_t{1} << 55, 1u, 0u, 1u, 1u, 2u, 1u, std::string(1, '\x01')});
  EXPECT_FALSE(wide.next_sub_filter_buckets().has_value());
  cuckoo_chain before = wide;
  EXPECT_EQ(wide.add("a"), add_result::allocation_failed);
  EXPECT_EQ(wide, before);
  // Expansion 65535 over five sub-filters: 65535^5 buckets (RedisBloom's pow() then overflows).
  std::vector<rdb_field> fields = {5u, 1u, 5u, 0u, 1u, 1u, 65535u};
  for (int i = 0; i < 5; ++i) {
    fields.emplace_back(1u);
    fields.emplace_back(std::string(1, '\x02'));
  }
  cuckoo_chain steep = load_fields(4, fields);
  EXPECT_FALSE(steep.next_sub_filter_buckets().has_value());
  before = steep;
  EXPECT_EQ(steep.add("a"), add_result::allocation_failed);
  EXPECT_EQ(steep, before);
  // 65535 sub-filters, the most RedisBloom's 16-bit count holds.
  fields = {65535u, 1u, 65535u, 0u, 1u, 1u, 1u};
  for (int i = 0; i < 65535; ++i) {
    fields.emplace_back(1u);
    fields.emplace_back(std::string(1, '\x03'));
  }
  cuckoo_chain most = load_fields(4, fields);
  EXPECT_TRUE(most.at_max_expansions());
  EXPECT_TRUE(most.at_max_expansions(65535));
  before = most;
  EXPECT_EQ(most.add("a"), add_result::allocation_failed);
  EXPECT_EQ(most, before);
  // A growth that is allowed: 2 buckets, expansion 2, one sub-filter: the next has 4 buckets.
  cuckoo_chain small({.capacity = 2, .bucket_size = 1, .max_iterations = 1, .expansion = 2});
  ASSERT_EQ(small.num_buckets(), 2u);
  EXPECT_EQ(small.next_sub_filter_buckets(), std::optional<std::uint64_t>(4));
  EXPECT_EQ(small.next_sub_filter_bytes(), std::optional<std::uint64_t>(4));
}

TEST(RedisBloomCuckoo, ThirtyTwoFilterLimitIsTheCommandsToCheck) {
  cuckoo_chain f = replayed(entry("a35-cf-c4-b2-mi1-x1-max-expansions"));
  EXPECT_EQ(f.num_filters(), 32u);
  EXPECT_TRUE(f.at_max_expansions());
  EXPECT_FALSE(f.at_max_expansions(33));
  // The library itself still grows (one CF.INSERT of many items can pass 32 sub-filters).
  std::uint64_t added = 0;
  for (int i = 0; i < 200 && f.num_filters() == 32; ++i) {
    if (f.add("more:" + std::to_string(i)) == add_result::added) ++added;
  }
  EXPECT_EQ(f.num_filters(), 33u);
  EXPECT_EQ(f.num_items(), 125u + added);
}

// ---- SCANDUMP chunking --------------------------------------------------------------------------

TEST(RedisBloomCuckoo, IteratorInsideASmallSubFilterGetsAllOfIt) {
  const cuckoo_chain f = replayed(entry("a21-cf-c1000-b2"));
  const auto c = f.scandump_chunk(5);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->next_iter, 5u + 1024);
  EXPECT_EQ(string_of(c->bytes), string_of(f.sub_filter_slots(0)));
  const auto d = f.scandump_chunk(1025 + 1000);  // inside sub-filter 1
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->next_iter, 2025u + 1024);
  EXPECT_EQ(string_of(d->bytes), string_of(f.sub_filter_slots(1)));
  EXPECT_FALSE(f.scandump_chunk(2049).has_value());
  EXPECT_THROW((void)f.scandump_chunk(0), std::invalid_argument);
}

TEST(RedisBloomCuckoo, SubFiltersOver16MiBGoInPiecesFromTheIterator) {
  constexpr std::uint64_t piece = std::uint64_t{16} << 20;
  cuckoo_chain f({.capacity = std::int64_t{32} << 20, .bucket_size = 1});
  ASSERT_EQ(f.sub_filter_slots(0).size(), 2 * piece);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(f.add("big:" + std::to_string(i)), add_result::added);
  const auto all = f.sub_filter_slots(0);
  const auto first = f.scandump_chunk(1);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->next_iter, 1 + piece);
  EXPECT_EQ(first->bytes.data(), all.data());
  EXPECT_EQ(first->bytes.size(), piece);
  const auto second = f.scandump_chunk(1 + piece);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->next_iter, 1 + 2 * piece);
  EXPECT_EQ(second->bytes.data(), all.data() + piece);
  EXPECT_EQ(second->bytes.size(), piece);
  EXPECT_FALSE(f.scandump_chunk(1 + 2 * piece).has_value());
  const auto inside = f.scandump_chunk(5);  // from p = 4, not from the sub-filter's start
  ASSERT_TRUE(inside.has_value());
  EXPECT_EQ(inside->next_iter, 5 + piece);
  EXPECT_EQ(inside->bytes.data(), all.data() + 4);
  EXPECT_EQ(inside->bytes.size(), piece);
  const auto tail = f.scandump_chunk(2 * piece - 9);  // the last 10 bytes
  ASSERT_TRUE(tail.has_value());
  EXPECT_EQ(tail->next_iter, 2 * piece + 1);
  EXPECT_EQ(tail->bytes.size(), 10u);
  // The pieces restore the filter.
  cuckoo_chain back = cuckoo_chain::from_scandump_header(f.scandump_header(), generous);
  EXPECT_TRUE(back.load_chunk(first->next_iter, first->bytes));
  EXPECT_TRUE(back.load_chunk(second->next_iter, second->bytes));
  EXPECT_EQ(back, f);
}

TEST(RedisBloomCuckoo, LoadChunkRefusesWhatRedisBloomRefuses) {
  const cuckoo_chain original = replayed(entry("a21-cf-c1000-b2"));  // sub-filters of 1024 bytes
  cuckoo_chain f = original;
  const std::vector<std::byte> four(4, std::byte{0xab});
  EXPECT_FALSE(f.load_chunk(0, four));
  EXPECT_FALSE(f.load_chunk(1, four));                                  // the header's iterator
  EXPECT_FALSE(f.load_chunk(4, four));                                  // iter - 1 < length
  EXPECT_FALSE(f.load_chunk(100, {}));                                  // empty data
  EXPECT_FALSE(f.load_chunk(1 + 1020 + 8, std::vector<std::byte>(8)));  // spans sub-filters 0, 1
  EXPECT_FALSE(f.load_chunk(1 + 2048 + 1021 + 4, four));  // 1021 past the end: 1025 > 1024
  EXPECT_FALSE(f.load_chunk(std::numeric_limits<std::uint64_t>::max(), four));
  EXPECT_EQ(f, original);
  // As in RedisBloom, a piece past the end by less than the newest sub-filter's size lands in the
  // newest sub-filter, at its offset past the end.
  EXPECT_TRUE(f.load_chunk(1 + 2048 + 10 + 4, four));
  EXPECT_EQ(string_of(f.sub_filter_slots(1).subspan(10, 4)), string_of(four));
  EXPECT_TRUE(f.load_chunk(1 + 1020 + 4, four));  // the last four bytes of sub-filter 0
  EXPECT_EQ(string_of(f.sub_filter_slots(0).subspan(1020, 4)), string_of(four));
}

// ---- RDB encodings ------------------------------------------------------------------------------

TEST(RedisBloomCuckoo, RdbFieldsAreRedisBloomsEncoding4) {
  const json& key = entry("a21-cf-c1000-b2");
  field_sink out;
  replayed(key).save_rdb(out);
  const std::string sub0 =
      string_of(read_bytes(golden_dir / key["scandump"][1]["file"].get<std::string>()));
  const std::string sub1 =
      string_of(read_bytes(golden_dir / key["scandump"][2]["file"].get<std::string>()));
  const std::vector<rdb_field> expected = {2u, 512u, 900u, 0u, 2u, 20u, 1u, 512u, sub0, 512u, sub1};
  EXPECT_EQ(out.fields, expected);
}

TEST(RedisBloomCuckoo, OlderEncodingsLoadWithTheDocumentedDefaults) {
  const json& key = entry("a21-cf-c1000-b2");  // bucket size 2, 20 iterations, expansion 1
  const cuckoo_chain expected = replayed(key);
  const std::string sub0 =
      string_of(read_bytes(golden_dir / key["scandump"][1]["file"].get<std::string>()));
  const std::string sub1 =
      string_of(read_bytes(golden_dir / key["scandump"][2]["file"].get<std::string>()));
  for (int encver = 0; encver < 4; ++encver) {
    const cuckoo_chain old = load_fields(encver, {2u, 512u, 900u, sub0, sub1});
    EXPECT_EQ(old, expected) << "encoding " << encver;
  }
  const cuckoo_chain small = load_fields(
      2, {3u, 4u, 7u, std::string(8, '\0'), std::string(8, '\x05'), std::string(8, '\0')});
  EXPECT_EQ(small.num_filters(), 3u);
  EXPECT_EQ(small.num_items(), 7u);
  EXPECT_EQ(small.num_deletes(), 0u);
  EXPECT_EQ(small.bucket_size(), 2u);
  EXPECT_EQ(small.max_iterations(), 20u);
  EXPECT_EQ(small.expansion(), 1u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(small.sub_filter_buckets(i), 4u);
  field_sink out;
  small.save_rdb(out);
  const std::vector<rdb_field> rewritten = {3u,
                                            4u,
                                            7u,
                                            0u,
                                            2u,
                                            20u,
                                            1u,
                                            4u,
                                            std::string(8, '\0'),
                                            4u,
                                            std::string(8, '\x05'),
                                            4u,
                                            std::string(8, '\0')};
  EXPECT_EQ(out.fields, rewritten);
}

TEST(RedisBloomCuckoo, RdbAcceptsWhatRedisBloomAcceptsThoughItNeverWritesIt) {
  // maxIterations 0, expansion 3 (not rounded), counts that are not numBuckets * expansion^i.
  const cuckoo_chain odd = load_fields(
      4, {2u, 8u, 0u, 0u, 1u, 0u, 3u, 3u, std::string(3, '\0'), 5u, std::string(5, '\0')});
  EXPECT_EQ(odd.max_iterations(), 0u);
  EXPECT_EQ(odd.expansion(), 3u);
  EXPECT_EQ(odd.sub_filter_buckets(0), 3u);
  EXPECT_EQ(odd.sub_filter_buckets(1), 5u);
  EXPECT_EQ(odd.info_size(), 40u + 32 + 8);
  // Its header is one CF.LOADCHUNK refuses (maxIterations 0), as RedisBloom's would be.
  expect_format_error(
      [&] { (void)cuckoo_chain::from_scandump_header(odd.scandump_header(), generous); },
      "maxIterations");
}

TEST(RedisBloomCuckoo, HostileRdbFieldsAreRefused) {
  constexpr std::uint64_t record = cuckoo_chain::sub_filter_record_bytes();
  const std::string two(2, '\0');
  expect_format_error([] { (void)load_fields(5, {}); }, "encoding version 5");
  expect_format_error([] { (void)load_fields(-1, {}); }, "encoding version -1");
  expect_format_error([] { (void)load_fields(4, {0u, 1u}); }, "numFilters = 0");
  expect_format_error([] { (void)load_fields(3, {1u, 0u}); }, "numBuckets = 0");
  expect_format_error([] { (void)load_fields(4, {65536u, 1u}); }, "65535");
  expect_format_error([] { (void)load_fields(4, {1u, 1u, 0u, 0u, 0u}); }, "bucketSize = 0");
  expect_format_error([] { (void)load_fields(4, {1u, 1u, 0u, 0u, 256u}); }, "bucketSize = 256");
  expect_format_error(
      [] {
        (void)load_fields(4, {1u, 1u, 0u, 0u, 2u, 65536u});
      },
      "maxIterations = 65536");
  expect_format_error(
      [] {
        (void)load_fields(4, {1u, 1u, 0u, 0u, 2u, 20u, 65536u});
      },
      "expansion = 65536");
  expect_format_error([] { (void)load_fields(4, {1u, 1u, 0u, 0u, 2u, 20u, 1u, 0u}); }, "0 buckets");
  expect_format_error(
      [] {
        (void)load_fields(4, {1u, 1u, 0u, 0u, 2u, 20u, 1u, std::uint64_t{1} << 56});
      },
      "buckets; allowed are 1 to 2^56 - 1");
  expect_format_error(
      [] {
        (void)load_fields(3, {1u, std::uint64_t{1} << 56, 0u});
      },
      "buckets; allowed are 1 to 2^56 - 1");
  // 2^60 bytes declared: refused before the string is read (and so before anything is allocated).
  expect_format_error(
      [] {
        (void)load_fields(4, {1u, 1u, 0u, 0u, 32u, 20u, 1u, std::uint64_t{1} << 55});
      },
      "over the limit");
  expect_format_error(
      [] {
        (void)load_fields(
            4, {2u, 1u, 0u, 0u, 2u, 20u, 1u, 1u, std::string(2, '\0'), 1u, std::string(2, '\0')},
            2 * record + 3);
      },
      "over the limit");
  expect_format_error(
      [&] {
        (void)load_fields(4, {1u, 1u, 0u, 0u, 2u, 20u, 1u, 1u, std::string(3, 'x')});
      },
      "3 bytes of slots");
  expect_format_error([&] { (void)load_fields(1, {1u, 2u, 0u, two}); }, "2 bytes of slots");
  // Slot offsets RedisBloom cuts to 32 bits would leave an array 2^32 + 1 bytes long.
  expect_format_error(
      [] {
        (void)load_fields(4, {1u, 1u, 0u, 0u, 3u, 20u, 1u, ((std::uint64_t{1} << 32) + 1) / 3 + 1},
                          std::uint64_t{1} << 40);
      },
      "32-bit slot offsets");
  // A short input is the Source's to report; it passes through unchanged.
  field_source truncated{{2u, 512u, 900u, std::string(1024, '\0')}};
  EXPECT_THROW((void)cuckoo_chain::load_rdb(2, truncated, generous), std::out_of_range);
}

TEST(RedisBloomCuckoo, HostileScandumpHeadersAreRefused) {
  constexpr std::uint64_t record = cuckoo_chain::sub_filter_record_bytes();
  const auto from = [](const std::vector<std::byte>& h, std::uint64_t max = generous) {
    return [h, max] { (void)cuckoo_chain::from_scandump_header(h, max); };
  };
  std::vector<std::byte> good = header(1, 512, 0, 2, 2, 20, 1);
  EXPECT_EQ(cuckoo_chain::from_scandump_header(good, generous).num_filters(), 2u);
  expect_format_error(from({}), "0 bytes");
  expect_format_error(from(std::vector<std::byte>(good.begin(), good.end() - 1)), "37 bytes");
  std::vector<std::byte> longer = good;
  longer.push_back(std::byte{0});
  expect_format_error(from(longer), "39 bytes");
  expect_format_error(from(header(1, 512, 0, 0, 2, 20, 1)), "numFilters = 0");
  expect_format_error(from(header(1, 512, 0, 65536, 2, 20, 1)), "numFilters = 65536");
  expect_format_error(from(header(1, 512, 0, 65537, 2, 20, 1)), "numFilters = 65537");
  expect_format_error(from(header(1, 512, 0, 1, 0, 20, 1)), "bucketSize = 0");
  expect_format_error(from(header(1, 512, 0, 1, 256, 20, 1)), "bucketSize = 256");
  expect_format_error(from(header(1, 0, 0, 1, 2, 20, 1)), "numBuckets = 0");
  expect_format_error(from(header(1, 511, 0, 1, 2, 20, 1)), "numBuckets = 511");
  expect_format_error(from(header(1, std::uint64_t{1} << 56, 0, 1, 2, 20, 1)), "numBuckets");
  expect_format_error(from(header(1, 512, 0, 1, 2, 0, 1)), "maxIterations = 0");
  expect_format_error(from(header(1, 512, 0, 2, 2, 20, 0)), "expansion = 0 with 2");
  // 2^40 buckets growing by 2^15: sub-filter 2 would have 2^70 buckets.
  expect_format_error(from(header(1, std::uint64_t{1} << 40, 0, 3, 1, 20, 32768),
                           std::numeric_limits<std::uint64_t>::max()),
                      "sub-filter 2 would have more than 2^56 - 1 buckets");
  // 2^60 bytes asked for: refused against max_bytes before any allocation.
  expect_format_error(from(header(1, std::uint64_t{1} << 55, 0, 1, 32, 20, 1)), "over the limit");
  expect_format_error(from(header(1, 1, 0, 65535, 255, 20, 1), 65535 * record), "over the limit");
  expect_format_error(from(header(1, 1, 0, 3, 1, 20, 1), 3 * record + 2), "over the limit");
  EXPECT_EQ(cuckoo_chain::from_scandump_header(header(1, 1, 0, 3, 1, 20, 1), 3 * record + 3)
                .num_filters(),
            3u);
  // What RedisBloom accepts: a non-power-of-two expansion, expansion 0 with one sub-filter.
  const cuckoo_chain three =
      cuckoo_chain::from_scandump_header(header(1, 4, 0, 3, 1, 20, 3), generous);
  EXPECT_EQ(three.sub_filter_buckets(2), 36u);
  EXPECT_EQ(
      cuckoo_chain::from_scandump_header(header(0, 4, 9, 1, 1, 20, 0), generous).num_deletes(), 9u);
}

}  // namespace
