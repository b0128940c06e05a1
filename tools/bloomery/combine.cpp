// bloomery merge and bloomery intersect: the union or intersection of compatible filter files.
#include <CLI/CLI.hpp>
#include <bloomery/bloomery.hpp>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "cli.hpp"

namespace bloomery_cli {
namespace {

// Whether F has the operation: union (|=) or intersection (&=).
template <bool Intersect, class F>
constexpr bool combinable =
    Intersect ? bloomery::intersectable_filter<F> : bloomery::mergeable_filter<F>;

template <bool Intersect>
int cmd_combine(const std::vector<std::string>& inputs, const std::string& out_file,
                const lock_args& lock_wait) {
  const std::string verb = Intersect ? "intersect" : "merge";
  if (inputs.size() < 2) {
    throw cli_error(verb + ": needs at least two input filters, got " +
                    std::to_string(inputs.size()));
  }
  // An existing output may be an input too (merge -o all.bf all.bf day.bf), a read-modify-write
  // like add's; a new one has no lock to take, nor earlier contents to lose.
  std::optional<bloomery::file_lock> lock;
  std::error_code ec;
  if (std::filesystem::is_regular_file(out_file, ec))
    lock.emplace(lock_filter(out_file, lock_wait));
  bloomery::any_filter acc = load_filter(inputs[0]);
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    const bloomery::any_filter next = load_filter(inputs[i]);
    const std::string pair = quoted(inputs[0]) + " and " + quoted(inputs[i]);
    if (acc.kind() != next.kind()) {
      throw cli_error("cannot " + verb + " " + pair + ": kinds differ (" +
                      bloomery::to_string(acc.kind()) + " vs " + bloomery::to_string(next.kind()) +
                      ")");
    }
    acc.visit([&]<class F>(F& a) {
      if constexpr (combinable<Intersect, F>) {
        const F& b = *next.get_if<F>();
        const std::string why = a.incompatibility(b);
        if (!why.empty()) throw cli_error("cannot " + verb + " " + pair + ": " + why);
        if constexpr (Intersect) {
          a &= b;
        } else {
          a |= b;
        }
      } else {
        throw cli_error("cannot " + verb + " " + pair + ": " + bloomery::to_string(F::kind) +
                        " filters do not support it; " + verb + " works on " +
                        kinds_where([]<class G>() { return combinable<Intersect, G>; }) +
                        " filters");
      }
    });
  }
  save_filter(acc, out_file);
  return 0;
}

template <bool Intersect>
command register_combine(CLI::App& app, const char* name, const char* description,
                         const char* example) {
  struct combine_args {
    std::vector<std::string> inputs;
    std::string out;
    lock_args lock;
  };
  auto a = std::make_shared<combine_args>();
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->add_option("-o,--output", a->out, "the filter file to write")->required();
  cmd->add_option("inputs", a->inputs, "two or more filter files")->required();
  add_lock_options(cmd, a->lock);
  cmd->footer(std::string("Examples:\n  ") + example);
  return {cmd, [a] { return cmd_combine<Intersect>(a->inputs, a->out, a->lock); }};
}

}  // namespace

command register_merge(CLI::App& app) {
  return register_combine<false>(app, "merge", "union of compatible filters",
                                 "bloomery merge -o all.bloom monday.bloom tuesday.bloom");
}

command register_intersect(CLI::App& app) {
  return register_combine<true>(app, "intersect", "intersection of compatible filters",
                                "bloomery intersect -o both.bloom a.bloom b.bloom");
}

}  // namespace bloomery_cli
