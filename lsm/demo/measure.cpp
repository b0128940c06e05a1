#include "measure.hpp"

#include <bloomery/support/text.hpp>

#include <fcntl.h>   // open, posix_fadvise
#include <unistd.h>  // close

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

namespace bloomery_lsm_demo {
namespace {

using bloomery::support::fmt;
using bloomery::support::grouped;
using clock_type = std::chrono::steady_clock;

volatile std::sig_atomic_t interrupted = 0;

extern "C" void on_signal(int sig) {
  interrupted = 1;
  std::signal(sig, SIG_DFL);
}

void check_interrupted() {
  if (interrupted != 0) throw interrupted_error();
}

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

}  // namespace

void install_interrupt_handlers() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

kind_result measure(lsm::table_filter_kind kind, const fs::path& dir, const config& c,
                    const std::vector<read_op>& ops, bloomery::support::progress_bar& progress) {
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

}  // namespace bloomery_lsm_demo
