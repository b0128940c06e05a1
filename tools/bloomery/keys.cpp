#include "keys.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <bloomery/support/progress.hpp>
#include <bloomery/support/text.hpp>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace bloomery_cli {
namespace {

constexpr std::size_t read_size = std::size_t{1} << 22;  // 4 MiB per read

std::string display_name(const std::string& file) {
  return file == "-" ? "(standard input)" : file;
}

[[noreturn]] void fail_io(const std::string& file, const char* what) {
  throw cli_error("'" + display_name(file) + "': " + what + ": " + std::strerror(errno));
}

// The key of one line: the line without its CR, or one column of it. Empty: skip the line.
std::string_view key_of(std::string_view line, const key_options& opts, const std::string& file,
                        std::uint64_t line_no) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (opts.field == 0 || line.empty()) return line;
  std::size_t start = 0;
  for (std::uint32_t f = 1; f < opts.field; ++f) {
    const std::size_t at = line.find(opts.delimiter, start);
    if (at == std::string_view::npos) {
      throw cli_error("'" + display_name(file) + "' line " + std::to_string(line_no) + ": has " +
                      std::to_string(f) + " field(s), --field " + std::to_string(opts.field) +
                      " asked for");
    }
    start = at + 1;
  }
  const std::size_t end = line.find(opts.delimiter, start);
  return line.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
}

// The total size of the key files when all are regular files; 0 (unknown) otherwise.
std::uint64_t input_size(const std::vector<std::string>& files) {
  if (files.empty()) return 0;
  std::uint64_t total = 0;
  for (const std::string& file : files) {
    struct stat st {};
    if (file == "-" || ::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    total += static_cast<std::uint64_t>(st.st_size);
  }
  return total;
}

// A read's worth of input: the buffer, and the keys (views into it) of its complete lines.
struct chunk {
  std::vector<char> buf;
  std::vector<std::string_view> keys;
  std::uint64_t bytes = 0;  // input bytes the read added (for the progress bar)
};

// The hand-off between the reader thread and the thread that hashes and probes: a few chunks
// circulate, so the next read and its line splitting overlap with work on the previous one.
class chunk_pipe {
 public:
  explicit chunk_pipe(std::size_t chunks) {
    for (std::size_t i = 0; i < chunks; ++i) free_.push_back(std::make_unique<chunk>());
  }

  // Reader side. take_free() returns null once the consumer has stopped.
  std::unique_ptr<chunk> take_free() { return take(free_); }
  void push_full(std::unique_ptr<chunk> c) { put(full_, std::move(c)); }
  void finish(std::exception_ptr error) {
    const std::lock_guard lock(mutex_);
    error_ = std::move(error);
    finished_ = true;
    changed_.notify_all();
  }

  // Consumer side. take_full() returns null when the reader has finished and all is consumed.
  std::unique_ptr<chunk> take_full() { return take(full_); }
  void give_back(std::unique_ptr<chunk> c) { put(free_, std::move(c)); }
  void stop() {
    const std::lock_guard lock(mutex_);
    stopped_ = true;
    changed_.notify_all();
  }
  std::exception_ptr error() {
    const std::lock_guard lock(mutex_);
    return error_;
  }

 private:
  using queue = std::deque<std::unique_ptr<chunk>>;
  std::unique_ptr<chunk> take(queue& q) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !q.empty() || stopped_ || (&q == &full_ && finished_); });
    if (q.empty() || stopped_) return nullptr;
    std::unique_ptr<chunk> c = std::move(q.front());
    q.pop_front();
    return c;
  }
  void put(queue& q, std::unique_ptr<chunk> c) {
    const std::lock_guard lock(mutex_);
    q.push_back(std::move(c));
    changed_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  queue free_, full_;
  bool finished_ = false, stopped_ = false;
  std::exception_ptr error_;
};

// Reads one input into chunks of whole lines. A partial last line is carried into the next
// chunk; a line longer than a read grows the next buffer geometrically.
void read_one(int fd, const std::string& file, const key_options& opts, chunk_pipe& pipe) {
  std::string carry;
  std::uint64_t line_no = 0;
  bool eof = false;
  while (!eof) {
    std::unique_ptr<chunk> c = pipe.take_free();
    if (!c) return;  // the consumer stopped (an error on its side)
    c->keys.clear();
    c->buf.resize(std::max(c->buf.size(), 2 * carry.size() + read_size));
    std::memcpy(c->buf.data(), carry.data(), carry.size());
    const std::size_t filled_before = carry.size();
    ssize_t n;
    do {
      n = ::read(fd, c->buf.data() + filled_before, c->buf.size() - filled_before);
    } while (n < 0 && errno == EINTR);
    if (n < 0) fail_io(file, "cannot read");
    if (n == 0) eof = true;
    const std::size_t filled = filled_before + static_cast<std::size_t>(n);
    const char* data = c->buf.data();
    std::size_t pos = 0;
    while (pos < filled) {
      const void* nl = std::memchr(data + pos, '\n', filled - pos);
      std::size_t end;
      if (nl != nullptr) {
        end = static_cast<std::size_t>(static_cast<const char*>(nl) - data);
      } else if (eof) {
        end = filled;  // the last line has no newline
      } else {
        break;
      }
      ++line_no;
      const std::string_view key = key_of({data + pos, end - pos}, opts, file, line_no);
      if (!key.empty()) {
        if (opts.check) opts.check(key, display_name(file), line_no);
        c->keys.push_back(key);
      }
      pos = end + 1;
    }
    carry.assign(data + std::min(pos, filled), filled - std::min(pos, filled));
    c->bytes = static_cast<std::uint64_t>(n);
    pipe.push_full(std::move(c));
  }
}

void read_all(const std::vector<std::string>& files, const key_options& opts, chunk_pipe& pipe) {
  const std::vector<std::string> stdin_only{"-"};
  for (const std::string& file : files.empty() ? stdin_only : files) {
    if (file == "-") {
      read_one(STDIN_FILENO, file, opts, pipe);
      continue;
    }
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail_io(file, "cannot open key file");
    const std::unique_ptr<int, void (*)(int*)> guard(new int(fd), [](int* p) {
      ::close(*p);
      delete p;
    });
    read_one(fd, file, opts, pipe);
  }
}

}  // namespace

void read_keys(const std::vector<std::string>& files, const key_options& opts,
               const std::function<void(std::span<const std::string_view>)>& batch) {
  // Keys so far and their rate; the bar, percentage and ETA when the input size is known. Drawn
  // only on a terminal, and erased when destroyed (also when an error unwinds, so the error
  // message starts on a clean line).
  std::optional<bloomery::support::progress_bar> bar;
  if (!opts.progress.empty()) {
    bar.emplace(stderr);
    bar->start("bloomery " + opts.progress + ":", input_size(files));
  }
  // Three chunks: one being filled, one being worked on, one ready in between.
  chunk_pipe pipe(3);
  std::jthread reader([&] {  // declared after `pipe`, so joined before it is destroyed
    std::exception_ptr error;
    try {
      read_all(files, opts, pipe);
    } catch (...) {
      error = std::current_exception();
    }
    pipe.finish(error);
  });
  std::uint64_t bytes = 0, keys = 0;
  try {
    while (std::unique_ptr<chunk> c = pipe.take_full()) {
      if (!c->keys.empty()) batch(c->keys);
      bytes += c->bytes;
      keys += c->keys.size();
      if (bar && bar->due()) {
        const double secs = bar->elapsed_seconds();
        const double rate = secs > 0 ? static_cast<double>(keys) / secs : 0.0;
        bar->update(bytes, std::to_string(keys) + " keys, " + bloomery::support::si_count(rate) +
                               " keys/s");
      }
      pipe.give_back(std::move(c));
    }
  } catch (...) {
    pipe.stop();  // the reader stops at its next hand-off; `reader` joins it
    throw;
  }
  reader.join();
  if (std::exception_ptr e = pipe.error()) std::rethrow_exception(e);
}

key_options input_args::options(const char* label) const {
  if (delimiter.size() != 1) {
    throw cli_error("--delimiter: '" + delimiter + "' must be exactly one character");
  }
  return {field, delimiter[0], quiet ? std::string() : std::string(label), {}};
}

void add_input_options(CLI::App* cmd, input_args& in) {
  cmd->add_option("keyfiles", in.files, "key files ('-' or none: standard input)");
  cmd->add_option("--field", in.field, "take column N (1-based) of each line as the key")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--delimiter", in.delimiter, "column delimiter for --field (default: tab)");
  cmd->add_flag("-q,--quiet", in.quiet, "no progress bar or summary on standard error");
  cmd->add_option(
         "--threads", in.threads,
         "threads that hash and probe the keys (default: query one per core, build and add one per "
         "core but one; at most 8)")
      ->check(CLI::PositiveNumber);
}

}  // namespace bloomery_cli
