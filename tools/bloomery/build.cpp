// bloomery build: a new filter file from keys.
#include <CLI/CLI.hpp>
#include <bloomery/bloomery.hpp>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "guava.hpp"
#include "insert.hpp"
#include "keys.hpp"

namespace bloomery_cli {
namespace {

struct build_args {
  std::optional<std::uint64_t> n;
  double p = 0;
  std::string kind = "bloom";
  std::string seed;
  std::string out;
  format_args format;
  input_args in;
};

int cmd_build(const build_args& a) {
  if (const auto funnel = guava_format(a.format, /*needs_funnel=*/true)) {
    if (a.kind != "bloom" || !a.seed.empty()) {
      throw cli_error(
          "--kind and --seed do not apply to --format guava (Guava has one kind, unseeded)");
    }
    if (!a.n) throw cli_error("-n: the expected insertions are required for --format guava");
    return guava_build(*a.n, a.p, *funnel, a.out, a.in);
  }
  // --kind was checked against the table's names, so the lookup succeeds.
  const bloomery::filter_kind kind = bloomery::parse_filter_kind(a.kind).value();
  std::uint64_t keys = 0;
  std::optional<bloomery::any_filter> f;
  (void)bloomery::with_filter_type(kind, [&]<class F>() {
    // Kinds that take inserts are sized for -n keys; the others are built once from their key
    // set, sized by it.
    constexpr bool sized_for_n = bloomery::insertable_filter<F>;
    if (!a.n && sized_for_n) {
      throw cli_error("-n: the key capacity is required for --kind " + a.kind);
    }
    check_target(a.n, a.p);
    bloomery::hasher h = parse_seed(a.seed);
    if constexpr (sized_for_n) {
      F filter(bloomery::target{*a.n, a.p}, h);
      keys = insert_all(filter, a.in, a.out, "build");
      f.emplace(std::move(filter));
    } else {
      std::vector<std::string> all;
      read_keys(a.in.files, a.in.options("build"), [&](std::span<const std::string_view> batch) {
        for (const std::string_view k : batch) all.emplace_back(k);
      });
      keys = all.size();
      f.emplace(F::build(all, a.p, std::move(h)));
    }
  });
  save_filter(*f, a.out);
  if (!a.in.quiet) {
    std::fprintf(stderr, "bloomery: wrote %s: %s filter, %llu keys, %llu bytes\n",
                 quoted(a.out).c_str(), a.kind.c_str(), static_cast<unsigned long long>(keys),
                 static_cast<unsigned long long>(f->size_in_bytes()));
  }
  return 0;
}

}  // namespace

command register_build(CLI::App& app) {
  auto a = std::make_shared<build_args>();
  CLI::App* cmd = app.add_subcommand("build", "build a filter from keys, one per line");
  cmd->add_option("-n,--capacity", a->n, "keys the filter is sized for (static: optional)");
  cmd->add_option("-p,--fpr", a->p, "target false-positive rate, in (0, 1)")->required();
  cmd->add_option("--kind", a->kind, "filter kind: " + kind_names("|"))
      ->check(CLI::IsMember(kind_name_list()));
  cmd->add_option("--seed", a->seed, "hash seed (number) or 'random' for a keyed filter");
  cmd->add_option("-o,--output", a->out, "the filter file to write")->required();
  add_format_options(cmd, a->format, /*with_funnel=*/true);
  add_input_options(cmd, a->in);
  cmd->footer(
      "Examples:\n"
      "  bloomery build -n 1000000 -p 0.01 -o urls.bloom urls.txt\n"
      "  cut -d, -f1 export.csv | bloomery build -n 5000000 -p 0.001 --kind blocked -o ids.bf -\n"
      "  bloomery build -p 0.004 --kind static -o sstable.flt keys.txt\n"
      "  bloomery build -n 10000 -p 0.01 --field 2 --delimiter , -o f.bf data.csv\n"
      "  bloomery build --format guava --funnel long -n 100000 -p 0.01 -o ids.guava ids.txt");
  return {cmd, [a] { return cmd_build(*a); }};
}

}  // namespace bloomery_cli
