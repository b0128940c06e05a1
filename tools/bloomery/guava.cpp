// --format guava for build, query and info: Guava BloomFilter streams through the library's
// interop/guava.hpp, with the same input handling, output and exit codes as bloomery's own files.
#include "guava.hpp"

#include <CLI/CLI.hpp>
#include <bloomery/bloomery.hpp>
#include <bloomery/support/json.hpp>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "cli.hpp"
#include "parallel.hpp"

namespace bloomery_cli {
namespace {

namespace guava = bloomery::interop::guava;

bool integer_funnel(guava::funnel f) {
  return f == guava::funnel::int64 || f == guava::funnel::int32;
}

// A key line of the long or int funnel as Java's Long.parseLong / Integer.parseInt read it: an
// optional sign and decimal digits, in range; nullopt otherwise.
std::optional<std::int64_t> parse_java_integer(std::string_view s, guava::funnel f) {
  // from_chars takes a leading '-' but not a '+', which Java also accepts.
  if (s.starts_with('+')) {
    s.remove_prefix(1);
    if (s.starts_with('-')) return std::nullopt;
  }
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  if (f == guava::funnel::int32 && (v < INT32_MIN || v > INT32_MAX)) return std::nullopt;
  return v;
}

// Refuses, naming the file and line, a key the funnel cannot take: a line that is not an integer
// of the funnel's width, or text that is not UTF-8 for the chars funnel (there is no Java String
// it could have come from). Runs in the key reader, which knows the line.
key_options checked_keys(key_options opts, guava::funnel f) {
  if (f == guava::funnel::string) return opts;
  opts.check = [f](std::string_view key, const std::string& file, std::uint64_t line) {
    const auto where = [&] { return "'" + file + "' line " + std::to_string(line) + ": "; };
    if (integer_funnel(f)) {
      if (!parse_java_integer(key, f)) {
        throw cli_error(where() + "'" + std::string(key) + "' is not a " +
                        (f == guava::funnel::int64 ? "64" : "32") +
                        "-bit signed decimal integer (the " + std::string(guava::to_string(f)) +
                        " funnel takes one per line)");
      }
      return;
    }
    thread_local std::string units;
    try {
      guava::utf8_to_utf16le(key, units);
    } catch (const std::invalid_argument& e) {
      throw cli_error(where() + strip(e.what()));
    }
  };
  return opts;
}

// The filter's answer for one key line (already checked by checked_keys).
bool guava_contains(const guava::bloom_filter& f, std::string_view key) {
  if (integer_funnel(f.key_funnel()))
    return f.may_contain(*parse_java_integer(key, f.key_funnel()));
  return f.may_contain(key);
}

guava::bloom_filter load_guava(const std::string& file, guava::funnel funnel) {
  try {
    return guava::bloom_filter::load(file, funnel);
  } catch (const std::system_error& e) {
    throw cli_error(quoted(file) + ": cannot read Guava stream: " + e.code().message());
  } catch (const std::exception& e) {
    throw cli_error(quoted(file) + ": " + strip(e.what()));
  }
}

}  // namespace

void add_format_options(CLI::App* cmd, format_args& a, bool with_funnel) {
  cmd->add_option("--format", a.format,
                  "file format: bloomery (default), or guava: a Guava BloomFilter stream "
                  "(BloomFilter.writeTo)")
      ->check(CLI::IsMember({"bloomery", "guava"}));
  if (with_funnel) {
    cmd->add_option("--funnel", a.funnel,
                    "with --format guava: the Guava funnel of the keys: string (UTF-8 bytes), "
                    "chars (UTF-16 code units), long, int (one decimal integer per line)")
        ->check(CLI::IsMember({"string", "chars", "long", "int"}));
  }
}

std::optional<guava::funnel> guava_format(const format_args& a, bool needs_funnel) {
  if (a.format != "guava") {
    if (!a.funnel.empty()) throw cli_error("--funnel applies only with --format guava");
    return std::nullopt;
  }
  if (a.funnel.empty()) {
    if (needs_funnel) {
      throw cli_error(
          "--format guava needs --funnel string|chars|long|int: a Guava stream does not record "
          "the funnel its keys went through");
    }
    return guava::funnel::string;  // info reads no keys
  }
  return guava::parse_funnel(a.funnel).value();  // --funnel was checked against the names
}

int guava_query(const std::string& file, guava::funnel funnel, const input_args& in, bool invert,
                bool count) {
  const guava::bloom_filter f = load_guava(file, funnel);
  std::uint64_t printed = 0;
  std::string out;
  std::vector<unsigned char> hits;
  const unsigned threads = thread_count(in.threads, /*inserting=*/false);
  const auto flush = [&] {
    if (!out.empty() && std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) {
      throw cli_error("cannot write to standard output");
    }
    out.clear();
  };
  read_keys(in.files, checked_keys(in.options("query"), funnel),
            [&](std::span<const std::string_view> keys) {
              hits.resize(keys.size());
              // Queries only read the filter; each thread fills its own slice of hits.
              for_each_slice(keys.size(), threads,
                             [&](unsigned, std::size_t begin, std::size_t end) {
                               for (std::size_t i = begin; i < end; ++i)
                                 hits[i] = guava_contains(f, keys[i]);
                             });
              for (std::size_t i = 0; i < keys.size(); ++i) {
                if ((hits[i] != 0) == invert) continue;
                ++printed;
                if (!count) {
                  out.append(keys[i]);
                  out.push_back('\n');
                }
              }
              if (out.size() > (std::size_t{1} << 20)) flush();
            });
  flush();
  if (count) std::printf("%llu\n", static_cast<unsigned long long>(printed));
  return printed > 0 ? 0 : 1;
}

int guava_build(std::uint64_t n, double p, guava::funnel funnel, const std::string& out,
                const input_args& in) {
  std::optional<guava::bloom_filter> f;
  try {
    f.emplace(n, p, funnel);
  } catch (const std::invalid_argument& e) {
    throw cli_error(strip(e.what()));
  }
  std::uint64_t keys = 0;
  read_keys(in.files, checked_keys(in.options("build"), funnel),
            [&](std::span<const std::string_view> batch) {
              for (const std::string_view k : batch) {
                if (integer_funnel(funnel)) {
                  (void)f->insert(*parse_java_integer(k, funnel));
                } else {
                  (void)f->insert(k);
                }
              }
              keys += batch.size();
            });
  try {
    f->save(out);
  } catch (const std::system_error& e) {
    throw cli_error(strip(e.what()));
  }
  if (!in.quiet) {
    std::fprintf(stderr,
                 "bloomery: wrote %s: Guava BloomFilter stream (%s, funnel %s), %llu keys, %llu "
                 "bytes\n",
                 quoted(out).c_str(), std::string(guava::to_string(f->hash_strategy())).c_str(),
                 std::string(guava::to_string(funnel)).c_str(),
                 static_cast<unsigned long long>(keys),
                 static_cast<unsigned long long>(f->stream_size()));
  }
  return 0;
}

int guava_info(const std::string& file, bool json) {
  const guava::bloom_filter f = load_guava(file, guava::funnel::string);
  std::vector<field> out;
  out.push_back(str("format", "guava"));
  out.push_back(str("strategy", std::string(guava::to_string(f.hash_strategy()))));
  out.push_back(num("hashes", f.hashes()));
  out.push_back(num("bits", f.bits()));
  out.push_back(num("size_in_bytes", f.stream_size()));
  out.push_back(num("bits_set", f.bits_set()));
  out.push_back(
      real("fill_ratio", static_cast<double>(f.bits_set()) / static_cast<double>(f.bits())));
  out.push_back(f.bits_set() == f.bits() ? null("approximate_count", "- (every bit is set)")
                                         : num("approximate_count", f.approximate_count()));
  // Every digit in JSON, so a script can compare it with Guava's expectedFpp().
  out.push_back({"estimated_fpr", bloomery::support::json_number(f.estimated_fpr(), "%.17g"),
                 fmt_real(f.estimated_fpr())});
  print_fields(out, json);
  return 0;
}

}  // namespace bloomery_cli
