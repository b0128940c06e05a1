// explain, counting Bloom filter: the classic filter's k positions, each a small counter that an
// insert adds 1 to; a query is "no" when one of its counters is 0.
#include <bloomery/bloomery.hpp>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "explain/explain.hpp"

namespace bloomery_cli::explain {

int explain_filter(bloomery::counting_bloom_filter f, const request& r) {
  std::printf(
      "The counting Bloom filter %s: m = %llu counters of %u bits (at most %llu), k = %u hash "
      "functions, %llu counters nonzero.\n",
      quoted(r.file).c_str(), static_cast<unsigned long long>(f.counter_count()), f.counter_bits(),
      static_cast<unsigned long long>(f.counter_max()), f.hash_count(),
      static_cast<unsigned long long>(f.nonzero_count()));
  for (const std::string& key : r.keys) {
    const auto pos = bloomery::positions(f, key).counters;
    std::vector<std::uint64_t> before;
    for (const auto p : pos) before.push_back(f.counter(p));
    f.insert(key);
    std::printf("\ninsert %s: its %u hashes give counters %s; add 1 to each.\n",
                quoted(key).c_str(), f.hash_count(), join(pos).c_str());
    for (std::size_t i = 0; i < pos.size(); ++i) {
      const std::uint64_t now = f.counter(pos[i]);
      std::printf("  counter %llu: %llu -> %llu%s\n", static_cast<unsigned long long>(pos[i]),
                  static_cast<unsigned long long>(before[i]), static_cast<unsigned long long>(now),
                  now == f.counter_max() ? " (saturated: it stays there, never decremented)" : "");
    }
  }
  for (const std::string& key : r.queries) {
    const auto pos = bloomery::positions(f, key).counters;
    std::printf("\nquery %s: counters %s\n", quoted(key).c_str(), join(pos).c_str());
    std::vector<std::uint64_t> zero;
    for (const auto p : pos) {
      const std::uint64_t v = f.counter(p);
      if (v == 0) zero.push_back(p);
      std::printf("  counter %llu is %llu\n", static_cast<unsigned long long>(p),
                  static_cast<unsigned long long>(v));
    }
    if (!zero.empty()) {
      definitely_not(zero_list("counter", zero) +
                     " 0, and every inserted key adds 1 to all of its counters");
    } else {
      possibly("all " + std::to_string(f.hash_count()) +
               " counters are nonzero. Other keys may have raised them");
    }
  }
  return 0;
}

}  // namespace bloomery_cli::explain
