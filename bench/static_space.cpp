// bloomery-static-space: the static filter's space against its delivered rate. For each key count
// and target rate: the fingerprint width and slots per key build() picks, bits per key
// (8 * size_in_bytes() / n), the measured FPR over absent probes, log2(1/measured FPR) and the
// ratio of the two (1.00 would be the information-theoretic bound). Prints a markdown table
// (docs/static-filter.md "Measured").
//
// usage: bloomery-static-space [--sizes N,N,...] [--rates P,P,...] [--probes Q]
//   defaults: n = 10^3, 10^5, 10^6; p = 5%, 1%, 0.1%, 0.01%; 10^7 absent probes per row
//   (--sizes 1e8 needs about 8 GB while building)
// Keys: bench_common.hpp's splitmix64 stream, present [0, n), probes from kFprBase = 2^41 (absent
// by construction), as in the other benchmarks.
#include <bloomery/static_filter.hpp>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "bench_common.hpp"

namespace {

using u64 = std::uint64_t;

std::vector<double> parse_list(const char* text) {
  std::vector<double> out;
  std::string s(text);
  for (std::size_t at = 0; at <= s.size();) {
    const std::size_t comma = std::min(s.find(',', at), s.size());
    const std::string item = s.substr(at, comma - at);
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !(v > 0)) {
      throw std::invalid_argument("not a positive number: '" + item + "'");
    }
    out.push_back(v);
    at = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) try {
  std::vector<double> sizes = {1e3, 1e5, 1e6};
  std::vector<double> rates = {0.05, 0.01, 0.001, 0.0001};
  u64 probes = 10'000'000;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(std::string(a) + " needs a value");
    if (a == "--sizes") {
      sizes = parse_list(argv[++i]);
    } else if (a == "--rates") {
      rates = parse_list(argv[++i]);
    } else if (a == "--probes") {
      probes = static_cast<u64>(parse_list(argv[++i]).at(0));
    } else {
      throw std::invalid_argument("unknown argument " + std::string(a) +
                                  " (usage: [--sizes N,...] [--rates P,...] [--probes Q])");
    }
  }
  std::printf(
      "| n | requested p | r | slots/key (arity) | bits/key | measured FPR | false positives | "
      "log2(1/measured) | ratio |\n|---|---|---|---|---|---|---|---|---|\n");
  for (const double dn : sizes) {
    const auto n = static_cast<u64>(dn);
    const std::vector<u64> keys = bloomery::bench::keys_at(0, static_cast<std::size_t>(n));
    for (const double p : rates) {
      const auto f = bloomery::static_filter::build(keys, p);
      for (const u64 k : keys) {
        if (!f.may_contain(k)) throw std::runtime_error("false negative");  // never
      }
      u64 positives = 0;
      constexpr u64 chunk = u64{1} << 16;
      std::vector<unsigned char> out(chunk);
      for (u64 done = 0; done < probes; done += chunk) {
        const auto c = static_cast<std::size_t>(std::min(chunk, probes - done));
        positives +=
            f.may_contain_many(bloomery::bench::keys_at(bloomery::bench::kFprBase + done, c), out);
      }
      const double fpr = static_cast<double>(positives) / static_cast<double>(probes);
      const double bpk = 8.0 * static_cast<double>(f.size_in_bytes()) / dn;
      const double bound = std::log2(1 / fpr);
      std::printf("| %.0e | %g | %u | %.4f (%u) | %.3f | %.5f%% | %" PRIu64 " | %.3f | %.3f |\n",
                  dn, p, f.fingerprint_bits(), static_cast<double>(f.array_length()) / dn,
                  f.arity(), bpk, 100 * fpr, positives, bound, bpk / bound);
      std::fflush(stdout);
    }
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bloomery-static-space: %s\n", e.what());
  return 1;
}
