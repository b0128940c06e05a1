// bloomery info: a filter file described from its filter_stats, the same fields for every kind
// and then the kind's own parameters.
#include <CLI/CLI.hpp>
#include <bloomery/bloomery.hpp>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "cli.hpp"
#include "guava.hpp"

namespace bloomery_cli {
namespace {

field param_field(const bloomery::filter_param& p) {
  return std::visit(
      [&](auto v) {
        using T = decltype(v);
        if constexpr (std::is_same_v<T, bool>) {
          return boolean(p.name, v);
        } else if constexpr (std::is_same_v<T, double>) {
          return real(p.name, v);
        } else {
          return num(p.name, v);
        }
      },
      p.value);
}

int cmd_info(const std::string& file, bool json) {
  const bloomery::filter_stats s = load_filter(file).stats();
  std::vector<field> out;
  out.push_back(str("kind", bloomery::to_string(s.kind)));
  out.push_back(num("bits", s.bits));
  out.push_back(s.hashes ? num("hashes", *s.hashes) : null("hashes", "- (fingerprint filter)"));
  out.push_back(s.keyed ? null("seed", "- (keyed with a secret key)") : num("seed", s.seed));
  out.push_back(str("hash", bloomery::to_string(s.hash)));
  out.push_back(num("size_in_bytes", s.size_in_bytes));
  out.push_back(real("bits_per_key", s.bits_per_key()));
  out.push_back(num("capacity", s.capacity));
  out.push_back(num("inserted", s.inserted));
  out.push_back(num("approximate_count", s.approximate_count));
  out.push_back(s.fill_ratio ? real("fill_ratio", *s.fill_ratio) : null("fill_ratio", "-"));
  out.push_back(real("target_fpr", s.target_fpr));
  out.push_back(real("estimated_fpr", s.estimated_fpr));
  for (const bloomery::filter_param& p : s.params) out.push_back(param_field(p));
  if (s.over_capacity) {
    std::fprintf(stderr,
                 "bloomery: warning: %s holds about %llu keys, past its capacity of %llu; its "
                 "false-positive rate (%s) is above the target (%s)\n",
                 quoted(file).c_str(), static_cast<unsigned long long>(s.approximate_count),
                 static_cast<unsigned long long>(s.capacity), fmt_real(s.estimated_fpr).c_str(),
                 fmt_real(s.target_fpr).c_str());
  }
  std::fflush(stderr);
  print_fields(out, json);
  return 0;
}

}  // namespace

command register_info(CLI::App& app) {
  struct info_args {
    std::string file;
    bool json = false;
    format_args format;
  };
  auto a = std::make_shared<info_args>();
  CLI::App* cmd = app.add_subcommand("info", "describe a filter file");
  cmd->add_option("file", a->file, "filter file")->required();
  cmd->add_flag("--json", a->json, "one JSON object on standard output");
  add_format_options(cmd, a->format, /*with_funnel=*/false);
  cmd->footer(
      "Examples:\n  bloomery info urls.bloom\n  bloomery info --json urls.bloom\n"
      "  bloomery info --format guava seen.guava");
  return {cmd, [a] {
            if (guava_format(a->format, /*needs_funnel=*/false))
              return guava_info(a->file, a->json);
            return cmd_info(a->file, a->json);
          }};
}

}  // namespace bloomery_cli
