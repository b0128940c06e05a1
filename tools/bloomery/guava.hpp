// --format guava: build, query and info on Guava BloomFilter streams (the library's
// interop/guava.hpp) instead of bloomery's own files. The commands' files add the options with
// add_format_options() and hand over to the functions here when --format guava is given.
#pragma once

#include <bloomery/interop/guava.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "keys.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace bloomery_cli {

// --format bloomery|guava and --funnel string|chars|long|int.
struct format_args {
  std::string format = "bloomery";
  std::string funnel;
};
// `with_funnel`: the command reads keys, so a Guava stream needs its funnel named.
void add_format_options(CLI::App* cmd, format_args& a, bool with_funnel);
// The funnel when --format guava is given, nullopt for bloomery's format. Throws cli_error for
// --funnel without --format guava, and for a missing --funnel where the command needs one.
std::optional<bloomery::interop::guava::funnel> guava_format(const format_args& a,
                                                             bool needs_funnel);

int guava_query(const std::string& file, bloomery::interop::guava::funnel funnel,
                const input_args& in, bool invert, bool count);
int guava_build(std::uint64_t n, double p, bloomery::interop::guava::funnel funnel,
                const std::string& out, const input_args& in);
int guava_info(const std::string& file, bool json);

}  // namespace bloomery_cli
