// What the commands of the bloomery tool share: the error they report, loading and saving filter
// files, --seed, the name/value printer of `info`, the kinds' names, and how a command plugs into
// main.cpp. Each command lives in its own file and registers its own options (docs/cli.md).
#pragma once

#include <bloomery/bloomery.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;  // files that add options include <CLI/CLI.hpp>; the per-kind explain files need not
}  // namespace CLI

namespace bloomery_cli {

// An error the tool reports as one line on standard error, with exit status 2.
class cli_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A subcommand, once registered: run() is called when it was the one given, and returns the exit
// status.
struct command {
  CLI::App* app;
  std::function<int()> run;
};

// The commands, in the order `bloomery --help` lists them; each is defined in its own file.
command register_build(CLI::App& app);
command register_add(CLI::App& app);
command register_remove(CLI::App& app);
command register_query(CLI::App& app);
command register_info(CLI::App& app);
command register_merge(CLI::App& app);
command register_intersect(CLI::App& app);
command register_size(CLI::App& app);
command register_advise(CLI::App& app);
command register_explain(CLI::App& app);
command register_bip37(CLI::App& app);
command register_parquet(CLI::App& app);

// The library's message without its "bloomery: " prefix (the tool adds its own), on one line.
std::string strip(std::string_view what);
std::string quoted(const std::string& path);

// A filter file of any kind. Errors name the file.
bloomery::any_filter load_filter(const std::string& path);
void save_filter(const bloomery::any_filter& f, const std::string& path);

// --no-wait and --wait-seconds N of the commands that replace a filter file (add, remove, merge,
// intersect): how long to wait while another writer holds the file's lock. Default: as long as
// it takes.
struct lock_args {
  bool no_wait = false;
  std::optional<double> wait_seconds;
};
void add_lock_options(CLI::App* cmd, lock_args& a);
// The lock on the existing filter file `path`, held from before it is read until after it is
// replaced, so that concurrent writers take turns instead of overwriting each other's changes.
// Throws cli_error when the wait `a` allows ends first, or when the file cannot be opened.
bloomery::file_lock lock_filter(const std::string& path, const lock_args& a);

// --seed: a number (decimal or 0x hex) for a seeded filter, or "random" for a keyed one.
bloomery::hasher parse_seed(const std::string& s);
// -n (when given) and -p.
void check_target(std::optional<std::uint64_t> n, double p);

// Numbers as the tool prints them (%.6g).
std::string fmt_real(double v);

// One name/value pair of `info`, as JSON and as text.
struct field {
  std::string name;
  std::string json;  // a JSON value (support/json.hpp)
  std::string text;
};
field num(std::string name, std::uint64_t v);
field real(std::string name, double v);
field str(std::string name, const std::string& v);
field boolean(std::string name, bool v);
field null(std::string name, std::string text);
// One JSON object, or aligned "name:  value" lines.
void print_fields(const std::vector<field>& fields, bool json);

// The kinds' names from the library's table: "bloom|blocked|...", and the list --kind accepts.
std::string kind_names(const char* separator);
std::vector<std::string> kind_name_list();

// "bloom, blocked and counting": the kinds whose type F makes pred.template operator()<F>()
// true, in the table's order (for messages that say which kinds can do something).
template <class Pred, class... Fs>
std::string kinds_where(Pred pred, bloomery::type_list<Fs...>) {
  std::vector<std::string> names;
  ((pred.template operator()<Fs>() ? (void)names.emplace_back(bloomery::to_string(Fs::kind))
                                   : void()),
   ...);
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  }
  return s;
}
template <class Pred>
std::string kinds_where(Pred pred) {
  return kinds_where(pred, bloomery::filter_types{});
}

}  // namespace bloomery_cli
