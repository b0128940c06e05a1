// Reading keys for the bloomery tool: one key per line from files or standard input, in large
// reads with no per-line allocation. CRLF line ends are accepted, empty lines skipped, and keys
// are bytes (no encoding is assumed). Optionally one column of CSV/TSV input (--field/--delimiter).
// Also the input options every command that reads keys shares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"

namespace bloomery_cli {

struct key_options {
  std::uint32_t field = 0;  // 1-based column; 0 takes the whole line
  char delimiter = '\t';
  // Label of a progress bar on standard error ("build", "query", ...); empty: none. The bar is
  // drawn only when standard error is a terminal, at most 10 times a second, and erased at the end.
  std::string progress;
  // When set, called for every key with its file and line number, in the thread that reads the
  // input: throws cli_error to refuse a key its command cannot take (an error naming the line).
  std::function<void(std::string_view key, const std::string& file, std::uint64_t line)> check;
};

// Calls `batch` with consecutive batches of keys read from `files` ("-" or none: standard input).
// The views are valid only during the call. Throws cli_error naming the file on any failure.
void read_keys(const std::vector<std::string>& files, const key_options& opts,
               const std::function<void(std::span<const std::string_view>)>& batch);

// The key files and the options of build, add, remove and query.
struct input_args {
  std::vector<std::string> files;
  std::uint32_t field = 0;
  std::string delimiter = "\t";
  bool quiet = false;
  unsigned threads = 0;  // 0: automatic, see thread_count()

  // `label` names the progress bar drawn on a terminal (none with --quiet).
  key_options options(const char* label) const;
};

// The positional KEYFILE... (after the command's own positionals) and --field, --delimiter, -q,
// --threads.
void add_input_options(CLI::App* cmd, input_args& in);

}  // namespace bloomery_cli
