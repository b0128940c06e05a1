// bloomery-recommendations: many small filters, one per user. "Already seen" (the articles a
// Medium reader has read, the titles a Netflix viewer has watched): the recommender drops every
// candidate the user's filter says was possibly seen, so a seen item is never recommended again,
// and the price is a few unseen items wrongly suppressed (the false positives). "Already
// connected" for friend suggestions: friends of friends, minus those the user's filter says are
// friends already. Memory per user against exact per-user sets and one shared filter of pairs.
//
// Exit status 1 if a seen item or an existing friend was ever suggested, 2 for bad arguments.
#include <bloomery/bloomery.hpp>
#include <bloomery/examples/harness.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <numbers>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace ex = bloomery::examples;
using std::uint64_t;

namespace {

struct options {
  ex::common_options common;
  uint64_t users = 10'000, items = 1'000'000, history = 100, friends = 20;
  uint64_t candidates = 100, suggest = 10;
  double fpr = 0.01, skew = 1.0;
};

// The exact baseline: one hash set per user, every byte it allocates counted.
using exact_set = std::unordered_set<uint64_t, std::hash<uint64_t>, std::equal_to<uint64_t>,
                                     ex::counting_allocator<uint64_t>>;
struct relation {  // user u -> the ids u has seen, or is connected to
  ex::allocation_counter counter;
  std::vector<exact_set> sets;
  explicit relation(uint64_t users) {
    sets.reserve(users);
    for (uint64_t u = 0; u < users; ++u)
      sets.emplace_back(ex::counting_allocator<uint64_t>(counter));
  }
};
using candidate = std::pair<uint64_t, uint64_t>;  // an id and its score (higher is better)

// Builds a filter per user and one shared filter over (user, id) pairs from `rel`, then, for every
// user, checks the candidates that `candidates_of(u, out)` proposes against both, suggests the
// `suggest` best the user's filter lets through, and scores every answer against the exact sets.
// Returns the suggestions the user had already seen or made, and false negatives: must be 0.
template <class Candidates, class Out>
uint64_t suggest_all(const options& o, const relation& rel, Candidates&& candidates_of, Out&& out) {
  const uint64_t users = rel.sets.size();
  uint64_t entries = 0, filter_bytes = 0;
  // A filter's bits come in whole 64-byte lines: each user's filter gets all the bits of the lines
  // that its target size occupies, and k to match (at most 16). `at_target` is sized to the target,
  // in as many lines, to compare.
  std::vector<bloomery::bloom_filter> filters, at_target;
  filters.reserve(users);
  at_target.reserve(users);
  for (const auto& s : rel.sets) {
    const uint64_t n = std::max<uint64_t>(s.size(), 1);
    const uint64_t bits = (bloomery::optimal_bits(n, o.fpr) + 511) / 512 * 512;
    const double k =
        std::round(std::numbers::ln2 * static_cast<double>(bits) / static_cast<double>(n));
    filters.emplace_back(
        bloomery::bloom_parameters{bits, static_cast<uint32_t>(std::clamp(k, 1.0, 16.0))});
    at_target.emplace_back(bloomery::target{.capacity = n, .fpr = o.fpr});
    for (const uint64_t id : s) {
      filters.back().insert(id);
      at_target.back().insert(id);
    }
    entries += s.size();
    filter_bytes += sizeof(bloomery::bloom_filter) + filters.back().size_in_bytes();
  }
  auto pair_key = [](uint64_t u, uint64_t id) { return u << 40 | id; };  // ids < 2^40
  bloomery::bloom_filter shared({.capacity = std::max<uint64_t>(entries, 1), .fpr = o.fpr});
  for (uint64_t u = 0; u < users; ++u) {
    for (const uint64_t id : rel.sets[u]) shared.insert(pair_key(u, id));
  }

  ex::answer_tally tally, at_target_tally, shared_tally;
  uint64_t suggested = 0, repeats = 0;
  std::vector<candidate> list, kept;
  for (uint64_t u = 0; u < users; ++u) {
    list.clear();
    kept.clear();
    candidates_of(u, list);
    for (const auto& [id, score] : list) {
      const bool truth = rel.sets[u].contains(id), possibly = filters[u].may_contain(id);
      tally.record(possibly, truth);
      at_target_tally.record(at_target[u].may_contain(id), truth);
      shared_tally.record(shared.may_contain(pair_key(u, id)), truth);
      if (!possibly) kept.emplace_back(id, score);
    }
    const auto n = std::min<std::size_t>(kept.size(), o.suggest);
    std::partial_sort(kept.begin(), kept.begin() + n, kept.end(),
                      [](const candidate& a, const candidate& b) { return a.second > b.second; });
    for (std::size_t i = 0; i < n; ++i) repeats += rel.sets[u].contains(kept[i].first);
    suggested += n;
  }
  const auto bytes = [&](double total) {
    return ex::bytes(static_cast<uint64_t>(total / static_cast<double>(users)));
  };
  const double exact_bytes =
      static_cast<double>(rel.counter.live_bytes + users * sizeof(exact_set));
  out("users", "users", ex::count(users));
  out("entries_per_user", "entries per user (mean)",
      ex::number(static_cast<double>(entries) / static_cast<double>(users), "%.1f"));
  out("exact_bytes_per_user", "exact set, per user", bytes(exact_bytes));
  out("filter_bytes_per_user", "filter, per user", bytes(static_cast<double>(filter_bytes)));
  out("object_bytes_per_user", "  of which the object",
      bytes(users * sizeof(bloomery::bloom_filter)));
  out("shared_bytes_per_user", "shared filter, per user", bytes(shared.size_in_bytes()));
  out("memory_ratio", "filter / exact set", ex::percent(filter_bytes / exact_bytes, 1));
  out("suggestions", "suggestions made", ex::count(suggested));
  out("absent_candidates", "candidates new to the user", ex::count(tally.absent()));
  out("repeats", "suggested again (must be 0)", ex::count(repeats));
  out("false_negatives", "false negatives (must be 0)", ex::count(tally.false_negatives));
  out("false_positives", "wrongly suppressed", ex::count(tally.false_positives));
  out("fpr", "measured FPR", ex::percent(tally.fpr()));
  out("at_target_fpr", "measured FPR, sized to target", ex::percent(at_target_tally.fpr()));
  out("shared_false_positives", "wrongly suppressed, shared",
      ex::count(shared_tally.false_positives));
  out("shared_fpr", "measured FPR, shared filter", ex::percent(shared_tally.fpr()));
  return repeats + tally.false_negatives + at_target_tally.false_negatives +
         shared_tally.false_negatives;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Per-user 'already seen' and 'already connected' filters.",
               "bloomery-recommendations"};
  options o;
  ex::add_common_options(app, o.common);
  auto opt = [&](const char* name, auto& value, const char* help) {
    return app.add_option(name, value, help)->capture_default_str();
  };
  opt("--users", o.users, "users, each with a history and friends")->check(ex::at_least_one());
  opt("--items", o.items, "items in the catalogue")->check(ex::at_least_one());
  opt("--history", o.history, "items seen per user, mean (1 to 2x-1, uniform)")
      ->check(ex::at_least_one());
  opt("--skew", o.skew, "Zipf skew of the items' popularity")->check(CLI::Range(0.0, 1.5));
  opt("--friends", o.friends, "friends per user, about")->check(ex::at_least_one());
  opt("--candidates", o.candidates, "items the recommender proposes per user")
      ->check(ex::at_least_one());
  opt("--suggest", o.suggest, "suggestions shown per user")->check(ex::at_least_one());
  opt("--fpr", o.fpr, "the filters' target false-positive rate")->check(ex::open_unit_interval());
  return ex::run_example(app, argc, argv, [&] {
    if (2 * o.history > o.items || o.candidates * 2 > o.items) {
      throw std::invalid_argument("--items must be at least twice --history and --candidates");
    }
    if (o.users >= (uint64_t{1} << 24) || o.items >= (uint64_t{1} << 40)) {
      throw std::invalid_argument("--users must be below 2^24 and --items below 2^40");
    }
    ex::report rep("bloomery-recommendations", {"seen", "connected"});
    rep.param("users", ex::count(o.users));
    rep.param("items", ex::count(o.items));
    rep.param("skew", ex::number(o.skew));
    rep.param("target fpr", ex::percent(o.fpr));
    auto column = [&](std::size_t c) {
      return [&, c](const char* key, const char* label, ex::cell v) { rep.set(c, key, label, v); };
    };
    uint64_t state = o.common.seed, failures = 0;

    // Already seen: each user's history, items drawn by popularity (item id = popularity rank).
    {
      relation seen(o.users);
      ex::zipf_sampler popular(o.items, o.skew, o.common.seed);
      for (auto& s : seen.sets) {
        for (uint64_t n = 1 + ex::uniform_below(state, 2 * o.history - 1); s.size() < n;)
          s.insert(popular.next());
      }
      ex::zipf_sampler trending(o.items, o.skew, o.common.seed + 1);
      std::unordered_set<uint64_t> drawn;
      failures += suggest_all(
          o, seen,
          [&](uint64_t, std::vector<candidate>& out) {
            for (drawn.clear(); drawn.size() < o.candidates;) {
              const uint64_t id = trending.next();
              if (drawn.insert(id).second) out.emplace_back(id, o.items - id);  // popular first
            }
          },
          column(0));
    }

    // Already connected: a friendship graph, half of each user's links near them (communities,
    // so friends of friends abound), half anywhere; suggestions are friends of friends ranked by
    // mutual friends.
    relation connected(o.users);
    for (uint64_t u = 0; u < o.users && o.users > 1; ++u) {
      for (uint64_t i = 0; i < (o.friends + 1) / 2; ++i) {
        const uint64_t v = ex::uniform01(state) < 0.5
                               ? (u + 1 + ex::uniform_below(state, 2 * o.friends)) % o.users
                               : ex::uniform_below(state, o.users);
        if (v == u) continue;
        connected.sets[u].insert(v);
        connected.sets[v].insert(u);
      }
    }
    std::unordered_map<uint64_t, uint64_t> mutual;
    failures += suggest_all(
        o, connected,
        [&](uint64_t u, std::vector<candidate>& out) {
          mutual.clear();
          for (const uint64_t f : connected.sets[u]) {
            for (const uint64_t g : connected.sets[f]) mutual[g] += g != u;
          }
          for (const auto& [g, m] : mutual) {
            if (g != u) out.emplace_back(g, m);
          }
        },
        column(1));

    rep.note("A candidate the user's filter calls 'possibly seen' is dropped: never a repeat, and");
    rep.note("the false positives are new items wrongly suppressed. Memory counts each filter's");
    rep.note("object and bits, and every byte the exact sets allocate (counting_allocator).");
    rep.print(o.common.json);
    if (failures == 0) return 0;
    std::fprintf(stderr, "bloomery-recommendations: error: %llu repeated suggestions\n",
                 static_cast<unsigned long long>(failures));
    return 1;
  });
}
