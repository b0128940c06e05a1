// bloomery query: like grep, the keys that are possibly present (-v: definitely absent).
#include <CLI/CLI.hpp>
#include <bloomery/bloomery.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "guava.hpp"
#include "keys.hpp"
#include "parallel.hpp"

namespace bloomery_cli {
namespace {

struct query_args {
  std::string file;
  format_args format;
  input_args in;
  bool invert = false;
  bool count = false;
};

int cmd_query(const query_args& a) {
  if (const auto funnel = guava_format(a.format, /*needs_funnel=*/true)) {
    return guava_query(a.file, *funnel, a.in, a.invert, a.count);
  }
  const bloomery::any_filter f = load_filter(a.file);
  std::uint64_t printed = 0;
  std::string out;
  std::vector<unsigned char> hits;
  const unsigned threads = thread_count(a.in.threads, /*inserting=*/false);
  const auto flush = [&] {
    if (!out.empty() && std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) {
      throw cli_error("cannot write to standard output");
    }
    out.clear();
  };
  read_keys(a.in.files, a.in.options("query"), [&](std::span<const std::string_view> keys) {
    hits.resize(keys.size());
    // Queries only read the filter, so the threads share it; each fills its own slice of hits.
    for_each_slice(keys.size(), threads, [&](unsigned, std::size_t begin, std::size_t end) {
      std::span<unsigned char> slice(hits.data() + begin, end - begin);
      f.may_contain_many(keys.subspan(begin, end - begin), slice);
    });
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if ((hits[i] != 0) == a.invert) continue;
      ++printed;
      if (!a.count) {
        out.append(keys[i]);
        out.push_back('\n');
      }
    }
    if (out.size() > (std::size_t{1} << 20)) flush();
  });
  flush();
  if (a.count) std::printf("%llu\n", static_cast<unsigned long long>(printed));
  return printed > 0 ? 0 : 1;
}

}  // namespace

command register_query(CLI::App& app) {
  auto a = std::make_shared<query_args>();
  CLI::App* cmd = app.add_subcommand(
      "query", "print the keys that are possibly present (like grep; -v: definitely absent)");
  cmd->add_option("file", a->file, "filter file")->required();
  cmd->add_flag("-v,--invert-match", a->invert, "print the keys that are definitely absent");
  cmd->add_flag("-c,--count", a->count, "print only the number of lines");
  add_format_options(cmd, a->format, /*with_funnel=*/true);
  add_input_options(cmd, a->in);
  cmd->footer(
      "Exit status: 0 when a line was printed (or counted), 1 when none, 2 on error.\n"
      "Examples:\n"
      "  bloomery query urls.bloom candidates.txt\n"
      "  bloomery query -v urls.bloom candidates.txt > certainly-new.txt\n"
      "  echo example.com | bloomery query -c urls.bloom\n"
      "  bloomery query --format guava --funnel string seen.guava candidates.txt");
  return {cmd, [a] { return cmd_query(*a); }};
}

}  // namespace bloomery_cli
