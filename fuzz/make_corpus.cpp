// Writes the seed corpora of the fuzz targets: small valid inputs of every kind, edge cases
// included, so that the fuzzer starts past the magic numbers and checksums.
// Usage: make_corpus DIR (DIR/<target>/<seed> are created; the committed ones are fuzz/corpus).
#include <unistd.h>

#include <bit>
#include <bloomery/any_filter.hpp>
#include <bloomery/bip37.hpp>
#include <bloomery/interop/guava.hpp>
#include <bloomery/interop/redisbloom_bloom.hpp>
#include <bloomery/interop/redisbloom_cuckoo.hpp>
#include <bloomery/lsm/sstable.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <span>
#include <string>
#include <vector>

namespace {

using namespace bloomery;
namespace fs = std::filesystem;
using bytes = std::vector<std::byte>;

fs::path root;

void write(const std::string& target, const std::string& name, const bytes& content) {
  fs::create_directories(root / target);
  std::ofstream out(root / target / name, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(content.data()),
            static_cast<std::streamsize>(content.size()));
}

bytes text(const std::string& s) {
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return {p, p + s.size()};
}

std::vector<std::string> keys(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("key" + std::to_string(i));
  return out;
}

template <class F>
F with_keys(F f, int n) {
  for (const std::string& k : keys(n)) (void)f.insert(k);
  return f;
}

secret_key fixed_key() {
  secret_key k;
  for (std::size_t i = 0; i < k.bytes.size(); ++i)
    k.bytes[i] = static_cast<std::uint8_t>(i * 7 + 1);
  return k;
}

void filter_files() {
  const auto put = [](const std::string& name, const auto& f) {
    write("deserialize_any", name, serialize(f));
  };
  put("bloom_empty", bloom_filter(target{10, 0.01}));
  put("bloom_1key", with_keys(bloom_filter(target{1, 0.01}), 1));
  put("bloom_keyed", with_keys(bloom_filter(target{20, 0.01}, fixed_key()), 20));
  put("bloom_seed42", with_keys(bloom_filter(target{20, 0.1}, 42), 5));
  put("bloom_max_hashes", with_keys(bloom_filter(bloom_parameters{1000, 255}), 3));
  put("bloom_one_bit", with_keys(bloom_filter(bloom_parameters{1, 1}), 1));
  put("bloom_full", with_keys(bloom_filter(bloom_parameters{64, 4}), 200));
  put("blocked_empty", blocked_bloom_filter(target{10, 0.01}));
  put("blocked_keys", with_keys(blocked_bloom_filter(target{30, 0.01}), 30));
  put("blocked_k16", with_keys(blocked_bloom_filter(bloom_parameters{1024, 16}), 10));
  put("blocked_keyed", with_keys(blocked_bloom_filter(target{8, 0.05}, fixed_key()), 8));
  put("counting4", with_keys(counting_bloom_filter(target{20, 0.01}), 20));
  put("counting8", with_keys(counting_bloom_filter(target{20, 0.01}, counting_options{8}), 20));
  {
    counting_bloom_filter f(counting_parameters{64, 4, 4});
    for (int i = 0; i < 20; ++i) f.insert("same");  // saturates its counters
    put("counting_saturated", with_keys(f, 3));
  }
  put("counting_empty_keyed", counting_bloom_filter(target{5, 0.1}, fixed_key()));
  put("cuckoo_plain", with_keys(cuckoo_filter(cuckoo_parameters{8, 8}), 10));
  put("cuckoo_semi_sorted", with_keys(cuckoo_filter(target{50, 0.001}), 40));
  put("cuckoo_f16_semi", with_keys(cuckoo_filter(cuckoo_parameters{16, 4, 50, true}), 9));
  put("cuckoo_empty", cuckoo_filter(cuckoo_parameters{12, 3}));
  {
    cuckoo_filter f(cuckoo_parameters{4, 2, 10});
    for (int i = 0; f.insert(i); ++i) {
    }
    put("cuckoo_full_stash", f);
  }
  {
    cuckoo_filter f = with_keys(cuckoo_filter(target{30, 0.01}, 7), 20);
    for (const std::string& k : keys(5)) (void)f.remove(k);
    put("cuckoo_removed", f);
  }
  put("scalable_one", with_keys(scalable_bloom_filter(target{4, 0.01}), 2));
  put("scalable_many", with_keys(scalable_bloom_filter(target{2, 0.01}), 40));
  put("scalable_growth1",
      with_keys(scalable_bloom_filter(target{1, 0.1}, scalable_options{1.0, 0.5}), 6));
  put("scalable_keyed", with_keys(scalable_bloom_filter(target{3, 0.05}, fixed_key()), 10));
  put("scalable_cuckoo_empty", scalable_cuckoo_filter(scalable_cuckoo_parameters{10}));
  put("scalable_cuckoo_one", with_keys(scalable_cuckoo_filter(target{20, 0.01}), 10));
  put("scalable_cuckoo_grown", with_keys(scalable_cuckoo_filter(scalable_cuckoo_parameters{
                                             .initial_capacity = 4, .expansion = 2}),
                                         60));
  put("scalable_cuckoo_plain_x4",
      with_keys(
          scalable_cuckoo_filter(scalable_cuckoo_parameters{
              .initial_capacity = 3, .fingerprint_bits = 12, .expansion = 4, .semi_sorted = false}),
          50));
  put("scalable_cuckoo_keyed", with_keys(scalable_cuckoo_filter(target{5, 0.05}, fixed_key()), 12));
  {
    scalable_cuckoo_filter f(scalable_cuckoo_parameters{
        .initial_capacity = 2, .fingerprint_bits = 6, .max_kicks = 5, .max_sub_filters = 2});
    for (int i = 0; f.insert(i); ++i) {
    }
    put("scalable_cuckoo_full", f);
  }
  {
    scalable_cuckoo_filter f = with_keys(
        scalable_cuckoo_filter(scalable_cuckoo_parameters{.initial_capacity = 6, .expansion = 2}),
        30);
    for (const std::string& k : keys(8)) (void)f.remove(k);
    put("scalable_cuckoo_removed", f);
  }
  const std::vector<std::string> none;
  put("static_empty", static_filter::build(none, 0.01));
  put("static_1key", static_filter::build(keys(1), 0.01));
  put("static_8bit", static_filter::build(keys(100), fingerprint_width::bits8));
  put("static_16bit", static_filter::build(keys(30), fingerprint_width::bits16));
  put("static_7bit_four_slots", static_filter::build(keys(100), 0.01));  // 56-byte block
  put("static_14bit_four_slots", static_filter::build(keys(500), 0.0001));
  put("static_keyed_dups",
      static_filter::build(std::vector<std::string>{"a", "a", "b"}, 0.01, fixed_key()));
  write("deserialize_any", "truncated_header", text("BLOOMERY\x01"));
}

// lsm_readers input: u8 flags, u16 manifest length, the manifest, the table (lsm_readers.cpp).
bytes lsm_input(std::uint8_t flags, const std::string& manifest, const bytes& table) {
  bytes out{std::byte{flags}, std::byte(manifest.size() & 0xff), std::byte(manifest.size() >> 8)};
  const bytes m = text(manifest);
  out.insert(out.end(), m.begin(), m.end());
  out.insert(out.end(), table.begin(), table.end());
  return out;
}

bytes table(lsm::table_filter_kind kind, int n, bool tombstones = false) {
  std::vector<lsm::entry> entries;
  char buf[16];
  for (int i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "key%03d", i);
    entries.push_back({buf, "value" + std::to_string(i), tombstones && i % 3 == 0});
  }
  const fs::path tmp =
      fs::temp_directory_path() / ("bloomery-make-corpus-" + std::to_string(::getpid()) + ".sst");
  lsm::write_table(tmp, entries, kind, 0.01, 48);
  std::ifstream in(tmp, std::ios::binary);
  const std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(tmp);
  return text(s);
}

// The manifest body of store.cpp's format, and the whole file with its checksum line.
std::string manifest_body(std::uint64_t next, bool with_table) {
  return "bloomery-lsm-manifest 1\nnext " + std::to_string(next) + "\n" +
         (with_table ? "table 000001.sst\n" : "");
}
std::string manifest_file(const std::string& body) {
  char sum[40];
  std::snprintf(sum, sizeof sum, "checksum %016llx\n",
                static_cast<unsigned long long>(XXH3_64bits(body.data(), body.size())));
  return body + sum;
}

void lsm_inputs() {
  const auto put = [](const std::string& name, const bytes& b) { write("lsm_readers", name, b); };
  constexpr std::uint8_t fix_table = 1, fix_manifest = 2, store_mode = 4;
  put("table_none", lsm_input(0, "", table(std::nullopt, 12)));
  put("table_bloom", lsm_input(0, "", table(filter_kind::bloom, 12)));
  put("table_blocked", lsm_input(0, "", table(filter_kind::blocked_bloom, 12, true)));
  put("table_static", lsm_input(0, "", table(filter_kind::static_filter, 12)));
  put("table_static_empty", lsm_input(0, "", table(filter_kind::static_filter, 0)));
  put("table_none_empty", lsm_input(0, "", table(std::nullopt, 0)));
  put("table_bloom_fixed", lsm_input(fix_table, "", table(filter_kind::bloom, 5)));
  put("table_static_fixed", lsm_input(fix_table, "", table(filter_kind::static_filter, 5, true)));
  const bytes t = table(filter_kind::bloom, 10, true);
  put("store", lsm_input(store_mode, manifest_file(manifest_body(2, true)), t));
  put("store_fixed", lsm_input(store_mode | fix_manifest | fix_table, manifest_body(2, true), t));
  put("store_static", lsm_input(store_mode | fix_manifest, manifest_body(2, true),
                                table(filter_kind::static_filter, 7)));
  put("store_empty", lsm_input(store_mode | fix_manifest, manifest_body(1, false), {}));
  put("store_no_manifest", lsm_input(store_mode, "", t));
}

// cli_keys input: field, delimiter choice, mode (files, pipe), pipe piece size, the lengths of
// all files but the last, then the files' bytes (cli_keys.cpp).
void key_inputs() {
  const auto put = [](const std::string& name, std::initializer_list<std::uint8_t> head,
                      const std::string& data) {
    bytes b;
    for (const std::uint8_t h : head) b.push_back(std::byte{h});
    const bytes d = text(data);
    b.insert(b.end(), d.begin(), d.end());
    write("cli_keys", name, b);
  };
  put("lines", {0, 0, 0, 0}, "alpha\nbeta\ngamma\n");
  put("crlf_empty_lines", {0, 0, 0, 0}, "a\r\n\r\n\nb\r\nc");
  put("csv_field2", {2, 1, 0, 0}, "1,one,x\n2,two,y\r\n3,,z\n");
  put("tsv_field3", {3, 0, 0, 0}, "a\tb\tc\nd\te\tf\tg\n");
  put("missing_field", {4, 1, 0, 0}, "a,b,c,d\na,b\n");
  put("pipe_pieces", {0, 0, 4, 2}, "one\ntwo\nthree\r\nfour\n");
  put("pipe_field", {1, 2, 4, 0}, "x;y\nlong-key-across-reads;z\n");
  put("three_files", {0, 0, 2, 0, 4, 3}, "abc\nde\nfg\nhij");
  put("two_files_pipe", {2, 3, 5, 1, 6}, "a b\nc d\ne f\ng h\n");
}

std::uint64_t splitmix(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

// The differential targets and static_build decode any bytes as parameters and operations (or
// keys): random seeds suffice.
void op_inputs() {
  for (const char* target : {"diff_bloom", "diff_blocked", "diff_counting", "diff_cuckoo",
                             "diff_scalable", "diff_scalable_cuckoo", "static_build"}) {
    std::uint64_t state = std::hash<std::string>{}(target);
    for (int i = 0; i < 6; ++i) {
      bytes b(64 + 40 * i);
      for (std::byte& x : b) x = std::byte(splitmix(state) & 0xff);
      write(target, "random" + std::to_string(i), b);
    }
  }
}

// static_build edge cases: no key, one key, one key many times (hasher byte, mode byte, keys).
void static_inputs() {
  write("static_build", "no_keys", {std::byte{0}, std::byte{1}});
  write("static_build", "one_key_16bit", {std::byte{0}, std::byte{3}, std::byte{5}, std::byte{0}});
  bytes dups = {std::byte{1}, std::byte{0}, std::byte{3}};
  for (int i = 0; i < 40; ++i) dups.insert(dups.end(), {std::byte{7}, std::byte{0}});
  write("static_build", "duplicates_keyed", dups);
}

// bip37_parse: filterload bodies, valid ones of every shape and a few the parser must refuse.
void bip37_inputs() {
  const auto put = [](const std::string& name, const std::vector<std::uint8_t>& body) {
    bytes b;
    for (const std::uint8_t x : body) b.push_back(std::byte{x});
    write("bip37_parse", name, b);
  };
  const auto filter = [](std::uint32_t n, double p, std::uint32_t tweak, bip37_update flags,
                         int keys) {
    bip37_filter f(target{n, p}, tweak, flags);
    for (int i = 0; i < keys; ++i) f.insert("key" + std::to_string(i));
    return f.serialize();
  };
  // Bitcoin Core's bloom_create_insert_serialize vector: 3 bytes, 5 hash functions.
  put("core_vector", {0x03, 0x61, 0x4e, 0x9b, 0x05, 0, 0, 0, 0, 0, 0, 0, 0x01});
  put("empty_filter", bip37_filter(bip37_parameters{0, 0}).serialize());
  put("no_hash_funcs", bip37_filter(bip37_parameters{8, 0}).serialize());
  put("max_hash_funcs", bip37_filter(bip37_parameters{16, 50}, 7, bip37_update::all).serialize());
  put("tweaked_p2pubkey", filter(20, 0.01, 0xdeadbeef, bip37_update::p2pubkey_only, 20));
  put("three_byte_length", filter(300, 0.001, 1, bip37_update::none, 100));
  put("noncanonical_length", {0xfd, 0x03, 0x00, 0xff, 0xff, 0xff, 5, 0, 0, 0, 0, 0, 0, 0, 0});
  put("over_max_bytes", {0xfd, 0xa1, 0x8c});
  put("bad_flags", {0x01, 0xff, 0x05, 0, 0, 0, 0, 0, 0, 0, 0x03});
}

// guava_stream: streams as Guava writes them, for each funnel and both strategies (MITZ_32 by
// rewriting the ordinal of a MITZ_64 stream: the layout is the same), and a few it must refuse.
void guava_inputs() {
  namespace guava = bloomery::interop::guava;
  const auto put = [](const std::string& name, std::vector<std::byte> b) {
    write("guava_stream", name, b);
  };
  guava::bloom_filter text(20, 0.05);
  for (const char* k : {"apple", "banana", "cherry", "durian"}) (void)text.insert(k);
  put("string_mitz64", text.to_bytes());
  auto old = text.to_bytes();
  old[0] = std::byte{0};
  put("string_mitz32", old);
  guava::bloom_filter longs(200, 0.001, guava::funnel::int64);
  for (std::int64_t i = -50; i < 150; ++i) (void)longs.insert(i * 7919);
  put("long_mitz64", longs.to_bytes());
  guava::bloom_filter full(2, 0.5, guava::funnel::int32);
  for (std::int64_t i = 0; i < 1000; ++i) (void)full.insert(i);
  put("int_overfilled", full.to_bytes());
  auto truncated = text.to_bytes();
  truncated.pop_back();
  put("truncated", truncated);
  auto no_hashes = text.to_bytes();
  no_hashes[1] = std::byte{0};
  put("zero_hashes", no_hashes);
}

// parquet_footer: the Parquet files DuckDB wrote for the tests (tests/data/parquet), whole, and
// their footers alone (the target frames an input as a footer too).
void parquet_inputs() {
  const std::filesystem::path dir = root / ".." / ".." / "tests" / "data" / "parquet";
  for (const char* name : {"golden.parquet", "golden_fpp.parquet"}) {
    std::ifstream in(dir / name, std::ios::binary);
    std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (chars.size() < 12) {
      std::fprintf(stderr, "make_corpus: cannot read %s\n", (dir / name).c_str());
      std::exit(1);
    }
    bytes file(chars.size());
    std::memcpy(file.data(), chars.data(), chars.size());
    write("parquet_footer", std::string(name) + ".whole", file);
    const std::size_t n = std::to_integer<std::size_t>(file[file.size() - 8]) |
                          std::to_integer<std::size_t>(file[file.size() - 7]) << 8 |
                          std::to_integer<std::size_t>(file[file.size() - 6]) << 16 |
                          std::to_integer<std::size_t>(file[file.size() - 5]) << 24;
    write("parquet_footer", std::string(name) + ".footer",
          bytes(file.end() - 8 - static_cast<std::ptrdiff_t>(n), file.end() - 8));
  }
}

// ---- redisbloom_bloom and redisbloom_cuckoo: values shaped like the golden data's keys
// (tests/data/redisbloom-golden), rebuilt here by replaying each key's commands through the
// library, which is bit-exact with RedisBloom, so that this program needs no data files. Adds
// that changed nothing, answered 0 as the item was there already, are left out.

namespace rb = bloomery::interop::redisbloom;

void append(bytes& out, std::span<const std::byte> b) {
  out.insert(out.end(), b.begin(), b.end());
}

void append_u16(bytes& out, std::size_t v) {
  out.push_back(std::byte(v & 0xff));
  out.push_back(std::byte((v >> 8) & 0xff));
}

// RDB fields as both targets read them: an unsigned below 0xf8 is that byte, else 0xf8 + n - 1
// and n little-endian bytes; a string is its length so written, then its bytes; a double is its 8
// bytes (the Bloom target's reading: cuckoo values hold no doubles).
struct rdb_writer {
  bytes out;
  void write_unsigned(std::uint64_t v) {
    if (v < 0xf8) {
      out.push_back(std::byte(v));
      return;
    }
    int n = 1;
    while (n < 8 && (v >> (8 * n)) != 0) ++n;
    out.push_back(std::byte(0xf7 + n));
    for (int i = 0; i < n; ++i) out.push_back(std::byte((v >> (8 * i)) & 0xff));
  }
  void write_double(double d) {
    const auto bits = std::bit_cast<std::uint64_t>(d);
    for (int i = 0; i < 8; ++i) out.push_back(std::byte((bits >> (8 * i)) & 0xff));
  }
  void write_string(std::span<const std::byte> s) {
    write_unsigned(s.size());
    append(out, s);
  }
  void write_string(const std::string& s) { write_string(text(s)); }
};

// The golden data's item names, and its edge items (every length 0 to 40, NULs, controls,
// multi-byte characters, 1,000 bytes), in the order its *-edge-items keys were given them.
std::string golden_item(int key, int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "a%02d:item:%d", key, i);
  return buf;
}

std::vector<std::string> edge_items() {
  const std::string letters = "abcdefghijklmnopqrstuvwxyz0123456789ABCD";
  std::vector<std::string> out;
  for (std::size_t n = 0; n <= letters.size(); ++n) out.push_back(letters.substr(0, n));
  out.push_back(std::string(1, '\0'));
  out.push_back(std::string(3, '\0'));
  for (const char* s : {"\t\r\n", " ", "\u043a\u043b\u044e\u0447", "\u30ad\u30fc",
                        "na\u00efve caf\u00e9", "\U0001f511"}) {
    out.push_back(s);
  }
  out.push_back(std::string(1000, 'x'));
  for (const char* s : {"item with spaces", "0", "-1", "3.14"}) out.push_back(s);
  return out;
}

// A Bloom chain's RDB fields as encoding version `encver` < 4 has them: options from version 2,
// growth only in 4, bits and n2 from version 1 (RedisBloom's BFRdbLoad).
void bloom_old_rdb(rdb_writer& w, int encver, std::uint64_t items, std::uint32_t options,
                   std::span<const rb::bloom_chain::link> links) {
  w.write_unsigned(items);
  w.write_unsigned(links.size());
  if (encver >= 2) w.write_unsigned(options);
  for (const rb::bloom_chain::link& l : links) {
    w.write_unsigned(l.entries);
    w.write_double(l.error);
    w.write_unsigned(l.hashes);
    w.write_double(l.bpe);
    if (encver >= 1) {
      w.write_unsigned(l.bits);
      w.write_unsigned(l.n2);
    }
    w.write_string(l.array);
    w.write_unsigned(l.size);
  }
}

// redisbloom_bloom input: byte 0 even, then the SCANDUMP header (u16 length) and each chunk in
// order (op 0, u16 length); or byte 0 = 1 + 2 * encver, then the RDB fields.
bytes bloom_scandump(const rb::bloom_chain& c) {
  bytes out{std::byte{0}};
  const std::vector<std::byte> header = c.scandump_header();
  append_u16(out, header.size());
  append(out, header);
  for (std::uint64_t iter = 1; const auto chunk = c.scandump_chunk(iter); iter = chunk->next_iter) {
    out.push_back(std::byte{0});
    append_u16(out, chunk->bytes.size());
    append(out, chunk->bytes);
  }
  return out;
}

bytes bloom_rdb(const rb::bloom_chain& c, int encver) {
  rdb_writer w{{std::byte(1 + 2 * encver)}};
  if (encver == rb::bloom_chain::rdb_encoding) {
    c.save_rdb(w);
  } else {
    bloom_old_rdb(w, encver, c.items(), c.options(), c.links());
  }
  return w.out;
}

void redisbloom_bloom_inputs() {
  const auto put = [](const std::string& name, const bytes& b) {
    write("redisbloom_bloom", name, b);
  };
  using chain = rb::bloom_chain;
  const auto golden = [&](const std::string& key, const chain& c) {
    put("scandump-" + key, bloom_scandump(c));
    put("rdb4-" + key, bloom_rdb(c, 4));
  };
  {
    chain c({.capacity = 100, .error_rate = 0.1});  // BF.RESERVE 0.1 100: grows to 4 links
    for (int i = 0; i < 1300; ++i) (void)c.add(golden_item(1, i));
    golden("a01-bf-e0.1-c100-x2", c);
  }
  {
    // BF.INSERT stops at the first item the full NONSCALING chain refuses.
    chain c({.capacity = 300, .error_rate = 0.01, .nonscaling = true});
    for (int i = 0; i < 350 && c.add(golden_item(8, i)) != chain::add_result::full; ++i) {
    }
    golden("a08-bf-insert-e0.01-c300-nonscaling", c);
  }
  {
    chain c(chain::parameters{});  // BF.ADD on a missing key creates it with the defaults
    for (int i = 0; i < 1000; ++i) (void)c.add(golden_item(9, i));
    golden("a09-bf-add-autocreate-defaults", c);
  }
  {
    chain c({.capacity = 100, .error_rate = 0.01});
    for (const std::string& item : edge_items()) (void)c.add(item);
    golden("a12-bf-edge-items", c);
  }
  {
    chain c({.capacity = 100, .error_rate = 0.0001, .expansion = 1});  // six links
    for (int i = 0; i < 560; ++i) (void)c.add(golden_item(13, i));
    golden("a13-bf-e0.0001-c100-x1-6filters", c);
  }
  // Small chains as RDB values of every version RedisBloom reads.
  for (const bool nonscaling : {false, true}) {
    chain c({.capacity = 10, .error_rate = 0.05, .expansion = 3, .nonscaling = nonscaling});
    for (int i = 0; i < 25; ++i) (void)c.add("k" + std::to_string(i));
    for (int encver = 0; encver <= 4; ++encver) {
      put("rdb" + std::to_string(encver) + (nonscaling ? "-nonscaling" : "-scaling"),
          bloom_rdb(c, encver));
    }
  }
  // Old values no chain made today is. Version 0 stores no bit count, RedisBloom takes entries *
  // bpe for it, and only where that is the array's bits (here 800) does it load, which the chains
  // above never do. Version 1's n2 = 10 hashes into the first 2^10 of 2048 bits. ENTS_IS_BITS
  // makes the full link grow to a link of 2^(entries * growth) bits.
  const chain::link rate_1pc = chain({.capacity = 100, .error_rate = 0.01, .nonscaling = true})
                                   .links()[0];  // the bpe and k of a rate of 0.01
  const auto old = [&](const std::string& name, int encver, std::uint64_t items,
                       std::uint32_t options, chain::link l) {
    rdb_writer w{{std::byte(1 + 2 * encver)}};
    bloom_old_rdb(w, encver, items, options, {&l, 1});
    put(name, w.out);
  };
  old("rdb0-hand", 0, 1, 0,
      {.entries = 100,
       .error = 0.02,
       .bpe = 8,
       .hashes = 6,
       .size = 1,
       .array = std::string(100, 'Z')});
  chain::link n2 = rate_1pc;
  n2.bits = 2048;
  n2.n2 = 10;
  n2.size = 100;
  n2.array = std::string(256, '\x11');
  old("rdb1-n2", 1, 100, 0, n2);
  chain::link ents_is_bits = rate_1pc;
  ents_is_bits.entries = 10;
  ents_is_bits.bits = 64;
  ents_is_bits.size = 10;
  ents_is_bits.array = std::string(8, '\0');
  old("rdb2-ents-is-bits", 2, 10, chain::option_ents_is_bits | chain::option_force64, ents_is_bits);
}

// redisbloom_cuckoo input: byte 1, the 38-byte SCANDUMP header, the number of chunks (at most 7)
// and each (1: at the replay's next iterator, u16 length); or byte 2 * encver and the RDB fields.
// Then operations, two bytes each (op, key): adds, an ADDNX, deletes of a stored key and of one
// never stored, compactions and a check of the dumps, three times over.
bytes cuckoo_ops(bytes value) {
  for (int round = 0; round < 3; ++round) {
    for (const std::uint8_t b : {0, 1, 0, 2, 1, 7, 2, 3, 4, 5, 0, 9, 0, 10, 3, 11, 4, 0, 5, 0}) {
      value.push_back(std::byte{b});
    }
  }
  return value;
}

bytes cuckoo_scandump(const rb::cuckoo_chain& c) {
  bytes out{std::byte{1}};
  append(out, c.scandump_header());
  bytes chunks;
  std::uint8_t count = 0;
  for (std::uint64_t iter = 1; const auto chunk = c.scandump_chunk(iter); iter = chunk->next_iter) {
    chunks.push_back(std::byte{1});
    append_u16(chunks, chunk->bytes.size());
    append(chunks, chunk->bytes);
    ++count;
  }
  out.push_back(std::byte{count});
  append(out, chunks);
  return cuckoo_ops(out);
}

bytes cuckoo_rdb(const rb::cuckoo_chain& c, int encver) {
  rdb_writer w{{std::byte(2 * encver)}};
  if (encver == rb::cuckoo_chain::rdb_encoding) {
    c.save_rdb(w);
  } else {
    // Versions 0 to 3 hold no deletes, bucket size, iterations, expansion or bucket counts: a
    // value of the defaults, every sub-filter of numBuckets buckets.
    w.write_unsigned(c.num_filters());
    w.write_unsigned(c.num_buckets());
    w.write_unsigned(c.num_items());
    for (std::size_t i = 0; i < c.num_filters(); ++i) w.write_string(c.sub_filter_slots(i));
  }
  return cuckoo_ops(w.out);
}

void redisbloom_cuckoo_inputs() {
  using chain = rb::cuckoo_chain;
  const auto put = [](const std::string& key, const chain& c, bool scandump, bool rdb4, bool rdb3) {
    if (scandump) write("redisbloom_cuckoo", "scandump-" + key, cuckoo_scandump(c));
    if (rdb4) write("redisbloom_cuckoo", "rdb4-" + key, cuckoo_rdb(c, 4));
    if (rdb3) write("redisbloom_cuckoo", "rdb3-" + key, cuckoo_rdb(c, 3));
  };
  const auto adds = [](chain& c, int key, int from, int to) {
    for (int i = from; i < to; ++i) (void)c.add(golden_item(key, i));
  };
  {
    chain c({.capacity = 1000});
    adds(c, 21, 0, 900);
    put("a21-cf-c1000-b2", c, true, true, true);
  }
  {
    chain c({.capacity = 100, .bucket_size = 2, .max_iterations = 5, .expansion = 1});
    adds(c, 24, 0, 800);  // seven sub-filters
    put("a24-cf-c100-b2-mi5-x1", c, true, true, false);
  }
  {
    chain c({.capacity = 2000, .bucket_size = 4});
    for (int i = 0; i < 1200; ++i) (void)c.add_unique(golden_item(25, i));
    put("a25-cf-addnx-c2000-b4", c, false, true, false);
  }
  {
    // Item 4i + j is added 1 + j times, in rounds: COUNT up to 4.
    chain c({.capacity = 1000});
    adds(c, 26, 0, 200);
    for (int round = 1; round <= 3; ++round) {
      for (int i = 0; i < 50; ++i) {
        for (int j = round; j <= 3; ++j) (void)c.add(golden_item(26, 4 * i + j));
      }
    }
    put("a26-cf-duplicates-c1000", c, true, true, true);
  }
  {
    // Deletes compact the chain as they go; the deletes of items never added take two stray
    // fingerprints.
    chain c({.capacity = 200, .expansion = 2});
    adds(c, 27, 0, 1200);
    for (int i = 0; i < 1200; i += 3) (void)c.remove(golden_item(27, i));
    for (int i = 200000; i < 200050; ++i) (void)c.remove(golden_item(27, i));
    put("a27-cf-del-compact-c200-x2", c, true, true, false);
  }
  {
    chain c(chain::parameters{});  // CF.ADD on a missing key creates it with the defaults
    adds(c, 29, 0, 2500);
    put("a29-cf-add-autocreate-defaults", c, true, false, false);
  }
  {
    chain c({.capacity = 64, .bucket_size = 2, .expansion = 0});  // full: no growth
    adds(c, 30, 0, 123);
    put("a30-cf-c64-b2-x0-full", c, true, true, false);
  }
  {
    chain c({.capacity = 100, .bucket_size = 1, .expansion = 1});
    adds(c, 31, 0, 300);
    for (int i = 0; i < 20; ++i) (void)c.remove(golden_item(31, i));
    c.compact();
    put("a31-cf-compact-cmd-c100-b1-x1", c, true, true, false);
  }
  {
    chain c({.capacity = 256, .bucket_size = 2});
    const std::vector<std::string> items = edge_items();
    for (const std::string& item : items) (void)c.add(item);
    for (int i = 0; i < 5; ++i) (void)c.add(items[i]);
    for (int i = 5; i < 10; ++i) (void)c.remove(items[i]);
    put("a34-cf-edge-items", c, true, true, true);
  }
  {
    // Each CF.ADD is refused once the chain has 32 sub-filters (more chunks than a seed holds).
    chain c({.capacity = 4, .bucket_size = 2, .max_iterations = 1, .expansion = 1});
    for (int i = 0; i < 200; ++i) {
      if (!c.at_max_expansions()) (void)c.add(golden_item(35, i));
    }
    put("a35-cf-c4-b2-mi1-x1-max-expansions", c, false, true, false);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  root = argv[1];
  filter_files();
  lsm_inputs();
  key_inputs();
  op_inputs();
  static_inputs();
  bip37_inputs();
  guava_inputs();
  parquet_inputs();
  redisbloom_bloom_inputs();
  redisbloom_cuckoo_inputs();
  return 0;
}
