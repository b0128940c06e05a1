// explain, cuckoo filter: each key has an f-bit fingerprint and two candidate buckets of 4 slots;
// a query is "maybe" when the fingerprint sits in either bucket or the stash.
#include <algorithm>
#include <bloomery/bloomery.hpp>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "explain/explain.hpp"

namespace bloomery_cli::explain {
namespace {

std::string bucket_text(const bloomery::cuckoo_filter& f, std::uint64_t b) {
  std::string s = "  bucket " + std::to_string(b) + ": [";
  const auto slots = bloomery::bucket_fingerprints(f, b);
  for (std::size_t j = 0; j < slots.size(); ++j) {
    s += (j ? ", " : "") + (slots[j] == 0 ? std::string("-") : std::to_string(slots[j]));
  }
  return s + "]";
}

bool bucket_has(const bloomery::cuckoo_filter& f, std::uint64_t b, std::uint64_t fp) {
  const auto slots = bloomery::bucket_fingerprints(f, b);
  return std::find(slots.begin(), slots.end(), fp) != slots.end();
}

bool bucket_has_room(const bloomery::cuckoo_filter& f, std::uint64_t b) {
  return bucket_has(f, b, 0);  // 0 marks an empty slot
}

std::string stash_text(const bloomery::cuckoo_filter& f) {
  const auto& s = f.stash();
  if (!s.used) return "empty";
  return "fingerprint " + std::to_string(s.fingerprint) + " for bucket " + std::to_string(s.bucket);
}

// How i2 follows from i1 and the fingerprint (bloomery::cuckoo_positions).
std::string alt_text(const bloomery::cuckoo_filter& f, const bloomery::cuckoo_positions& p) {
  const std::uint64_t nb = f.bucket_count();
  const std::uint64_t t = p.pairing_target;
  const std::uint64_t diff = t >= p.i1 ? t - p.i1 : t + nb - p.i1;
  const std::string n = std::to_string(nb);
  std::string s = "i1 is the key's hash mapped onto the " + n + " buckets; i2 = (t - i1) mod " + n +
                  " = (" + std::to_string(t) + " - " + std::to_string(p.i1) + ") mod " + n + " = " +
                  std::to_string(diff) + ", where t = " + std::to_string(t) + " is H(" +
                  std::to_string(p.fingerprint) + ") mapped onto the buckets";
  if (p.partner) {
    s += "; that is i1 itself, so i2 is its partner " + std::to_string(p.i2) + " = i1 +- " +
         std::to_string(nb / 2);
  }
  return s +
         ". The same rule maps i2 back to i1, so a fingerprint and either bucket give the other";
}

void explain_insert(bloomery::cuckoo_filter& f, const std::string& key) {
  const bloomery::cuckoo_positions p = bloomery::positions(f, key);
  std::printf("\ninsert %s: fingerprint %llu (%u bits, never 0), i1 = %llu, i2 = %llu.\n",
              quoted(key).c_str(), static_cast<unsigned long long>(p.fingerprint),
              f.fingerprint_bits(), static_cast<unsigned long long>(p.i1),
              static_cast<unsigned long long>(p.i2));
  std::printf("  %s.\n", alt_text(f, p).c_str());
  const bool room1 = bucket_has_room(f, p.i1);
  const bool room2 = bucket_has_room(f, p.i2);
  const bool was_full = f.is_full();
  if (!f.insert(key)) {
    std::printf("  -> refused: the table is full (the stash is in use); nothing changed.\n");
    return;
  }
  const auto fp = static_cast<unsigned long long>(p.fingerprint);
  if (room1) {
    std::printf("  bucket %llu has a free slot: store %llu there.\n",
                static_cast<unsigned long long>(p.i1), fp);
  } else if (room2) {
    std::printf("  bucket %llu is full; bucket %llu has a free slot: store %llu there.\n",
                static_cast<unsigned long long>(p.i1), static_cast<unsigned long long>(p.i2), fp);
  } else {
    std::printf(
        "  both buckets are full: evict a fingerprint to make room, and move each evicted one "
        "to its other bucket (at most %u moves).\n",
        f.max_kicks());
  }
  std::printf("%s\n", bucket_text(f, p.i1).c_str());
  if (p.i2 != p.i1) std::printf("%s\n", bucket_text(f, p.i2).c_str());
  if (f.is_full() && !was_full) {
    std::printf("  the moves ran out: the last evicted fingerprint went to the stash (%s).\n",
                stash_text(f).c_str());
  }
}

void explain_query(const bloomery::cuckoo_filter& f, const std::string& key) {
  const bloomery::cuckoo_positions p = bloomery::positions(f, key);
  const auto fp = static_cast<unsigned long long>(p.fingerprint);
  std::printf("\nquery %s: fingerprint %llu, buckets i1 = %llu and i2 = %llu\n",
              quoted(key).c_str(), fp, static_cast<unsigned long long>(p.i1),
              static_cast<unsigned long long>(p.i2));
  std::vector<std::uint64_t> holders;
  std::vector<std::uint64_t> buckets{p.i1};
  if (p.i2 != p.i1) buckets.push_back(p.i2);  // i2 = i1 only in a table of odd bucket count
  const std::string holds = " <- holds " + std::to_string(p.fingerprint);
  for (const std::uint64_t b : buckets) {
    const bool has = bucket_has(f, b, p.fingerprint);
    if (has) holders.push_back(b);
    std::printf("%s%s\n", bucket_text(f, b).c_str(), has ? holds.c_str() : "");
  }
  if (f.stash().used) {
    std::printf("  stash: %s%s\n", stash_text(f).c_str(),
                bloomery::stash_holds(f, p) ? holds.c_str() : "");
  }
  const std::string fingerprint = "fingerprint " + std::to_string(p.fingerprint);
  if (f.may_contain(key)) {
    possibly(fingerprint + " is in " +
             (holders.empty() ? "the stash"
                              : (holders.size() == 1 ? "bucket " : "buckets ") + join(holders)) +
             ". Another key with the same fingerprint and buckets would look the same");
  } else {
    definitely_not(fingerprint +
                   " is in neither bucket nor the stash, and an inserted key's fingerprint always "
                   "stays in one of its two buckets (or the stash)");
  }
}

}  // namespace

int explain_filter(bloomery::cuckoo_filter f, const request& r) {
  std::printf(
      "The cuckoo filter %s: %llu buckets of %u slots, fingerprints of f = %u bits, %llu stored, "
      "stash %s.\n",
      quoted(r.file).c_str(), static_cast<unsigned long long>(f.bucket_count()),
      bloomery::cuckoo_filter::bucket_slots, f.fingerprint_bits(),
      static_cast<unsigned long long>(f.approximate_count()), stash_text(f).c_str());
  for (const std::string& key : r.keys) explain_insert(f, key);
  for (const std::string& key : r.queries) explain_query(f, key);
  return 0;
}

}  // namespace bloomery_cli::explain
