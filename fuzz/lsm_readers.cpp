// Fuzz target: the LSM store's readers. Input: u8 flags, u16 manifest length, the MANIFEST bytes,
// then an SSTable's bytes. Flags: 1 makes the table's checksums right (footer, index, data blocks,
// and the filter image's own), so that mutations reach the structure checks; 2 appends the
// manifest's checksum line to the manifest bytes; 4 opens a store directory holding the manifest
// (when non-empty) and the table as 000001.sst, else a table_reader on the table alone. Damage must
// be reported as corruption_error; what opens must answer reads, and a store must keep what it had
// across a write, a flush and a reopen.
#include <sys/stat.h>
#include <unistd.h>

#include <bloomery/lsm/store.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ops.hpp"

namespace {

namespace fs = std::filesystem;
namespace lsm = bloomery::lsm;
using bloomery_fuzz::input;

constexpr std::size_t footer_bytes = 80;

std::uint64_t get_u64(const std::vector<std::byte>& b, std::size_t at) {
  std::uint64_t v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}
void put_u64(std::vector<std::byte>& b, std::size_t at, std::uint64_t v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}
std::uint64_t xxh(const std::vector<std::byte>& b, std::size_t at, std::size_t n) {
  return XXH3_64bits(b.data() + at, n);
}

// Recomputes every checksum of the table layout in sstable.hpp wherever the offsets it reads are
// in range; a field out of range is left for the reader to reject.
void fix_table_checksums(std::vector<std::byte>& t) {
  if (t.size() < footer_bytes) return;
  const std::size_t foot = t.size() - footer_bytes;
  const std::uint64_t filter_off = get_u64(t, foot + 24), filter_size = get_u64(t, foot + 32);
  const std::uint64_t index_off = get_u64(t, foot + 48), index_size = get_u64(t, foot + 56);
  if (filter_off <= foot && filter_size <= foot - filter_off) {
    std::vector<std::byte> image(t.begin() + static_cast<std::ptrdiff_t>(filter_off),
                                 t.begin() + static_cast<std::ptrdiff_t>(filter_off + filter_size));
    bloomery_fuzz::fix_filter_checksum(image);
    if (!image.empty()) std::memcpy(t.data() + filter_off, image.data(), image.size());
    put_u64(t, foot + 40, xxh(t, filter_off, filter_size));
  }
  if (index_off <= foot && index_size <= foot - index_off && index_size >= 8) {
    // Index: u64 count, then per block: varint key length, key, u64 offset, u32 size, u64 sum.
    std::size_t at = index_off + 8;
    const std::size_t end = index_off + index_size;
    for (std::uint64_t i = 0, n = get_u64(t, index_off); i < n && at < end; ++i) {
      std::uint64_t key_size = 0;
      int shift = 0;
      while (at < end && shift < 64) {
        const auto byte = static_cast<std::uint8_t>(t[at++]);
        key_size |= std::uint64_t{byte & 0x7fu} << shift;
        shift += 7;
        if (byte < 0x80) break;
      }
      if (key_size > end - at || end - at - key_size < 20) break;
      at += key_size;
      const std::uint64_t off = get_u64(t, at);
      std::uint32_t size;
      std::memcpy(&size, t.data() + at + 8, sizeof size);
      if (off <= foot && size <= foot - off) put_u64(t, at + 12, xxh(t, off, size));
      at += 20;
    }
    put_u64(t, foot + 64, xxh(t, index_off, index_size));
  }
  put_u64(t, foot + 72, xxh(t, foot, footer_bytes - 8));
}

void write_file(const fs::path& p, std::span<const std::byte> b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  FUZZ_CHECK(out.good());
}

// Keys of the corpus tables ("key000".."key011"), keys around them, and the empty key.
std::vector<std::string> probe_keys() {
  std::vector<std::string> out = {"", "key", "key0", "key011~", "zzzz"};
  char buf[16];
  for (int i = 0; i < 13; ++i) {
    std::snprintf(buf, sizeof buf, "key%03d", i);
    out.push_back(buf);
  }
  return out;
}
const std::vector<std::string> probes = probe_keys();

void read_table(const fs::path& path, std::uint64_t file_size, bool authentic) {
  std::optional<lsm::table_reader> table;
  try {
    table.emplace(path);
  } catch (const lsm::corruption_error&) {
    return;
  }
  FUZZ_CHECK(table->file_bytes() == file_size);
  FUZZ_CHECK(lsm::supports(table->kind()));
  if (const auto& f = table->filter()) {
    FUZZ_CHECK(f->kind() == *table->kind());
    const bloomery::filter_stats s = f->stats();
    FUZZ_CHECK(s.size_in_bytes == f->size_in_bytes());
  }
  for (const std::string& key : probes) {
    try {
      const lsm::table_reader::lookup r = table->get(key);
      if (r.block_read) {
        FUZZ_CHECK(r.block_bytes > 0 && r.block_offset + r.block_bytes <= file_size);
      }
      if (r.found != nullptr) {
        FUZZ_CHECK(r.block_read && r.found->key == key);
        // A table written by write_table has every key in its filter. A forged one (checksums
        // recomputed) may pair any filter with any keys, which no reader can detect.
        if (authentic && table->filter()) FUZZ_CHECK(table->filter()->may_contain(key));
      }
    } catch (const lsm::corruption_error&) {
    }
  }
}

// The store's values of the probe keys.
std::map<std::string, std::optional<std::string>> snapshot(lsm::store& s) {
  std::map<std::string, std::optional<std::string>> out;
  for (const std::string& key : probes) out[key] = s.get(key);
  return out;
}

void open_store(const fs::path& dir) {
  lsm::options opts;
  opts.block_bytes = 64;
  std::optional<lsm::store> s;
  std::map<std::string, std::optional<std::string>> before;
  try {
    s.emplace(lsm::store::open(dir, opts));
    before = snapshot(*s);  // may read a damaged data block
  } catch (const lsm::corruption_error&) {
    return;
  }
  // A write after opening whatever the manifest said must not disturb the live tables, and the
  // store must open again from the manifest it wrote itself.
  s->put("key005", "written by the fuzzer");
  s->flush();
  FUZZ_CHECK(s->get("key005") == "written by the fuzzer");
  s.reset();
  lsm::store again = lsm::store::open(dir, opts);
  before["key005"] = "written by the fuzzer";
  FUZZ_CHECK(snapshot(again) == before);
}

// A directory of this process's own in /dev/shm (no disk traffic), removed at exit.
struct scratch {
  fs::path dir;
  scratch() {
    const fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    std::string tmpl = (base / "bloomery-fuzz-lsm-XXXXXX").string();
    FUZZ_CHECK(::mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
  }
  ~scratch() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

const fs::path& scratch_dir() {
  static const scratch s;
  return s.dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  input in(data, size);
  const std::uint8_t flags = in.byte();
  const std::span<const std::uint8_t> manifest_part = in.take(in.u16());
  const std::span<const std::byte> table_part = bloomery_fuzz::as_bytes(in.rest());
  std::vector<std::byte> table(table_part.begin(), table_part.end());
  if (flags & 1) fix_table_checksums(table);
  std::string manifest(manifest_part.begin(), manifest_part.end());
  if (flags & 2) {
    char sum[40];
    std::snprintf(sum, sizeof sum, "checksum %016llx\n",
                  static_cast<unsigned long long>(XXH3_64bits(manifest.data(), manifest.size())));
    manifest += sum;
  }

  const fs::path dir = scratch_dir() / "case";
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  fs::create_directories(dir);
  if (flags & 4) {
    if (!manifest_part.empty()) {
      write_file(dir / "MANIFEST",
                 bloomery_fuzz::as_bytes(
                     {reinterpret_cast<const std::uint8_t*>(manifest.data()), manifest.size()}));
    }
    if (!table.empty()) write_file(dir / "000001.sst", table);
    open_store(dir);
  } else {
    write_file(dir / "table.sst", table);
    read_table(dir / "table.sst", table.size(), (flags & 1) == 0);
  }
  return 0;
}
