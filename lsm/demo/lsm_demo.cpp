// bloomery-lsm-demo: what a filter per SSTable saves on point reads, measured on a real store.
//
// It builds the same bloomery::lsm store four times, once per filter kind (none, classic Bloom,
// blocked Bloom, static), runs the same point-read workload on each and prints the results side
// by side: data blocks read per absent and present read, the share of wasted reads the filter
// removes, the measured false-positive rate, the filters' memory, throughput and latency.
//
// Keys are 16 lowercase hex characters of a 64-bit splitmix64 output, values are 20 bytes
// ("val:" and the key's number in hex). Because the keys are hashed, every table's key range
// spans the whole key space, as in an LSM-tree's level 0 of overlapping tables: no min/max key
// pruning can stand in for the filters, and an absent read without a filter really reads one
// data block from every table. Present keys are outputs 0, 1, 2, ... of the generator, absent
// keys outputs 2^63, 2^63 + 1, ...; splitmix64 is a bijection of its position and the hex text a
// bijection of the number, so an absent key can never equal a present one.
#include <bloomery/lsm/store.hpp>
#include <bloomery/support/keys.hpp>
#include <bloomery/support/progress.hpp>
#include <bloomery/support/table.hpp>
#include <bloomery/support/temp_dir.hpp>
#include <bloomery/support/text.hpp>
#include <bloomery/version.hpp>

#include <fcntl.h>   // open, posix_fadvise
#include <unistd.h>  // close

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace lsm = bloomery::lsm;
using bloomery::support::absent_offset;
using bloomery::support::fmt;
using bloomery::support::grouped;
using bloomery::support::progress_bar;
using bloomery::support::splitmix64_at;
using u64 = std::uint64_t;
using clock_type = std::chrono::steady_clock;
using bloomery::filter_kind;

constexpr const char* program = "bloomery-lsm-demo";

// ------------------------------------------------------------------------------------------------
// Keys and the read workload
// ------------------------------------------------------------------------------------------------

constexpr u64 key_seed = 0x1517'b100'3e72'0005ULL;
constexpr u64 workload_seed = 0x7ead'5eed'0000'0095ULL;  // which reads are absent, which keys

constexpr u64 present_key(u64 i) noexcept {
  return splitmix64_at(key_seed, i);
}
constexpr u64 absent_key(u64 j) noexcept {
  return splitmix64_at(key_seed, absent_offset + j);
}

// A number in [0, n) from 64 random bits. The modulo's bias is below n / 2^64 (under 10^-6 even
// at the full scale's 5 * 10^7 keys), far below anything the demo measures.
u64 below(u64 random, u64 n) noexcept {
  return random % n;
}

// Fixed-size text of a number in lowercase hex, most significant digit first, so that bytewise
// order is numeric order and distinct numbers give distinct texts.
template <std::size_t Prefix>
class hex_text {
 public:
  hex_text(const char (&prefix)[Prefix + 1], u64 v) noexcept {
    std::copy_n(prefix, Prefix, c_.begin());
    for (std::size_t i = c_.size(); i-- > Prefix;) {
      c_[i] = "0123456789abcdef"[v & 15];
      v >>= 4;
    }
  }
  std::string_view view() const noexcept { return {c_.data(), c_.size()}; }

 private:
  std::array<char, Prefix + 16> c_;
};

constexpr std::size_t key_bytes = 16;
constexpr std::size_t value_bytes = 20;

hex_text<0> key_of(u64 key_number) noexcept {
  return hex_text<0>("", key_number);
}
// The value of present key number i names i, so a get() that returned another key's value (a
// wrong table, a wrong block) is caught, not only a missing one.
hex_text<4> value_of(u64 i) noexcept {
  return hex_text<4>("val:", i);
}
static_assert(sizeof(hex_text<0>) == key_bytes && sizeof(hex_text<4>) == value_bytes);

struct read_op {
  u64 key = 0;    // the key's number; key_of(key) is the key
  u64 index = 0;  // present reads: the key's position, which names its value
  bool absent = false;
};

// Exactly round(reads * absent_fraction) absent reads, each for a different absent key, and the
// rest for present keys drawn uniformly from all tables; then shuffled, so absent and present
// reads interleave as in a real workload. Fixed seeds: every filter kind gets the same sequence.
std::vector<read_op> make_workload(u64 reads, double absent_fraction, u64 total_keys) {
  const u64 absent = std::min<u64>(
      reads, static_cast<u64>(std::llround(static_cast<double>(reads) * absent_fraction)));
  std::vector<read_op> ops(reads);
  for (u64 r = 0; r < reads; ++r) {
    if (r < absent) {
      ops[r] = {absent_key(r), 0, true};
    } else {
      const u64 i = below(splitmix64_at(workload_seed, r), total_keys);
      ops[r] = {present_key(i), i, false};
    }
  }
  for (u64 r = reads; r > 1; --r) {  // Fisher-Yates
    const u64 j = below(splitmix64_at(workload_seed, absent_offset + r), r);
    std::swap(ops[r - 1], ops[j]);
  }
  return ops;
}

// ------------------------------------------------------------------------------------------------
// Formatting
// ------------------------------------------------------------------------------------------------

// Decimal units (1 MB = 10^6 bytes), as filter sizes are usually quoted.
std::string bytes_text(double b) {
  if (b < 1e3) return fmt("%.0f B", b);
  if (b < 1e6) return fmt("%.1f KB", b / 1e3);
  if (b < 1e9) return fmt("%.3f MB", b / 1e6);
  return fmt("%.3f GB", b / 1e9);
}

// "-" stands for a quantity the run cannot define (a percentile of no reads, say).
std::string num(double v, const char* format) {
  return std::isfinite(v) ? fmt(format, v) : std::string("-");
}

// ------------------------------------------------------------------------------------------------
// Command line
// ------------------------------------------------------------------------------------------------

// A bad command line: main prints it with the usage hint and exits 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct config {
  u64 tables = 10;
  u64 keys_per_table = 500'000;
  double fpr = 0.01;
  double absent_fraction = 0.95;
  u64 reads = 0;  // 0 until parsed: the default depends on --read-latency-us
  bool reads_given = false;
  std::uint32_t read_latency_us = 0;
  bool cold = false;
  bool keep = false;
  bool json = false;
  std::optional<fs::path> dir;
};

constexpr u64 default_reads = 200'000;
constexpr u64 max_reads = 100'000'000;            // the workload and latencies stay in memory
constexpr double latency_budget_us = 20'000'000;  // see default_reads_for()

// With an added latency per block read, the default read count shrinks so that the no-filter
// run, which pays it once per table on every absent read, stays near 20 s of simulated waiting;
// the filtered runs then take a fraction of that. An explicit --reads is always obeyed.
u64 default_reads_for(const config& c) {
  if (c.read_latency_us == 0) return default_reads;
  const double per_read = static_cast<double>(c.tables) * c.read_latency_us;
  return std::clamp<u64>(static_cast<u64>(latency_budget_us / per_read), 2'000, default_reads);
}

void usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: %s [options]\n"
      "\n"
      "Builds a bloomery::lsm store four times, with no filter and with a classic Bloom, a\n"
      "blocked Bloom and a static (binary fuse) filter per SSTable, runs the same point reads on\n"
      "each (most of them for absent keys) and prints the data-block reads, the measured\n"
      "false-positive rate, the filters' memory, reads per second and read latencies side by\n"
      "side.\n"
      "\n"
      "  --tables N             SSTables per store (default 10)\n"
      "  --keys-per-table N     keys per table (default 500,000; 5000000 is the full scale)\n"
      "  --fpr P                target false-positive rate of every filter, in (0, 1)\n"
      "                         (default 0.01; at least 2^-16, the static filter's limit)\n"
      "  --reads N              point reads per filter kind (default %s; with\n"
      "                         --read-latency-us, fewer: about 20 s of added latency for the\n"
      "                         run without a filter, at least 2,000)\n"
      "  --absent-fraction F    share of reads for absent keys, in [0, 1] (default 0.95)\n"
      "  --read-latency-us L    add L microseconds to every data-block read, as a disk or a\n"
      "                         remote store would (default 0: page-cache speed)\n"
      "  --cold                 drop the tables from the page cache before the reads\n"
      "  --dir D                build the stores in D/none, D/bloom, D/blocked, D/static and\n"
      "                         keep them (default: a fresh directory under $TMPDIR or /tmp,\n"
      "                         each store deleted once measured, the directory at exit)\n"
      "  --keep                 keep the temporary directory and its stores\n"
      "  --json                 print the results as one JSON object on stdout\n"
      "  --help                 show this help\n"
      "\n"
      "Keys are 16 random hex characters, values 20 bytes. Exit status: 0 when every present\n"
      "read found its value and every absent read found nothing, 1 otherwise or on an error,\n"
      "2 on a bad command line.\n",
      program, grouped(default_reads).c_str());
}

u64 parse_count(std::string_view flag, std::string_view text, u64 min, u64 max) {
  u64 v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size()) {
    throw usage_error(fmt("%.*s expects a whole number, got '%.*s'", int(flag.size()), flag.data(),
                          int(text.size()), text.data()));
  }
  if (ec == std::errc::result_out_of_range || v < min || v > max) {
    throw usage_error(fmt("%.*s must lie in [%s, %s], got %.*s", int(flag.size()), flag.data(),
                          grouped(min).c_str(), grouped(max).c_str(), int(text.size()),
                          text.data()));
  }
  return v;
}

double parse_real(std::string_view flag, std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
    throw usage_error(fmt("%.*s expects a number, got '%.*s'", int(flag.size()), flag.data(),
                          int(text.size()), text.data()));
  }
  return v;
}

config parse_args(int argc, char** argv) {
  config c;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    // Both "--flag value" and "--flag=value" are accepted.
    std::optional<std::string_view> inline_value;
    if (const auto eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    const auto value = [&]() -> std::string_view {
      if (inline_value) return *inline_value;
      if (i + 1 >= argc) {
        throw usage_error(fmt("%.*s needs a value", int(arg.size()), arg.data()));
      }
      return argv[++i];
    };
    const auto no_value = [&] {
      if (inline_value) {
        throw usage_error(fmt("%.*s takes no value", int(arg.size()), arg.data()));
      }
    };
    if (arg == "--tables") {
      c.tables = parse_count(arg, value(), 1, 100'000);
    } else if (arg == "--keys-per-table") {
      c.keys_per_table = parse_count(arg, value(), 1, u64{1} << 40);
    } else if (arg == "--fpr") {
      c.fpr = parse_real(arg, value());
      if (!(c.fpr > 0 && c.fpr < 1)) {
        throw usage_error(fmt("--fpr must lie in (0, 1), got %g", c.fpr));
      }
      if (c.fpr < bloomery::static_filter_min_fpr) {
        throw usage_error(
            fmt("--fpr must be at least 2^-16 = %.4g: the static filter goes no lower, got %g",
                bloomery::static_filter_min_fpr, c.fpr));
      }
    } else if (arg == "--reads") {
      c.reads = parse_count(arg, value(), 1, max_reads);
      c.reads_given = true;
    } else if (arg == "--absent-fraction") {
      c.absent_fraction = parse_real(arg, value());
      if (!(c.absent_fraction >= 0 && c.absent_fraction <= 1)) {
        throw usage_error(fmt("--absent-fraction must lie in [0, 1], got %g", c.absent_fraction));
      }
    } else if (arg == "--read-latency-us") {
      c.read_latency_us = static_cast<std::uint32_t>(parse_count(arg, value(), 0, 10'000'000));
    } else if (arg == "--dir") {
      const std::string_view d = value();
      if (d.empty()) throw usage_error("--dir needs a non-empty path");
      c.dir = fs::path(d);
    } else if (arg == "--cold") {
      no_value();
      c.cold = true;
    } else if (arg == "--keep") {
      no_value();
      c.keep = true;
    } else if (arg == "--json") {
      no_value();
      c.json = true;
    } else if (arg == "--help" || arg == "-h") {
      no_value();
      usage(stdout);
      std::exit(0);
    } else {
      throw usage_error(fmt("unknown argument '%s'", argv[i]));
    }
  }
  // Key positions must stay below 2^63, where the absent keys begin.
  if (c.keys_per_table > (absent_offset - 1) / c.tables) {
    throw usage_error("--tables times --keys-per-table is too large");
  }
  if (!c.reads_given) c.reads = default_reads_for(c);
  return c;
}

// ------------------------------------------------------------------------------------------------
// Interruption, progress, the work directory
// ------------------------------------------------------------------------------------------------

// Ctrl-C must still delete the temporary stores (several GB at full scale): the handler only
// sets a flag, the build and read loops check it and unwind, and the destructors clean up. The
// handler restores the default action, so a second Ctrl-C stops a demo stuck in a long flush.
volatile std::sig_atomic_t interrupted = 0;

extern "C" void on_signal(int sig) {
  interrupted = 1;
  std::signal(sig, SIG_DFL);
}

struct interrupted_error : std::runtime_error {
  interrupted_error() : std::runtime_error("interrupted") {}
};

void check_interrupted() {
  if (interrupted != 0) throw interrupted_error();
}

// The directory holding one store per filter kind. A temporary one (no --dir) is removed at exit
// unless --keep, and each store in it is deleted as soon as it has been measured, so the disk
// holds one store at a time (about 2 GB at full scale, not 8).
class work_dir {
 public:
  explicit work_dir(const config& c) : keep_(c.keep || c.dir.has_value()) {
    if (c.dir) {
      path_ = *c.dir;
      fs::create_directories(path_);
      return;
    }
    temp_.emplace("bloomery-lsm-demo");  // under $TMPDIR or /tmp
    if (keep_) temp_->keep();
    path_ = temp_->path();
  }
  work_dir(const work_dir&) = delete;
  work_dir& operator=(const work_dir&) = delete;

  // An empty subdirectory for `kind`. A previous run's store there is deleted (stores only add
  // tables, so measuring on top of it would be wrong); anything that does not look like a store
  // is left alone and reported instead, since --dir may point somewhere precious.
  fs::path prepare(lsm::table_filter_kind kind) const {
    const fs::path sub = path_ / std::string(lsm::name_of(kind));
    if (fs::exists(sub)) {
      if (!fs::is_directory(sub)) {
        throw std::runtime_error(sub.string() + " exists and is not a directory");
      }
      for (const auto& e : fs::directory_iterator(sub)) {
        const std::string name = e.path().filename().string();
        const std::string ext = e.path().extension().string();
        const bool store_file =
            e.is_regular_file() && (name == "MANIFEST" || ext == ".sst" || ext == ".tmp");
        if (!store_file) {
          throw std::runtime_error(sub.string() + " holds " + name +
                                   ", which is not part of a bloomery::lsm store; refusing to "
                                   "delete it (choose another --dir)");
        }
      }
      fs::remove_all(sub);
    }
    fs::create_directories(sub);
    return sub;
  }
  void done_with(lsm::table_filter_kind kind) const {
    if (temp_ && !keep_) fs::remove_all(path_ / std::string(lsm::name_of(kind)));
  }
  const fs::path& path() const noexcept { return path_; }
  bool kept() const noexcept { return keep_; }

 private:
  fs::path path_;
  bool keep_;
  std::optional<bloomery::support::temp_dir> temp_;  // none with --dir
};

// ------------------------------------------------------------------------------------------------
// Measurement
// ------------------------------------------------------------------------------------------------

// Spins rather than sleeps: a sleep overshoots short delays by tens of microseconds, which would
// make --read-latency-us 10 mean something closer to 60.
void wait_microseconds(std::uint32_t us) {
  const auto deadline = clock_type::now() + std::chrono::microseconds(us);
  while (clock_type::now() < deadline) {
  }
}

// Asks the kernel to drop every table file of `st` from the page cache, so that the next reads
// come from the disk: a cold-cache measurement. The advice applies to the file, whichever
// descriptor gives it, and is only advice: a kernel that keeps the pages makes the run warmer.
void drop_page_cache(const lsm::store& st) {
  for (const lsm::table_info& t : st.tables()) {
    const int fd = ::open(t.file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      throw std::system_error(errno, std::generic_category(), "cannot open " + t.file.string());
    }
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

void add_delta(lsm::read_stats& sum, const lsm::read_stats& after, const lsm::read_stats& before) {
  sum.gets += after.gets - before.gets;
  sum.tables_consulted += after.tables_consulted - before.tables_consulted;
  sum.filter_checks += after.filter_checks - before.filter_checks;
  sum.filter_skips += after.filter_skips - before.filter_skips;
  sum.block_reads += after.block_reads - before.block_reads;
  sum.block_bytes += after.block_bytes - before.block_bytes;
  sum.wasted_block_reads += after.wasted_block_reads - before.wasted_block_reads;
}

// The reads of one class (absent or present keys) on one store.
struct read_class {
  u64 reads = 0;
  u64 wrong = 0;           // present: missing or another value; absent: found something
  lsm::read_stats stats;   // the store's counters, attributed to this class's get() calls
  std::vector<u64> ns;     // each get()'s wall time
  double get_seconds = 0;  // their sum

  double per_read(u64 v) const {
    return reads == 0 ? std::nan("") : static_cast<double>(v) / static_cast<double>(reads);
  }
  // Nearest-rank percentile in microseconds; NaN for no reads.
  double percentile_us(double q) {
    if (ns.empty()) return std::nan("");
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(ns.size())));
    const auto at = ns.begin() + static_cast<std::ptrdiff_t>(std::max<std::size_t>(rank, 1) - 1);
    std::nth_element(ns.begin(), at, ns.end());
    return static_cast<double>(*at) / 1e3;
  }
};

struct kind_result {
  lsm::table_filter_kind kind;  // std::nullopt: no filter
  double build_seconds = 0;
  u64 table_count = 0;
  u64 data_blocks = 0;
  u64 file_bytes = 0;
  u64 filter_bytes = 0;
  read_class absent, present;
  // Filled in by summarize():
  double absent_p50 = 0, absent_p99 = 0, present_p50 = 0, present_p99 = 0;
  double fpr = 0;
  u64 false_positives = 0;
  u64 negative_checks = 0;  // filter checks on tables that do not hold the key
  double removed = 0;       // share of the no-filter run's wasted reads that this one avoided
  double reads_per_second = 0;

  u64 reads() const { return absent.reads + present.reads; }
  u64 wasted() const { return absent.stats.wasted_block_reads + present.stats.wasted_block_reads; }
};

// Builds the store for `kind` in `dir` and runs `ops` against it.
kind_result measure(lsm::table_filter_kind kind, const fs::path& dir, const config& c,
                    const std::vector<read_op>& ops, progress_bar& progress) {
  kind_result r;
  r.kind = kind;
  lsm::options o;
  o.filter = kind;
  o.fpr = c.fpr;
  o.memtable_entries = static_cast<std::size_t>(c.keys_per_table);
  // The added latency is the demo's, not the store's: it waits in the store's block-read hook.
  if (c.read_latency_us > 0) {
    o.on_block_read = [us = c.read_latency_us](const lsm::block_read&) { wait_microseconds(us); };
  }
  lsm::store st = lsm::store::open(dir, o);

  const std::string name(lsm::name_of(kind));
  const u64 total = c.tables * c.keys_per_table;
  progress.start(fmt("%-7s building", name.c_str()), total);
  const auto t0 = clock_type::now();
  // Each table's keys are put in key order. The table written is the same in any order (the
  // memtable sorts them), but random-order inserts into a tree of 500,000 entries miss the cache
  // at every level: they made the default build four times slower (21 s per kind, not 5).
  std::vector<std::pair<u64, u64>> batch;  // (key number, position): the position names the value
  batch.reserve(static_cast<std::size_t>(c.keys_per_table));
  for (u64 t = 0; t < c.tables; ++t) {
    batch.clear();
    for (u64 k = 0; k < c.keys_per_table; ++k) {
      const u64 i = t * c.keys_per_table + k;
      batch.emplace_back(present_key(i), i);
    }
    std::sort(batch.begin(), batch.end());  // fixed-width hex: numeric order is key order
    const std::string note = fmt("table %s/%s", grouped(t + 1).c_str(), grouped(c.tables).c_str());
    for (u64 k = 0; k < batch.size(); ++k) {
      st.put(key_of(batch[k].first).view(), value_of(batch[k].second).view());
      check_interrupted();
      // Reading the clock once every 1024 puts keeps the bar's cost out of the build time.
      const u64 done = t * c.keys_per_table + k;
      if ((done & 1023) == 0) progress.update(done, note);
    }
    // put() flushes by itself once the memtable holds memtable_entries = keys_per_table keys;
    // this flush() is then a no-op, and it keeps one table per batch even if that rule changes.
    st.flush();
    check_interrupted();
  }
  r.build_seconds = std::chrono::duration<double>(clock_type::now() - t0).count();

  // A wrong table count would make every per-read number meaningless: say so instead.
  const std::vector<lsm::table_info> tables = st.tables();
  if (tables.size() != c.tables) {
    throw std::logic_error(fmt("the %s store has %zu tables after %s flushes", name.c_str(),
                               tables.size(), grouped(c.tables).c_str()));
  }
  for (const auto& t : tables) {
    r.data_blocks += t.data_blocks;
    r.file_bytes += t.file_bytes;
    r.filter_bytes += t.filter_bytes;
  }
  r.table_count = tables.size();

  // Room for every latency up front: a vector growing inside the read loop would add copies of
  // megabytes between two timed reads.
  const auto absent_ops = static_cast<std::size_t>(
      std::count_if(ops.begin(), ops.end(), [](const read_op& op) { return op.absent; }));
  r.absent.ns.reserve(absent_ops);
  r.present.ns.reserve(ops.size() - absent_ops);

  if (c.cold) drop_page_cache(st);
  st.reset_stats();
  progress.start(fmt("%-7s reading ", name.c_str()), ops.size());
  for (u64 n = 0; n < ops.size(); ++n) {
    const read_op& op = ops[n];
    const auto key = key_of(op.key);
    // Before/after snapshots of the counters attribute every block read to its own get(), so
    // absent and present reads are accounted separately on one interleaved workload.
    const lsm::read_stats before = st.stats();
    const auto start = clock_type::now();
    const std::optional<std::string> got = st.get(key.view());
    const auto stop = clock_type::now();
    read_class& cls = op.absent ? r.absent : r.present;
    add_delta(cls.stats, st.stats(), before);
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count();
    cls.ns.push_back(static_cast<u64>(ns));
    cls.get_seconds += static_cast<double>(ns) / 1e9;
    ++cls.reads;
    if (op.absent ? got.has_value() : (!got || *got != value_of(op.index).view())) ++cls.wrong;
    check_interrupted();
    if ((n & 1023) == 0) progress.update(n);
  }
  progress.clear();

  // The per-class sums must add up to the store's own totals, or the attribution is broken.
  const lsm::read_stats& all = st.stats();
  if (all.gets != r.reads() ||
      all.block_reads != r.absent.stats.block_reads + r.present.stats.block_reads ||
      all.filter_checks != r.absent.stats.filter_checks + r.present.stats.filter_checks) {
    throw std::logic_error("the store's read counters do not add up to the per-read deltas");
  }
  return r;
}

// The derived numbers; `baseline` is the no-filter run (the first one).
void summarize(kind_result& r, const kind_result& baseline) {
  r.absent_p50 = r.absent.percentile_us(0.50);
  r.absent_p99 = r.absent.percentile_us(0.99);
  r.present_p50 = r.present.percentile_us(0.50);
  r.present_p99 = r.present.percentile_us(0.99);
  const double seconds = r.absent.get_seconds + r.present.get_seconds;
  r.reads_per_second = seconds > 0 ? static_cast<double>(r.reads()) / seconds : std::nan("");

  // Absent and present reads together. Keys are unique across tables, so a block read that
  // found the key is the one true positive of its read; every other "maybe" that led to a block
  // read is a false positive, and is exactly a wasted block read.
  const u64 checks = r.absent.stats.filter_checks + r.present.stats.filter_checks;
  const u64 blocks = r.absent.stats.block_reads + r.present.stats.block_reads;
  const u64 true_positives = blocks - r.wasted();
  r.false_positives = r.wasted();
  if (!r.kind) {
    // No filter answers "maybe" for every table: each table lacking the key is read in vain.
    r.negative_checks = r.wasted();
    r.fpr = 1;
  } else {
    r.negative_checks = checks >= true_positives ? checks - true_positives : 0;
    r.fpr = r.negative_checks == 0
                ? std::nan("")
                : static_cast<double>(r.false_positives) / static_cast<double>(r.negative_checks);
  }
  r.removed = baseline.wasted() == 0
                  ? std::nan("")
                  : 1.0 - static_cast<double>(r.wasted()) / static_cast<double>(baseline.wasted());
}

// ------------------------------------------------------------------------------------------------
// Reports
// ------------------------------------------------------------------------------------------------

const char* long_name(lsm::table_filter_kind k) {
  if (!k) return "no filter";
  switch (*k) {
    case filter_kind::bloom:
      return "classic Bloom (bloomery::bloom_filter)";
    case filter_kind::blocked_bloom:
      return "blocked Bloom (bloomery::blocked_bloom_filter, one 64-byte line per key)";
    case filter_kind::static_filter:
      return "static (bloomery::static_filter, a binary fuse filter)";
    default:
      return "?";
  }
}

void print_text(const config& c, const std::vector<kind_result>& results, const work_dir& wd,
                double wall_seconds) {
  const kind_result& base = results.front();
  const u64 absent = base.absent.reads, present = base.present.reads;
  std::printf("bloomery %s LSM-tree demo: %s SSTables x %s keys, target FPR %g%%\n",
              bloomery::version_string, grouped(c.tables).c_str(),
              grouped(c.keys_per_table).c_str(), c.fpr * 100);
#ifndef NDEBUG
  std::printf("note: this is not a Release (NDEBUG) build; timings are not representative.\n");
#endif
  std::printf(
      "  keys: %zu bytes (8 random bytes in hex), values %zu bytes; every table spans the whole\n"
      "        key space, like overlapping level-0 tables\n"
      "  each table: %s data blocks of ~4 KB, %s on disk (means)\n"
      "  workload: %s point reads per kind (%s for absent keys, %s for present ones),\n"
      "            the same sequence for every kind\n"
      "  reads: %s; %s\n\n",
      key_bytes, value_bytes, grouped(base.data_blocks / base.table_count).c_str(),
      bytes_text(static_cast<double>(base.file_bytes) / static_cast<double>(base.table_count))
          .c_str(),
      grouped(c.reads).c_str(), grouped(absent).c_str(), grouped(present).c_str(),
      c.cold ? "page cache dropped before them (--cold)" : "tables in the page cache",
      c.read_latency_us == 0
          ? "no added latency"
          : fmt("%s us added to every block read", grouped(c.read_latency_us).c_str()).c_str());

  bloomery::support::text_table t({.indent = 2, .gap = 3, .first_left = true});
  std::vector<std::string> head{""};
  for (const auto& r : results) head.emplace_back(lsm::name_of(r.kind));
  t.row(head);
  const auto add = [&](const char* label, auto cell) {
    std::vector<std::string> row{label};
    for (const auto& r : results) row.push_back(cell(r));
    t.row(row);
  };
  add("block reads per absent read", [](const kind_result& r) {
    return num(r.absent.per_read(r.absent.stats.block_reads), "%.3f");
  });
  add("block reads per present read", [](const kind_result& r) {
    return num(r.present.per_read(r.present.stats.block_reads), "%.3f");
  });
  add("wasted reads removed", [](const kind_result& r) { return num(r.removed * 100, "%.2f%%"); });
  add("measured FPR",
      [](const kind_result& r) { return !r.kind ? std::string("1") : num(r.fpr * 100, "%.3f%%"); });
  add("filter memory per table", [](const kind_result& r) {
    return bytes_text(static_cast<double>(r.filter_bytes) / static_cast<double>(r.table_count));
  });
  add("filter memory, all tables",
      [](const kind_result& r) { return bytes_text(static_cast<double>(r.filter_bytes)); });
  add("filter bits per key", [&](const kind_result& r) {
    return fmt("%.2f", static_cast<double>(r.filter_bytes) * 8 /
                           static_cast<double>(c.tables * c.keys_per_table));
  });
  add("reads per second",
      [](const kind_result& r) { return grouped(static_cast<u64>(r.reads_per_second)); });
  add("absent read p50 (us)", [](const kind_result& r) { return num(r.absent_p50, "%.1f"); });
  add("absent read p99 (us)", [](const kind_result& r) { return num(r.absent_p99, "%.1f"); });
  add("present read p50 (us)", [](const kind_result& r) { return num(r.present_p50, "%.1f"); });
  add("present read p99 (us)", [](const kind_result& r) { return num(r.present_p99, "%.1f"); });
  add("build time (s)", [](const kind_result& r) { return fmt("%.1f", r.build_seconds); });
  t.print();

  std::printf("\n");
  for (const auto& r : results) {
    std::printf("  %-8s %s\n", std::string(lsm::name_of(r.kind)).c_str(), long_name(r.kind));
  }
  std::printf(
      "\n"
      "  block reads per ... read: data blocks read from table files (one pread each) per get().\n"
      "    Without a filter an absent read reads one block from every table; with one, only\n"
      "    where the filter wrongly answers \"maybe\". A present read also reads its own block.\n"
      "  wasted reads removed: 1 - wasted block reads / those of \"none\" (a wasted read is one\n"
      "    that does not find the key), over all reads.\n"
      "  measured FPR: false positives / filter checks on tables that do not hold the key,\n"
      "    absent and present reads together; a false positive is a \"maybe\" whose block read\n"
      "    then missed. \"none\" shows 1: a missing filter answers \"maybe\" for every table.\n"
      "    The static filter's fingerprints have 8 bits for any target >= 2^-8, so at 1%% it\n"
      "    delivers 2^-8 = 0.39%% (below 2^-8 they have 16 bits: 2^-16).\n"
      "  filter memory: the filters' in-memory size (mean per table, and all tables), and the\n"
      "    same as bits per key.\n"
      "  reads per second: reads / the summed wall time of the get() calls (one thread).\n"
      "  p50, p99: median and 99th percentile of one get()'s wall time, absent and present\n"
      "    reads apart.\n"
      "  build time: the puts and flushes of all tables, filters included.\n\n");

  u64 wrong = 0;
  for (const auto& r : results) wrong += r.absent.wrong + r.present.wrong;
  if (wrong == 0) {
    std::printf(
        "correct: with every filter kind, all %s present reads found their value and all %s\n"
        "         absent reads found nothing.\n",
        grouped(present).c_str(), grouped(absent).c_str());
  } else {
    for (const auto& r : results) {
      std::printf("WRONG (%s): %s present reads missed their value, %s absent reads found one\n",
                  std::string(lsm::name_of(r.kind)).c_str(), grouped(r.present.wrong).c_str(),
                  grouped(r.absent.wrong).c_str());
    }
  }
  std::printf("total time: %.1f s", wall_seconds);
  if (wd.kept()) std::printf("; stores kept in %s", wd.path().c_str());
  std::printf("\n");
}

// A JSON number with six significant digits, but no exponent for large ones such as reads per
// second; NaN (a quantity the run cannot define) becomes null.
std::string jnum(double v) {
  if (!std::isfinite(v)) return "null";
  if (std::abs(v) >= 1e6 && std::abs(v) < 1e15) return fmt("%.0f", v);
  return fmt("%.6g", v);
}

// A JSON string of a path: quotes, backslashes and control characters escaped.
std::string jstr(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      out += fmt("\\u%04x", static_cast<unsigned>(ch));
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

void print_json(const config& c, const std::vector<kind_result>& results, const work_dir& wd,
                bool correct, double wall_seconds) {
  const kind_result& base = results.front();
  std::string s = "{";
  s += fmt("\"tables\": %s, \"keys_per_table\": %s, \"absent_fraction\": %s, \"fpr\": %s, ",
           std::to_string(c.tables).c_str(), std::to_string(c.keys_per_table).c_str(),
           jnum(c.absent_fraction).c_str(), jnum(c.fpr).c_str());
  s += fmt("\"reads\": %s, \"absent_reads\": %s, \"present_reads\": %s, ",
           std::to_string(c.reads).c_str(), std::to_string(base.absent.reads).c_str(),
           std::to_string(base.present.reads).c_str());
  s += fmt("\"key_bytes\": %zu, \"value_bytes\": %zu, \"read_latency_us\": %u, \"cold\": %s, ",
           key_bytes, value_bytes, c.read_latency_us, c.cold ? "true" : "false");
  s += fmt("\"correct\": %s, \"total_seconds\": %s, ", correct ? "true" : "false",
           jnum(wall_seconds).c_str());
  if (wd.kept()) s += "\"dir\": " + jstr(wd.path().string()) + ", ";
  s += "\"results\": [";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const kind_result& r = results[i];
    const auto field = [&s](const char* name, const std::string& v) {
      s += fmt("\"%s\": ", name) + v + ", ";
    };
    const auto count = [&](const char* name, u64 v) { field(name, std::to_string(v)); };
    s += i == 0 ? "{" : ", {";
    field("filter", jstr(lsm::name_of(r.kind)));
    field("block_reads_per_absent_read", jnum(r.absent.per_read(r.absent.stats.block_reads)));
    field("block_reads_per_present_read", jnum(r.present.per_read(r.present.stats.block_reads)));
    field("wasted_reads_removed", jnum(r.removed));
    field("measured_fpr", jnum(r.fpr));
    count("false_positives", r.false_positives);
    count("negative_filter_checks", r.negative_checks);
    count("filter_bytes_per_table", r.filter_bytes / r.table_count);
    count("filter_bytes_total", r.filter_bytes);
    field("reads_per_second", jnum(r.reads_per_second));
    field("p50_us", jnum(r.absent_p50));
    field("p99_us", jnum(r.absent_p99));
    field("absent_p50_us", jnum(r.absent_p50));
    field("absent_p99_us", jnum(r.absent_p99));
    field("present_p50_us", jnum(r.present_p50));
    field("present_p99_us", jnum(r.present_p99));
    count("absent_found", r.absent.wrong);
    count("present_wrong", r.present.wrong);
    count("data_blocks", r.data_blocks);
    count("file_bytes", r.file_bytes);
    s += "\"build_seconds\": " + jnum(r.build_seconds) + "}";
  }
  s += "]}";
  std::printf("%s\n", s.c_str());
}

int run(const config& c) {
  const auto t0 = clock_type::now();
  work_dir wd(c);
  const std::vector<read_op> ops =
      make_workload(c.reads, c.absent_fraction, c.tables * c.keys_per_table);
  progress_bar progress;
  std::vector<kind_result> results;
  const lsm::table_filter_kind kinds[] = {std::nullopt, filter_kind::bloom,
                                          filter_kind::blocked_bloom, filter_kind::static_filter};
  // All four directories first: a --dir that cannot be used should fail before minutes of work.
  std::vector<fs::path> dirs;
  for (const lsm::table_filter_kind kind : kinds) dirs.push_back(wd.prepare(kind));
  for (std::size_t k = 0; k < dirs.size(); ++k) {
    results.push_back(measure(kinds[k], dirs[k], c, ops, progress));
    wd.done_with(kinds[k]);
  }
  for (auto& r : results) summarize(r, results.front());
  bool correct = true;
  for (const auto& r : results) correct = correct && r.absent.wrong == 0 && r.present.wrong == 0;

  const double wall = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (c.json) {
    print_json(c, results, wd, correct, wall);
  } else {
    print_text(c, results, wd, wall);
  }
  std::fflush(stdout);
  if (!correct) {
    std::fprintf(stderr,
                 "%s: wrong answers: a store returned a value for an absent key or "
                 "missed a present one (see the results)\n",
                 program);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  config c;
  try {
    c = parse_args(argc, argv);
  } catch (const usage_error& e) {
    std::fprintf(stderr, "%s: %s\nTry '%s --help'.\n", program, e.what(), program);
    return 2;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  try {
    return run(c);
  } catch (const interrupted_error&) {
    std::fprintf(stderr, "%s: interrupted\n", program);
    return 130;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
}
