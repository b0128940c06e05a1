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
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
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

// A writer process in a process group of its own, its stderr (and, unless piped to us, its stdout)
// appended to `log`. The destructor kills and reaps it, so no exit path of the harness leaves it
// running, and the child asks the kernel to kill it should the harness itself die first.
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
      if (::getppid() != parent || ::setpgid(0, 0) != 0) ::_exit(126);
      const int null_fd = ::open("/dev/null", O_RDONLY);
      if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(pipe_stdout ? fds[1] : log_fd, 1) < 0 ||
          ::dup2(log_fd, 2) < 0) {
        ::_exit(125);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::setpgid(pid_, pid_);  // also here, so that the group exists before any kill_now()
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
    if (exit_fd_ >= 0) ::close(exit_fd_);
  }

  // A descriptor that becomes readable when the child ends (a pidfd); -1 where unsupported.
  int exit_fd() {
    if (exit_fd_ < 0 && !reaped_) exit_fd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
    return exit_fd_;
  }

  // Kills the child's whole process group, so that a writer that is a script takes its own
  // children along. Only before the child is reaped: until then its pid cannot be reused.
  void kill_now() {
    if (!reaped_) ::kill(-pid_, SIGKILL);  // a zombie ignores it: wait() then tells how it ended
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
  int exit_fd_ = -1;
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
  std::uint64_t attempts = 0;
  std::map<std::string, std::uint64_t> phases;

  // Counts a kill about to be tried; a writer that always finishes first would loop forever.
  void attempt(std::uint64_t wanted) {
    ++attempts;
    expect(attempts <= 20 * wanted + 100, "after " + std::to_string(attempts - 1) + " tries only " +
                                              std::to_string(kills) +
                                              " kills landed: the writer always finished first");
  }
};

void print_tally(const std::string& writer, const tally& t) {
  std::printf("%s: where the kills landed:\n", writer.c_str());
  for (const auto& [phase, n] : t.phases) {
    std::printf("  %-58s %llu\n", phase.c_str(), static_cast<unsigned long long>(n));
  }
  std::printf("%s: %llu times the writer finished an operation before its kill (new state)\n",
              writer.c_str(), static_cast<unsigned long long>(t.completed));
}

// When a kill lands: `after` from the operation's start or, when `aimed`, from the moment the
// writer created its temporary file, so that the write, the fsync and the rename are hit often.
struct kill_plan {
  bool aimed = false;
  std::chrono::microseconds after{0};
};

// One writer operation's timing, measured without kills.
struct timing {
  double op = 0;      // seconds per operation
  double window = 0;  // seconds from the temporary file's creation to the committing rename
};

// The random moments of a run's kills: alternately anywhere in an operation and within its write
// window, each up to a little past its end so that a few operations finish.
class kill_clock {
 public:
  explicit kill_clock(std::uint64_t seed) : rng_(seed) {}
  kill_plan next(const timing& t) {
    aimed_ = !aimed_;
    std::uniform_real_distribution<double> d(0.0, 1.2 * (aimed_ ? t.window : t.op));
    return {aimed_, std::chrono::microseconds(static_cast<std::int64_t>(d(rng_) * 1e6))};
  }

 private:
  std::mt19937_64 rng_;
  bool aimed_ = false;
};

enum class dir_event { temp_created, committed };

// Watches a writer's directory (inotify) for the creation of its temporary file and for the
// rename that commits its work, so the harness can aim kills at the window between them.
class dir_watch {
 public:
  dir_watch(const fs::path& dir, std::function<bool(const std::string&)> is_temp,
            std::string commit)
      : fd_(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK)),
        is_temp_(std::move(is_temp)),
        commit_(std::move(commit)) {
    if (fd_ < 0) sys_fail("inotify_init1");
    if (::inotify_add_watch(fd_, dir.c_str(), IN_CREATE | IN_MOVED_TO) < 0) {
      const int saved = errno;
      ::close(fd_);
      errno = saved;
      sys_fail("inotify_add_watch " + dir.string());
    }
  }
  dir_watch(const dir_watch&) = delete;
  dir_watch& operator=(const dir_watch&) = delete;
  ~dir_watch() { ::close(fd_); }

  // Forgets the events so far (the harness's own saves, an earlier writer's).
  void drain() {
    read_available();
    pending_.clear();
  }

  // Waits for the next event `e`, skipping others; false after `timeout`, or as soon as `stop`
  // (a writer's pidfd, -1 for none) says the writer has ended without making the event.
  bool wait(dir_event e, std::chrono::milliseconds timeout, int stop = -1) {
    const auto deadline = steady::now() + timeout;
    for (bool stopped = false;;) {
      while (!pending_.empty()) {
        const dir_event next = pending_.front();
        pending_.pop_front();
        if (next == e) return true;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
      if (stopped || left.count() <= 0) return false;
      pollfd p[2] = {{fd_, POLLIN, 0}, {stop, POLLIN, 0}};
      const int r = ::poll(p, stop >= 0 ? 2 : 1, static_cast<int>(left.count()));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) sys_fail("poll");
      if (r == 0) return false;
      // A writer's events are queued by the time it has ended: one more read sees them all.
      stopped = stop >= 0 && (p[1].revents & POLLIN) != 0;
      read_available();
    }
  }

 private:
  void read_available() {
    alignas(inotify_event) char buf[8192];
    for (;;) {
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      if (n < 0) sys_fail("read inotify");
      for (ssize_t at = 0; at < n;) {
        const auto* ev = reinterpret_cast<const inotify_event*>(buf + at);
        const std::string name = ev->len > 0 ? ev->name : "";
        if ((ev->mask & IN_CREATE) != 0 && is_temp_(name)) {
          pending_.push_back(dir_event::temp_created);
        }
        if ((ev->mask & IN_MOVED_TO) != 0 && name == commit_) {
          pending_.push_back(dir_event::committed);
        }
        at += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
      }
    }
  }

  int fd_;
  std::function<bool(const std::string&)> is_temp_;
  std::string commit_;
  std::deque<dir_event> pending_;
};

// How long the harness waits for a writer's report or event before calling it stuck.
constexpr auto patience = std::chrono::seconds(120);
// How long an aimed kill waits for the temporary file before it strikes anyway.
constexpr auto aim_patience = std::chrono::seconds(10);

// One run of a looping writer (the save and LSM writers): started with `args` at generation `g`,
// which it must report ready at, then killed per `plan` or, without one, after `ops` operations
// whose timing is added to `measured`. Returns the last generation it reported complete.
std::uint64_t loop_round(const std::vector<std::string>& args, const fs::path& log,
                         dir_watch& watch, const std::string& done_word, std::uint64_t g,
                         std::optional<kill_plan> plan, int ops, timing* measured) {
  watch.drain();
  child c(args, log, true);
  const std::optional<std::string> ready = c.read_line(patience);
  expect(ready.has_value(), "the writer did not start:\n" + read_text(log));
  expect(report_number(*ready, "ready") == g,
         "the writer reported '" + *ready + "', not generation " + std::to_string(g));
  std::uint64_t reported = g;
  if (plan) {
    if (plan->aimed) watch.wait(dir_event::temp_created, aim_patience, c.exit_fd());
    std::this_thread::sleep_for(plan->after);
  } else {
    const auto start = steady::now();
    for (int i = 0; i < ops; ++i) {
      expect(watch.wait(dir_event::temp_created, patience, c.exit_fd()),
             "no temporary file:\n" + read_text(log));
      const auto created = steady::now();
      expect(watch.wait(dir_event::committed, patience, c.exit_fd()),
             "no commit:\n" + read_text(log));
      measured->window += seconds(steady::now() - created).count() / ops;
      const std::optional<std::string> line = c.read_line(patience);
      expect(line.has_value(), "the writer stopped:\n" + read_text(log));
      reported = report_number(*line, done_word);
    }
    measured->op += seconds(steady::now() - start).count() / ops;
  }
  c.kill_now();
  const int status = c.wait();
  expect(killed(status), "the writer ended with " + describe(status) + ":\n" + read_text(log));
  while (const std::optional<std::string> line = c.read_line(std::chrono::milliseconds(0))) {
    reported = report_number(*line, done_word);
  }
  return reported;
}

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
    case filter_kind::scalable_cuckoo:
      return bloomery::scalable_cuckoo_filter(t);
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

// How save()'s temporary files beside `path` begin: ".NAME.tmp." (then a unique suffix).
std::string temp_prefix(const fs::path& path) {
  std::string prefix = ".";  // appended: GCC 12 warns falsely (-Wrestrict) on "." + name
  return prefix.append(path.filename().string()).append(".tmp.");
}

// The temporary files save() left beside `path`, with their sizes.
std::map<std::string, std::uintmax_t> temp_files(const fs::path& path) {
  const std::string prefix = temp_prefix(path);
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
  // `others`: the names of the harness's own files in the same directory.
  filter_file(fs::path path, mode_t mode, std::set<std::string> others)
      : path_(std::move(path)), mode_(mode), others_(std::move(others)) {}

  const fs::path& path() const { return path_; }
  std::uint64_t generation() const { return generation_; }
  // Whether a directory entry's name is one of save()'s temporary files for this file.
  std::function<bool(const std::string&)> temp_name_test() const {
    return
        [prefix = temp_prefix(path_)](const std::string& name) { return name.starts_with(prefix); };
  }

  // A new epoch: generation 0 of `kind`, written by the library (not under a kill).
  void start_epoch(filter_kind kind, bloomery::target t, const generations& g) {
    kind_ = kind;
    gens_ = g;
    bloomery::any_filter f = make_filter(kind, t);
    f.visit([&]<class F>(F& x) {
      if constexpr (bloomery::insertable_filter<F>) {
        for (std::uint64_t i = 0; i < g.initial; ++i) {
          expect(x.insert(bloomery_crash::key(i)), "generation 0 is full");
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
    // Nothing but the file and save()'s temporary files may appear.
    for (const auto& e : fs::directory_iterator(path_.parent_path())) {
      const std::string name = e.path().filename().string();
      expect(name == path_.filename() || others_.contains(name) || now.contains(name),
             "a kill left '" + name + "' beside " + path_.string());
    }
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
    // save() gives the temporary file the target's mode after its fsync, just before the rename.
    if (mode_of(path_.parent_path() / fresh[0].first) == mode_) {
      return "temporary file complete, mode set, not renamed: old file";
    }
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
  std::set<std::string> others_;
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
  const fs::path keys = dir / "batch.txt";
  const fs::path log = dir / "cli.log";
  filter_file file(dir / "f.bloom", file_mode, {keys.filename(), log.filename()});
  dir_watch watch(dir, file.temp_name_test(), file.path().filename().string());
  kill_clock clock(o.seed);
  generations gens{filter_batch, removing ? 10 * filter_batch : 0, removing};
  const std::uint64_t max_generation = removing ? 9 : 24;

  // One `bloomery add|remove` from the current generation, killed per `plan` or, without one,
  // run to the end with its timing added to `measured`.
  auto operation = [&](std::optional<kill_plan> plan, timing* measured) {
    const std::uint64_t g = file.generation();
    {
      std::ofstream out(keys, std::ios::trunc);
      for (std::uint64_t i = g * gens.batch; i < (g + 1) * gens.batch; ++i) {
        out << bloomery_crash::key(i) << '\n';
      }
    }
    fs::remove(log);
    watch.drain();
    const auto start = steady::now();
    child c({o.program, verb, "-q", file.path().string(), keys.string()}, log, false);
    if (plan) {
      if (plan->aimed) watch.wait(dir_event::temp_created, aim_patience, c.exit_fd());
      std::this_thread::sleep_for(plan->after);
      c.kill_now();
    } else if (watch.wait(dir_event::temp_created, patience, c.exit_fd())) {
      const auto created = steady::now();
      if (watch.wait(dir_event::committed, patience, c.exit_fd())) {
        measured->window += seconds(steady::now() - created).count() / 2;
      }
    }
    const int status = c.wait();
    if (!plan) measured->op += seconds(steady::now() - start).count() / 2;
    if (killed(status)) {
      t.phases[file.after_operation(g, g + 1)]++;
      ++t.kills;
    } else {
      expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
             "bloomery " + verb + " ended with " + describe(status) + ":\n" + read_text(log));
      file.after_operation(g + 1, g + 1);
      if (plan) ++t.completed;
    }
  };

  for (std::uint64_t epoch = 0; t.kills < o.kills; ++epoch) {
    const filter_kind kind = kinds[epoch % kinds.size()];
    file.start_epoch(kind, {.capacity = filter_capacity, .fpr = filter_fpr}, gens);
    timing measured;
    operation(std::nullopt, &measured);
    operation(std::nullopt, &measured);
    std::printf("epoch %llu: %s %s, one operation %.1f ms, its write window %.1f ms\n",
                static_cast<unsigned long long>(epoch), verb.c_str(), bloomery::to_string(kind),
                measured.op * 1e3, measured.window * 1e3);
    std::fflush(stdout);
    const std::uint64_t goal = std::min(o.kills, t.kills + kills_per_epoch);
    while (t.kills < goal && file.generation() < max_generation) {
      t.attempt(o.kills);
      operation(clock.next(measured), nullptr);
    }
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
  const fs::path log = dir / "writer.log";
  filter_file file(dir / "f.bloom", file_mode, {log.filename()});
  dir_watch watch(dir, file.temp_name_test(), file.path().filename().string());
  kill_clock clock(o.seed);
  const generations gens{filter_batch, 0, false};
  const std::uint64_t max_generation = 24;

  auto run = [&](std::optional<kill_plan> plan, timing* measured) {
    const std::uint64_t g = file.generation();
    const std::uint64_t reported =
        loop_round({o.program, file.path().string(), std::to_string(gens.batch)}, log, watch,
                   "saved", g, plan, 3, measured);
    if (reported > g && plan) ++t.completed;
    const std::string phase = file.after_operation(reported, reported + 1);
    if (plan) {
      t.phases[phase]++;
      ++t.kills;
    }
  };

  for (std::uint64_t epoch = 0; t.kills < o.kills; ++epoch) {
    const filter_kind kind = kinds[epoch % kinds.size()];
    file.start_epoch(kind, {.capacity = filter_capacity, .fpr = filter_fpr}, gens);
    timing measured;
    run(std::nullopt, &measured);
    std::printf("epoch %llu: save %s, one insert and save %.1f ms, its write window %.1f ms\n",
                static_cast<unsigned long long>(epoch), bloomery::to_string(kind),
                measured.op * 1e3, measured.window * 1e3);
    std::fflush(stdout);
    const std::uint64_t goal = std::min(o.kills, t.kills + kills_per_epoch);
    while (t.kills < goal && file.generation() < max_generation) {
      t.attempt(o.kills);
      run(clock.next(measured), nullptr);
    }
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
  std::uint64_t flushed = 0;
  std::string filter;
  std::optional<dir_watch> watch;

  auto run = [&](std::optional<kill_plan> plan, timing* measured) {
    const std::uint64_t reported =
        loop_round({o.program, store_dir.string(), filter, std::to_string(lsm_batch)}, log, *watch,
                   "flushed", flushed, plan, 3, measured);
    if (reported > flushed && plan) ++t.completed;
    // Where the kill landed, from the debris the next open cleans up.
    bool table_tmp = false, manifest_tmp = false;
    std::uint64_t tables = 0;
    for (const auto& e : fs::directory_iterator(store_dir)) {
      const std::string name = e.path().filename().string();
      table_tmp |= name.ends_with(".sst.tmp");
      manifest_tmp |= name == "MANIFEST.tmp";
      tables += name.ends_with(".sst") ? 1 : 0;
    }
    flushed = check_store(store_dir, filter, reported, reported + 1);
    std::string phase = "before the table file";
    if (flushed > reported) {
      phase = "after the manifest's rename: flush durable";
    } else if (manifest_tmp) {
      phase = "manifest being written or not renamed";
    } else if (tables > flushed) {
      phase = "table renamed, not in the manifest";
    } else if (table_tmp) {
      phase = "table being written";
    }
    if (plan) {
      t.phases[phase]++;
      ++t.kills;
    }
  };

  for (std::uint64_t epoch = 0; t.kills < o.kills; ++epoch) {
    filter = filters[epoch % filters.size()];
    watch.reset();
    fs::remove_all(store_dir);
    fs::create_directory(store_dir);
    watch.emplace(
        store_dir, [](const std::string& name) { return name.ends_with(".sst.tmp"); }, "MANIFEST");
    flushed = 0;
    timing measured;
    run(std::nullopt, &measured);
    std::printf(
        "epoch %llu: flush, tables with filter %s, one put batch and flush %.1f ms, "
        "its write window %.1f ms\n",
        static_cast<unsigned long long>(epoch), filter.c_str(), measured.op * 1e3,
        measured.window * 1e3);
    std::fflush(stdout);
    const std::uint64_t goal = std::min(o.kills, t.kills + kills_per_epoch);
    while (t.kills < goal && flushed < max_generation) {
      t.attempt(o.kills);
      run(clock.next(measured), nullptr);
    }
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
