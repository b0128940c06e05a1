// explain, scalable cuckoo filter: a chain of cuckoo tables; inserts go to the newest (a new one is
// added when it is full), a query is "maybe" when any sub-filter holds the key's fingerprint in
// one of the key's two buckets there (or in its stash).
#include <bloomery/bloomery.hpp>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "cli.hpp"
#include "explain/explain.hpp"

namespace bloomery_cli::explain {
namespace {

std::string sub_filter_text(const bloomery::scalable_cuckoo_filter& f, std::size_t i) {
  const bloomery::scalable_cuckoo_sub_filter s = f.sub_filter(i);
  return "sub-filter " + std::to_string(i) + " (" + std::to_string(s.buckets) + " buckets, " +
         std::to_string(s.inserted - s.removed) + " fingerprints stored, sized for " +
         std::to_string(s.capacity) + " keys" + (s.full ? ", full: its stash is in use" : "") + ")";
}

std::string copies(std::uint32_t n) {
  return std::to_string(n) + (n == 1 ? " copy" : " copies");
}

void explain_insert(bloomery::scalable_cuckoo_filter& f, const std::string& key) {
  const std::size_t before = f.sub_filter_count();
  const std::string newest = sub_filter_text(f, before - 1);
  if (!f.insert(key)) {
    std::printf(
        "\ninsert %s: the newest, %s, refuses it, and no sub-filter can be added (the chain has "
        "its %u at most, or the next would be too large); nothing changed.\n",
        quoted(key).c_str(), newest.c_str(), f.max_sub_filters());
    return;
  }
  const std::size_t last = f.sub_filter_count() - 1;
  if (last + 1 != before) {
    std::printf(
        "\ninsert %s: the newest, %s, refuses inserts: add sub-filter %zu (%llu buckets, %u times "
        "the last) and store the key's fingerprint there; it now holds %s of it.\n",
        quoted(key).c_str(), newest.c_str(), last,
        static_cast<unsigned long long>(f.sub_filter(last).buckets), f.expansion(),
        copies(f.count_in(last, key)).c_str());
  } else {
    std::printf(
        "\ninsert %s: goes to the newest, sub-filter %zu: its fingerprint into a free slot of one "
        "of its two buckets there (evicting others to their other buckets if both are full); it "
        "now holds %s of it.\n",
        quoted(key).c_str(), last, copies(f.count_in(last, key)).c_str());
  }
}

void explain_query(const bloomery::scalable_cuckoo_filter& f, const std::string& key) {
  const bloomery::scalable_cuckoo_positions p = bloomery::positions(f, key);
  std::printf(
      "\nquery %s: fingerprint %llu; look for it in the key's two buckets of each sub-filter, "
      "newest first\n",
      quoted(key).c_str(), static_cast<unsigned long long>(p.fingerprint));
  std::optional<std::size_t> holder;
  for (std::size_t i = f.sub_filter_count(); i-- > 0;) {
    const std::uint32_t n = f.count_in(i, key);
    std::printf("  sub-filter %zu, buckets %llu and %llu: %s -> %s\n", i,
                static_cast<unsigned long long>(p.sub_filters[i].i1),
                static_cast<unsigned long long>(p.sub_filters[i].i2), copies(n).c_str(),
                n == 0 ? "not here" : "possibly here");
    if (n != 0) {
      holder = i;
      if (i != 0) std::printf("  (the older sub-filters are not probed)\n");
      break;
    }
  }
  if (holder) {
    possibly("sub-filter " + std::to_string(*holder) +
             " holds its fingerprint. Another key with the same fingerprint and buckets would look "
             "the same");
  } else {
    definitely_not(
        "no sub-filter holds its fingerprint in its two buckets or its stash, and an inserted "
        "key's fingerprint always stays in its buckets (or the stash) of the sub-filter it went "
        "to");
  }
}

}  // namespace

int explain_filter(bloomery::scalable_cuckoo_filter f, const request& r) {
  std::printf(
      "The scalable cuckoo filter %s: %zu sub-filter%s of %u-slot buckets (expansion %u, at most "
      "%u), fingerprints of f = %u bits, %llu stored.\n",
      quoted(r.file).c_str(), f.sub_filter_count(), f.sub_filter_count() == 1 ? "" : "s",
      bloomery::scalable_cuckoo_filter::bucket_size, f.expansion(), f.max_sub_filters(),
      f.fingerprint_bits(), static_cast<unsigned long long>(f.approximate_count()));
  for (std::size_t i = f.sub_filter_count(); i-- > 0;) {
    std::printf("  %s\n", sub_filter_text(f, i).c_str());
  }
  for (const std::string& key : r.keys) explain_insert(f, key);
  for (const std::string& key : r.queries) explain_query(f, key);
  return 0;
}

}  // namespace bloomery_cli::explain
