// bloomery bip37: builds a Bitcoin BIP37 filter from hex elements and prints its `filterload` body
// as hex, or answers for hex elements against such a body (include/bloomery/bip37.hpp).
#include <CLI/CLI.hpp>
#include <bloomery/bip37.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "cli.hpp"

namespace bloomery_cli {
namespace {
namespace bip37_command {  // a namespace of its own: the tool compiles as one unity source

struct args {
  std::string elements, fpr, tweak = "0", flags = "0", filter;
  std::vector<std::string> hex;       // positional: the elements to insert
  std::vector<std::string> contains;  // the elements to test
  CLI::App* cmd = nullptr;
};

bool given(const args& a, const char* option) {
  return a.cmd->count(option) > 0;
}

// The bytes of a hex string (either case). `what` names it in errors.
std::vector<std::uint8_t> from_hex(const std::string& s, const std::string& what) {
  if (s.size() % 2 != 0) {
    throw cli_error(what + ": odd number of hex digits (" + std::to_string(s.size()) + ")");
  }
  const auto digit = [&](std::size_t i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw cli_error(what + ": '" + std::string(1, c) + "' at position " + std::to_string(i + 1) +
                    " is not a hex digit");
  };
  std::vector<std::uint8_t> out(s.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<std::uint8_t>(digit(2 * i) << 4 | digit(2 * i + 1));
  }
  return out;
}

std::string to_hex(const std::vector<std::uint8_t>& bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const std::uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

// A whole-string unsigned number in [low, high]: decimal, or hex after 0x.
std::uint64_t number(const std::string& s, const char* option, std::uint64_t low,
                     std::uint64_t high, const std::string& allowed) {
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const std::string digits = hex ? s.substr(2) : s;
  const bool well_formed =
      !digits.empty() &&
      digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") == std::string::npos;
  if (!well_formed)
    throw cli_error(std::string(option) + ": '" + s +
                    "' is not an unsigned number (decimal, or hex after 0x)");
  errno = 0;
  const unsigned long long v = std::strtoull(digits.c_str(), nullptr, hex ? 16 : 10);
  if (errno == ERANGE || v < low || v > high) {
    throw cli_error(std::string(option) + " = " + s + " is invalid; " + allowed);
  }
  return v;
}

int build(const args& a) {
  if (given(a, "--contains")) throw cli_error("--contains needs --filter: the filter to query");
  if (!given(a, "--elements") && !given(a, "--fpr")) {
    throw cli_error("give --elements and --fpr to build a filter, or --filter to query one");
  }
  if (!given(a, "--elements") || !given(a, "--fpr")) {
    throw cli_error("--elements and --fpr go together: both size the filter");
  }
  const std::uint64_t n =
      number(a.elements, "--elements", 1, 0xFFFFFFFF, "allowed range is [1, 4294967295]");
  char* end = nullptr;
  const double p = std::strtod(a.fpr.c_str(), &end);
  if (a.fpr.empty() || *end != '\0') throw cli_error("--fpr: '" + a.fpr + "' is not a number");
  if (!(p > 0 && p < 1)) {
    throw cli_error("--fpr = " + a.fpr + " is invalid; allowed range is (0, 1), exclusive");
  }
  const auto tweak = static_cast<std::uint32_t>(
      number(a.tweak, "--tweak", 0, 0xFFFFFFFF, "allowed range is [0, 4294967295]"));
  const auto flags = static_cast<bloomery::bip37_update>(
      number(a.flags, "--flags", 0, 2,
             "allowed are 0 (BLOOM_UPDATE_NONE), 1 (BLOOM_UPDATE_ALL) and 2 "
             "(BLOOM_UPDATE_P2PUBKEY_ONLY)"));
  // Every element is parsed before any output, so an error prints nothing on standard output.
  std::vector<std::vector<std::uint8_t>> elements;
  for (std::size_t i = 0; i < a.hex.size(); ++i) {
    elements.push_back(
        from_hex(a.hex[i], "element " + std::to_string(i + 1) + " '" + a.hex[i] + "'"));
  }
  bloomery::bip37_filter f({.capacity = n, .fpr = p}, tweak, flags);
  for (const auto& e : elements) f.insert(e);
  std::printf("%s\n", to_hex(f.serialize()).c_str());
  return 0;
}

bloomery::bip37_filter parse_filter(const std::string& hex) {
  const auto bytes = from_hex(hex, "--filter");
  try {
    return bloomery::bip37_filter::deserialize(bytes);
  } catch (const bloomery::format_error& e) {
    throw cli_error("--filter: " + strip(e.what()));
  }
}

int query(const args& a) {
  for (const char* option : {"--elements", "--fpr", "--tweak", "--flags"}) {
    if (given(a, option)) {
      throw cli_error(std::string("--filter and ") + option +
                      " exclude each other: a filter given is queried, not built");
    }
  }
  if (!a.hex.empty()) {
    throw cli_error("--filter takes the elements to test after --contains, not as '" + a.hex[0] +
                    "'");
  }
  if (!given(a, "--contains")) throw cli_error("--filter needs --contains HEX...");
  const bloomery::bip37_filter f = parse_filter(a.filter);
  std::vector<std::vector<std::uint8_t>> elements;
  for (std::size_t i = 0; i < a.contains.size(); ++i) {
    elements.push_back(from_hex(
        a.contains[i], "--contains element " + std::to_string(i + 1) + " '" + a.contains[i] + "'"));
  }
  std::string out;
  for (const auto& e : elements) out += f.may_contain(e) ? "yes\n" : "no\n";
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace bip37_command
}  // namespace

command register_bip37(CLI::App& app) {
  auto a = std::make_shared<bip37_command::args>();
  CLI::App* cmd = app.add_subcommand(
      "bip37", "build or query a Bitcoin BIP37 filter (the filterload message), elements in hex");
  a->cmd = cmd;
  cmd->add_option("--elements", a->elements, "elements the filter is sized for (N), [1, 2^32-1]");
  cmd->add_option("--fpr", a->fpr, "target false-positive rate (P), in (0, 1)");
  cmd->add_option("--tweak", a->tweak, "nTweak, [0, 2^32-1] (decimal or 0x hex; default 0)");
  cmd->add_option("--flags", a->flags,
                  "nFlags: 0 BLOOM_UPDATE_NONE (default), 1 BLOOM_UPDATE_ALL, 2 "
                  "BLOOM_UPDATE_P2PUBKEY_ONLY");
  cmd->add_option("hex", a->hex, "elements to insert, each as hex");
  cmd->add_option("--filter", a->filter, "a filterload body as hex, to query");
  cmd->add_option("--contains", a->contains, "elements to test against --filter, each as hex");
  cmd->footer(
      "Prints the filterload body as one line of lowercase hex, or with --filter one line per\n"
      "--contains element: yes (possibly present) or no (definitely absent).\n"
      "Examples:\n"
      "  bloomery bip37 --elements 3 --fpr 0.01 --flags 1 "
      "99108ad8ed9bb6274d3980bab5a85c048f0950c8\n"
      "  bloomery bip37 --filter 03614e9b050000000000000001 --contains "
      "99108ad8ed9bb6274d3980bab5a85c048f0950c8");
  return {cmd, [a] {
            return bip37_command::given(*a, "--filter") ? bip37_command::query(*a)
                                                        : bip37_command::build(*a);
          }};
}

}  // namespace bloomery_cli
