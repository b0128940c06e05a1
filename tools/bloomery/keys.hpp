// Reading keys for the bloomery tool: one key per line from files or standard input, in large
// reads with no per-line allocation. CRLF line ends are accepted, empty lines skipped, and keys
// are bytes (no encoding is assumed). Optionally one column of CSV/TSV input (--field/--delimiter).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace bloomery_cli {

// An error the tool reports as one line on standard error, with exit status 2.
class cli_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct key_options {
  std::uint32_t field = 0;  // 1-based column; 0 takes the whole line
  char delimiter = '\t';
  // Label of a progress bar on standard error ("build", "query", ...); empty: none. The bar is
  // drawn only when standard error is a terminal, at most 10 times a second, and erased at the end.
  std::string progress;
};

// Calls `batch` with consecutive batches of keys read from `files` ("-" or none: standard input).
// The views are valid only during the call. Throws cli_error naming the file on any failure.
void read_keys(const std::vector<std::string>& files, const key_options& opts,
               const std::function<void(std::span<const std::string_view>)>& batch);

}  // namespace bloomery_cli
