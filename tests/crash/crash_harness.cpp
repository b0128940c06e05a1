// crash_harness: SIGKILLs a writer at random moments and checks, after every kill, that what is on
// disk is the last state the writer completed or the one it was writing, that it loads without
// error, and that it answers every key of that state (the LSM store: with the right value).
//
//   bloomery_crash_harness cli-add    --cli PATH     [--kills N] [--seed S] [--keep]
//   bloomery_crash_harness cli-remove --cli PATH     ...
//   bloomery_crash_harness save       --writer PATH  ...   (bloomery_crash_save_writer)
//   bloomery_crash_harness lsm        --writer PATH  ...   (bloomery_crash_lsm_writer)
//
// BLOOMERY_KILLS in the environment overrides --kills. Generation g of a filter file holds the
// keys k0 ... k(g*batch - 1) (for `remove`: the keys from g*batch on), so its insert count tells
// the harness which generation it sees. Each writer's operation is timed first, and every kill
// lands at a random moment of an operation: while the old file is read, while the temporary file
// is written, before and after the rename. Work runs in epochs of a few kills, each starting from
// a fresh generation 0 of the next filter kind, so every kind is killed and states stay small.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bloomery/bloomery.hpp>
#include <bloomery/support/temp_dir.hpp>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "crash_model.hpp"

#if BLOOMERY_CRASH_LSM
#include <bloomery/lsm/store.hpp>
#endif

namespace {

namespace fs = std::filesystem;
using bloomery::filter_kind;
using steady = std::chrono::steady_clock;
using seconds = std::chrono::duration<double>;

// A check that failed: the harness reports it and exits non-zero.
struct check_failed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void expect(bool ok, const std::string& what) {
  if (!ok) throw check_failed(what);
}

[[noreturn]] void sys_fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::string(::strsignal(WTERMSIG(status)));
  return "status " + std::to_string(status);
}

bool killed(int status) {
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A writer process, its stderr (and, unless piped to us, its stdout) appended to `log`. The
// destructor kills and reaps it, so no exit path of the harness leaves it running, and the child
// asks the kernel to kill it should the harness itself die first.
class child {
 public:
  child(const std::vector<std::string>& args, const fs::path& log, bool pipe_stdout) {
    int fds[2] = {-1, -1};
    if (pipe_stdout && ::pipe2(fds, O_CLOEXEC) != 0) sys_fail("pipe");
    const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      close_all(fds);
      sys_fail("cannot open " + log.string());
    }
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) {
      const int saved = errno;
      ::close(log_fd);
      close_all(fds);
      errno = saved;
      sys_fail("fork");
    }
    if (pid_ == 0) {
      // Only async-signal-safe calls between fork and exec.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(126);
      const int null_fd = ::open("/dev/null", O_RDONLY);
      if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(pipe_stdout ? fds[1] : log_fd, 1) < 0 ||
          ::dup2(log_fd, 2) < 0) {
        ::_exit(125);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(log_fd);
    if (pipe_stdout) {
      ::close(fds[1]);
      out_ = fds[0];
    }
  }
  child(const child&) = delete;
  child& operator=(const child&) = delete;
  ~child() {
    kill_now();
    wait();
    if (out_ >= 0) ::close(out_);
  }

  void kill_now() {
    if (!reaped_) ::kill(pid_, SIGKILL);  // a zombie ignores it: wait() then tells how it ended
  }
  int wait() {
    while (!reaped_) {
      if (::waitpid(pid_, &status_, 0) == pid_) {
        reaped_ = true;
      } else if (errno != EINTR) {
        sys_fail("waitpid");
      }
    }
    return status_;
  }

  // The next line of the child's stdout; nullopt at its end or after `timeout`.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout) {
    const auto deadline = steady::now() + timeout;
    for (;;) {
      if (const std::size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      if (eof_) return std::nullopt;
      const auto left = std::max<std::int64_t>(
          0,
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()).count());
      pollfd p{out_, POLLIN, 0};
      const int r = ::poll(&p, 1, static_cast<int>(left));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) sys_fail("poll");
      if (r == 0) return std::nullopt;  // timed out
      char chunk[4096];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n < 0 && errno != EINTR) sys_fail("read");
      if (n == 0) eof_ = true;
      if (n > 0) buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  static void close_all(const int (&fds)[2]) {
    for (const int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }

  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
  int out_ = -1;
  std::string buffer_;
  bool eof_ = false;
};

// "word N" -> N, for the writers' reports.
std::uint64_t report_number(const std::string& line, const std::string& word) {
  expect(line.starts_with(word + " "), "unexpected report from the writer: '" + line + "'");
  return std::stoull(line.substr(word.size() + 1));
}

struct options {
  std::string mode;
  std::string program;  // --cli or --writer
  std::uint64_t kills = 25;
  std::uint64_t seed = 0;
  bool keep = false;
};

// What a run counts: kills survived, operations that finished before their kill, and where the
// kills landed.
struct tally {
  std::uint64_t kills = 0;
  std::uint64_t completed = 0;
  std::map<std::string, std::uint64_t> phases;
};

void print_tally(const std::string& writer, const tally& t) {
  std::printf("%s: where the kills landed:\n", writer.c_str());
  for (const auto& [phase, n] : t.phases) {
    std::printf("  %-48s %llu\n", phase.c_str(), static_cast<unsigned long long>(n));
  }
  std::printf("%s: %llu times the writer finished an operation before its kill (new state)\n",
              writer.c_str(), static_cast<unsigned long long>(t.completed));
}

// Kills a run spreads over, and the random moments they land at.
class kill_clock {
 public:
  explicit kill_clock(std::uint64_t seed) : rng_(seed) {}
  // A moment within about one operation of `op` seconds, so that a few operations run to the end.
  std::chrono::microseconds delay(double op) {
    std::uniform_real_distribution<double> d(0.0, 1.2 * op);
    return std::chrono::microseconds(static_cast<std::int64_t>(d(rng_) * 1e6));
  }

 private:
  std::mt19937_64 rng_;
};

constexpr std::uint64_t kills_per_epoch = 5;

// ---------------------------------------------------------------------------------------------
// Filter files: the CLI's add and remove, and bloomery::save.

// The generations of one epoch of a filter file.
struct generations {
  std::uint64_t batch = 0;
  std::uint64_t initial = 0;  // keys of generation 0 (remove); 0 for add and save
  bool removing = false;
  std::uint64_t first_key(std::uint64_t g) const { return removing ? g * batch : 0; }
  std::uint64_t end_key(std::uint64_t g) const { return removing ? initial : g * batch; }
  std::uint64_t count(std::uint64_t g) const { return end_key(g) - first_key(g); }
};

bloomery::any_filter make_filter(filter_kind kind, bloomery::target t) {
  switch (kind) {
    case filter_kind::bloom:
      return bloomery::bloom_filter(t);
    case filter_kind::blocked_bloom:
      return bloomery::blocked_bloom_filter(t);
    case filter_kind::counting_bloom:
      return bloomery::counting_bloom_filter(t);
    case filter_kind::cuckoo:
      return bloomery::cuckoo_filter(t);
    case filter_kind::scalable_bloom:
      return bloomery::scalable_bloom_filter(t);
    case filter_kind::static_filter:
      break;
  }
  throw std::invalid_argument("the crash harness writes no static filters (they take no inserts)");
}

// Keys the filter holds by its own count: inserts, less removes where it counts those apart.
std::uint64_t present_count(const bloomery::any_filter& f) {
  return f.visit([](const auto& x) -> std::uint64_t {
    if constexpr (requires { x.removed(); }) {
      return x.inserted() - x.removed();
    } else {
      return x.inserted();
    }
  });
}

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  expect(::stat(p.c_str(), &st) == 0, p.string() + " is missing: " + std::strerror(errno));
  expect(S_ISREG(st.st_mode), p.string() + " is not a regular file");
  return st.st_mode & 07777;
}

std::string octal(mode_t m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m));
  return buf;
}

// The temporary files save() leaves beside `path` (".NAME.tmp.XXXXXX"), with their sizes.
std::map<std::string, std::uintmax_t> temp_files(const fs::path& path) {
  std::string prefix = ".";  // appended: GCC 12 warns falsely (-Wrestrict) on "." + name
  prefix.append(path.filename().string()).append(".tmp.");
  std::map<std::string, std::uintmax_t> out;
  for (const auto& e : fs::directory_iterator(path.parent_path())) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(prefix)) out[name] = e.file_size();
  }
  return out;
}

// The harness's side of one filter file: its expected kind, mode and generation, the checks after
// each kill, and the stray temporary files the kills leave.
class filter_file {
 public:
  filter_file(fs::path path, mode_t mode) : path_(std::move(path)), mode_(mode) {}

  const fs::path& path() const { return path_; }
  std::uint64_t generation() const { return generation_; }
  const generations& gens() const { return gens_; }

  // A new epoch: generation 0 of `kind`, written by the library (not under a kill).
  void start_epoch(filter_kind kind, bloomery::target t, const generations& g) {
    kind_ = kind;
    gens_ = g;
    bloomery::any_filter f = make_filter(kind, t);
    f.visit([&]<class F>(F& x) {
      if constexpr (bloomery::insertable_filter<F>) {
        for (std::uint64_t i = 0; i < g.initial; ++i) {
          expect(bloomery_crash::insert_key(x, bloomery_crash::key(i)), "generation 0 is full");
        }
      }
    });
    const bool existed = fs::exists(path_);
    bloomery::save(f, path_);
    if (!existed) expect(::chmod(path_.c_str(), mode_) == 0, "chmod");
    generation_ = 0;
    check(0, 0);
    known_temp_ = temp_files(path_);
  }

  // Checks the file after an operation: it must be generation lo (the last one the writer
  // completed) or hi (the one it was writing). Returns where the kill landed.
  std::string after_operation(std::uint64_t lo, std::uint64_t hi) {
    check(lo, hi);
    const auto now = temp_files(path_);
    std::vector<std::pair<std::string, std::uintmax_t>> fresh;
    for (const auto& [name, size] : now) {
      if (!known_temp_.contains(name)) fresh.emplace_back(name, size);
    }
    for (const auto& f : fresh) {
      ++strays_;
      stray_bytes_ += f.second;
      stray_modes_.insert(octal(mode_of(path_.parent_path() / f.first)));
    }
    known_temp_ = now;
    const std::uintmax_t file_size = fs::file_size(path_);
    if (generation_ == hi && hi != lo) return "after the rename: new file";
    if (fresh.empty()) return "before the temporary file: old file";
    if (fresh.size() > 1) return "several temporary files: old file";
    if (fresh[0].second == 0) return "temporary file created, empty: old file";
    if (fresh[0].second < file_size) return "temporary file partly written: old file";
    return "temporary file complete, not renamed: old file";
  }

  void print_strays(const std::string& writer) const {
    std::string modes;
    for (const std::string& m : stray_modes_) modes += (modes.empty() ? "" : ", ") + m;
    std::printf(
        "%s: stray temporary files left beside the target: %llu (%llu bytes, mode %s); "
        "they never changed a load or a later save\n",
        writer.c_str(), static_cast<unsigned long long>(strays_),
        static_cast<unsigned long long>(stray_bytes_), modes.empty() ? "-" : modes.c_str());
  }

 private:
  // The file: unchanged mode, loads, the epoch's kind, generation lo or hi by its count, and
  // every key of that generation possibly present.
  void check(std::uint64_t lo, std::uint64_t hi) {
    const mode_t mode = mode_of(path_);
    expect(mode == mode_,
           path_.string() + ": mode changed from " + octal(mode_) + " to " + octal(mode));
    std::optional<bloomery::any_filter> f;
    try {
      f.emplace(bloomery::load_any(path_));
    } catch (const std::exception& e) {
      throw check_failed(path_.string() + " does not load: " + e.what());
    }
    expect(f->kind() == kind_, path_.string() + " holds a " + bloomery::to_string(f->kind()) +
                                   " filter, not " + bloomery::to_string(kind_));
    const std::uint64_t count = present_count(*f);
    // A scalable filter skips keys that already answer "possibly present": a few short.
    const std::uint64_t slack = kind_ == filter_kind::scalable_bloom ? gens_.batch / 2 : 0;
    std::optional<std::uint64_t> found;
    for (const std::uint64_t g : {lo, hi}) {
      if (count <= gens_.count(g) && count + slack >= gens_.count(g)) found = g;
    }
    expect(found.has_value(),
           path_.string() + " counts " + std::to_string(count) + " keys: neither generation " +
               std::to_string(lo) + " (" + std::to_string(gens_.count(lo)) + " keys) nor " +
               std::to_string(hi) + " (" + std::to_string(gens_.count(hi)) + ")");
    for (std::uint64_t i = gens_.first_key(*found); i < gens_.end_key(*found); ++i) {
      if (!f->may_contain(bloomery_crash::key(i))) {
        throw check_failed(path_.string() + " is generation " + std::to_string(*found) +
                           " but answers definitely-absent for its key " + bloomery_crash::key(i));
      }
    }
    generation_ = *found;
  }

  fs::path path_;
  mode_t mode_;
  filter_kind kind_ = filter_kind::bloom;
  generations gens_;
  std::uint64_t generation_ = 0;
  std::map<std::string, std::uintmax_t> known_temp_;
  std::uint64_t strays_ = 0;
  std::uint64_t stray_bytes_ = 0;
  std::set<std::string> stray_modes_;
};

// An unusual mode, so that a save that resets it to the default is caught.
constexpr mode_t file_mode = 0640;
constexpr std::uint64_t filter_capacity = 1'000'000;
constexpr double filter_fpr = 0.01;
constexpr std::uint64_t filter_batch = 20'000;

// bloomery add / bloomery remove, one process per operation, killed at a random moment of it.
int run_cli(const options& o, const fs::path& dir, tally& t) {
  const bool removing = o.mode == "cli-remove";
  const std::vector<filter_kind> kinds =
      removing ? std::vector<filter_kind>{filter_kind::counting_bloom, filter_kind::cuckoo}
               : std::vector<filter_kind>{filter_kind::bloom, filter_kind::blocked_bloom,
                                          filter_kind::counting_bloom, filter_kind::cuckoo,
                                          filter_kind::scalable_bloom};
  const std::string verb = removing ? "remove" : "add";
  filter_file file(dir / "f.bloom", file_mode);
  const fs::path keys = dir / "batch.txt";
  const fs::path log = dir / "cli.log";
  kill_clock clock(o.seed);
  generations gens{filter_batch, removing ? 16 * filter_batch : 0, removing};
  const std::uint64_t max_generation = removing ? 15 : 24;

  // One `bloomery add|remove` from the current generation; `delay` nullopt: let it finish.
  auto operation = [&](std::optional<std::chrono::microseconds> delay) {
    const std::uint64_t g = file.generation();
    {
      std::ofstream out(keys, std::ios::trunc);
      for (std::uint64_t i = g * gens.batch; i < (g + 1) * gens.batch; ++i) {
        out << bloomery_crash::key(i) << '\n';
      }
    }
    fs::remove(log);
    const auto start = steady::now();
    child c({o.program, verb, "-q", file.path().string(), keys.string()}, log, false);
    if (delay) {
      std::this_thread::sleep_for(*delay);
      c.kill_now();
    }
    const int status = c.wait();
    const double took = seconds(steady::now() - start).count();
    if (killed(status)) {
      t.phases[file.after_operation(g, g + 1)]++;
      ++t.kills;
    } else {
      expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
             "bloomery " + verb + " ended with " + describe(status) + ":\n" + read_text(log));
      file.after_operation(g + 1, g + 1);
      if (delay) ++t.completed;
    }
    return took;
  };

  for (std::uint64_t epoch = 0; t.kills < o.kills; ++epoch) {
    const filter_kind kind = kinds[epoch % kinds.size()];
    file.start_epoch(kind, {.capacity = filter_capacity, .fpr = filter_fpr}, gens);
    const double op = (operation(std::nullopt) + operation(std::nullopt)) / 2;
    std::printf("epoch %llu: %s %s, one operation %.1f ms\n",
                static_cast<unsigned long long>(epoch), verb.c_str(), bloomery::to_string(kind),
                op * 1e3);
    std::fflush(stdout);
    const std::uint64_t goal = std::min(o.kills, t.kills + kills_per_epoch);
    while (t.kills < goal && file.generation() < max_generation) operation(clock.delay(op));
  }
  file.print_strays(o.mode);
  return 0;
}

// bloomery::save in a loop (bloomery_crash_save_writer), killed at a random moment after it has
// loaded the file.
int run_save(const options& o, const fs::path& dir, tally& t) {
  const std::vector<filter_kind> kinds = {filter_kind::bloom, filter_kind::blocked_bloom,
                                          filter_kind::counting_bloom, filter_kind::cuckoo,
                                          filter_kind::scalable_bloom};
  filter_file file(dir / "f.bloom", file_mode);
  const fs::path log = dir / "writer.log";
  kill_clock clock(o.seed);
  const generations gens{filter_batch, 0, false};
  const std::uint64_t max_generation = 24;
  const auto patience = std::chrono::seconds(120);

  // Starts the writer at the current generation, lets it run `delay` (or `saves` saves) after it
  // is ready, kills it and checks the file. Returns the seconds per save it reported.
  auto run = [&](std::optional<std::chrono::microseconds> delay, int saves) {
    const std::uint64_t g = file.generation();
    child c({o.program, file.path().string(), std::to_string(gens.batch)}, log, true);
    const std::optional<std::string> ready = c.read_line(patience);
    expect(ready.has_value(), "the writer did not start:\n" + read_text(log));
    expect(report_number(*ready, "ready") == g,
           "the writer loaded '" + *ready + "', not generation " + std::to_string(g));
    const auto start = steady::now();
    std::uint64_t reported = g;
    if (delay) {
      std::this_thread::sleep_for(*delay);
    } else {
      for (int i = 0; i < saves; ++i) {
        const std::optional<std::string> line = c.read_line(patience);
        expect(line.has_value(), "the writer stopped:\n" + read_text(log));
        reported = report_number(*line, "saved");
      }
    }
    const double took = seconds(steady::now() - start).count();
    c.kill_now();
    const int status = c.wait();
    expect(killed(status), "the writer ended with " + describe(status) + ":\n" + read_text(log));
    while (const std::optional<std::string> line = c.read_line(std::chrono::milliseconds(0))) {
      reported = report_number(*line, "saved");
    }
    if (reported > g) ++t.completed;
    const std::string phase = file.after_operation(reported, reported + 1);
    if (delay) {
      t.phases[phase]++;
      ++t.kills;
    }
    return took / std::max(saves, 1);
  };

  for (std::uint64_t epoch = 0; t.kills < o.kills; ++epoch) {
    const filter_kind kind = kinds[epoch % kinds.size()];
    file.start_epoch(kind, {.capacity = filter_capacity, .fpr = filter_fpr}, gens);
    const double op = run(std::nullopt, 3);
    std::printf("epoch %llu: save %s, one save %.1f ms\n", static_cast<unsigned long long>(epoch),
                bloomery::to_string(kind), op * 1e3);
    std::fflush(stdout);
    const std::uint64_t goal = std::min(o.kills, t.kills + kills_per_epoch);
    while (t.kills < goal && file.generation() < max_generation) run(clock.delay(op), 0);
  }
  file.print_strays(o.mode);
  return 0;
}

#if BLOOMERY_CRASH_LSM
constexpr std::uint64_t lsm_batch = 2'000;

bloomery::lsm::table_filter_kind lsm_kind(const std::string& name) {
  if (name == "none") return std::nullopt;
  return bloomery::parse_filter_kind(name);
}

// Opens the store after a kill and checks the store's promise: the flushes that returned are
// all there, a flush in progress is there entirely or not at all, every key has the value of its
// latest durable write, and no debris survives the open. Returns the durable flushes.
std::uint64_t check_store(const fs::path& dir, const std::string& filter, std::uint64_t lo,
                          std::uint64_t hi) {
  bloomery::lsm::options opts;
  opts.filter = lsm_kind(filter);
  opts.memtable_entries = 2 * lsm_batch + 16;
  std::optional<bloomery::lsm::store> s;
  try {
    s.emplace(bloomery::lsm::store::open(dir, opts));
  } catch (const std::exception& e) {
    throw check_failed("the store does not open: " + std::string(e.what()));
  }
  const std::uint64_t n = s->tables().size();
  expect(n == lo || n == hi, "the store holds " + std::to_string(n) + " flushes, not " +
                                 std::to_string(lo) + " or " + std::to_string(hi));
  for (std::uint64_t j = 0; j < (n + 1) * lsm_batch; ++j) {
    const std::optional<std::string> got = s->get(bloomery_crash::key(j));
    const std::optional<std::string> want = bloomery_crash::lsm_expected(j, lsm_batch, n);
    if (got != want) {
      throw check_failed("after " + std::to_string(n) + " durable flushes, " +
                         bloomery_crash::key(j) + " reads " + got.value_or("(absent)") +
                         ", expected " + want.value_or("(absent)"));
    }
  }
  std::set<std::string> live = {"MANIFEST"};
  for (const auto& table : s->tables()) live.insert(table.file.filename().string());
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    expect(live.contains(name), "the reopened store left '" + name + "' behind");
  }
  return n;
}

// The LSM store's flush (bloomery_crash_lsm_writer), killed at a random moment after it opened.
int run_lsm(const options& o, const fs::path& dir, tally& t) {
  const std::vector<std::string> filters = {"bloom", "blocked", "static", "none"};
  const fs::path store_dir = dir / "store";
  const fs::path log = dir / "writer.log";
  kill_clock clock(o.seed);
  const std::uint64_t max_generation = 40;
  const auto patience = std::chrono::seconds(120);
  std::uint64_t flushed = 0;
  std::string filter;

  auto run = [&](std::optional<std::chrono::microseconds> delay, int flushes) {
    child c({o.program, store_dir.string(), filter, std::to_string(lsm_batch)}, log, true);
    const std::optional<std::string> ready = c.read_line(patience);
    expect(ready.has_value(), "the writer did not start:\n" + read_text(log));
    expect(report_number(*ready, "ready") == flushed,
           "the writer opened '" + *ready + "', not " + std::to_string(flushed) + " flushes");
    const auto start = steady::now();
    std::uint64_t reported = flushed;
    if (delay) {
      std::this_thread::sleep_for(*delay);
    } else {
      for (int i = 0; i < flushes; ++i) {
        const std::optional<std::string> line = c.read_line(patience);
        expect(line.has_value(), "the writer stopped:\n" + read_text(log));
        reported = report_number(*line, "flushed");
      }
    }
    const double took = seconds(steady::now() - start).count();
    c.kill_now();
    const int status = c.wait();
    expect(killed(status), "the writer ended with " + describe(status) + ":\n" + read_text(log));
    while (const std::optional<std::string> line = c.read_line(std::chrono::milliseconds(0))) {
      reported = report_number(*line, "flushed");
    }
    if (reported > flushed) ++t.completed;
    // Where the kill landed, from the debris the next open will clean up.
    bool table_tmp = false, manifest_tmp = false;
    std::uint64_t tables = 0;
    for (const auto& e : fs::directory_iterator(store_dir)) {
      const std::string name = e.path().filename().string();
      table_tmp |= name.ends_with(".sst.tmp");
      manifest_tmp |= name == "MANIFEST.tmp";
      tables += name.ends_with(".sst");
    }
    const std::uint64_t before = reported;
    flushed = check_store(store_dir, filter, reported, reported + 1);
    std::string phase = "before the table file";
    if (flushed > before) {
      phase = "after the manifest's rename: flush durable (unreported)";
    } else if (manifest_tmp) {
      phase = "manifest being written or not renamed";
    } else if (tables > flushed) {
      phase = "table renamed, not in the manifest";
    } else if (table_tmp) {
      phase = "table being written";
    }
    if (delay) {
      t.phases[phase]++;
      ++t.kills;
    }
    return took / std::max(flushes, 1);
  };

  for (std::uint64_t epoch = 0; t.kills < o.kills; ++epoch) {
    filter = filters[epoch % filters.size()];
    fs::remove_all(store_dir);
    flushed = 0;
    const double op = run(std::nullopt, 3);
    std::printf("epoch %llu: flush, tables with filter %s, one flush %.1f ms\n",
                static_cast<unsigned long long>(epoch), filter.c_str(), op * 1e3);
    std::fflush(stdout);
    const std::uint64_t goal = std::min(o.kills, t.kills + kills_per_epoch);
    while (t.kills < goal && flushed < max_generation) run(clock.delay(op), 0);
  }
  return 0;
}
#endif

options parse(int argc, char** argv) {
  options o;
  std::random_device rd;
  o.seed = (std::uint64_t{rd()} << 32) | rd();
  if (argc < 2) throw std::invalid_argument("no mode (cli-add, cli-remove, save, lsm)");
  o.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--cli" || a == "--writer") {
      o.program = value();
    } else if (a == "--kills") {
      o.kills = std::stoull(value());
    } else if (a == "--seed") {
      o.seed = std::stoull(value());
    } else if (a == "--keep") {
      o.keep = true;
    } else {
      throw std::invalid_argument("unknown argument " + a);
    }
  }
  if (const char* env = std::getenv("BLOOMERY_KILLS"); env != nullptr && *env != '\0') {
    o.kills = std::stoull(env);
  }
  if (o.program.empty()) throw std::invalid_argument("no --cli or --writer program");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bloomery_crash_harness: %s\n", e.what());
    return 2;
  }
  bloomery::support::temp_dir dir("bloomery-crash");
  if (o.keep) dir.keep();
  std::printf("%s: %llu kills, seed %llu, in %s\n", o.mode.c_str(),
              static_cast<unsigned long long>(o.kills), static_cast<unsigned long long>(o.seed),
              dir.path().c_str());
  std::fflush(stdout);
  tally t;
  const auto start = steady::now();
  try {
    if (o.mode == "cli-add" || o.mode == "cli-remove") {
      run_cli(o, dir.path(), t);
    } else if (o.mode == "save") {
      run_save(o, dir.path(), t);
#if BLOOMERY_CRASH_LSM
    } else if (o.mode == "lsm") {
      run_lsm(o, dir.path(), t);
#endif
    } else {
      std::fprintf(stderr, "bloomery_crash_harness: unknown mode %s\n", o.mode.c_str());
      return 2;
    }
  } catch (const std::exception& e) {
    dir.keep();  // the evidence stays for a look
    std::printf("FAILED after %llu kills: %s\n(files kept in %s)\n",
                static_cast<unsigned long long>(t.kills), e.what(), dir.path().c_str());
    std::printf("kills survived: %llu/%llu\n", static_cast<unsigned long long>(t.kills),
                static_cast<unsigned long long>(o.kills));
    return 1;
  }
  print_tally(o.mode, t);
  std::printf("%s: %.1f s\n", o.mode.c_str(), seconds(steady::now() - start).count());
  std::printf("kills survived: %llu/%llu\n", static_cast<unsigned long long>(t.kills),
              static_cast<unsigned long long>(o.kills));
  return 0;
}
