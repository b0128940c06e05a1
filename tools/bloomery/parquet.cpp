// bloomery parquet info|probe: the split-block Bloom filters of a Parquet file's column chunks
// (the library's interop/parquet.hpp), read from its footer and filters alone; which row groups
// may hold a key.
#include <CLI/CLI.hpp>
#include <bloomery/interop/parquet.hpp>
#include <bloomery/support/json.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "cli.hpp"
#include "keys.hpp"

namespace bloomery_cli {
namespace {

namespace pq = bloomery::interop::parquet;
using bloomery::support::json_quote;

// Runs `fn` and turns the library's errors into the tool's, naming the file.
template <class Fn>
auto on_parquet(const std::string& file, Fn&& fn) {
  try {
    return fn();
  } catch (const cli_error&) {
    throw;
  } catch (const std::system_error& e) {
    throw cli_error(quoted(file) + ": cannot read Parquet file: " + e.code().message());
  } catch (const std::exception& e) {
    throw cli_error(quoted(file) + ": " + strip(e.what()));
  }
}

void write_out(const std::string& s) {
  if (std::fwrite(s.data(), 1, s.size(), stdout) != s.size()) {
    throw cli_error("cannot write to standard output");
  }
}

int cmd_parquet_info(const std::string& file, bool json) {
  const pq::parquet_file f = on_parquet(file, [&] { return pq::parquet_file::open(file); });
  std::string out = json ? "{\"file\": " + json_quote(file) + ", \"chunks\": [" : "";
  bool first = true;
  for (std::size_t g = 0; g < f.row_groups().size(); ++g) {
    for (std::size_t c = 0; c < f.row_groups()[g].columns.size(); ++c) {
      const pq::column_chunk& chunk = f.row_groups()[g].columns[c];
      const auto loc = on_parquet(file, [&] { return f.bloom_filter_location(g, c); });
      const std::string type(pq::to_string(chunk.type));
      const auto number = [&](auto v, const char* none) {
        return loc ? std::to_string(v) : std::string(none);
      };
      if (json) {
        out += std::string(first ? "" : ", ") + "{\"row_group\": " + std::to_string(g) +
               ", \"column\": " + json_quote(chunk.path) + ", \"type\": " + json_quote(type) +
               ", \"bloom_filter\": " + (loc ? "true" : "false") +
               ", \"offset\": " + number(loc ? loc->offset : 0, "null") +
               ", \"length\": " + number(loc ? loc->length() : 0, "null") +
               ", \"blocks\": " + number(loc ? loc->bitset_bytes / 32 : 0, "null") + "}";
      } else {
        out += std::to_string(g) + "\t" + chunk.path + "\t" + type + "\t" + (loc ? "yes" : "no") +
               "\t" + number(loc ? loc->offset : 0, "-") + "\t" +
               number(loc ? loc->length() : 0, "-") + "\t" +
               number(loc ? loc->bitset_bytes / 32 : 0, "-") + "\n";
      }
      first = false;
    }
  }
  if (json) out += "]}\n";
  write_out(out);
  return 0;
}

struct probe_args {
  std::string file;
  std::string column;
  std::vector<std::string> keys;
  bool json = false;
};

int cmd_parquet_probe(const probe_args& a) {
  const pq::parquet_file f = on_parquet(a.file, [&] { return pq::parquet_file::open(a.file); });
  const std::optional<std::size_t> index = f.column_index(a.column);
  if (!index) {
    std::string names;
    if (!f.row_groups().empty()) {
      for (const pq::column_chunk& c : f.row_groups()[0].columns) {
        names += (names.empty() ? "" : ", ") + c.path;
      }
    }
    throw cli_error(quoted(a.file) + ": no column '" + a.column + "'" +
                    (names.empty() ? " (the file has no row groups)" : "; its columns: " + names));
  }
  const pq::physical_type type = f.row_groups()[0].columns[*index].type;
  if (!pq::has_keys(type)) {
    throw cli_error(quoted(a.file) + ": column '" + a.column + "' is " +
                    std::string(pq::to_string(type)) +
                    "; bloomery probes BYTE_ARRAY, INT32, INT64, FLOAT and DOUBLE columns");
  }
  std::vector<std::optional<pq::split_block_filter>> filters;
  for (std::size_t g = 0; g < f.row_groups().size(); ++g) {
    filters.push_back(on_parquet(a.file, [&] { return f.bloom_filter(g, *index); }));
  }
  const std::string type_name(pq::to_string(type));
  bool any_maybe = false;
  bool first = true;
  std::string out = a.json ? "{\"file\": " + json_quote(a.file) +
                                 ", \"column\": " + json_quote(a.column) +
                                 ", \"type\": " + json_quote(type_name) + ", \"results\": ["
                           : "";
  const auto probe = [&](std::string_view key) {
    const std::optional<std::uint64_t> h = pq::hash_text_key(type, key);
    if (!h) {
      throw cli_error("key '" + std::string(key) + "' is not a value of column '" + a.column +
                      "' (" + type_name + ")");
    }
    for (std::size_t g = 0; g < filters.size(); ++g) {
      const char* result = !filters[g]                        ? "no-filter"
                           : filters[g]->may_contain_hash(*h) ? "maybe"
                                                              : "absent";
      any_maybe = any_maybe || result[0] != 'a';
      if (a.json) {
        out += std::string(first ? "" : ", ") + "{\"key\": " + json_quote(key) +
               ", \"row_group\": " + std::to_string(g) + ", \"result\": \"" + result + "\"}";
      } else {
        out.append(key).append("\t").append(std::to_string(g)).append("\t").append(result);
        out.push_back('\n');
      }
      first = false;
    }
    if (!a.json && out.size() > (std::size_t{1} << 20)) {
      write_out(out);
      out.clear();
    }
  };
  if (!a.keys.empty()) {
    for (const std::string& k : a.keys) probe(k);
  } else {
    read_keys({}, key_options{}, [&](std::span<const std::string_view> keys) {
      for (const std::string_view k : keys) probe(k);
    });
  }
  if (a.json) out += "]}\n";
  write_out(out);
  return any_maybe ? 0 : 1;
}

}  // namespace

command register_parquet(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "parquet", "the Bloom filters of a Parquet file's column chunks: list them, probe keys");
  cmd->require_subcommand(1);
  struct info_args {
    std::string file;
    bool json = false;
  };
  auto info = std::make_shared<info_args>();
  CLI::App* info_cmd =
      cmd->add_subcommand("info", "one line per row group and column: type, Bloom filter, size");
  info_cmd->add_option("file", info->file, "Parquet file")->required();
  info_cmd->add_flag("--json", info->json, "one JSON object on standard output");
  auto probe = std::make_shared<probe_args>();
  CLI::App* probe_cmd = cmd->add_subcommand(
      "probe", "for each key and row group: absent (the filter rules it out), maybe or no-filter");
  probe_cmd->add_option("--column", probe->column, "the column, by its dotted path")->required();
  probe_cmd->add_flag("--json", probe->json, "one JSON object on standard output");
  probe_cmd->add_option("file", probe->file, "Parquet file")->required();
  probe_cmd->add_option("keys", probe->keys,
                        "keys (none: one per line from standard input); '--' before keys that "
                        "start with '-'");
  cmd->footer(
      "Exit status (probe): 0 when some answer is maybe or no-filter, 1 when every answer is "
      "absent, 2 on error.\n"
      "Examples:\n"
      "  bloomery parquet info events.parquet\n"
      "  bloomery parquet probe --column user_id events.parquet 42 1337\n"
      "  bloomery parquet probe --column url --json events.parquet < urls.txt");
  return {cmd, [cmd, info_cmd, info, probe] {
            (void)cmd;
            if (info_cmd->parsed()) return cmd_parquet_info(info->file, info->json);
            return cmd_parquet_probe(*probe);
          }};
}

}  // namespace bloomery_cli
