// explain, static (binary fuse) filter: each key has an r-bit fingerprint and three or four slots,
// one in each of that many consecutive segments; the build made the XOR of a member's slots equal
// its fingerprint. It takes no inserts, so only queries are explained.
#include <algorithm>
#include <bloomery/bloomery.hpp>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "explain/explain.hpp"

namespace bloomery_cli::explain {
namespace {

void explain_query(const bloomery::static_filter& f, const std::string& key) {
  const bloomery::static_positions p = bloomery::positions(f, key);
  const auto fp = static_cast<unsigned>(p.fingerprint);
  const int w = static_cast<int>((f.fingerprint_bits() + 3) / 4);  // hex digits of a slot
  const auto hex = [&](unsigned v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%0*x", w, v);
    return std::string(buf);
  };
  std::string slots, segments;
  for (const std::uint64_t i : p.slots) {
    slots += (slots.empty() ? "" : ", ") + std::to_string(i);
    segments += (segments.empty() ? "" : ", ") + std::to_string(i / f.segment_length());
  }
  std::printf("\nquery %s: fingerprint %s, slots %s (segments %s)\n", quoted(key).c_str(),
              hex(fp).c_str(), slots.c_str(), segments.c_str());
  unsigned sum = 0;
  std::string terms;
  for (const std::uint64_t i : p.slots) {
    const auto v = static_cast<unsigned>(bloomery::slot_value(f, i));
    sum ^= v;
    terms += (terms.empty() ? "" : " ^ ") + hex(v);
    std::printf("  slot %llu holds %s\n", static_cast<unsigned long long>(i), hex(v).c_str());
  }
  std::printf("  XOR of the %s slots: %s = %s\n", f.arity() == 4 ? "four" : "three", terms.c_str(),
              hex(sum).c_str());
  if (f.may_contain(key)) {
    possibly("the XOR equals the fingerprint " + hex(fp) +
             ". An absent key matches by chance with probability 2^-" +
             std::to_string(f.fingerprint_bits()));
  } else {
    definitely_not("the XOR is not the fingerprint " + hex(fp) +
                   ", and the build made the XOR equal the fingerprint for every key of its set");
  }
}

}  // namespace

int explain_filter(bloomery::static_filter f, const request& r) {
  if (!r.keys.empty()) {
    throw cli_error(quoted(r.file) +
                    ": a static filter takes no inserts, so explain cannot insert " +
                    quoted(r.keys.front()) + "; give the keys to test with --query");
  }
  std::printf(
      "The static (binary fuse) filter %s: %llu keys, %u-bit fingerprints in %llu slots (%llu "
      "segments of %u, %u per key), built once from its keys: it takes no inserts.\n",
      quoted(r.file).c_str(), static_cast<unsigned long long>(f.key_count()), f.fingerprint_bits(),
      static_cast<unsigned long long>(f.array_length()),
      static_cast<unsigned long long>(f.array_length() /
                                      std::max<std::uint32_t>(1, f.segment_length())),
      f.segment_length(), f.arity());
  for (const std::string& key : r.queries) {
    if (f.array_length() == 0) {
      std::printf("\nquery %s\n", quoted(key).c_str());
      definitely_not("the filter holds no keys");
    } else {
      explain_query(f, key);
    }
  }
  return 0;
}

}  // namespace bloomery_cli::explain
