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

using bloomery::bench::mix;

using u64 = std::uint64_t;

constexpr u64 kFprBase = u64{1} << 41;
constexpr u64 kSeed = 0x0123456789abcdefULL;
constexpr std::array<double, 6> kTargets = {0.1, 0.03, 0.01, 0.003, 0.001, 0.0001};

std::vector<u64> make_keys(u64 first, std::size_t count) {
  std::vector<u64> keys(count);
  for (std::size_t i = 0; i < count; ++i) keys[i] = mix(kSeed, first + i);
  return keys;
}

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
      : n_(o.keys), present_(make_keys(0, o.keys)), probes_(make_keys(kFprBase, o.probes)) {}

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

// Builds F from target{capacity, p}, inserts every key with `insert` and measures it.
template <class F, class Insert>
void from_target(sweep& s, double p, u64 capacity, Insert insert, const std::string& note = "") {
  F f(bloomery::target{capacity, p});
  for (const u64& key : s.keys()) insert(f, key);
  s.point(f, p, F::plan(bloomery::target{capacity, p}).parameters + note);
}

const auto plain_insert = [](auto& f, const u64& key) { f.insert(key); };

#ifdef BLOOMERY_BENCH_HAVE_LEVELDB
class leveldb_filter {
 public:
  leveldb_filter(const std::vector<u64>& keys, int bits_per_key)
      : policy_(leveldb::NewBloomFilterPolicy(bits_per_key)), n_(keys.size()) {
    std::vector<leveldb::Slice> slices;
    slices.reserve(keys.size());
    for (const u64& k : keys) slices.emplace_back(reinterpret_cast<const char*>(&k), sizeof k);
    policy_->CreateFilter(slices.data(), static_cast<int>(slices.size()), &bits_);
  }
  bool may_contain(const u64& key) const {
    return policy_->KeyMayMatch(leveldb::Slice(reinterpret_cast<const char*>(&key), sizeof key),
                                leveldb::Slice(bits_));
  }
  u64 size_in_bytes() const { return bits_.size(); }
  std::uint32_t hashes() const { return static_cast<unsigned char>(bits_.back()); }
  double estimated_fpr() const {
    return bloomery::false_positive_rate(n_, (bits_.size() - 1) * 8, hashes());
  }

 private:
  std::unique_ptr<const leveldb::FilterPolicy> policy_;
  u64 n_;
  std::string bits_;
};
#endif

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
  for (double p : kTargets) {
    from_target<bloomery::bloom_filter>(s, p, n, plain_insert);
  }
  s.series("blocked bloom");
  for (double p : kTargets) {
    from_target<bloomery::blocked_bloom_filter>(s, p, n, plain_insert);
  }
#ifdef BLOOMERY_BENCH_HAVE_COUNTING
  s.series("counting bloom (4-bit)");
  for (double p : kTargets) {
    from_target<bloomery::counting_bloom_filter>(s, p, n, plain_insert);
  }
#endif
#ifdef BLOOMERY_BENCH_HAVE_CUCKOO
  s.series("cuckoo");
  for (double p : kTargets) {
    // Below its floor (16-bit fingerprints at 95% load) the cuckoo filter rejects the target;
    // the point is then taken at the floor.
    const double floor = bloomery::cuckoo_filter::min_fpr();
    const auto insert = [](bloomery::cuckoo_filter& f, const u64& key) {
      if (!f.insert(key)) {
        std::fprintf(stderr, "bloomery-fpr-sweep: cuckoo insert refused\n");
        std::exit(1);
      }
    };
    if (p >= floor) {
      from_target<bloomery::cuckoo_filter>(s, p, n, insert);
    } else {
      from_target<bloomery::cuckoo_filter>(
          s, floor, n, insert,
          " (target " + bloomery::detail::format_value(p) + " is below the floor)");
    }
  }
#endif
#ifdef BLOOMERY_BENCH_HAVE_SCALABLE
  const auto scalable_insert = [](bloomery::scalable_bloom_filter& f, const u64& key) {
    (void)f.insert(key);
  };
  s.series("scalable bloom");
  for (double p : kTargets) {
    from_target<bloomery::scalable_bloom_filter>(s, p, n, scalable_insert);
  }
  s.series("scalable bloom, grown 16x");
  for (double p : kTargets) {
    bloomery::scalable_bloom_filter f(bloomery::target{n / 16, p});
    for (const u64& key : s.keys()) scalable_insert(f, key);
    s.point(
        f, p,
        "n0=" + std::to_string(n / 16) + " sub-filters=" + std::to_string(f.sub_filter_count()));
  }
#endif
#ifdef BLOOMERY_BENCH_HAVE_STATIC
  s.series("static (binary fuse)");
  for (const auto width :
       {bloomery::fingerprint_width::bits8, bloomery::fingerprint_width::bits16}) {
    const auto f = bloomery::static_filter::build(s.keys(), width);
    s.point(f, f.estimated_fpr(), "fingerprint=" + std::to_string(f.fingerprint_bits()));
  }
#endif
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
