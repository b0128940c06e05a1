// bloomery explain: the arguments, the choice of kind, and the classic Bloom filter's walk-through
// (the other kinds have a file each).
#include "explain/explain.hpp"

#include <CLI/CLI.hpp>
#include <bloomery/bloomery.hpp>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"

namespace bloomery_cli {
namespace explain {

std::string zero_list(const char* what, const std::vector<std::uint64_t>& v) {
  return std::string(what) + (v.size() == 1 ? " " : "s ") + join(v) +
         (v.size() == 1 ? " is" : " are");
}

void definitely_not(const std::string& why) {
  std::printf("  -> definitely not present: %s.\n", why.c_str());
}

void possibly(const std::string& saw) {
  std::printf("  -> possibly present: %s (a false positive); the filter cannot tell.\n",
              saw.c_str());
}

namespace {

bool bit_set(const bloomery::bloom_filter& f, std::uint64_t i) {
  return bit_set_in(f.words(), i);
}

constexpr std::uint64_t draw_limit = 256;  // bit arrays up to this size are drawn

void draw_bits(const bloomery::bloom_filter& f) {
  if (f.bit_count() > draw_limit) return;
  std::string line = "  bits: ";
  for (std::uint64_t i = 0; i < f.bit_count(); ++i) line += bit_set(f, i) ? '1' : '0';
  std::printf("%s\n", line.c_str());
}

// A classic filter: each key sets k bits of one array; a query is "no" when one of its bits is 0.
int walk_bloom(bloomery::bloom_filter f, const request& r) {
  draw_bits(f);
  // Which inserted keys set each bit, to explain the answers.
  std::vector<std::pair<std::uint64_t, std::string>> setters;
  for (const std::string& key : r.keys) {
    const auto pos = bloomery::positions(f, key).bits;
    f.insert(key);
    std::printf("\ninsert %s: its %u hashes give bits %s; set them to 1.\n", quoted(key).c_str(),
                f.hash_count(), join(pos).c_str());
    for (const auto p : pos) setters.emplace_back(p, key);
    draw_bits(f);
  }
  for (const std::string& key : r.queries) {
    const auto pos = bloomery::positions(f, key).bits;
    std::printf("\nquery %s: bits %s\n", quoted(key).c_str(), join(pos).c_str());
    std::vector<std::uint64_t> clear;
    for (const auto p : pos) {
      std::string by;
      for (const auto& [sp, who] : setters) {
        if (sp == p && by.find(quoted(who)) == std::string::npos)
          by += (by.empty() ? "" : ", ") + quoted(who);
      }
      const bool set = bit_set(f, p);
      if (!set) clear.push_back(p);
      std::printf("  bit %llu is %s%s\n", static_cast<unsigned long long>(p), set ? "1" : "0",
                  set ? (by.empty() ? "" : (" (set by " + by + ")").c_str()) : "");
    }
    if (!clear.empty()) {
      definitely_not(zero_list("bit", clear) + " 0, and every inserted key sets all of its bits");
    } else {
      possibly("all " + std::to_string(f.hash_count()) +
               " bits are 1. They may have been set by other keys");
    }
  }
  return 0;
}

}  // namespace

int explain_filter(bloomery::bloom_filter f, const request& r) {
  std::printf("The Bloom filter %s: m = %llu bits, k = %u hash functions, %llu bits set.\n",
              quoted(r.file).c_str(), static_cast<unsigned long long>(f.bit_count()),
              f.hash_count(), static_cast<unsigned long long>(f.set_bit_count()));
  return walk_bloom(std::move(f), r);
}

int explain_generic(bloomery::any_filter f, const request& r) {
  const std::string kind = bloomery::to_string(f.kind());
  const bloomery::filter_stats s = f.stats();
  std::printf("The %s filter %s: %llu bytes, about %llu keys, estimated FPR %.3g.\n", kind.c_str(),
              quoted(r.file).c_str(), static_cast<unsigned long long>(f.size_in_bytes()),
              static_cast<unsigned long long>(s.approximate_count), s.estimated_fpr);
  for (const std::string& key : r.keys) {
    bloomery::insert_result in = bloomery::insert_result::inserted;
    try {
      in = f.insert(key);
    } catch (const std::logic_error& e) {  // a kind without inserts
      throw cli_error(quoted(r.file) + ": " + e.what());
    }
    if (in == bloomery::insert_result::full) {
      throw cli_error(quoted(r.file) + ": the " + kind + " filter is full; " + quoted(key) +
                      " was not inserted");
    }
    std::printf("\ninsert %s: done (explain has no drawing of a %s filter).\n", quoted(key).c_str(),
                kind.c_str());
  }
  for (const std::string& key : r.queries) {
    std::printf("\nquery %s:\n", quoted(key).c_str());
    if (f.may_contain(key)) {
      possibly("the filter's probe matched");
    } else {
      definitely_not("the filter's probe found a mismatch, and every inserted key matches its own");
    }
  }
  return 0;
}

namespace {

struct explain_args {
  std::optional<std::uint64_t> m;
  std::optional<std::uint32_t> k;
  std::string seed;
  std::vector<std::string> args;  // [FILE] KEY...
  std::vector<std::string> queries;
};

int cmd_explain(const explain_args& a) {
  request r{{}, a.args, a.queries};
  if (a.m || a.k) {
    if (!a.m || !a.k) throw cli_error("explain: -m and -k go together");
    bloomery::check_bits(*a.m, "-m");
    bloomery::check_hashes(*a.k, "-k");
    bloomery::bloom_filter f(bloomery::bloom_parameters{*a.m, *a.k}, parse_seed(a.seed));
    std::printf("An empty Bloom filter of m = %llu bits with k = %u hash functions.\n",
                static_cast<unsigned long long>(*a.m), *a.k);
    return walk_bloom(std::move(f), r);
  }
  if (r.keys.empty()) throw cli_error("explain: give -m BITS -k HASHES or a filter FILE");
  r.file = r.keys.front();
  r.keys.erase(r.keys.begin());
  bloomery::any_filter loaded = load_filter(r.file);
  if (!a.seed.empty()) throw cli_error("--seed: a filter file brings its own seed");
  return loaded.visit([&]<class F>(F& f) {
    if constexpr (requires { explain_filter(std::move(f), r); }) {
      return explain_filter(std::move(f), r);
    } else {
      return explain_generic(std::move(f), r);
    }
  });
}

}  // namespace
}  // namespace explain

command register_explain(CLI::App& app) {
  auto a = std::make_shared<explain::explain_args>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "teaching mode: where each key goes and why a query says no or maybe");
  cmd->add_option("-m,--bits", a->m, "bits of a new, empty Bloom filter");
  cmd->add_option("-k,--hashes", a->k, "hash functions of that filter");
  cmd->add_option("--seed", a->seed, "hash seed of the new filter (default: the library's)");
  cmd->add_option("args", a->args,
                  "[FILE] KEY...: keys to insert (into FILE's filter, in memory; not static)");
  cmd->add_option("--query", a->queries, "keys to query after the inserts");
  cmd->footer(
      "Examples:\n"
      "  bloomery explain -m 32 -k 3 example.com --query example.com nonexistent.com\n"
      "  bloomery explain urls.bloom --query example.com\n"
      "  bloomery explain sessions.cbf new-key --query new-key old-key\n"
      "  bloomery explain sstable.flt --query k1 k2   (static: no inserts, queries only)");
  return {cmd, [a] { return explain::cmd_explain(*a); }};
}

}  // namespace bloomery_cli
