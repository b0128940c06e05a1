// Writes the seed corpora of the fuzz targets: small valid inputs of every kind, edge cases
// included, so that the fuzzer starts past the magic numbers and checksums.
// Usage: make_corpus DIR (DIR/<target>/<seed> are created; the committed ones are fuzz/corpus).
#include <unistd.h>

#include <bloomery/any_filter.hpp>
#include <bloomery/bip37.hpp>
#include <bloomery/lsm/sstable.hpp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
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
  return 0;
}
