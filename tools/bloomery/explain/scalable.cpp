// explain, scalable Bloom filter: a stack of classic sub-filters; inserts go to the newest (a new
// one is added when it is full), queries probe the newest first and stop at the first "maybe".
#include <bloomery/bloomery.hpp>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "explain/explain.hpp"

namespace bloomery_cli::explain {
namespace {

std::string sub_filter_text(const bloomery::scalable_bloom_filter& f, std::size_t i) {
  const auto s = f.sub_filter(i);
  return "sub-filter " + std::to_string(i) + " (m = " + std::to_string(s.bit_count()) +
         " bits, k = " + std::to_string(s.hash_count()) + ", " + std::to_string(s.inserted()) +
         " of " + std::to_string(s.capacity()) + " keys)";
}

// The newest sub-filter that answers "maybe" for the key, if any.
std::optional<std::size_t> answering_sub_filter(const bloomery::scalable_bloom_filter& f,
                                                std::string_view key) {
  for (std::size_t i = f.sub_filter_count(); i-- > 0;) {
    if (f.sub_filter(i).may_contain(key)) return i;
  }
  return std::nullopt;
}

void explain_insert(bloomery::scalable_bloom_filter& f, const std::string& key) {
  if (const auto at = answering_sub_filter(f, key)) {
    // The filter skips keys it may already hold.
    const bool added = f.check_and_insert(key) == bloomery::insert_result::inserted;
    std::printf("\ninsert %s: sub-filter %zu already answers \"possibly present\"; %s.\n",
                quoted(key).c_str(), *at,
                added ? "inserted anyway" : "not inserted again (the filter skips it)");
    return;
  }
  const std::size_t before = f.sub_filter_count();
  const std::string newest = sub_filter_text(f, before - 1);
  (void)f.insert(key);  // not present before, so inserted
  const std::size_t last = f.sub_filter_count() - 1;
  const auto s = f.sub_filter(last);
  const auto pos = bloomery::positions(s, key).bits;
  if (f.sub_filter_count() != before) {
    std::printf(
        "\ninsert %s: the newest, %s, is full: add sub-filter %zu (m = %llu bits, k = "
        "%u); its %u hashes give bits %s; set them to 1.\n",
        quoted(key).c_str(), newest.c_str(), last, static_cast<unsigned long long>(s.bit_count()),
        s.hash_count(), s.hash_count(), join(pos).c_str());
  } else {
    std::printf(
        "\ninsert %s: goes to the newest, sub-filter %zu; its %u hashes give bits %s; "
        "set them to 1.\n",
        quoted(key).c_str(), last, s.hash_count(), join(pos).c_str());
  }
}

void explain_query(const bloomery::scalable_bloom_filter& f, const std::string& key) {
  std::printf("\nquery %s: probe the sub-filters newest first\n", quoted(key).c_str());
  const bloomery::scalable_positions all = bloomery::positions(f, key);
  std::optional<std::size_t> answered;
  for (std::size_t i = f.sub_filter_count(); i-- > 0;) {
    const auto s = f.sub_filter(i);
    const std::vector<std::uint64_t>& pos = all.sub_filters[i].bits;
    std::vector<std::uint64_t> clear;
    for (const auto p : pos) {
      if (!bit_set_in(s.words(), p)) clear.push_back(p);
    }
    std::printf("  sub-filter %zu: bits %s -> %s\n", i, join(pos).c_str(),
                clear.empty() ? "all 1: possibly here"
                              : (zero_list("bit", clear) + " 0: not here").c_str());
    if (s.may_contain(key)) {
      answered = i;
      if (i != 0) std::printf("  (the older sub-filters are not probed)\n");
      break;
    }
  }
  if (answered) {
    possibly("sub-filter " + std::to_string(*answered) + " answered (all " +
             std::to_string(f.sub_filter(*answered).hash_count()) +
             " of its bits are 1). They may have been set by other keys");
  } else {
    definitely_not(
        "every sub-filter has a 0 bit, and every inserted key sets all of its bits in the "
        "sub-filter it went to");
  }
}

}  // namespace

int explain_filter(bloomery::scalable_bloom_filter f, const request& r) {
  std::printf(
      "The scalable Bloom filter %s: %zu sub-filter%s (growth %s, tightening %s), %llu keys.\n",
      quoted(r.file).c_str(), f.sub_filter_count(), f.sub_filter_count() == 1 ? "" : "s",
      fmt_real(f.options().growth).c_str(), fmt_real(f.options().tightening).c_str(),
      static_cast<unsigned long long>(f.inserted()));
  for (std::size_t i = f.sub_filter_count(); i-- > 0;) {
    std::printf("  %s\n", sub_filter_text(f, i).c_str());
  }
  for (const std::string& key : r.keys) explain_insert(f, key);
  for (const std::string& key : r.queries) explain_query(f, key);
  return 0;
}

}  // namespace bloomery_cli::explain
