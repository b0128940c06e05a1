// bloomery-fpr-sweep: measured false-positive rate against bits per key for every filter of the
// family, at several targets, as a gnuplot data file (bench/plot.sh draws docs/fpr-vs-bits.svg).
//
// usage: bloomery-fpr-sweep [--keys N] [--probes P] [--quick] > fpr_sweep.dat
//   --keys N    keys per filter (default 10^6)
//   --probes P  absent keys probed per data point (default 2^24 = 16,777,216)
//   --quick     10^5 keys and 2^20 probes (smoke test; the low rates are then noisy)
//
// Output: data blocks separated by two blank lines (gnuplot `index`). Block 0 is the classic
// filter's theory, (1 - e^(-kn/m))^k at k = optimal_hashes(m, n) (sizing.hpp), for 1 to 40 bits
// per key. Every further block is one filter; its first line names it (a column header), then one
// row per target: bits_per_key (8 * size_in_bytes() / n), measured FPR, target FPR, the filter's
// own estimated_fpr(), false positives, and its parameters. Keys are SplitMix64 of a counter, as
// in the benchmarks: present keys [0, n), probes [2^41, 2^41 + P), absent by construction.
#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "family_filters.hpp"

#include "bench_common.hpp"

namespace {

using namespace bloomery::bench;

using u64 = std::uint64_t;

constexpr std::array<double, 6> kTargets = {0.1, 0.03, 0.01, 0.003, 0.001, 0.0001};

struct options {
  u64 keys = 1'000'000;
  u64 probes = u64{1} << 24;
};

u64 parse_count(const char* flag, const char* value) {
  char* end = nullptr;
  const double v = value ? std::strtod(value, &end) : 0;
  if (!value || *end != '\0' || !(v >= 1 && v <= 1e10)) {
    std::fprintf(stderr, "bloomery-fpr-sweep: %s needs a count in [1, 1e10]\n", flag);
    std::exit(2);
  }
  return static_cast<u64>(v);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--keys") {
      o.keys = parse_count("--keys", next);
      ++i;
    } else if (a == "--probes") {
      o.probes = parse_count("--probes", next);
      ++i;
    } else if (a == "--quick") {
      o.keys = 100'000;
      o.probes = u64{1} << 20;
    } else {
      std::fprintf(stderr, "usage: bloomery-fpr-sweep [--keys N] [--probes P] [--quick]\n");
      std::exit(2);
    }
  }
  return o;
}

class sweep {
 public:
  explicit sweep(const options& o)
      : n_(o.keys), present_(keys_at(0, o.keys)), probes_(keys_at(kFprBase, o.probes)) {}

  u64 n() const { return n_; }
  const std::vector<u64>& keys() const { return present_; }

  // Starts a filter's data block.
  void series(const char* name) {
    std::printf(
        "\n\n\"%s\" bits_per_key measured_fpr target_fpr est_fpr false_positives "
        "parameters\n",
        name);
    std::fprintf(stderr, "%s\n", name);
  }

  // Measures one data point of filter `f` (already holding the keys) and prints it.
  template <class F>
  void point(const F& f, double target, const std::string& parameters) {
    u64 positives = 0;
    std::array<bool, 4096> out{};
    for (std::size_t i = 0; i < probes_.size(); i += out.size()) {
      const std::size_t count = std::min(out.size(), probes_.size() - i);
      const std::span<const u64> batch(probes_.data() + i, count);
      if constexpr (requires { f.may_contain_many(batch, out); }) {
        positives += f.may_contain_many(batch, out);
      } else {
        for (const u64& key : batch) positives += f.may_contain(key) ? 1 : 0;
      }
    }
    for (const u64& key : present_) {
      if (!f.may_contain(key)) {
        std::fprintf(stderr, "bloomery-fpr-sweep: false negative (%s)\n", parameters.c_str());
        std::exit(1);
      }
    }
    const double bits = 8.0 * static_cast<double>(f.size_in_bytes()) / static_cast<double>(n_);
    const double fpr = static_cast<double>(positives) / static_cast<double>(probes_.size());
    std::printf("%.4f %.6e %.6e %.6e %" PRIu64 " \"%s\"\n", bits, fpr, target, f.estimated_fpr(),
                positives, parameters.c_str());
    std::fprintf(stderr, "  target %-8g bits/key %7.3f  measured %.4e  est %.4e  %s\n", target,
                 bits, fpr, f.estimated_fpr(), parameters.c_str());
    std::fflush(stdout);
  }

 private:
  u64 n_;
  std::vector<u64> present_;
  std::vector<u64> probes_;
};

// Builds F from target{capacity, p}, inserts every key and measures it.
template <class F>
void from_target(sweep& s, double p, u64 capacity, const std::string& note = "") {
  F f(bloomery::target{capacity, p});
  for (const u64& key : s.keys()) {
    if (!f.insert(key)) {
      std::fprintf(stderr, "bloomery-fpr-sweep: insert refused (%s)\n", note.c_str());
      std::exit(1);
    }
  }
  s.point(f, p, F::plan(bloomery::target{capacity, p}).parameters + note);
}

}  // namespace

int main(int argc, char** argv) try {
  const options o = parse(argc, argv);
  std::printf("# bloomery-fpr-sweep: n = %" PRIu64 " keys, %" PRIu64
              " absent probes per point (uint64 keys)\n",
              o.keys, o.probes);

  // Block 0: the classic filter's theory at optimal integer k, and the information-theoretic
  // bound log2(1/p) bits per key, i.e. p = 2^-b.
  std::printf("\"classic theory\" bits_per_key fpr hashes bound_fpr\n");
  for (int tenth = 10; tenth <= 400; ++tenth) {
    const double b = tenth / 10.0;
    const u64 m = static_cast<u64>(std::llround(b * static_cast<double>(o.keys)));
    const std::uint32_t k = bloomery::optimal_hashes(m, o.keys);
    std::printf("%.1f %.6e %u %.6e\n", b, bloomery::false_positive_rate(o.keys, m, k), k,
                std::exp2(-b));
  }

  sweep s(o);
  const u64 n = s.n();

  s.series("bloom");
  for (double p : kTargets) from_target<bloomery::bloom_filter>(s, p, n);
  s.series("blocked bloom");
  for (double p : kTargets) from_target<bloomery::blocked_bloom_filter>(s, p, n);
  s.series("counting bloom (4-bit)");
  for (double p : kTargets) from_target<bloomery::counting_bloom_filter>(s, p, n);
  s.series("cuckoo");
  for (double p : kTargets) {
    // Below its floor (16-bit fingerprints at 95% load) the cuckoo filter rejects the target;
    // the point is then taken at the floor.
    const double floor = bloomery::cuckoo_filter::min_fpr();
    if (p >= floor) {
      from_target<bloomery::cuckoo_filter>(s, p, n);
    } else {
      from_target<bloomery::cuckoo_filter>(
          s, floor, n, " (target " + bloomery::format_value(p) + " is below the floor)");
    }
  }
  s.series("scalable bloom");
  for (double p : kTargets) from_target<bloomery::scalable_bloom_filter>(s, p, n);
  s.series("scalable bloom, grown 16x");
  for (double p : kTargets) {
    bloomery::scalable_bloom_filter f(bloomery::target{n / 16, p});
    for (const u64& key : s.keys()) (void)f.insert(key);
    s.point(
        f, p,
        "n0=" + std::to_string(n / 16) + " sub-filters=" + std::to_string(f.sub_filter_count()));
  }
  // From a rate: the fewest bits r with 2^-r <= p, four slots per key.
  s.series("static (binary fuse)");
  for (double p : kTargets) {
    const auto f = bloomery::static_filter::build(s.keys(), p);
    s.point(f, p,
            "fingerprint=" + std::to_string(f.fingerprint_bits()) +
                " arity=" + std::to_string(f.arity()));
  }
  // An explicit width: three whole-byte slots per key, the fastest queries.
  s.series("static, explicit 8/16-bit width");
  for (const auto width :
       {bloomery::fingerprint_width::bits8, bloomery::fingerprint_width::bits16}) {
    const auto f = bloomery::static_filter::build(s.keys(), width);
    s.point(f, f.estimated_fpr(), "fingerprint=" + std::to_string(f.fingerprint_bits()));
  }
#ifdef BLOOMERY_BENCH_HAVE_LEVELDB
  s.series("LevelDB built-in");
  for (int bits : {4, 6, 8, 10, 12, 15, 20}) {
    const leveldb_filter f(s.keys(), bits);
    s.point(f, f.estimated_fpr(),
            "bits_per_key=" + std::to_string(bits) + " k=" + std::to_string(f.hashes()));
  }
#endif
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bloomery-fpr-sweep: %s\n", e.what());
  return 1;
}
