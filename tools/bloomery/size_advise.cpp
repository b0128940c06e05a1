// bloomery size and bloomery advise: what each kind would cost for n keys at rate p, and which to
// use.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <bloomery/bloomery.hpp>
#include <bloomery/support/json.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"

namespace bloomery_cli {
namespace {

// Every kind's plan for a target, in the table's order (the README's).
struct plan_row {
  const char* kind;
  std::optional<bloomery::filter_plan> plan;
  std::string why_not;
};

template <class... Fs>
std::vector<plan_row> plans(bloomery::target t, bloomery::type_list<Fs...>) {
  std::vector<plan_row> rows;
  const auto add = [&]<class F>() {
    plan_row r{bloomery::to_string(F::kind), std::nullopt, {}};
    try {
      r.plan = F::plan(t);
    } catch (const std::exception& e) {
      r.why_not = strip(e.what());
    }
    rows.push_back(std::move(r));
  };
  (add.template operator()<Fs>(), ...);
  return rows;
}

// A plan's members, inside the object of its kind.
void plan_members(bloomery::support::json_writer& w, const bloomery::filter_plan& p) {
  w.key("bytes").integer(p.bytes);
  w.key("bits_per_key").number(p.bits_per_key).key("expected_fpr").number(p.expected_fpr);
  w.key("parameters").string(p.parameters);
}

// What size and advise both take: the target -n keys at -p, and --json.
struct target_args {
  std::uint64_t n = 0;
  double p = 0;
  bool json = false;
};

// The subcommand of a command that plans for a target, with -n and -p (the caller adds --json
// where its --help lists it).
CLI::App* add_target_command(CLI::App& app, const char* name, const char* description,
                             target_args& t) {
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->add_option("-n,--capacity", t.n, "keys")->required();
  cmd->add_option("-p,--fpr", t.p, "target false-positive rate, in (0, 1)")->required();
  return cmd;
}

// The kind column's width: the longest kind name in the table, or advise's "exact set".
int kind_width() {
  std::size_t w = std::strlen("exact set");
  for (const bloomery::kind_info& k : bloomery::filter_kinds) w = std::max(w, std::strlen(k.name));
  return static_cast<int>(w);
}

int cmd_size(const target_args& a) {
  check_target(a.n, a.p);
  const auto rows = plans({a.n, a.p}, bloomery::filter_types{});
  if (a.json) {
    bloomery::support::json_writer w(bloomery::support::json_spaced);
    w.begin_object().key("capacity").integer(a.n).key("fpr").number(a.p);
    w.key("kinds").begin_array();
    for (const auto& r : rows) {
      w.begin_object().key("kind").string(r.kind);
      if (r.plan) {
        plan_members(w, *r.plan);
      } else {
        w.key("error").string(r.why_not);
      }
      w.end_object();
    }
    w.end_array().end_object();
    std::printf("%s\n", w.str().c_str());
    return 0;
  }
  std::printf("%llu keys at fpr %s\n", static_cast<unsigned long long>(a.n), fmt_real(a.p).c_str());
  const int w = kind_width();
  std::printf("%-*s %14s %9s %12s  %s\n", w, "kind", "bytes", "bits/key", "expected_fpr",
              "parameters");
  for (const auto& r : rows) {
    if (r.plan) {
      std::printf("%-*s %14llu %9.2f %12s  %s\n", w, r.kind,
                  static_cast<unsigned long long>(r.plan->bytes), r.plan->bits_per_key,
                  fmt_real(r.plan->expected_fpr).c_str(), r.plan->parameters.c_str());
    } else {
      std::printf("%-*s %14s %9s %12s  %s\n", w, r.kind, "-", "-", "-", r.why_not.c_str());
    }
  }
  return 0;
}

struct advise_args : target_args {
  bool deletes = false, static_set = false, grows = false;
  double key_bytes = 16;
};

int cmd_advise(const advise_args& a) {
  check_target(a.n, a.p);
  const auto ranked = bloomery::advise({.capacity = a.n,
                                        .fpr = a.p,
                                        .deletes = a.deletes,
                                        .static_set = a.static_set,
                                        .grows = a.grows,
                                        .key_bytes = a.key_bytes});
  if (a.json) {
    bloomery::support::json_writer w(bloomery::support::json_spaced);
    w.begin_array();
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      const auto& r = ranked[i];
      w.begin_object().key("rank").integer(i + 1).key("kind").string(r.kind);
      w.key("suitable").boolean(r.suitable);
      plan_members(w, r.plan);
      w.key("note").string(strip(r.note));
      w.end_object();
    }
    w.end_array();
    std::printf("%s\n", w.str().c_str());
    return 0;
  }
  const int w = kind_width();
  std::printf("%-4s %-*s %-8s %14s %9s  %s\n", "rank", w, "kind", "suitable", "bytes", "bits/key",
              "note");
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const auto& r = ranked[i];
    std::printf("%-4zu %-*s %-8s %14llu %9.2f  %s\n", i + 1, w, r.kind.c_str(),
                r.suitable ? "yes" : "no", static_cast<unsigned long long>(r.plan.bytes),
                r.plan.bits_per_key, strip(r.note).c_str());
  }
  return 0;
}

}  // namespace

command register_size(CLI::App& app) {
  auto a = std::make_shared<target_args>();
  CLI::App* cmd =
      add_target_command(app, "size", "memory and parameters of every kind for n keys at p", *a);
  cmd->add_flag("--json", a->json, "JSON output");
  cmd->footer(
      "Examples:\n  bloomery size -n 5000000 -p 0.01\n  bloomery size -n 1000000 -p 1e-4 --json");
  return {cmd, [a] { return cmd_size(*a); }};
}

command register_advise(CLI::App& app) {
  auto a = std::make_shared<advise_args>();
  CLI::App* cmd =
      add_target_command(app, "advise", "which filter kind to use, ranked by memory", *a);
  cmd->add_flag("--deletes", a->deletes, "keys are removed as well as added");
  cmd->add_flag("--static", a->static_set, "the key set is known once and never changes");
  cmd->add_flag("--grows", a->grows, "the key count may exceed -n many times");
  cmd->add_option("--key-bytes", a->key_bytes, "average key length (exact-set baseline)");
  cmd->add_flag("--json", a->json, "JSON output");
  cmd->footer(
      "Examples:\n  bloomery advise -n 1000000 -p 0.01 --deletes\n"
      "  bloomery advise -n 10000000 -p 0.001 --static --key-bytes 40 --json");
  return {cmd, [a] { return cmd_advise(*a); }};
}

}  // namespace bloomery_cli
