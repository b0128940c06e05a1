// Tests of the bloomery::lsm store: answers against a std::map model for every filter kind,
// filters only skipping work (never changing an answer), crash recovery with a child process
// killed at every step of a flush and at random moments, and damaged files rejected by name.
#include <bloomery/lsm/store.hpp>
#include <bloomery/support/temp_dir.hpp>

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>

namespace fs = std::filesystem;
using bloomery::filter_kind;
using bloomery::lsm::corruption_error;
using bloomery::lsm::flush_step;
using bloomery::lsm::options;
using bloomery::lsm::store;
using bloomery::lsm::table_filter_kind;
using bloomery::support::temp_dir;  // a fresh directory per test, removed afterwards

namespace {

const table_filter_kind all_kinds[] = {std::nullopt, filter_kind::bloom, filter_kind::blocked_bloom,
                                       filter_kind::static_filter};

std::string key_of(std::uint64_t i) {
  // Hashed so that consecutive i spread over the whole key space, as in the demo.
  std::uint64_t z = i * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
  z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ULL;
  char buf[24];
  std::snprintf(buf, sizeof buf, "k%016llx", static_cast<unsigned long long>(z ^ (z >> 29)));
  return buf;
}
std::string value_of(std::uint64_t i, int version) {
  return "value-" + std::to_string(i) + "-v" + std::to_string(version);
}

options small_tables(table_filter_kind kind) {
  options o;
  o.filter = kind;
  o.memtable_entries = 300;  // many tables
  o.block_bytes = 256;       // many blocks per table
  return o;
}

std::string name(table_filter_kind k) {
  return std::string(bloomery::lsm::name_of(k));
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& f : fs::directory_iterator(dir)) out.push_back(f.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

void flip_byte(const fs::path& p, std::uint64_t offset) {
  std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(offset));
  f.put(static_cast<char>(c ^ 0x40));
}

// --- answers -----------------------------------------------------------------------------------

// The per-kind suites' parameter is the table format's filter code (0 none ... 3 static; see
// sstable.hpp) rather than the kind: gtest prints a parameter's bytes into the ctest names, and
// the codes keep the names these suites had before the store adopted bloomery::filter_kind.
struct kind_param {
  std::uint32_t code;
};

class StoreByKind : public ::testing::TestWithParam<kind_param> {
 protected:
  table_filter_kind kind() const { return all_kinds[GetParam().code]; }
};

// Random puts, overwrites and removes against a std::map; every key the model knows, and as many
// keys it never saw, are checked while the store grows, and again after a reopen.
TEST_P(StoreByKind, MatchesAMapModelIncludingAfterReopen) {
  temp_dir dir;
  std::map<std::string, std::string> model;
  std::mt19937_64 rng(42);
  const std::uint64_t universe = 4000;
  auto check = [&](store& s) {
    for (std::uint64_t i = 0; i < universe; ++i) {
      const std::string k = key_of(i);
      const auto it = model.find(k);
      const std::optional<std::string> got = s.get(k);
      if (it == model.end()) {
        ASSERT_FALSE(got.has_value()) << k << " was never written or was removed";
      } else {
        ASSERT_TRUE(got.has_value()) << k << " lost";
        ASSERT_EQ(*got, it->second) << k;
      }
    }
    for (std::uint64_t i = 0; i < 2000; ++i)  // never written at all
      ASSERT_FALSE(s.get(key_of(1'000'000 + i)).has_value());
  };
  {
    store s = store::open(dir.path(), small_tables(kind()));
    for (int round = 0; round < 4; ++round) {
      for (int op = 0; op < 1500; ++op) {
        const std::uint64_t i = rng() % universe;
        if (rng() % 5 == 0) {
          s.remove(key_of(i));
          model.erase(key_of(i));
        } else {
          s.put(key_of(i), value_of(i, round));
          model[key_of(i)] = value_of(i, round);
        }
      }
      check(s);
    }
    EXPECT_GE(s.tables().size(), 15u);
    for (const auto& t : s.tables()) EXPECT_EQ(t.filter, kind());
    s.flush();
    EXPECT_EQ(s.memtable_size(), 0u);
  }
  store reopened = store::open(dir.path(), small_tables(kind()));
  check(reopened);
}

// The filter only skips tables: every answer equals the unfiltered store's, and a filtered
// store never reads more blocks.
TEST_P(StoreByKind, GivesTheSameAnswersAsNoFilterWithFewerReads) {
  temp_dir dir;
  store plain = store::open(dir.path() / "none", small_tables(std::nullopt));
  store filtered = store::open(dir.path() / name(kind()), small_tables(kind()));
  for (std::uint64_t i = 0; i < 3000; ++i) {
    for (store* s : {&plain, &filtered}) {
      s->put(key_of(i), value_of(i, 0));
      if (i % 7 == 0) s->remove(key_of(i / 2));
    }
  }
  plain.flush();
  filtered.flush();
  for (std::uint64_t i = 0; i < 6000; ++i) ASSERT_EQ(plain.get(key_of(i)), filtered.get(key_of(i)));
  EXPECT_LE(filtered.stats().block_reads, plain.stats().block_reads);
  if (kind()) {
    EXPECT_GT(filtered.stats().filter_skips, 0u);
    EXPECT_LT(filtered.stats().wasted_block_reads, plain.stats().wasted_block_reads / 10);
  }
}

// Absent keys cost one block read per table without a filter and almost none with one.
TEST_P(StoreByKind, AbsentReadsCostWhatTheFilterPromises) {
  temp_dir dir;
  options o = small_tables(kind());
  o.memtable_entries = 2000;
  o.block_bytes = 4096;
  store s = store::open(dir.path(), o);
  for (std::uint64_t i = 0; i < 20'000; ++i) s.put(key_of(i), value_of(i, 0));
  ASSERT_EQ(s.tables().size(), 10u);
  s.reset_stats();
  const std::uint64_t probes = 5000;
  for (std::uint64_t i = 0; i < probes; ++i) ASSERT_FALSE(s.get(key_of(50'000'000 + i)));
  const double per_read = static_cast<double>(s.stats().block_reads) / probes;
  EXPECT_EQ(s.stats().tables_consulted, 10 * probes);
  if (!kind()) {
    EXPECT_GT(per_read, 9.9);  // only keys beyond a table's last key skip its read
    EXPECT_EQ(s.stats().filter_checks, 0u);
  } else {
    // 50,000 checks at a 1% target: false positives are binomial with mean <= 500 (the static
    // filter's 8-bit fingerprints deliver 2^-8, mean 195) and sd ~22, so 0.13 reads per absent
    // read (650 false positives) is more than 6 sd above the mean.
    EXPECT_LT(per_read, 0.13);
    EXPECT_EQ(s.stats().filter_checks, 10 * probes);
  }
  EXPECT_EQ(s.stats().wasted_block_reads, s.stats().block_reads);
}

INSTANTIATE_TEST_SUITE_P(AllFilters, StoreByKind,
                         ::testing::Values(kind_param{0}, kind_param{1}, kind_param{2},
                                           kind_param{3}),
                         [](const auto& info) { return name(all_kinds[info.param.code]); });

TEST(Store, RejectsBadOptions) {
  temp_dir dir;
  options o;
  o.fpr = 0;
  EXPECT_THROW(store::open(dir.path(), o), std::invalid_argument);
  o.fpr = 1;
  EXPECT_THROW(store::open(dir.path(), o), std::invalid_argument);
  o = {};
  o.memtable_entries = 0;
  EXPECT_THROW(store::open(dir.path(), o), std::invalid_argument);
  o = {};
  o.filter = filter_kind::static_filter;
  o.fpr = 1e-10;  // below 2^-32
  EXPECT_THROW(store::open(dir.path(), o), std::invalid_argument);
  // Kinds a table cannot carry are refused on open, before a flush could fail on them.
  for (const filter_kind k :
       {filter_kind::counting_bloom, filter_kind::cuckoo, filter_kind::scalable_bloom}) {
    o = {};
    o.filter = k;
    EXPECT_FALSE(bloomery::lsm::supports(k)) << bloomery::to_string(k);
    EXPECT_THROW(store::open(dir.path() / bloomery::to_string(k), o), std::invalid_argument);
  }
}

// The store names kinds as the library does, so its names parse back to the library's kinds.
TEST(Store, FilterKindNamesRoundTrip) {
  EXPECT_EQ(name(std::nullopt), "none");
  for (const table_filter_kind k : all_kinds) {
    EXPECT_TRUE(bloomery::lsm::supports(k)) << name(k);
    if (k) {
      EXPECT_EQ(bloomery::parse_filter_kind(name(k)), k);
    }
  }
  EXPECT_EQ(name(filter_kind::blocked_bloom), "blocked");
  EXPECT_EQ(name(filter_kind::static_filter), "static");
}

// The footer's filter codes are the table format's own and never change (sstable.hpp), so tables
// written before the store adopted bloomery::filter_kind still open: 0 none ... 3 static, though
// the library tags static_filter 6.
TEST(Store, FooterFilterCodesAreStable) {
  temp_dir dir;
  const std::uint32_t expected_codes[] = {0, 1, 2, 3};
  for (std::size_t i = 0; i < std::size(all_kinds); ++i) {
    options o = small_tables(all_kinds[i]);
    store s = store::open(dir.path() / name(all_kinds[i]), o);
    for (std::uint64_t k = 0; k < 100; ++k) s.put(key_of(k), value_of(k, 0));
    s.flush();
    const fs::path table = s.tables().at(0).file;
    std::ifstream f(table, std::ios::binary);
    f.seekg(static_cast<std::streamoff>(fs::file_size(table) - 80 + 12));  // magic, version
    unsigned char b[4] = {};
    f.read(reinterpret_cast<char*>(b), 4);
    const std::uint32_t code =
        b[0] | b[1] << 8 | b[2] << 16 | static_cast<std::uint32_t>(b[3]) << 24;
    EXPECT_EQ(code, expected_codes[i]) << name(all_kinds[i]);
    EXPECT_EQ(s.tables().at(0).filter, all_kinds[i]);
    EXPECT_EQ(store::open(s.directory(), o).get(key_of(7)), value_of(7, 0));
  }
}

// on_block_read sees every data-block read, with the table, offset and size, and whether the
// block held the key; what it sees adds up to the store's own counters.
TEST(Store, BlockReadHookSeesEveryBlockRead) {
  temp_dir dir;
  std::uint64_t reads = 0, bytes = 0, wasted = 0;
  std::set<fs::path> tables_seen;
  options o = small_tables(std::nullopt);
  o.on_block_read = [&](const bloomery::lsm::block_read& r) {
    ++reads;
    bytes += r.bytes;
    if (!r.found) ++wasted;
    tables_seen.insert(r.table);
    EXPECT_LT(r.offset + r.bytes, fs::file_size(r.table));
  };
  store s = store::open(dir.path(), o);
  for (std::uint64_t i = 0; i < 1500; ++i) s.put(key_of(i), value_of(i, 0));
  s.flush();
  for (std::uint64_t i = 0; i < 3000; ++i) (void)s.get(key_of(i));
  EXPECT_GT(reads, 0u);
  EXPECT_EQ(reads, s.stats().block_reads);
  EXPECT_EQ(bytes, s.stats().block_bytes);
  EXPECT_EQ(wasted, s.stats().wasted_block_reads);
  EXPECT_EQ(tables_seen.size(), s.tables().size());
}

// --- crash recovery ----------------------------------------------------------------------------

// Runs `body` in a child process and expects it to die by SIGKILL.
template <class Body>
void run_child_until_killed(Body body) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    body();
    ::_exit(0);  // not killed: the parent reports it
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child was not killed";
}

class CrashDuringFlush : public ::testing::TestWithParam<flush_step> {};

// One committed flush, then a second flush killed at the given step: on reopen the first flush's
// keys are all there, the second's are there only if its manifest was committed, and no debris
// of the interrupted flush survives.
TEST_P(CrashDuringFlush, LosesNoFlushedDataAndServesNoHalfTable) {
  temp_dir dir;
  const flush_step kill_at = GetParam();
  run_child_until_killed([&] {
    options o;
    o.memtable_entries = 1'000'000;
    o.block_bytes = 512;
    int flushes = 0;
    o.flush_hook = [&](flush_step s) {
      if (flushes == 1 && s == kill_at) ::kill(::getpid(), SIGKILL);
      if (s == flush_step::committed) ++flushes;
    };
    store s = store::open(dir.path(), o);
    for (std::uint64_t i = 0; i < 2000; ++i) s.put(key_of(i), value_of(i, 1));
    s.flush();
    for (std::uint64_t i = 1000; i < 3000; ++i) s.put(key_of(i), value_of(i, 2));
    s.remove(key_of(0));
    s.flush();
  });

  store s = store::open(dir.path());
  const bool second_committed = kill_at == flush_step::committed;
  EXPECT_EQ(s.tables().size(), second_committed ? 2u : 1u);
  EXPECT_EQ(s.get(key_of(0)).has_value(), !second_committed);
  for (std::uint64_t i = 1; i < 3000; ++i) {
    const std::optional<std::string> got = s.get(key_of(i));
    if (i < 1000) {
      ASSERT_EQ(got, value_of(i, 1)) << i;
    } else if (second_committed) {
      ASSERT_EQ(got, value_of(i, 2)) << i;
    } else if (i < 2000) {
      ASSERT_EQ(got, value_of(i, 1)) << i;
    } else {
      ASSERT_FALSE(got.has_value()) << i;
    }
  }
  const std::vector<std::string> expected =
      second_committed ? std::vector<std::string>{"000001.sst", "000002.sst", "MANIFEST"}
                       : std::vector<std::string>{"000001.sst", "MANIFEST"};
  EXPECT_EQ(files_in(dir.path()), expected);
  // The store keeps working after recovery, and reuses no live file name.
  s.put("after", "crash");
  s.flush();
  EXPECT_EQ(store::open(dir.path()).get("after"), "crash");
}

std::string step_name(const ::testing::TestParamInfo<flush_step>& info) {
  static const char* const names[] = {"table_partly_written", "table_written", "table_renamed",
                                      "manifest_written", "committed"};
  return names[static_cast<int>(info.param)];
}

INSTANTIATE_TEST_SUITE_P(EveryStep, CrashDuringFlush,
                         ::testing::Values(flush_step::table_partly_written,
                                           flush_step::table_written, flush_step::table_renamed,
                                           flush_step::manifest_written, flush_step::committed),
                         step_name);

// A child flushes tables in a loop and reports each committed flush through a pipe; the parent
// kills it at a random moment. Every reported flush must survive, whatever the child was doing.
TEST(CrashRecovery, KillNineAtRandomMomentsLosesNoAcknowledgedFlush) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 6; ++trial) {
    temp_dir dir;
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      options o;
      o.memtable_entries = 500;
      o.block_bytes = 512;
      o.filter = all_kinds[trial % 4];
      store s = store::open(dir.path(), o);
      for (std::uint64_t i = 0;; ++i) {
        s.put(key_of(i), value_of(i, 0));
        if (s.memtable_size() == 0) {  // the put completed a flush
          const std::uint64_t done = i + 1;
          if (::write(fds[1], &done, sizeof done) != sizeof done) ::_exit(3);
        }
      }
    }
    ::close(fds[1]);
    // Wait for the first acknowledged flush, so every trial has data that must survive, then
    // kill at a random moment of the flushes that follow.
    std::uint64_t acknowledged = 0, done = 0;
    ASSERT_EQ(::read(fds[0], &acknowledged, sizeof acknowledged),
              static_cast<ssize_t>(sizeof acknowledged));
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 50'000));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status)) << "the child must die by the kill, not by an error";
    while (::read(fds[0], &done, sizeof done) == sizeof done) acknowledged = done;
    ::close(fds[0]);

    store s = store::open(dir.path());
    EXPECT_GE(s.tables().size(), acknowledged / 500);
    for (std::uint64_t i = 0; i < acknowledged; ++i)
      ASSERT_EQ(s.get(key_of(i)), value_of(i, 0)) << "trial " << trial << " key " << i;
    for (const std::string& f : files_in(dir.path()))
      EXPECT_FALSE(f.ends_with(".tmp")) << f << " survived recovery";
  }
}

// --- corruption --------------------------------------------------------------------------------

struct built_store {
  temp_dir dir;
  fs::path table;
  built_store() {
    options o;
    o.memtable_entries = 1000;
    store s = store::open(dir.path(), o);
    for (std::uint64_t i = 0; i < 1000; ++i) s.put(key_of(i), value_of(i, 0));
    table = s.tables().at(0).file;
  }
};

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const corruption_error& e) {
    return e.what();
  }
  return "(no corruption_error)";
}

std::uint64_t read_u64(const fs::path& p, std::uint64_t offset) {
  std::ifstream f(p, std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  unsigned char b[8] = {};
  f.read(reinterpret_cast<char*>(b), 8);
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
  return v;
}

TEST(Corruption, DamagedFooterIndexOrFilterIsRejectedOnOpenNamingTheFile) {
  built_store b;
  const std::uint64_t size = fs::file_size(b.table);
  const std::uint64_t footer = size - 80;  // see sstable.hpp for the footer's fields
  const std::uint64_t filter_offset = read_u64(b.table, footer + 24);
  const std::uint64_t filter_size = read_u64(b.table, footer + 32);
  const std::uint64_t index_offset = read_u64(b.table, footer + 48);
  ASSERT_GT(filter_size, 1000u);
  ASSERT_EQ(index_offset, filter_offset + filter_size);
  for (std::uint64_t at :
       {size - 1, size - 40, footer, index_offset, index_offset + 9, footer - 1, filter_offset,
        filter_offset + 64, filter_offset + filter_size / 2, index_offset - 1}) {
    built_store fresh;
    flip_byte(fresh.table, at);
    const std::string what = error_of([&] { (void)store::open(fresh.dir.path()); });
    EXPECT_NE(what.find(fresh.table.string()), std::string::npos) << "byte " << at << ": " << what;
  }
}

TEST(Corruption, TruncatedTableIsRejectedNamingTheFile) {
  for (std::uint64_t keep : {0, 10, 79, 5000}) {
    built_store b;
    fs::resize_file(b.table, keep);
    const std::string what = error_of([&] { (void)store::open(b.dir.path()); });
    EXPECT_NE(what.find("000001.sst"), std::string::npos) << keep << ": " << what;
  }
}

TEST(Corruption, DamagedDataBlockIsReportedWhenRead) {
  built_store b;
  flip_byte(b.table, 100);              // inside the first data block
  store s = store::open(b.dir.path());  // data blocks are verified when read, not on open
  std::string what;
  for (std::uint64_t i = 0; i < 1000 && what.empty(); ++i) {
    try {
      (void)s.get(key_of(i));
    } catch (const corruption_error& e) {
      what = e.what();
      EXPECT_EQ(e.file(), b.table);
    }
  }
  EXPECT_NE(what.find("checksum"), std::string::npos) << what;
}

TEST(Corruption, DamagedOrMissingManifestEntriesAreRejected) {
  {
    built_store b;
    flip_byte(b.dir.path() / "MANIFEST", 5);
    EXPECT_NE(error_of([&] { (void)store::open(b.dir.path()); }).find("MANIFEST"),
              std::string::npos);
  }
  {
    built_store b;
    fs::remove(b.table);
    const std::string what = error_of([&] { (void)store::open(b.dir.path()); });
    EXPECT_NE(what.find("missing"), std::string::npos) << what;
  }
  {
    // Without its manifest the store must not mistake its tables for debris and delete them.
    built_store b;
    fs::remove(b.dir.path() / "MANIFEST");
    const std::string what = error_of([&] { (void)store::open(b.dir.path()); });
    EXPECT_NE(what.find("MANIFEST"), std::string::npos) << what;
    EXPECT_TRUE(fs::exists(b.table));
  }
  // From the fourth on: the counter is not past a listed table, so the next flush would overwrite
  // a live table; a table listed twice; a counter a flush would wrap to 0; a table name longer
  // than a file system allows (all but the duplicate found by fuzz/lsm_readers).
  for (const char* line :
       {"next x\n", "next 5x\n", "table ../../etc/passwd\n", "table .sst\n",
        "next 1\ntable 000001.sst\n", "next 2\ntable 000007.sst\n",
        "next 9\ntable 000001.sst\ntable 000001.sst\n", "next 18446744073709551615\n",
        "next 9\ntable 0000000000000000000000000000000000000000000000000000000000000000000000000000"
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "00"
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "00"
        "0000000000000000000000000000000000000000001.sst\n"}) {
    // A manifest with a bad line but a valid checksum: rejected by content, not by checksum.
    built_store b;
    std::string body = "bloomery-lsm-manifest 1\n" + std::string(line);
    char sum[40];
    std::snprintf(sum, sizeof sum, "checksum %016llx\n",
                  static_cast<unsigned long long>(XXH3_64bits(body.data(), body.size())));
    std::ofstream(b.dir.path() / "MANIFEST", std::ios::trunc) << body << sum;
    const std::string what = error_of([&] { (void)store::open(b.dir.path()); });
    EXPECT_NE(what.find("MANIFEST"), std::string::npos) << line << ": " << what;
  }
  {
    built_store b;
    fs::resize_file(b.dir.path() / "MANIFEST", 20);
    EXPECT_NE(error_of([&] { (void)store::open(b.dir.path()); }).find("MANIFEST"),
              std::string::npos);
  }
}

}  // namespace
