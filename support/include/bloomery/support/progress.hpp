// A progress bar: one status line on a terminal, redrawn in place at most ten times a second and
// erased when done. Silent unless its stream is a terminal, so a log file or a test harness gets
// no carriage-return noise.
#pragma once

#include <unistd.h>  // isatty

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

#include "bloomery/support/text.hpp"

namespace bloomery::support {

class progress_bar {
 public:
  explicit progress_bar(std::FILE* out = stderr)
      : progress_bar(out, ::isatty(::fileno(out)) == 1) {}
  progress_bar(std::FILE* out, bool enabled) : out_(out), enabled_(enabled) {}
  progress_bar(const progress_bar&) = delete;
  progress_bar& operator=(const progress_bar&) = delete;
  ~progress_bar() { clear(); }

  // Starts a task of `total` units of work; 0 means unknown (then no bar, percentage or ETA).
  void start(std::string label, std::uint64_t total = 0) {
    label_ = std::move(label);
    total_ = total;
    start_ = clock::now();
    draw(0, {});
  }

  // `done` units so far; redraws when 100 ms have passed since the last drawing. `note` follows
  // the bar (e.g. a rate, or which step runs).
  void update(std::uint64_t done, std::string_view note = {}) {
    if (due()) draw(done, note);
  }

  // Whether update() would redraw now: lets a caller skip building a costly note.
  bool due() const { return enabled_ && clock::now() - last_ >= std::chrono::milliseconds(100); }

  // Seconds since start(), for rates.
  double elapsed_seconds() const {
    return std::chrono::duration<double>(clock::now() - start_).count();
  }

  // Erases the line (also on destruction, so an error message starts on a clean line).
  void clear() {
    if (enabled_ && drawn_) {
      std::fputs("\r\033[K", out_);
      std::fflush(out_);
    }
    drawn_ = false;
  }

 private:
  using clock = std::chrono::steady_clock;

  void draw(std::uint64_t done, std::string_view note) {
    if (!enabled_) return;
    std::string line = "\r\033[K" + label_;
    if (total_ > 0) {
      constexpr std::size_t width = 30;
      const double frac = std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
      const auto filled = static_cast<std::size_t>(frac * width);
      line += " [" + std::string(filled, '#') + std::string(width - filled, '.') + "] " +
              fmt("%3.0f%%", frac * 100);
      const double secs = elapsed_seconds();
      if (frac > 0 && frac < 1 && secs >= 1) line += fmt(", ETA %.0fs", secs * (1 - frac) / frac);
    }
    if (!note.empty()) line.append("  ").append(note);
    std::fputs(line.c_str(), out_);
    std::fflush(out_);
    drawn_ = true;
    last_ = clock::now();
  }

  std::FILE* out_;
  bool enabled_;
  bool drawn_ = false;
  std::string label_;
  std::uint64_t total_ = 0;
  clock::time_point start_ = clock::now();
  clock::time_point last_{};
};

}  // namespace bloomery::support
