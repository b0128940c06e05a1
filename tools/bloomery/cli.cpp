#include "cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <bloomery/support/json.hpp>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <system_error>
#include <utility>

namespace bloomery_cli {

std::string strip(std::string_view what) {
  constexpr std::string_view prefix = "bloomery: ";
  if (what.starts_with(prefix)) what.remove_prefix(prefix.size());
  std::string s(what);
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

std::string quoted(const std::string& path) {
  return "'" + path + "'";
}

// read_filter_file and deserialize_any rather than load_any, so the messages keep the tool's form
// ("'FILE': what is wrong") and I/O errors say "cannot read filter file".
bloomery::any_filter load_filter(const std::string& path) {
  try {
    return bloomery::deserialize_any(bloomery::read_filter_file(path));
  } catch (const std::system_error& e) {
    throw cli_error(quoted(path) + ": cannot read filter file: " + e.code().message());
  } catch (const std::exception& e) {
    throw cli_error(quoted(path) + ": " + strip(e.what()));
  }
}

void save_filter(const bloomery::any_filter& f, const std::string& path) {
  try {
    bloomery::save(f, path);
  } catch (const std::system_error& e) {
    throw cli_error(strip(e.what()));
  }
}

// A year: far beyond any real wait, and small enough that its nanoseconds fit in 64 bits.
constexpr double max_wait_seconds = 365.0 * 24 * 3600;

void add_lock_options(CLI::App* cmd, lock_args& a) {
  CLI::Option* no_wait = cmd->add_flag(
      "--no-wait", a.no_wait,
      "fail at once (exit status 2) if another writer holds the file's lock, instead of waiting");
  cmd->add_option("--wait-seconds", a.wait_seconds,
                  "wait at most N seconds for another writer's lock on the file, then fail (exit "
                  "status 2); default: wait as long as it takes")
      ->check(CLI::Range(0.0, max_wait_seconds))
      ->excludes(no_wait);
}

bloomery::file_lock lock_filter(const std::string& path, const lock_args& a) {
  try {
    if (!a.no_wait && !a.wait_seconds) return bloomery::file_lock(path);
    const double seconds = a.no_wait ? 0.0 : *a.wait_seconds;
    std::optional<bloomery::file_lock> lock = bloomery::file_lock::try_lock_for(
        path, std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::duration<double>(seconds)));
    if (lock) return std::move(*lock);
  } catch (const std::system_error& e) {
    // The lock is taken by opening the file for reading, so its errors are load_filter's.
    throw cli_error(quoted(path) + ": cannot read filter file: " + e.code().message());
  }
  throw cli_error(
      quoted(path) + ": another writer holds its lock" +
      (a.no_wait ? std::string("; not waiting (--no-wait)")
                 : "; still held after " + fmt_real(*a.wait_seconds) + " s (--wait-seconds)"));
}

bloomery::hasher parse_seed(const std::string& s) {
  if (s.empty()) return {};
  if (s == "random") return bloomery::hasher(bloomery::random_key());
  try {
    std::size_t used = 0;
    const unsigned long long v = std::stoull(s, &used, 0);
    if (used == s.size() && s[0] != '-') return bloomery::hasher(static_cast<std::uint64_t>(v));
  } catch (const std::exception&) {
  }
  throw cli_error("--seed: '" + s + "' is not an unsigned 64-bit number or 'random'");
}

void check_target(std::optional<std::uint64_t> n, double p) {
  if (n) bloomery::check_capacity(*n, "-n");
  bloomery::check_fpr(p, "-p");
}

std::string fmt_real(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

field num(std::string name, std::uint64_t v) {
  return {std::move(name), std::to_string(v), std::to_string(v)};
}
field real(std::string name, double v) {
  return {std::move(name), bloomery::support::json_number(v), fmt_real(v)};
}
field str(std::string name, const std::string& v) {
  return {std::move(name), bloomery::support::json_quote(v), v};
}
field boolean(std::string name, bool v) {
  return {std::move(name), v ? "true" : "false", v ? "yes" : "no"};
}
field null(std::string name, std::string text) {
  return {std::move(name), "null", std::move(text)};
}

void print_fields(const std::vector<field>& fields, bool json) {
  if (json) {
    bloomery::support::json_writer w(bloomery::support::json_spaced);
    w.begin_object();
    for (const auto& f : fields) w.key(f.name).raw(f.json);
    w.end_object();
    std::printf("%s\n", w.str().c_str());
    return;
  }
  std::size_t width = 0;
  for (const auto& f : fields) width = std::max(width, f.name.size());
  for (const auto& f : fields) {
    std::printf("%-*s  %s\n", static_cast<int>(width + 1), (f.name + ":").c_str(), f.text.c_str());
  }
}

std::string kind_names(const char* separator) {
  std::string s;
  for (const bloomery::kind_info& k : bloomery::filter_kinds) {
    s += (s.empty() ? "" : separator) + std::string(k.name);
  }
  return s;
}

std::vector<std::string> kind_name_list() {
  std::vector<std::string> names;
  for (const bloomery::kind_info& k : bloomery::filter_kinds) names.emplace_back(k.name);
  return names;
}

}  // namespace bloomery_cli
