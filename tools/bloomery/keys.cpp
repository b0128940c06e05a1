#include "keys.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
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

void read_one(int fd, const std::string& file, const key_options& opts,
              const std::function<void(std::span<const std::string_view>)>& batch) {
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
  for (const std::string& file : files.empty() ? stdin_only : files) {
    if (file == "-") {
      read_one(STDIN_FILENO, file, opts, batch);
      continue;
    }
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail_io(file, "cannot open key file");
    const std::unique_ptr<int, void (*)(int*)> guard(new int(fd), [](int* p) {
      ::close(*p);
      delete p;
    });
    read_one(fd, file, opts, batch);
  }
}

}  // namespace bloomery_cli
