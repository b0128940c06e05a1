// Workloads for the examples: URL-shaped keys, Zipf-distributed popularity, and lines read from a
// real input. Every generator is deterministic in its seed, so a run can be repeated exactly.
#pragma once

#include <bloomery/support/keys.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <istream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace bloomery::examples {

// A uniform double in [0, 1) from 53 random bits of a splitmix64 stream.
inline double uniform01(std::uint64_t& state) noexcept {
  return static_cast<double>(support::splitmix64(state) >> 11) * 0x1.0p-53;
}

// A uniform integer in [0, n), n > 0, by Lemire's multiply-shift (bias below 2^-32 for n < 2^32).
inline std::uint64_t uniform_below(std::uint64_t& state, std::uint64_t n) noexcept {
  return static_cast<std::uint64_t>(
      (static_cast<unsigned __int128>(support::splitmix64(state)) * n) >> 64);
}

// URLs shaped like a crawl's: a host among `hosts` (popular hosts own more pages), a path of one to
// five segments drawn from common words, and sometimes a query string. url(i) is a pure function
// of (seed, i), and distinct i give distinct URLs: the last segment carries a bijective id of i.
class url_generator {
 public:
  explicit url_generator(std::uint64_t seed = 1, std::uint64_t hosts = 10'000)
      : seed_(seed), hosts_(std::max<std::uint64_t>(hosts, 1)) {}

  std::string url(std::uint64_t i) const {
    std::uint64_t r = support::splitmix64_at(seed_, i);  // the page's shape
    std::uint64_t state = r;
    // Squaring a uniform draw skews pages toward low host numbers, as a real crawl's are.
    const double u = uniform01(state);
    const auto host = static_cast<std::uint64_t>(u * u * static_cast<double>(hosts_));
    std::string s = (r & 1) ? "https://" : "http://";
    s += (r & 2) ? "www." : "";
    s += word(host) + std::to_string(host) + tld(host);
    const std::uint64_t depth = 1 + uniform_below(state, 4);
    for (std::uint64_t d = 0; d < depth; ++d) s += '/' + word(uniform_below(state, 1u << 20));
    s += '/';
    s += base36(support::splitmix64_mix(i ^ seed_));  // unique: splitmix64_mix is a bijection
    if (uniform_below(state, 4) == 0) {
      s += "?utm_source=" + word(uniform_below(state, 64)) +
           "&id=" + std::to_string(uniform_below(state, 100'000));
    }
    return s;
  }

 private:
  static std::string word(std::uint64_t n) {
    static constexpr std::array<std::string_view, 32> words{
        "news",  "blog",    "shop",   "item",  "tag",    "user",  "wiki",    "docs",
        "video", "photo",   "page",   "forum", "topic",  "post",  "archive", "product",
        "cart",  "search",  "help",   "about", "events", "sport", "travel",  "food",
        "music", "article", "review", "jobs",  "market", "maps",  "data",    "story"};
    return std::string(words[n % words.size()]);
  }
  static std::string tld(std::uint64_t host) {
    static constexpr std::array<std::string_view, 6> tlds{".com", ".org", ".net",
                                                          ".io",  ".de",  ".co.uk"};
    return std::string(tlds[(host / 7) % tlds.size()]);
  }
  static std::string base36(std::uint64_t v) {
    std::string out;
    do {
      out += "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
      v /= 36;
    } while (v != 0);
    return out;
  }

  std::uint64_t seed_;
  std::uint64_t hosts_;
};

// Ranks 1..n with P(k) proportional to 1/k^s (s >= 0), in O(1) memory and expected O(1) time per
// draw, by rejection-inversion (Hörmann and Derflinger, 1996): invert the integral of the density
// x^-s and accept the rounded point unless it falls in the sliver where the step function and the
// curve differ. A table of n cumulative weights would cost 8n bytes for the same draws.
class zipf_sampler {
 public:
  zipf_sampler(std::uint64_t n, double s, std::uint64_t seed = 1) : n_(n), s_(s), state_(seed) {
    if (n == 0) throw std::invalid_argument("zipf: n = 0 is invalid; it must be at least 1");
    if (!(s >= 0) || !std::isfinite(s)) {
      throw std::invalid_argument("zipf: skew = " + std::to_string(s) +
                                  " is invalid; it must be finite and >= 0");
    }
    h_x1_ = big_h(1.5) - 1.0;
    h_n_ = big_h(static_cast<double>(n) + 0.5);
    squeeze_ = 2.0 - big_h_inverse(big_h(2.5) - h(2.0));
  }

  // The next rank, in [1, n].
  std::uint64_t next() noexcept {
    for (;;) {
      const double u = h_n_ + uniform01(state_) * (h_x1_ - h_n_);
      const double x = big_h_inverse(u);
      const double kd = std::clamp(std::floor(x + 0.5), 1.0, static_cast<double>(n_));
      if (kd - x <= squeeze_ || u >= big_h(kd + 0.5) - h(kd)) return static_cast<std::uint64_t>(kd);
    }
  }

  std::uint64_t n() const noexcept { return n_; }
  double skew() const noexcept { return s_; }

 private:
  double h(double x) const { return std::exp(-s_ * std::log(x)); }
  // H(x) = (x^(1-s) - 1) / (1 - s), and log x at s = 1: written with expm1 so s near 1 is exact.
  double big_h(double x) const {
    const double lx = std::log(x);
    return expm1_over_x((1.0 - s_) * lx) * lx;
  }
  double big_h_inverse(double y) const {
    const double t = std::max(-1.0, y * (1.0 - s_));
    return std::exp(log1p_over_x(t) * y);
  }
  static double expm1_over_x(double x) {
    return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x / 2.0 * (1.0 + x / 3.0);
  }
  static double log1p_over_x(double x) {
    return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x / 3.0);
  }

  std::uint64_t n_;
  double s_;
  std::uint64_t state_;
  double h_x1_ = 0, h_n_ = 0, squeeze_ = 0;
};

// Reads lines (without their '\n', and without a '\r' before it), skipping empty ones.
inline std::vector<std::string> read_lines(std::istream& in) {
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(std::move(line));
  }
  if (in.bad()) throw std::runtime_error("read error on input");
  return lines;
}

}  // namespace bloomery::examples
