// bloomery add and bloomery remove: change a filter file in place (crash-safely: the library's
// save writes a temporary file and renames it over the old one), holding the file's lock from the
// read to the rename so that concurrent writers take turns.
#include <CLI/CLI.hpp>
#include <bloomery/bloomery.hpp>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "cli.hpp"
#include "insert.hpp"
#include "keys.hpp"

namespace bloomery_cli {
namespace {

struct filter_args {
  std::string file;
  input_args in;
  lock_args lock;
};

int cmd_add(const filter_args& a) {
  const bloomery::file_lock lock = lock_filter(a.file, a.lock);
  bloomery::any_filter f = load_filter(a.file);
  std::uint64_t keys = 0;
  f.visit([&]<class F>(F& x) {
    if constexpr (bloomery::insertable_filter<F>) {
      keys = insert_all(x, a.in, a.file, "add");
    } else {
      const std::string kind = bloomery::to_string(F::kind);
      throw cli_error(quoted(a.file) + ": a " + kind +
                      " filter takes no inserts; rebuild it with " + "'bloomery build --kind " +
                      kind + "'");
    }
  });
  save_filter(f, a.file);
  if (!a.in.quiet) {
    std::fprintf(stderr, "bloomery: added %llu keys to %s\n", static_cast<unsigned long long>(keys),
                 quoted(a.file).c_str());
  }
  return 0;
}

int cmd_remove(const filter_args& a) {
  const bloomery::file_lock lock = lock_filter(a.file, a.lock);
  bloomery::any_filter f = load_filter(a.file);
  std::uint64_t removed = 0, absent = 0;
  f.visit([&]<class F>(F& x) {
    if constexpr (bloomery::removable_filter<F>) {
      read_keys(a.in.files, a.in.options("remove"), [&](std::span<const std::string_view> keys) {
        for (const std::string_view k : keys) ++(x.remove(k) ? removed : absent);
      });
    } else {
      throw cli_error(quoted(a.file) + ": a " + std::string(bloomery::to_string(F::kind)) +
                      " filter cannot remove keys; only " +
                      kinds_where([]<class G>() { return bloomery::removable_filter<G>; }) +
                      " filters can");
    }
  });
  save_filter(f, a.file);
  if (absent != 0) {
    std::fprintf(stderr,
                 "bloomery: warning: %llu key(s) were definitely absent from %s and left as they "
                 "were\n",
                 static_cast<unsigned long long>(absent), quoted(a.file).c_str());
  }
  if (!a.in.quiet) {
    std::fprintf(stderr, "bloomery: removed %llu keys from %s\n",
                 static_cast<unsigned long long>(removed), quoted(a.file).c_str());
  }
  return 0;
}

}  // namespace

command register_add(CLI::App& app) {
  auto a = std::make_shared<filter_args>();
  CLI::App* cmd = app.add_subcommand("add", "add keys to a filter file, in place and crash-safely");
  cmd->add_option("file", a->file, "filter file")->required();
  add_input_options(cmd, a->in);
  add_lock_options(cmd, a->lock);
  cmd->footer(
      "Examples:\n  bloomery add urls.bloom new-urls.txt\n  echo key | bloomery add f.bf\n"
      "  bloomery add --wait-seconds 10 shared.bloom batch.txt");
  return {cmd, [a] { return cmd_add(*a); }};
}

command register_remove(CLI::App& app) {
  auto a = std::make_shared<filter_args>();
  CLI::App* cmd =
      app.add_subcommand("remove", "remove keys from a counting or (scalable) cuckoo filter file");
  cmd->add_option("file", a->file, "filter file")->required();
  add_input_options(cmd, a->in);
  add_lock_options(cmd, a->lock);
  cmd->footer("Examples:\n  bloomery remove sessions.cbf expired.txt");
  return {cmd, [a] { return cmd_remove(*a); }};
}

}  // namespace bloomery_cli
