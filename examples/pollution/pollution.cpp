// bloomery-example-pollution: the pollution attack of README "Threat model", and keyed hashing as
// its defence. An attacker who knows a filter's hash function (parameters and seed are in every
// file header) plays offline:
//   1. chosen false positives: search for keys whose probes all land on bits already set;
//   2. saturation: where the filter admits outside keys, insert keys that each set k clear bits;
//   3. both again against a keyed filter (hasher from a secret key), where the attacker can only
//      guess the hash function, so its "chosen" keys behave like random ones.
// It runs on a bloom_filter and a blocked_bloom_filter sized for n keys at 1%, and exits 1 if an
// attack against the public seed does not work as the threat model says it does.
//
//   bloomery-example-pollution [--n N] [--seed S] [--budget B] [--os-key]
//     --n       capacity and honest keys (default 100000)
//     --seed    seed of every key stream and of the demo's secret keys (default 1)
//     --budget  candidates a saturating attacker examines per insert at most (default 64)
//     --os-key  key the keyed filters with random_key() instead of a key from --seed
#include "attack.hpp"

#include <bloomery/blocked_bloom_filter.hpp>
#include <bloomery/bloom_filter.hpp>
#include <bloomery/hash.hpp>

#include <bloomery/support/keys.hpp>
#include <bloomery/support/table.hpp>
#include <bloomery/support/text.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace {

using bloomery::support::fmt;
using bloomery::support::grouped;
using pollution::u64;

struct options {
  u64 n = 100000;
  std::size_t random_probes() const { return std::clamp<std::size_t>(10 * n, 100000, 1000000); }
  u64 seed = 1;
  u64 budget = 64;
  bool os_key = false;
};

constexpr double target_fpr = 0.01;
constexpr std::size_t wanted_chosen = 1000;  // chosen false positives per search

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("  WRONG: %s\n", what.c_str());
    ++failures;
  }
}

std::string pct(double p) {
  return fmt("%.2f%%", 100 * p);
}

// Distinct streams for honest keys, candidates, probes and secrets, all derived from --seed.
struct streams {
  u64 honest, candidates, inserts, probes, secret, guess;
  explicit streams(u64 seed)
      : honest(bloomery::support::splitmix64_at(seed, 0)),
        candidates(bloomery::support::splitmix64_at(seed, 1)),
        inserts(bloomery::support::splitmix64_at(seed, 5)),
        probes(bloomery::support::splitmix64_at(seed, 2)),
        secret(bloomery::support::splitmix64_at(seed, 3)),
        guess(bloomery::support::splitmix64_at(seed, 4)) {}
};

// One filter under attack: how it hashes, and what the attacker guesses.
struct setup {
  const char* hashing;
  const char* guess_name;
  bloomery::hasher hash;
  bloomery::hasher guess;
  bool guess_is_right;
};

std::vector<setup> setups(const options& o, const streams& s) {
  const bloomery::secret_key key =
      o.os_key ? bloomery::random_key() : pollution::stream_secret(s.secret);
  return {
      {"default seed", "default seed", bloomery::hasher{}, bloomery::hasher{}, true},
      {"keyed", "default seed", bloomery::hasher(key), bloomery::hasher{}, false},
      {"keyed", "another key", bloomery::hasher(key),
       bloomery::hasher(pollution::stream_secret(s.guess)), false},
  };
}

template <class F>
void chosen_false_positives(const char* name, const options& o, const streams& s,
                            bloomery::support::text_table& table) {
  std::vector<u64> honest = bloomery::support::present_keys(o.n, s.honest);
  const std::vector<u64> probes = pollution::outsider_keys(s.probes, o.random_probes());
  std::sort(honest.begin(), honest.end());
  for (const setup& su : setups(o, s)) {
    F f({.capacity = o.n, .fpr = target_fpr}, su.hash);
    for (const u64 key : honest) f.insert(key);
    pollution::attacker<F> a(f, su.guess, s.candidates);
    const u64 budget = static_cast<u64>(100 * wanted_chosen / target_fpr);
    const pollution::search_result r = pollution::search_false_positives(a, wanted_chosen, budget);
    const std::size_t chosen_hits = pollution::count_positives(f, r.chosen);
    const std::size_t random_hits = pollution::count_positives(f, probes);
    const double chosen_fpr = static_cast<double>(chosen_hits) /
                              static_cast<double>(std::max<std::size_t>(1, r.chosen.size()));
    table.row({name, su.hashing, su.guess_name, grouped(r.chosen.size()), grouped(r.tried),
               fmt("%.1f", static_cast<double>(r.tried) /
                               static_cast<double>(std::max<std::size_t>(1, r.chosen.size()))),
               pct(chosen_fpr),
               pct(static_cast<double>(random_hits) / static_cast<double>(probes.size())),
               pct(f.estimated_fpr())});
    for (const u64 key : r.chosen) {
      check(!std::binary_search(honest.begin(), honest.end(), key),
            "a chosen key is an honest key");
    }
    if (su.guess_is_right) {
      check(r.chosen.size() == wanted_chosen, fmt("%s: the search found too few keys", name));
      check(chosen_hits == r.chosen.size(),
            fmt("%s: a chosen key against the public seed is not a false positive", name));
    }
  }
}

template <class F>
void saturation(const char* name, const options& o, const streams& s,
                bloomery::support::text_table& table) {
  const std::vector<u64> probes = pollution::outsider_keys(s.probes, o.random_probes());
  for (const setup& su : setups(o, s)) {
    if (su.guess_name != std::string_view("default seed")) continue;  // one wrong guess is enough
    for (const bool attack : {true, false}) {
      F f({.capacity = o.n, .fpr = target_fpr}, su.hash);
      const u64 check_every =
          std::max<u64>(1, f.bit_count() / (1000 * static_cast<u64>(f.hash_count())));
      pollution::attacker<F> a(f, su.guess, s.candidates);
      u64 random_next = 0;
      // The attacker insists on k clear bits up to half fill, then takes the best of budget.
      const auto next = [&](u64 set_bits) -> u64 {
        if (!attack) return pollution::outsider_key(s.inserts, random_next++);
        return a.next_polluter(2 * set_bits < f.bit_count() ? 0 : o.budget).key;
      };
      const pollution::saturation_result r =
          pollution::saturate(f, next, 0.5, 0.5, check_every, 50 * o.n);
      const double nd = static_cast<double>(o.n);
      const u64 examined = attack ? a.tried() : random_next;
      table.row({name, su.hashing,
                 attack ? (su.guess_is_right ? "attacker" : "attacker (guess)") : "random",
                 fmt("%s (%.2f n)", grouped(r.inserts_to_fill).c_str(),
                     static_cast<double>(r.inserts_to_fill) / nd),
                 fmt("%s (%.2f n)", grouped(r.inserts_to_fpr).c_str(),
                     static_cast<double>(r.inserts_to_fpr) / nd),
                 pct(static_cast<double>(pollution::count_positives(f, probes)) /
                     static_cast<double>(probes.size())),
                 pct(r.estimated_fpr),
                 fmt("%.1f", static_cast<double>(examined) /
                                 static_cast<double>(std::max<u64>(1, r.inserts_to_fpr)))});
      check(r.reached, fmt("%s: the estimated FPR never reached 50%%", name));
      check(r.set_bits == f.set_bit_count(), fmt("%s: the fresh-bit bookkeeping is off", name));
      if (attack && su.guess_is_right) {
        const u64 k = f.hash_count();
        check(r.min_fresh == k,
              fmt("%s: an attacker insert set fewer than k bits before 50%% fill", name));
        check(r.inserts_to_fill == (f.bit_count() + 2 * k - 1) / (2 * k),
              fmt("%s: the attacker did not fill half the bits with m/2k keys", name));
      }
    }
  }
}

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&](u64& out) {
      if (i + 1 >= argc) return false;
      char* end = nullptr;
      out = std::strtoull(argv[++i], &end, 10);
      return *end == '\0';
    };
    if (arg == "--os-key") {
      o.os_key = true;
    } else if (!((arg == "--n" && value(o.n)) || (arg == "--seed" && value(o.seed)) ||
                 (arg == "--budget" && value(o.budget)))) {
      std::fprintf(stderr, "usage: %s [--n N] [--seed S] [--budget B] [--os-key]\n", argv[0]);
      return false;
    }
  }
  if (o.n < 100) {
    std::fprintf(stderr, "--n must be at least 100\n");
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) try {
  options o;
  if (!parse(argc, argv, o)) return 2;
  const streams s(o.seed);
  std::printf("pollution attack: filters for n = %s keys at %s, key streams from seed %llu%s\n\n",
              grouped(o.n).c_str(), pct(target_fpr).c_str(),
              static_cast<unsigned long long>(o.seed), o.os_key ? ", keys from random_key()" : "");

  std::printf(
      "1. chosen false positives: n honest keys inserted, the attacker searches offline\n"
      "   for keys whose probes all land on set bits (random: %s fresh keys)\n\n",
      grouped(o.random_probes()).c_str());
  bloomery::support::text_table t1({"filter", "hashing", "attacker's hash", "chosen", "candidates",
                                    "per chosen", "chosen FPR", "random FPR", "estimated_fpr"},
                                   {.indent = 3, .gap = 2, .first_left = true});
  chosen_false_positives<bloomery::bloom_filter>("bloom", o, s, t1);
  chosen_false_positives<bloomery::blocked_bloom_filter>("blocked", o, s, t1);
  t1.print();

  const bloomery::bloom_filter bloom({.capacity = o.n, .fpr = target_fpr});
  const bloomery::blocked_bloom_filter blocked({.capacity = o.n, .fpr = target_fpr});
  const auto half_over_k = [](const auto& f) {
    return grouped((f.bit_count() + 2 * f.hash_count() - 1) / (2 * f.hash_count()));
  };
  std::printf(
      "\n2. saturation: an empty filter admits outside keys; the attacker inserts keys\n"
      "   whose probes all hit clear bits until half the bits are set, then the best of\n"
      "   up to %s candidates each. Half fill needs at least ceil(m/2k) inserts:\n"
      "   bloom m = %s, k = %u: %s; blocked m = %s, k = %u: %s\n\n",
      grouped(o.budget).c_str(), grouped(bloom.bit_count()).c_str(), bloom.hash_count(),
      half_over_k(bloom).c_str(), grouped(blocked.bit_count()).c_str(), blocked.hash_count(),
      half_over_k(blocked).c_str());
  bloomery::support::text_table t2(
      {"filter", "hashing", "inserter", "inserts to 50% fill", "inserts to est. FPR 50%",
       "then: random FPR", "estimated_fpr", "candidates per insert"},
      {.indent = 3, .gap = 2, .first_left = true});
  saturation<bloomery::bloom_filter>("bloom", o, s, t2);
  saturation<bloomery::blocked_bloom_filter>("blocked", o, s, t2);
  t2.print();

  std::printf("\n%s\n", failures == 0 ? "the attacks behaved as the threat model says"
                                      : "some attack did NOT behave as expected");
  return failures == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bloomery-example-pollution: %s\n", e.what());
  return 1;
}
