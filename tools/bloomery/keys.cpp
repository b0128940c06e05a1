#include "keys.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>

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

// The progress bar: keys so far, their rate and, when the input size is known from the sizes of
// the key files, the percentage and an ETA. Redrawn at most every 100 ms; erased when destroyed
// (also when an error unwinds, so the error message starts on a clean line).
class progress_bar {
 public:
  progress_bar(std::string label, std::uint64_t total_bytes)
      : label_(std::move(label)), total_(total_bytes), start_(clock::now()), last_(start_) {}
  progress_bar(const progress_bar&) = delete;
  progress_bar& operator=(const progress_bar&) = delete;
  ~progress_bar() {
    if (drawn_) std::fputs("\r\033[K", stderr);
  }

  void update(std::uint64_t bytes, std::uint64_t keys) {
    const auto now = clock::now();
    if (now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    const double secs = std::chrono::duration<double>(now - start_).count();
    const double rate = secs > 0 ? static_cast<double>(keys) / secs : 0.0;
    char line[160];
    int len =
        std::snprintf(line, sizeof line, "\rbloomery %s: %llu keys, %s keys/s", label_.c_str(),
                      static_cast<unsigned long long>(keys), human(rate).c_str());
    if (total_ > 0 && bytes <= total_ && bytes > 0 && len > 0) {
      const double frac = static_cast<double>(bytes) / static_cast<double>(total_);
      const double eta = secs * (1.0 - frac) / frac;
      std::snprintf(line + len, sizeof line - static_cast<std::size_t>(len), ", %3.0f%%, ETA %.0fs",
                    100.0 * frac, eta);
    }
    std::fputs(line, stderr);
    std::fputs("\033[K", stderr);
    std::fflush(stderr);
    drawn_ = true;
  }

 private:
  using clock = std::chrono::steady_clock;
  static std::string human(double v) {
    char buf[32];
    if (v >= 1e6) {
      std::snprintf(buf, sizeof buf, "%.1fM", v / 1e6);
    } else if (v >= 1e3) {
      std::snprintf(buf, sizeof buf, "%.1fk", v / 1e3);
    } else {
      std::snprintf(buf, sizeof buf, "%.0f", v);
    }
    return buf;
  }

  std::string label_;
  std::uint64_t total_;
  clock::time_point start_, last_;
  bool drawn_ = false;
};

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

struct read_state {
  progress_bar* bar = nullptr;
  std::uint64_t bytes = 0;  // consumed so far, over all files
  std::uint64_t keys = 0;
};

void read_one(int fd, const std::string& file, const key_options& opts,
              const std::function<void(std::span<const std::string_view>)>& batch,
              read_state& state) {
  std::vector<char> buf(read_size * 2);
  std::size_t filled = 0;
  std::uint64_t line_no = 0;
  std::vector<std::string_view> keys;
  bool eof = false;
  while (!eof) {
    if (buf.size() - filled < read_size) buf.resize(buf.size() * 2);  // a very long line
    const ssize_t n = ::read(fd, buf.data() + filled, buf.size() - filled);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_io(file, "cannot read");
    }
    if (n == 0) eof = true;
    filled += static_cast<std::size_t>(n);
    const char* data = buf.data();
    std::size_t pos = 0;
    keys.clear();
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
      if (!key.empty()) keys.push_back(key);
      pos = end + 1;
    }
    if (!keys.empty()) batch(keys);
    state.bytes += static_cast<std::uint64_t>(n);
    state.keys += keys.size();
    if (state.bar != nullptr) state.bar->update(state.bytes, state.keys);
    if (pos >= filled) {
      filled = 0;
    } else if (pos > 0) {
      std::memmove(buf.data(), buf.data() + pos, filled - pos);
      filled -= pos;
    }
  }
}

}  // namespace

void read_keys(const std::vector<std::string>& files, const key_options& opts,
               const std::function<void(std::span<const std::string_view>)>& batch) {
  const std::vector<std::string> stdin_only{"-"};
  std::unique_ptr<progress_bar> bar;
  if (!opts.progress.empty() && ::isatty(STDERR_FILENO) == 1) {
    bar = std::make_unique<progress_bar>(opts.progress, input_size(files));
  }
  read_state state{bar.get()};
  for (const std::string& file : files.empty() ? stdin_only : files) {
    if (file == "-") {
      read_one(STDIN_FILENO, file, opts, batch, state);
      continue;
    }
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail_io(file, "cannot open key file");
    const std::unique_ptr<int, void (*)(int*)> guard(new int(fd), [](int* p) {
      ::close(*p);
      delete p;
    });
    read_one(fd, file, opts, batch, state);
  }
}

}  // namespace bloomery_cli
