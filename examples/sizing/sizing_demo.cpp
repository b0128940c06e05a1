// bloomery-demo: measures the classic Bloom filter sizing claims on real bloomery::bloom_filter
// objects and prints each measured value beside its theoretical one.
//
//   1. bits/key and k for p = 10% ... 0.001%, with measured false-positive rates
//   2. the memory of a filter for 5,000,000 keys at 1%
//   3. a fixed m and n while k varies: the optimum (m/n) ln 2, and why more hashes hurt
//   4. the fill statistics of the 1% filter, and what happens when it is over-filled
//
// Keys are 64-bit integers from splitmix64. Inserted keys are outputs 0, 1, 2, ... of one
// generator; absent probes are outputs 2^63, 2^63 + 1, ... of the same generator. splitmix64's
// output is a bijection of its position, so no absent probe can ever equal an inserted key; the
// demo double-checks every positive answer against the sorted inserted keys anyway.
#include <bloomery/bloomery.hpp>

#include <bloomery/support/keys.hpp>
#include <bloomery/support/table.hpp>
#include <bloomery/support/text.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace {

using namespace bloomery::support;
using u64 = std::uint64_t;
using clock_type = std::chrono::steady_clock;

// ------------------------------------------------------------------------------------------------
// Keys
// ------------------------------------------------------------------------------------------------

constexpr u64 key_seed = 0x5eed'b100'3e72'2024ULL;
constexpr u64 present_key(u64 i) noexcept {
  return splitmix64_at(key_seed, i);
}  // i < 2^63
constexpr u64 absent_key(u64 j) noexcept {
  return splitmix64_at(key_seed, absent_offset + j);
}  // j < 2^63

// ------------------------------------------------------------------------------------------------
// Formatting
// ------------------------------------------------------------------------------------------------

// 1234567.25 -> "1,234,567.3"
std::string grouped1(double v) {
  const double r = std::round(v * 10.0) / 10.0;
  const u64 whole = static_cast<u64>(r);
  return grouped(whole) +
         fmt(".%d", static_cast<int>(std::llround((r - static_cast<double>(whole)) * 10.0)));
}

// A probability as a percentage with 4 significant digits: 0.0100312 -> "1.003%".
std::string pct(double p) {
  return fmt("%#.4g%%", p * 100.0);
}

// Target p as written in the brief: 0.1 -> "10%", 1e-5 -> "0.001%".
std::string pct_short(double p) {
  return fmt("%g%%", p * 100.0);
}

// Right-aligned plain-text tables, the header underlined.
text_table table(std::vector<std::string> header) {
  return text_table(std::move(header), {.indent = 3, .gap = 2});
}

// ------------------------------------------------------------------------------------------------
// Measurement
// ------------------------------------------------------------------------------------------------

// 95% Wilson score interval of a binomial proportion (well-behaved even for few positives).
struct interval {
  double lo, hi;
};
interval wilson95(u64 positives, u64 trials) {
  constexpr double z = 1.959963984540054;
  const double n = static_cast<double>(trials);
  const double p = static_cast<double>(positives) / n;
  const double denom = 1.0 + z * z / n;
  const double center = (p + z * z / (2.0 * n)) / denom;
  const double half = z * std::sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom;
  return {std::max(0.0, center - half), std::min(1.0, center + half)};
}

struct fpr_measurement {
  u64 probes = 0;
  u64 positives = 0;
  double rate() const { return static_cast<double>(positives) / static_cast<double>(probes); }
  interval ci() const { return wilson95(positives, probes); }
};

// Standard deviation of a measured FPR around the formula (1 - e^(-kn/m))^k, from two sources:
//  * sampling: `probes` Bernoulli trials, sqrt(p(1-p)/N) (what the binomial CI covers);
//  * the filter itself: its fill varies from build to build. The number of set bits after kn
//    random probes into m bits has variance m (e^-L - (1+L) e^-2L), L = kn/m (occupancy), and
//    the filter's own FPR fill^k moves by k * (d fill / fill) relative to that.
// The second term matters at large k with few bits (section 3), where it rivals the first.
double fpr_sigma(u64 n, u64 m, std::uint32_t k, u64 probes) {
  const double p = bloomery::false_positive_rate(n, m, k);
  const double md = static_cast<double>(m);
  const double lambda = static_cast<double>(k) * static_cast<double>(n) / md;
  const double fill = -std::expm1(-lambda);
  const double var_set = md * (std::exp(-lambda) - (1 + lambda) * std::exp(-2 * lambda));
  const double sd_fill = std::sqrt(std::max(0.0, var_set)) / md;
  const double sd_filter = static_cast<double>(k) * p * sd_fill / fill;
  const double sd_sampling = std::sqrt(p * (1 - p) / static_cast<double>(probes));
  return std::sqrt(sd_sampling * sd_sampling + sd_filter * sd_filter);
}

class demo {
 public:
  demo(u64 keys, double probe_scale) : n_(keys), probe_scale_(probe_scale) {
    // Every key any section inserts: n for sections 1 and 3, plus 20% more for section 4.
    const u64 all = n_ + n_ / 5;
    present_.resize(all);
    for (u64 i = 0; i < all; ++i) present_[i] = present_key(i);
    sorted_present_ = present_;
    std::sort(sorted_present_.begin(), sorted_present_.end());
    if (std::adjacent_find(sorted_present_.begin(), sorted_present_.end()) !=
        sorted_present_.end()) {
      throw std::logic_error("duplicate inserted key (splitmix64 is a bijection; cannot happen)");
    }
    chunk_keys_.resize(chunk);
    chunk_out_.resize(chunk);
  }

  void run() {
    std::printf("bloomery %s sizing demo: %s inserted keys per filter, absent probes x%g%s\n\n",
                bloomery::version_string, grouped(n_).c_str(), probe_scale_,
                probe_scale_ < 1 ? " (--quick)" : "");
#ifndef NDEBUG
    std::printf("note: this is not a Release (NDEBUG) build; it will be slow.\n\n");
#endif
    bloomery::bloom_filter one_percent = section_bits_per_key();
    section_memory();
    section_hash_count();
    section_fill(one_percent);
    std::printf(
        "Every positive answer to an absent probe (%s in all) was checked against the\n"
        "sorted inserted keys: %s of them was an inserted key.\n",
        grouped(checked_positives_).c_str(),
        mislabelled_ == 0 ? "none" : grouped(mislabelled_).c_str());
    std::size_t above2 = 0, above3 = 0;
    double max_abs = 0;
    for (double z : z_scores_) {
      above2 += std::abs(z) > 1.96;
      above3 += std::abs(z) > 3;
      max_abs = std::max(max_abs, std::abs(z));
    }
    std::printf(
        "Measured vs theory over all %zu FPR measurements: max |z| = %.2f; |z| > 1.96 in %zu "
        "(about %.1f expected by\nchance), |z| > 3 in %zu.\n",
        z_scores_.size(), max_abs, above2, 0.05 * static_cast<double>(z_scores_.size()), above3);
    const double secs = std::chrono::duration<double>(clock_type::now() - t0_).count();
    std::printf("Total: %s absent probes, %.1f s.\n", grouped(total_probes_).c_str(), secs);
    // The run is deterministic (fixed keys, fixed hash seed), so these fail only when the library
    // changes: a false negative, a counted "false positive" that was an inserted key, or a rate
    // more than 5 sigma from theory (p < 10^-5 for a correct filter even across all rows).
    if (false_negatives_ != 0) throw std::logic_error("false negatives (see above)");
    if (mislabelled_ != 0) throw std::logic_error("an absent probe was an inserted key");
    if (max_abs > 5) throw std::logic_error("a measured FPR is more than 5 sigma from theory");
  }

 private:
  static constexpr std::size_t chunk = std::size_t{1} << 16;

  u64 probes_for(u64 base) const {
    return std::max<u64>(1,
                         static_cast<u64>(std::llround(static_cast<double>(base) * probe_scale_)));
  }

  void insert_first(bloomery::bloom_filter& f, u64 from, u64 to) const {
    for (u64 i = from; i < to; ++i) f.insert(present_[i]);
  }

  // Queries every inserted key (the first `count`); returns how many were reported absent.
  u64 count_false_negatives(const bloomery::bloom_filter& f, u64 count) {
    u64 negatives = 0;
    for (u64 base = 0; base < count; base += chunk) {
      const u64 len = std::min<u64>(chunk, count - base);
      const std::span<const u64> keys(present_.data() + base, len);
      negatives += len - f.may_contain_many(keys, chunk_out_);
    }
    false_negatives_ += negatives;
    return negatives;
  }

  // Probes `probes` absent keys never used before (each measurement is independent of the others)
  // and counts the positives; each positive is verified to be no inserted key.
  fpr_measurement measure_fpr(const bloomery::bloom_filter& f, u64 probes) {
    fpr_measurement m{probes, 0};
    const u64 first = total_probes_;
    for (u64 base = 0; base < probes; base += chunk) {
      const u64 len = std::min<u64>(chunk, probes - base);
      for (u64 j = 0; j < len; ++j) chunk_keys_[j] = absent_key(first + base + j);
      const std::span<const u64> keys(chunk_keys_.data(), len);
      const std::size_t hits = f.may_contain_many(keys, chunk_out_);
      m.positives += hits;
      if (hits != 0) {
        for (u64 j = 0; j < len; ++j) {
          if (chunk_out_[j] != 0 &&
              std::binary_search(sorted_present_.begin(), sorted_present_.end(), keys[j])) {
            ++mislabelled_;
          }
        }
      }
    }
    checked_positives_ += m.positives;
    total_probes_ += probes;
    return m;
  }

  // (measured - theory) / sigma, recorded for the closing summary.
  std::string z_text(const fpr_measurement& meas, u64 n, u64 m, std::uint32_t k) {
    const double theory = bloomery::false_positive_rate(n, m, k);
    const double z = (meas.rate() - theory) / fpr_sigma(n, m, k, meas.probes);
    z_scores_.push_back(z);
    return fmt("%+.2f", z);
  }

  static std::string ci_text(const fpr_measurement& m) {
    const interval c = m.ci();
    return fmt("[%s, %s]", pct(c.lo).c_str(), pct(c.hi).c_str());
  }

  // 1. bits/key, k and FPR across target rates. Returns the 1% filter for section 4.
  bloomery::bloom_filter section_bits_per_key() {
    std::printf(
        "1. Bits per key and false-positive rate by target p (n = %s keys; m = ceil(n * -ln p / "
        "(ln 2)^2), k = round((m/n) ln 2)).\n",
        grouped(n_).c_str());
    auto t = table({"target p", "bits/key theory", "bits/key built", "+bits vs prev", "k",
                    "FPR theory", "FPR measured", "95% CI", "z", "absent probes", "false neg"});
    const double targets[] = {1e-1, 1e-2, 1e-3, 1e-4, 1e-5};
    std::optional<bloomery::bloom_filter> one_percent;
    double prev_built = 0;
    std::vector<double> steps;
    for (double p : targets) {
      bloomery::bloom_filter f({.capacity = n_, .fpr = p});
      insert_first(f, 0, n_);
      const u64 fn = count_false_negatives(f, n_);
      // About 1000 expected positives: relative noise ~ +-6%; never fewer than 10^6 probes.
      const u64 base =
          std::clamp<u64>(static_cast<u64>(std::llround(1000.0 / p)), 1'000'000, 100'000'000);
      const fpr_measurement m = measure_fpr(f, probes_for(base));
      const double built = static_cast<double>(f.bit_count()) / static_cast<double>(n_);
      const double theory = bloomery::false_positive_rate(n_, f.bit_count(), f.hash_count());
      std::string step = "";
      if (prev_built != 0) {
        steps.push_back(built - prev_built);
        step = fmt("%.3f", built - prev_built);
      }
      prev_built = built;
      t.row({pct_short(p), fmt("%.3f", bloomery::bits_per_key(p)), fmt("%.3f", built), step,
             std::to_string(f.hash_count()), pct(theory), pct(m.rate()), ci_text(m),
             z_text(m, n_, f.bit_count(), f.hash_count()), grouped(m.probes), grouped(fn)});
      if (p == 1e-2) one_percent.emplace(std::move(f));
    }
    t.print();
    double mean_step = 0;
    for (double s : steps) mean_step += s;
    mean_step /= static_cast<double>(steps.size());
    std::printf(
        "   Each 10x lower p costs ln(10)/(ln 2)^2 = %.3f more bits per key in theory; as built: "
        "%.3f on average.\n"
        "   FPR theory is (1 - e^(-kn/m))^k for the built m and the integer k; it equals p only "
        "when "
        "(m/n) ln 2 is\n   an integer, and sits slightly above p otherwise.\n",
        std::log(10.0) / (std::log(2.0) * std::log(2.0)), mean_step);
    std::printf(
        "   95%% CI: Wilson interval of the measured proportion. z = (measured - theory) / sigma, "
        "sigma combining the\n   probes' sampling noise with the build-to-build spread of "
        "the fill; |z| < 2 in ~95%% of rows by chance alone.\n\n");
    return std::move(*one_percent);
  }

  // 2. Memory for 5M keys at 1%.
  void section_memory() {
    constexpr u64 keys = 5'000'000;
    constexpr double p = 0.01;
    std::printf(
        "2. Memory of a filter sized for %s keys at 1%% (nothing inserted: size depends only on n "
        "and p).\n",
        grouped(keys).c_str());
    const bloomery::bloom_filter f({.capacity = keys, .fpr = p});
    const double theory_bits = static_cast<double>(keys) * bloomery::bits_per_key(p);
    auto t = table({"quantity", "theory", "built"});
    t.row({"bits (m)", grouped1(theory_bits), grouped(f.bit_count())});
    t.row({"hashes (k)", fmt("%.3f", theory_bits / keys * std::log(2.0)),
           std::to_string(f.hash_count())});
    t.row({"size_in_bytes()", grouped1(theory_bits / 8), grouped(f.size_in_bytes())});
    t.row({"MB (10^6 bytes)", fmt("%.3f", theory_bits / 8 / 1e6),
           fmt("%.3f", static_cast<double>(f.size_in_bytes()) / 1e6)});
    t.row({"MiB (2^20 bytes)", fmt("%.3f", theory_bits / 8 / 1048576.0),
           fmt("%.3f", static_cast<double>(f.size_in_bytes()) / 1048576.0)});
    t.row({"bytes per key", fmt("%.3f", theory_bits / 8 / keys),
           fmt("%.3f", static_cast<double>(f.size_in_bytes()) / keys)});
    t.print();
    std::printf(
        "   size_in_bytes() rounds m up to whole 64-byte cache lines. For comparison, the keys "
        "themselves as\n   8-byte integers would take %.0f MB.\n\n",
        static_cast<double>(keys) * 8 / 1e6);
  }

  // 3. Fixed m and n, k from 1 to 2 k_opt.
  void section_hash_count() {
    const u64 m = bloomery::optimal_bits(n_, 0.01);
    const double k_real = static_cast<double>(m) / static_cast<double>(n_) * std::log(2.0);
    const u64 k_opt = bloomery::optimal_hashes(m, n_);
    const u64 probes = probes_for(10'000'000);
    std::printf(
        "3. FPR against the number of hashes k for fixed m = %s bits and n = %s keys (%.3f "
        "bits/key);\n   the optimum is k = (m/n) ln 2 = %.3f, so k_opt = %s. %s absent probes per "
        "k.\n",
        grouped(m).c_str(), grouped(n_).c_str(), static_cast<double>(m) / static_cast<double>(n_),
        k_real, std::to_string(k_opt).c_str(), grouped(probes).c_str());
    auto t = table({"k", "FPR theory", "FPR measured", "95% CI", "z", "vs theory at k_opt",
                    "fill_ratio", "false neg", ""});  // last column: the k_opt marker
    const double best_theory =
        bloomery::false_positive_rate(n_, m, static_cast<std::uint32_t>(k_opt));
    double best_measured = 1;
    u64 best_k = 0;
    for (u64 k = 1; k <= 2 * k_opt; ++k) {
      bloomery::bloom_filter f({.bits = m, .hashes = static_cast<std::uint32_t>(k)});
      insert_first(f, 0, n_);
      const u64 fn = count_false_negatives(f, n_);
      const fpr_measurement meas = measure_fpr(f, probes);
      const double theory = bloomery::false_positive_rate(n_, m, static_cast<std::uint32_t>(k));
      if (meas.rate() < best_measured) {
        best_measured = meas.rate();
        best_k = k;
      }
      t.row({std::to_string(k), pct(theory), pct(meas.rate()), ci_text(meas),
             z_text(meas, n_, m, static_cast<std::uint32_t>(k)),
             fmt("x%.3f", meas.rate() / best_theory), fmt("%.4f", f.fill_ratio()), grouped(fn),
             k == k_opt ? "<- k_opt" : ""});
    }
    t.print();
    // The k whose theoretical FPR is within 5% of the optimum's.
    u64 flat_lo = k_opt, flat_hi = k_opt;
    auto near_opt = [&](u64 k) {
      return k >= 1 && bloomery::false_positive_rate(n_, m, static_cast<std::uint32_t>(k)) <=
                           1.05 * best_theory;
    };
    while (near_opt(flat_lo - 1)) --flat_lo;
    while (near_opt(flat_hi + 1)) ++flat_hi;
    std::printf(
        "   Lowest measured FPR at k = %s. Near k_opt the curve is flat (in theory k = %s..%s are "
        "within 5%% of the\n   minimum), so neighbours can swap within sampling noise. Fewer "
        "hashes "
        "test too few bits; more hashes\n   fill the array faster than they add discrimination: "
        "k = %s is %.1fx worse than k_opt.\n\n",
        std::to_string(best_k).c_str(), std::to_string(flat_lo).c_str(),
        std::to_string(flat_hi).c_str(), std::to_string(2 * k_opt).c_str(),
        bloomery::false_positive_rate(n_, m, static_cast<std::uint32_t>(2 * k_opt)) / best_theory);
  }

  // 4. Fill statistics of the 1% filter, then over-filling it.
  void section_fill(bloomery::bloom_filter& f) {
    const u64 probes = probes_for(10'000'000);
    std::printf(
        "4. Fill statistics of the 1%% filter from (1) (capacity %s), then inserting up to 20%% "
        "more distinct keys.\n   %s absent probes per row; estimated_fpr() = fill^k, "
        "FPR theory = (1 - e^(-kn/m))^k with the true n.\n",
        grouped(f.capacity()).c_str(), grouped(probes).c_str());
    auto t = table({"keys inserted", "% of capacity", "fill_ratio", "fill theory",
                    "approximate_count", "count error", "estimated_fpr", "FPR theory",
                    "FPR measured", "95% CI", "z", "is_over_capacity"});
    const double m = static_cast<double>(f.bit_count());
    const double k = static_cast<double>(f.hash_count());
    u64 inserted = n_;
    for (int extra_pct : {0, 2, 5, 10, 20}) {
      const u64 target = n_ + n_ * static_cast<u64>(extra_pct) / 100;
      insert_first(f, inserted, target);
      inserted = target;
      const u64 fn = count_false_negatives(f, inserted);
      if (fn != 0) std::printf("   !! %s false negatives\n", grouped(fn).c_str());
      const fpr_measurement meas = measure_fpr(f, probes);
      const double theory = bloomery::false_positive_rate(inserted, f.bit_count(), f.hash_count());
      const double fill_theory = -std::expm1(-k * static_cast<double>(inserted) / m);
      const u64 approx = f.approximate_count();
      const double err = (static_cast<double>(approx) - static_cast<double>(inserted)) /
                         static_cast<double>(inserted);
      t.row(
          {grouped(inserted),
           fmt("%.0f%%", 100.0 * static_cast<double>(inserted) / static_cast<double>(f.capacity())),
           fmt("%.4f", f.fill_ratio()), fmt("%.4f", fill_theory), grouped(approx),
           fmt("%+.3f%%", 100 * err), pct(f.estimated_fpr()), pct(theory), pct(meas.rate()),
           ci_text(meas), z_text(meas, inserted, f.bit_count(), f.hash_count()),
           f.is_over_capacity() ? "true" : "false"});
    }
    t.print();
    std::printf(
        "   No false negatives at any fill. is_over_capacity() turns true once approximate_count() "
        "exceeds capacity\n   by more than 1%%; the FPR climbs roughly as the %sth power of the "
        "fill.\n\n",
        std::to_string(f.hash_count()).c_str());
  }

  clock_type::time_point t0_ = clock_type::now();
  u64 n_;
  double probe_scale_;
  std::vector<u64> present_;
  std::vector<u64> sorted_present_;
  std::vector<u64> chunk_keys_;
  std::vector<std::uint8_t> chunk_out_;
  u64 checked_positives_ = 0;
  u64 mislabelled_ = 0;
  u64 false_negatives_ = 0;
  u64 total_probes_ = 0;
  std::vector<double> z_scores_;
};

void usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: bloomery-demo [--quick] [--help]\n"
      "\n"
      "Builds real bloomery::bloom_filter objects and prints measured Bloom filter sizing\n"
      "claims beside their theoretical values:\n"
      "  1. bits/key, k and false-positive rate for p = 10%% .. 0.001%% (1,000,000 keys)\n"
      "  2. memory of a filter for 5,000,000 keys at 1%%\n"
      "  3. false-positive rate as the number of hashes k varies for fixed m and n\n"
      "  4. fill statistics of the 1%% filter, and over-filling it by 20%%\n"
      "\n"
      "  --quick   10x fewer keys and probes (a smoke test for CI; a few seconds)\n"
      "  --help    show this help\n");
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "bloomery-demo: unknown argument '%s'\n\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  try {
    demo d(quick ? 100'000 : 1'000'000, quick ? 0.1 : 1.0);
    d.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bloomery-demo: %s\n", e.what());
    return 1;
  }
  return 0;
}
