// bloomery: the command-line tool (docs/cli.md). A thin layer over the library: sizing, hashing,
// the filters and their file format all come from include/bloomery. Each command has its own
// file, which registers its options next to the code that reads them; this one wires them up.
#include <CLI/CLI.hpp>
#include <bloomery/bloomery.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli.hpp"

namespace bloomery_cli {
namespace {

bool is_command(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->check_name(name)) return true;
  }
  return false;
}

int run(int argc, char** argv) {
  CLI::App app{"bloomery: build, query and inspect approximate membership filters"};
  app.set_version_flag("--version", std::string("bloomery ") + bloomery::version_string);
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  bloomery build -n 1000000 -p 0.01 -o urls.bloom urls.txt\n"
      "  bloomery query urls.bloom candidates.txt\n"
      "  bloomery info --json urls.bloom\n"
      "  bloomery size -n 5000000 -p 0.01\n"
      "Exit status: 0 success (query: a line was printed), 1 query printed nothing, 2 error.\n"
      "Run 'bloomery COMMAND --help' for a command's options and examples.");
  // In the order --help lists them (a braced list is evaluated left to right).
  const std::vector<command> commands{
      register_build(app),  register_add(app),     register_remove(app),    register_query(app),
      register_info(app),   register_merge(app),   register_intersect(app), register_size(app),
      register_advise(app), register_explain(app), register_bip37(app),     register_parquet(app)};

  // CLI11 would report an unknown command as "A subcommand is required"; name it instead.
  if (argc > 1 && argv[1][0] != '-' && !is_command(app, argv[1])) {
    throw cli_error(std::string("'") + argv[1] + "': unknown command; run 'bloomery --help'");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    throw cli_error(strip(e.what()));
  }
  for (const command& c : commands) {
    if (c.app->parsed()) return c.run();
  }
  throw cli_error("no command given; run 'bloomery --help'");
}

}  // namespace
}  // namespace bloomery_cli

int main(int argc, char** argv) {
  try {
    return bloomery_cli::run(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "bloomery: error: %s\n", bloomery_cli::strip(e.what()).c_str());
    return 2;
  }
}
