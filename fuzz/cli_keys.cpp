// Fuzz target: the CLI's key reader (tools/bloomery/keys.hpp, read_keys) against a model of the
// rules in docs/cli.md: one key per line, a final line without a newline counts, the CR of a CRLF
// line end is not part of the key, empty keys are skipped, and --field N takes column N of the
// delimiter-split line, a line with fewer columns being an error naming the file and line.
// Input: u8 field (mod 5), u8 delimiter choice, u8 mode (1 + mode % 3 files; bit 2: the first
// file is a pipe fed in pieces, so lines straddle reads), u8 piece size - 1, one u8 length per
// file but the last, then the files' bytes.
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "keys.hpp"
#include "ops.hpp"

namespace {

using bloomery_fuzz::input;
using bloomery_fuzz::memory_file;

struct expected {
  std::vector<std::string> keys;  // the keys before the error, if any
  std::optional<std::string> error;
};

// The documented rules, written independently of keys.cpp's chunked reader.
expected model(const std::vector<std::string>& files, const std::vector<std::string>& names,
               std::uint32_t field, char delimiter) {
  expected out;
  for (std::size_t f = 0; f < files.size(); ++f) {
    std::string_view rest = files[f];
    std::uint64_t line_no = 0;
    while (!rest.empty()) {
      const std::size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      std::string_view key = line;
      if (field != 0 && !line.empty()) {
        std::vector<std::string_view> columns;
        for (std::size_t start = 0;;) {
          const std::size_t at = line.find(delimiter, start);
          columns.push_back(line.substr(start, at == std::string_view::npos ? at : at - start));
          if (at == std::string_view::npos) break;
          start = at + 1;
        }
        if (columns.size() < field) {
          out.error = "'" + names[f] + "' line " + std::to_string(line_no) + ": has " +
                      std::to_string(columns.size()) + " field(s), --field " +
                      std::to_string(field) + " asked for";
          return out;
        }
        key = columns[field - 1];
      }
      if (!key.empty()) out.keys.emplace_back(key);
    }
  }
  return out;
}

// Feeds `data` into a pipe `piece` bytes at a time, each piece once the reader has drained the
// last, so every read() of the reader returns one piece.
class pipe_feeder {
 public:
  pipe_feeder(std::string data, std::size_t piece) : data_(std::move(data)), piece_(piece) {
    FUZZ_CHECK(::pipe(fds_) == 0);
    thread_ = std::thread([this] { feed(); });
  }
  ~pipe_feeder() {
    stop_ = true;
    thread_.join();
    ::close(fds_[0]);
  }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fds_[0]); }

 private:
  void feed() {
    for (std::size_t at = 0; at < data_.size() && !stop_; at += piece_) {
      const std::size_t n = std::min(piece_, data_.size() - at);
      FUZZ_CHECK(::write(fds_[1], data_.data() + at, n) == static_cast<ssize_t>(n));
      int queued = 1;
      while (!stop_ && ::ioctl(fds_[0], FIONREAD, &queued) == 0 && queued > 0) {
        std::this_thread::yield();
      }
    }
    ::close(fds_[1]);  // end of file for the reader
  }
  std::string data_;
  std::size_t piece_;
  int fds_[2];
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  input in(data, size);
  bloomery_cli::key_options opts;
  opts.field = in.byte() % 5;
  const std::uint8_t d = in.byte();
  static constexpr char common[] = {'\t', ',', ';', ' ', '\r', '"', '\0', 'a'};
  opts.delimiter = d < sizeof common ? common[d] : static_cast<char>(d);
  const std::uint8_t mode = in.byte();
  const std::size_t file_count = 1 + mode % 3;
  const bool use_pipe = (mode & 4) != 0;
  const std::size_t piece = 1 + std::size_t{in.byte()};
  std::vector<std::size_t> lengths;
  for (std::size_t i = 0; i + 1 < file_count; ++i) lengths.push_back(in.byte());
  std::vector<std::string> contents;
  for (const std::size_t n : lengths) {
    const auto part = in.take(n);
    contents.emplace_back(part.begin(), part.end());
  }
  const auto last = in.rest();
  contents.emplace_back(last.begin(), last.end());

  static memory_file files[3];
  std::optional<pipe_feeder> feeder;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < file_count; ++i) {
    if (i == 0 && use_pipe) {
      feeder.emplace(contents[0], piece);
      names.push_back(feeder->path());
    } else {
      files[i].assign(bloomery_fuzz::as_bytes(
          {reinterpret_cast<const std::uint8_t*>(contents[i].data()), contents[i].size()}));
      names.push_back(files[i].path());
    }
  }

  const expected want = model(contents, names, opts.field, opts.delimiter);
  std::vector<std::string> got;
  std::optional<std::string> error;
  try {
    bloomery_cli::read_keys(names, opts, [&](std::span<const std::string_view> batch) {
      FUZZ_CHECK(!batch.empty());
      for (const std::string_view k : batch) got.emplace_back(k);
    });
  } catch (const bloomery_cli::cli_error& e) {
    error = e.what();
  }
  FUZZ_CHECK(error == want.error);
  if (error) {
    // The keys of the chunk that held the bad line are never delivered: a prefix arrives.
    FUZZ_CHECK(got.size() <= want.keys.size());
    FUZZ_CHECK(std::equal(got.begin(), got.end(), want.keys.begin()));
  } else {
    FUZZ_CHECK(got == want.keys);
  }
  return 0;
}
