// bloomery: the command-line tool (docs/cli.md). A thin layer over the library: sizing, hashing,
// the filters and their file format all come from include/bloomery; this file parses arguments,
// reads keys and prints results.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <bloomery/bloomery.hpp>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include "keys.hpp"
#include "parallel.hpp"

namespace bloomery_cli {
namespace {

using any_filter = std::variant<bloomery::bloom_filter, bloomery::blocked_bloom_filter,
                                bloomery::counting_bloom_filter, bloomery::cuckoo_filter,
                                bloomery::scalable_bloom_filter, bloomery::static_filter>;

// The library's messages start with "bloomery: "; the tool adds its own prefix.
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

const char* kind_name(const any_filter& f) {
  return std::visit([](const auto& x) { return bloomery::to_string(x.kind); }, f);
}

any_filter load_any(const std::string& path) {
  std::vector<std::byte> bytes;
  try {
    bytes = bloomery::detail::read_file(path);
  } catch (const std::system_error& e) {
    throw cli_error(quoted(path) + ": cannot read filter file: " + e.code().message());
  }
  try {
    const bloomery::detail::parsed_file parsed = bloomery::detail::parse(bytes);
    switch (parsed.kind) {
      case bloomery::filter_kind::bloom:
        return bloomery::deserialize<bloomery::bloom_filter>(bytes);
      case bloomery::filter_kind::blocked_bloom:
        return bloomery::deserialize<bloomery::blocked_bloom_filter>(bytes);
      case bloomery::filter_kind::counting_bloom:
        return bloomery::deserialize<bloomery::counting_bloom_filter>(bytes);
      case bloomery::filter_kind::cuckoo:
        return bloomery::deserialize<bloomery::cuckoo_filter>(bytes);
      case bloomery::filter_kind::scalable_bloom:
        return bloomery::deserialize<bloomery::scalable_bloom_filter>(bytes);
      case bloomery::filter_kind::static_filter:
        return bloomery::deserialize<bloomery::static_filter>(bytes);
    }
    throw cli_error("unknown filter kind");
  } catch (const std::exception& e) {
    throw cli_error(quoted(path) + ": " + strip(e.what()));
  }
}

void save_any(const any_filter& f, const std::string& path) {
  try {
    std::visit([&](const auto& x) { bloomery::save(x, path); }, f);
  } catch (const std::system_error& e) {
    throw cli_error(strip(e.what()));
  }
}

// --seed: a number (decimal or 0x hex) for a seeded filter, or "random" for a keyed one.
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
  if (n) bloomery::detail::check_capacity(*n, "-n");
  bloomery::detail::check_fpr(p, "-p");
}

// ---------------------------------------------------------------------------------------------
// Output helpers
// ---------------------------------------------------------------------------------------------

std::string fmt_real(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// One name/value pair of `info` and friends, as JSON and as text.
struct field {
  std::string name;
  std::string json;
  std::string text;
};

field num(std::string name, std::uint64_t v) {
  return {std::move(name), std::to_string(v), std::to_string(v)};
}
field real(std::string name, double v) {
  const std::string s = fmt_real(v);
  return {std::move(name), std::isfinite(v) ? s : "null", s};
}
field str(std::string name, const std::string& v) {
  return {std::move(name), json_string(v), v};
}
field boolean(std::string name, bool v) {
  return {std::move(name), v ? "true" : "false", v ? "yes" : "no"};
}
field null(std::string name, std::string text) {
  return {std::move(name), "null", std::move(text)};
}

void print_fields(const std::vector<field>& fields, bool json) {
  if (json) {
    std::string out = "{";
    for (std::size_t i = 0; i < fields.size(); ++i) {
      out += (i ? ", " : "") + json_string(fields[i].name) + ": " + fields[i].json;
    }
    std::printf("%s}\n", out.c_str());
    return;
  }
  std::size_t width = 0;
  for (const auto& f : fields) width = std::max(width, f.name.size());
  for (const auto& f : fields) {
    std::printf("%-*s  %s\n", static_cast<int>(width + 1), (f.name + ":").c_str(), f.text.c_str());
  }
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

struct input_args {
  std::vector<std::string> files;
  std::uint32_t field = 0;
  std::string delimiter = "\t";
  bool quiet = false;
  unsigned threads = 0;  // 0: automatic, see thread_count()

  // `label` names the progress bar drawn on a terminal (none with --quiet).
  key_options options(const char* label) const {
    if (delimiter.size() != 1) {
      throw cli_error("--delimiter: '" + delimiter + "' must be exactly one character");
    }
    return {field, delimiter[0], quiet ? std::string() : std::string(label)};
  }
};

void add_input_options(CLI::App* cmd, input_args& in) {
  cmd->add_option("--field", in.field, "take column N (1-based) of each line as the key")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--delimiter", in.delimiter, "column delimiter for --field (default: tab)");
  cmd->add_flag("-q,--quiet", in.quiet, "no progress bar or summary on standard error");
  cmd->add_option(
         "--threads", in.threads,
         "threads that hash and probe the keys (default: query one per core, build and add one per "
         "core but one; at most 8)")
      ->check(CLI::PositiveNumber);
}

struct build_args {
  std::optional<std::uint64_t> n;
  double p = 0;
  std::string kind = "bloom";
  std::string seed;
  std::string out;
  input_args in;
};

// Inserts every key into `f`; `insert_one` returns false when the filter refuses a key.
template <class F, class Insert>
std::uint64_t insert_keys(F& f, const input_args& in, const std::string& file, const char* label,
                          Insert insert_one) {
  std::uint64_t count = 0;
  read_keys(in.files, in.options(label), [&](std::span<const std::string_view> keys) {
    for (const std::string_view k : keys) {
      if (!insert_one(f, k)) {
        throw cli_error(quoted(file) + ": the " + std::string(bloomery::to_string(F::kind)) +
                        " filter is full after " + std::to_string(count) + " keys (capacity " +
                        std::to_string(f.capacity()) + "); build it with a larger -n");
      }
      ++count;
    }
  });
  return count;
}

// Extra copies of a bit-array filter that the helper threads may fill: at most this many bytes.
constexpr std::uint64_t max_helper_filter_bytes = std::uint64_t{1} << 30;

template <class F>
std::uint64_t insert_all(F& f, const input_args& in, const std::string& file, const char* label) {
  if constexpr (requires(F & x, std::span<const std::string_view> keys) { x.insert_many(keys); }) {
    // The bit-array kinds take a whole read at once, hashed ahead and their lines prefetched, split
    // over the threads. Each helper thread fills its own empty copy of the filter, ORed into `f`
    // at the end: a union is bit-identical to one filter built from all the keys, and no two
    // threads ever write the same word (atomic ORs would cost more than the copies).
    unsigned threads = thread_count(in.threads, /*inserting=*/true);
    threads = static_cast<unsigned>(std::min<std::uint64_t>(
        threads, 1 + max_helper_filter_bytes / std::max<std::uint64_t>(f.size_in_bytes(), 1)));
    std::vector<F> helpers;
    std::uint64_t count = 0;
    read_keys(in.files, in.options(label), [&](std::span<const std::string_view> keys) {
      while (helpers.size() + 1 < threads && keys.size() >= 2 * 4096) {
        // Empty, with the same bits, hashes and hasher, so the union is defined (the helper's
        // capacity and target do not matter: the union keeps f's).
        helpers.emplace_back(
            bloomery::bloom_parameters{.bits = f.bit_count(), .hashes = f.hash_count()}, f.hash());
      }
      for_each_slice(
          keys.size(), static_cast<unsigned>(helpers.size() + 1),
          [&](unsigned part, std::size_t begin, std::size_t end) {
            (part == 0 ? f : helpers[part - 1]).insert_many(keys.subspan(begin, end - begin));
          });
      count += keys.size();
    });
    for (const F& h : helpers) f |= h;
    return count;
  }
  return insert_keys(f, in, file, label, [](F& x, std::string_view k) {
    if constexpr (std::same_as<F, bloomery::cuckoo_filter>) {
      return x.insert(k);
    } else {
      x.insert(k);  // scalable: false means "already present", which is fine
      return true;
    }
  });
}

int cmd_build(const build_args& a) {
  const bool is_static = a.kind == "static";
  if (!a.n && !is_static) throw cli_error("-n: the key capacity is required for --kind " + a.kind);
  check_target(a.n, a.p);
  bloomery::hasher h = parse_seed(a.seed);
  const bloomery::target t{a.n.value_or(1), a.p};
  std::uint64_t keys = 0;
  std::optional<any_filter> f;
  if (is_static) {
    std::vector<std::string> all;
    read_keys(a.in.files, a.in.options("build"), [&](std::span<const std::string_view> batch) {
      for (const std::string_view k : batch) all.emplace_back(k);
    });
    keys = all.size();
    f.emplace(bloomery::static_filter::build(all, a.p, std::move(h)));
  } else {
    const auto build = [&]<class F>(F filter) {
      keys = insert_all(filter, a.in, a.out, "build");
      f.emplace(std::move(filter));
    };
    if (a.kind == "bloom") build(bloomery::bloom_filter(t, h));
    if (a.kind == "blocked") build(bloomery::blocked_bloom_filter(t, h));
    if (a.kind == "counting") build(bloomery::counting_bloom_filter(t, h));
    if (a.kind == "cuckoo") build(bloomery::cuckoo_filter(t, h));
    if (a.kind == "scalable") build(bloomery::scalable_bloom_filter(t, h));
  }
  if (!f) throw cli_error("--kind: unknown kind '" + a.kind + "'");
  save_any(*f, a.out);
  if (!a.in.quiet) {
    const auto bytes = std::visit([](const auto& x) { return x.size_in_bytes(); }, *f);
    std::fprintf(stderr, "bloomery: wrote %s: %s filter, %llu keys, %llu bytes\n",
                 quoted(a.out).c_str(), a.kind.c_str(), static_cast<unsigned long long>(keys),
                 static_cast<unsigned long long>(bytes));
  }
  return 0;
}

struct filter_args {
  std::string file;
  input_args in;
};

int cmd_add(const filter_args& a) {
  any_filter f = load_any(a.file);
  std::uint64_t keys = 0;
  std::visit(
      [&]<class F>(F& x) {
        if constexpr (std::same_as<F, bloomery::static_filter>) {
          throw cli_error(quoted(a.file) +
                          ": a static filter takes no inserts; rebuild it with "
                          "'bloomery build --kind static'");
        } else {
          keys = insert_all(x, a.in, a.file, "add");
        }
      },
      f);
  save_any(f, a.file);
  if (!a.in.quiet) {
    std::fprintf(stderr, "bloomery: added %llu keys to %s\n", static_cast<unsigned long long>(keys),
                 quoted(a.file).c_str());
  }
  return 0;
}

int cmd_remove(const filter_args& a) {
  any_filter f = load_any(a.file);
  std::uint64_t removed = 0, absent = 0;
  std::visit(
      [&]<class F>(F& x) {
        if constexpr (std::same_as<F, bloomery::counting_bloom_filter> ||
                      std::same_as<F, bloomery::cuckoo_filter>) {
          read_keys(
              a.in.files, a.in.options("remove"), [&](std::span<const std::string_view> keys) {
                for (const std::string_view k : keys) {
                  bool ok;
                  if constexpr (std::same_as<F, bloomery::cuckoo_filter>) {
                    ok = x.remove(k);
                  } else {
                    ok = x.remove(k) == bloomery::counting_bloom_filter::remove_result::removed;
                  }
                  ++(ok ? removed : absent);
                }
              });
        } else {
          throw cli_error(quoted(a.file) + ": a " + std::string(bloomery::to_string(F::kind)) +
                          " filter cannot remove keys; only counting and cuckoo filters can");
        }
      },
      f);
  save_any(f, a.file);
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

struct query_args {
  filter_args f;
  bool invert = false;
  bool count = false;
};

int cmd_query(const query_args& a) {
  const any_filter f = load_any(a.f.file);
  std::uint64_t printed = 0;
  std::string out;
  std::vector<unsigned char> hits;
  const unsigned threads = thread_count(a.f.in.threads, /*inserting=*/false);
  const auto flush = [&] {
    if (!out.empty() && std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) {
      throw cli_error("cannot write to standard output");
    }
    out.clear();
  };
  read_keys(a.f.in.files, a.f.in.options("query"), [&](std::span<const std::string_view> keys) {
    hits.resize(keys.size());
    // Queries only read the filter, so the threads share it; each fills its own slice of hits.
    for_each_slice(keys.size(), threads, [&](unsigned, std::size_t begin, std::size_t end) {
      std::span<unsigned char> out(hits.data() + begin, end - begin);
      std::visit([&](const auto& x) { x.may_contain_many(keys.subspan(begin, end - begin), out); },
                 f);
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

// `bits` and the fill of a scalable filter: the sums over its sub-filters.
std::pair<std::uint64_t, std::uint64_t> scalable_bits(const bloomery::scalable_bloom_filter& s) {
  std::uint64_t bits = 0, set = 0;
  for (std::size_t i = 0; i < s.sub_filter_count(); ++i) {
    bits += s.sub_filter(i).bit_count();
    set += s.sub_filter(i).set_bit_count();
  }
  return {bits, set};
}

int cmd_info(const std::string& file, bool json) {
  const any_filter f = load_any(file);
  std::vector<field> out;
  bool over = false;
  std::visit(
      [&]<class F>(const F& x) {
        using namespace bloomery;
        out.push_back(str("kind", to_string(F::kind)));
        std::uint64_t bits = 0;
        std::optional<std::uint32_t> hashes;
        std::optional<double> fill;
        std::vector<field> extra;
        if constexpr (std::same_as<F, bloom_filter> || std::same_as<F, blocked_bloom_filter>) {
          bits = x.bit_count();
          hashes = x.hash_count();
          fill = x.fill_ratio();
          extra.push_back(num("set_bits", x.set_bit_count()));
          over = x.is_over_capacity();
        } else if constexpr (std::same_as<F, counting_bloom_filter>) {
          bits = x.counter_count() * x.counter_bits();
          hashes = x.hash_count();
          fill = x.fill_ratio();
          extra.push_back(num("counters", x.counter_count()));
          extra.push_back(num("counter_bits", x.counter_bits()));
          extra.push_back(num("saturated_counters", x.saturated_count()));
          over = x.is_over_capacity();
        } else if constexpr (std::same_as<F, cuckoo_filter>) {
          bits = x.bucket_count() * x.bucket_bits();
          fill = x.load_factor();
          extra.push_back(num("fingerprint_bits", x.fingerprint_bits()));
          extra.push_back(boolean("semi_sorted", x.semi_sorted()));
          extra.push_back(num("buckets", x.bucket_count()));
          extra.push_back(num("slots", x.slot_count()));
          extra.push_back(num("removed", x.removed()));
          extra.push_back(boolean("full", x.is_full()));
          over = x.is_full() || x.approximate_count() > x.capacity();
        } else if constexpr (std::same_as<F, scalable_bloom_filter>) {
          const auto [b, set] = scalable_bits(x);
          bits = b;
          hashes = x.sub_filter(0).hash_count();
          fill = static_cast<double>(set) / static_cast<double>(b);
          extra.push_back(num("sub_filters", x.sub_filter_count()));
          extra.push_back(num("current_capacity", x.current_capacity()));
          extra.push_back(real("growth", x.options().growth));
          extra.push_back(real("tightening", x.options().tightening));
        } else {
          bits = x.array_length() * x.fingerprint_bits();
          extra.push_back(num("fingerprint_bits", x.fingerprint_bits()));
          extra.push_back(num("segment_length", x.segment_length()));
          extra.push_back(num("segment_count", x.segment_count()));
          extra.push_back(num("array_length", x.array_length()));
        }
        out.push_back(num("bits", bits));
        out.push_back(hashes ? num("hashes", *hashes) : null("hashes", "- (fingerprint filter)"));
        const hasher& h = x.hash();
        out.push_back(h.keyed() ? null("seed", "- (keyed with a secret key)")
                                : num("seed", h.seed()));
        out.push_back(str("hash", to_string(h.algorithm())));
        out.push_back(num("size_in_bytes", x.size_in_bytes()));
        out.push_back(real("bits_per_key",
                           8.0 * static_cast<double>(x.size_in_bytes()) /
                               static_cast<double>(std::max<std::uint64_t>(1, x.capacity()))));
        out.push_back(num("capacity", x.capacity()));
        out.push_back(num("inserted", x.inserted()));
        out.push_back(num("approximate_count", x.approximate_count()));
        out.push_back(fill ? real("fill_ratio", *fill) : null("fill_ratio", "-"));
        out.push_back(real("target_fpr", x.target_fpr()));
        out.push_back(real("estimated_fpr", x.estimated_fpr()));
        for (auto& e : extra) out.push_back(std::move(e));
        if (over) {
          std::fprintf(stderr,
                       "bloomery: warning: %s holds about %llu keys, past its capacity of %llu; "
                       "its false-positive rate (%s) is above the target (%s)\n",
                       quoted(file).c_str(), static_cast<unsigned long long>(x.approximate_count()),
                       static_cast<unsigned long long>(x.capacity()),
                       fmt_real(x.estimated_fpr()).c_str(), fmt_real(x.target_fpr()).c_str());
        }
      },
      f);
  std::fflush(stderr);
  print_fields(out, json);
  return 0;
}

template <class F>
concept can_union = requires(F a, const F& b) {
  a |= b;
};
template <class F>
concept can_intersect = requires(F a, const F& b) {
  a &= b;
};

template <bool Intersect>
int cmd_combine(const std::vector<std::string>& inputs, const std::string& out_file) {
  const char* verb = Intersect ? "intersect" : "merge";
  if (inputs.size() < 2) {
    throw cli_error(std::string(verb) + ": needs at least two input filters, got " +
                    std::to_string(inputs.size()));
  }
  any_filter acc = load_any(inputs[0]);
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    const any_filter next = load_any(inputs[i]);
    const std::string pair = quoted(inputs[0]) + " and " + quoted(inputs[i]);
    if (acc.index() != next.index()) {
      throw cli_error(std::string("cannot ") + verb + " " + pair + ": kinds differ (" +
                      kind_name(acc) + " vs " + kind_name(next) + ")");
    }
    std::visit(
        [&]<class F>(F& a) {
          const F& b = std::get<F>(next);
          if constexpr (Intersect ? can_intersect<F> : can_union<F>) {
            const std::string why = a.incompatibility(b);
            if (!why.empty()) {
              throw cli_error(std::string("cannot ") + verb + " " + pair + ": " + why);
            }
            if constexpr (Intersect) {
              a &= b;
            } else {
              a |= b;
            }
          } else {
            throw cli_error(std::string("cannot ") + verb + " " + pair + ": " +
                            bloomery::to_string(F::kind) + " filters do not support it; " +
                            (Intersect ? "intersect works on bloom and blocked filters"
                                       : "merge works on bloom, blocked, counting and scalable "
                                         "filters"));
          }
        },
        acc);
  }
  save_any(acc, out_file);
  return 0;
}

// Every kind's plan for a target, in the README's order.
struct plan_row {
  const char* kind;
  std::optional<bloomery::filter_plan> plan;
  std::string why_not;
};

std::vector<plan_row> plans(bloomery::target t) {
  std::vector<plan_row> rows;
  const auto add = [&](const char* kind, auto&& plan_for) {
    plan_row r{kind, std::nullopt, {}};
    try {
      r.plan = plan_for(t);
    } catch (const std::exception& e) {
      r.why_not = strip(e.what());
    }
    rows.push_back(std::move(r));
  };
  add("bloom", [](bloomery::target x) { return bloomery::bloom_filter::plan(x); });
  add("blocked", [](bloomery::target x) { return bloomery::blocked_bloom_filter::plan(x); });
  add("counting", [](bloomery::target x) { return bloomery::counting_bloom_filter::plan(x); });
  add("cuckoo", [](bloomery::target x) { return bloomery::cuckoo_filter::plan(x); });
  add("scalable", [](bloomery::target x) { return bloomery::scalable_bloom_filter::plan(x); });
  add("static", [](bloomery::target x) { return bloomery::static_filter::plan(x); });
  return rows;
}

std::string plan_json(const bloomery::filter_plan& p) {
  return "\"bytes\": " + std::to_string(p.bytes) +
         ", \"bits_per_key\": " + fmt_real(p.bits_per_key) +
         ", \"expected_fpr\": " + fmt_real(p.expected_fpr) +
         ", \"parameters\": " + json_string(p.parameters);
}

int cmd_size(std::uint64_t n, double p, bool json) {
  check_target(n, p);
  const auto rows = plans({n, p});
  if (json) {
    std::string out =
        "{\"capacity\": " + std::to_string(n) + ", \"fpr\": " + fmt_real(p) + ", \"kinds\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      out +=
          std::string(i ? ", " : "") + "{\"kind\": " + json_string(rows[i].kind) + ", " +
          (rows[i].plan ? plan_json(*rows[i].plan) : "\"error\": " + json_string(rows[i].why_not)) +
          "}";
    }
    std::printf("%s]}\n", out.c_str());
    return 0;
  }
  std::printf("%llu keys at fpr %s\n", static_cast<unsigned long long>(n), fmt_real(p).c_str());
  std::printf("%-9s %14s %9s %12s  %s\n", "kind", "bytes", "bits/key", "expected_fpr",
              "parameters");
  for (const auto& r : rows) {
    if (r.plan) {
      std::printf("%-9s %14llu %9.2f %12s  %s\n", r.kind,
                  static_cast<unsigned long long>(r.plan->bytes), r.plan->bits_per_key,
                  fmt_real(r.plan->expected_fpr).c_str(), r.plan->parameters.c_str());
    } else {
      std::printf("%-9s %14s %9s %12s  %s\n", r.kind, "-", "-", "-", r.why_not.c_str());
    }
  }
  return 0;
}

struct advise_args {
  std::uint64_t n = 0;
  double p = 0;
  bool deletes = false, static_set = false, grows = false, json = false;
  double key_bytes = 16;
};

int cmd_advise(const advise_args& a) {
  check_target(a.n, a.p);
  const auto ranked = bloomery::advise({.capacity = a.n,
                                        .fpr = a.p,
                                        .deletes = a.deletes,
                                        .static_set = a.static_set,
                                        .grows = a.grows,
                                        .key_bytes = a.key_bytes});
  if (a.json) {
    std::string out = "[";
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      const auto& r = ranked[i];
      out += std::string(i ? ", " : "") + "{\"rank\": " + std::to_string(i + 1) +
             ", \"kind\": " + json_string(r.kind) +
             ", \"suitable\": " + (r.suitable ? "true" : "false") + ", " + plan_json(r.plan) +
             ", \"note\": " + json_string(strip(r.note)) + "}";
    }
    std::printf("%s]\n", out.c_str());
    return 0;
  }
  std::printf("%-4s %-10s %-8s %14s %9s  %s\n", "rank", "kind", "suitable", "bytes", "bits/key",
              "note");
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const auto& r = ranked[i];
    std::printf("%-4zu %-10s %-8s %14llu %9.2f  %s\n", i + 1, r.kind.c_str(),
                r.suitable ? "yes" : "no", static_cast<unsigned long long>(r.plan.bytes),
                r.plan.bits_per_key, strip(r.note).c_str());
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// explain: each kind of filter, step by step
// ---------------------------------------------------------------------------------------------

struct explain_args {
  std::optional<std::uint64_t> m;
  std::optional<std::uint32_t> k;
  std::string seed;
  std::vector<std::string> args;  // [FILE] KEY...
  std::vector<std::string> queries;
};

// The k positions of a key, exactly as bloom_filter probes them.
std::vector<std::uint64_t> positions_of(const bloomery::bloom_filter& f, std::string_view key) {
  std::vector<std::uint64_t> pos;
  bloomery::detail::for_each_position(bloomery::hash_key(f.hash(), key), f.bit_count(),
                                      f.hash_count(), [&](std::uint64_t p) { pos.push_back(p); });
  return pos;
}

bool bit_set_in(std::span<const std::uint64_t> words, std::uint64_t i) {
  return ((words[i / 64] >> (i % 64)) & 1) != 0;
}

bool bit_set(const bloomery::bloom_filter& f, std::uint64_t i) {
  return bit_set_in(f.words(), i);
}

std::string join(const std::vector<std::uint64_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

constexpr std::uint64_t explain_draw_limit = 256;  // bit arrays up to this size are drawn

void draw_bits(const bloomery::bloom_filter& f) {
  if (f.bit_count() > explain_draw_limit) return;
  std::string line = "  bits: ";
  for (std::uint64_t i = 0; i < f.bit_count(); ++i) line += bit_set(f, i) ? '1' : '0';
  std::printf("%s\n", line.c_str());
}

// A blocked filter: each key picks one 512-bit block and k bits inside it, exactly as
// blocked_bloom_filter does (detail/blocked_core.hpp); bits are numbered within the block.
struct block_walk {
  std::uint64_t block;
  std::vector<std::uint64_t> bits;
};

block_walk walk_of(const bloomery::blocked_bloom_filter& f, std::string_view key) {
  namespace d = bloomery::detail;
  const d::block_slot at =
      d::locate(bloomery::hash_key(f.hash(), key), f.bit_count() / d::block_bits);
  block_walk w{at.block, {}};
  for (std::uint32_t i = 0; i < f.hash_count(); ++i) w.bits.push_back(d::bit_in_block(at.seed, i));
  return w;
}

bool block_bit_set(const bloomery::blocked_bloom_filter& f, const block_walk& w, std::uint64_t b) {
  return bit_set_in(f.words(), w.block * bloomery::detail::block_bits + b);
}

int explain_blocked(bloomery::blocked_bloom_filter f, const std::string& file,
                    const std::vector<std::string>& keys, const std::vector<std::string>& queries) {
  std::printf(
      "The blocked Bloom filter %s: %llu blocks of 512 bits, k = %u bits per key in one block, "
      "%llu bits set.\n",
      quoted(file).c_str(),
      static_cast<unsigned long long>(f.bit_count() / bloomery::detail::block_bits), f.hash_count(),
      static_cast<unsigned long long>(f.set_bit_count()));
  for (const std::string& key : keys) {
    const block_walk w = walk_of(f, key);
    f.insert(key);
    std::printf("\ninsert %s: block %llu, bits %s of that block; set them to 1.\n",
                quoted(key).c_str(), static_cast<unsigned long long>(w.block),
                join(w.bits).c_str());
  }
  for (const std::string& key : queries) {
    const block_walk w = walk_of(f, key);
    std::printf("\nquery %s: block %llu, bits %s\n", quoted(key).c_str(),
                static_cast<unsigned long long>(w.block), join(w.bits).c_str());
    std::vector<std::uint64_t> clear;
    for (const auto b : w.bits) {
      const bool set = block_bit_set(f, w, b);
      if (!set) clear.push_back(b);
      std::printf("  bit %llu is %s\n", static_cast<unsigned long long>(b), set ? "1" : "0");
    }
    if (!clear.empty()) {
      std::printf(
          "  -> definitely not present: %s %s 0, and every inserted key sets all of its bits.\n",
          clear.size() == 1 ? "bit" : "bits",
          (join(clear) + (clear.size() == 1 ? " is" : " are")).c_str());
    } else {
      std::printf(
          "  -> possibly present: all %u bits of block %llu are 1. They may have been set by "
          "other keys (a false positive); the filter cannot tell.\n",
          f.hash_count(), static_cast<unsigned long long>(w.block));
    }
  }
  return 0;
}

// "definitely not present" for a list of zero bits or counters: "bit 7 is" / "bits 3, 9 are".
std::string zero_list(const char* what, const std::vector<std::uint64_t>& v) {
  return std::string(what) + (v.size() == 1 ? " " : "s ") + join(v) +
         (v.size() == 1 ? " is" : " are");
}

// A counting filter: the classic filter's k positions (detail::for_each_position), each a small
// counter that insert adds 1 to; a query is "no" when one of its counters is 0.
std::vector<std::uint64_t> positions_of(const bloomery::counting_bloom_filter& f,
                                        std::string_view key) {
  std::vector<std::uint64_t> pos;
  bloomery::detail::for_each_position(bloomery::hash_key(f.hash(), key), f.counter_count(),
                                      f.hash_count(), [&](std::uint64_t p) { pos.push_back(p); });
  return pos;
}

int explain_counting(bloomery::counting_bloom_filter f, const std::string& file,
                     const std::vector<std::string>& keys,
                     const std::vector<std::string>& queries) {
  std::printf(
      "The counting Bloom filter %s: m = %llu counters of %u bits (at most %llu), k = %u hash "
      "functions, %llu counters nonzero.\n",
      quoted(file).c_str(), static_cast<unsigned long long>(f.counter_count()), f.counter_bits(),
      static_cast<unsigned long long>(f.counter_max()), f.hash_count(),
      static_cast<unsigned long long>(f.nonzero_count()));
  for (const std::string& key : keys) {
    const auto pos = positions_of(f, key);
    std::vector<std::uint64_t> before;
    for (const auto p : pos) before.push_back(f.counter(p));
    f.insert(key);
    std::printf("\ninsert %s: its %u hashes give counters %s; add 1 to each.\n",
                quoted(key).c_str(), f.hash_count(), join(pos).c_str());
    for (std::size_t i = 0; i < pos.size(); ++i) {
      const std::uint64_t now = f.counter(pos[i]);
      std::printf("  counter %llu: %llu -> %llu%s\n", static_cast<unsigned long long>(pos[i]),
                  static_cast<unsigned long long>(before[i]), static_cast<unsigned long long>(now),
                  now == f.counter_max() ? " (saturated: it stays there, never decremented)" : "");
    }
  }
  for (const std::string& key : queries) {
    const auto pos = positions_of(f, key);
    std::printf("\nquery %s: counters %s\n", quoted(key).c_str(), join(pos).c_str());
    std::vector<std::uint64_t> zero;
    for (const auto p : pos) {
      const std::uint64_t v = f.counter(p);
      if (v == 0) zero.push_back(p);
      std::printf("  counter %llu is %llu\n", static_cast<unsigned long long>(p),
                  static_cast<unsigned long long>(v));
    }
    if (!zero.empty()) {
      std::printf(
          "  -> definitely not present: %s 0, and every inserted key adds 1 to all of its "
          "counters.\n",
          zero_list("counter", zero).c_str());
    } else {
      std::printf(
          "  -> possibly present: all %u counters are nonzero. Other keys may have raised them (a "
          "false positive); the filter cannot tell.\n",
          f.hash_count());
    }
  }
  return 0;
}

// A cuckoo filter: each key has an f-bit fingerprint and two candidate buckets of 4 slots
// (detail::cuckoo_locate); a query is "maybe" when the fingerprint sits in either bucket or the
// stash.
std::string bucket_text(const bloomery::cuckoo_filter& f, std::uint64_t b) {
  namespace d = bloomery::detail;
  const d::cuckoo_lanes lanes(f.fingerprint_bits(), f.semi_sorted());
  const std::uint64_t bucket = d::read_bucket(f.words().data(), lanes, b);
  std::string s = "  bucket " + std::to_string(b) + ": [";
  for (std::uint32_t j = 0; j < d::cuckoo_bucket_slots; ++j) {
    const std::uint64_t fp = lanes.get(bucket, j);
    s += (j ? ", " : "") + (fp == 0 ? std::string("-") : std::to_string(fp));
  }
  return s + "]";
}

bool bucket_has(const bloomery::cuckoo_filter& f, std::uint64_t b, std::uint64_t fp) {
  namespace d = bloomery::detail;
  const d::cuckoo_lanes lanes(f.fingerprint_bits(), f.semi_sorted());
  return lanes.matching_slots(d::read_bucket(f.words().data(), lanes, b), fp) != 0;
}

bool bucket_has_room(const bloomery::cuckoo_filter& f, std::uint64_t b) {
  namespace d = bloomery::detail;
  const d::cuckoo_lanes lanes(f.fingerprint_bits(), f.semi_sorted());
  return lanes.zero_slots(d::read_bucket(f.words().data(), lanes, b)) != 0;
}

std::string stash_text(const bloomery::cuckoo_filter& f) {
  const auto& s = f.stash();
  if (!s.used) return "empty";
  return "fingerprint " + std::to_string(s.fingerprint) + " for bucket " + std::to_string(s.bucket);
}

bloomery::detail::cuckoo_position cuckoo_place(const bloomery::cuckoo_filter& f,
                                               std::string_view key) {
  return bloomery::detail::cuckoo_locate(bloomery::hash_key(f.hash(), key), f.fingerprint_bits(),
                                         f.bucket_count());
}

// How i2 follows from i1 and the fingerprint (detail::cuckoo_alt_bucket).
std::string alt_text(const bloomery::cuckoo_filter& f, const bloomery::detail::cuckoo_position& p) {
  namespace d = bloomery::detail;
  const std::uint64_t nb = f.bucket_count();
  const std::uint64_t t = d::reduce(d::cuckoo_fingerprint_mix(p.fp), nb);
  const std::uint64_t diff = t >= p.i1 ? t - p.i1 : t + nb - p.i1;
  const std::string n = std::to_string(nb);
  std::string s = "i1 is the key's hash mapped onto the " + n + " buckets; i2 = (t - i1) mod " + n +
                  " = (" + std::to_string(t) + " - " + std::to_string(p.i1) + ") mod " + n + " = " +
                  std::to_string(diff) + ", where t = " + std::to_string(t) + " is H(" +
                  std::to_string(p.fp) + ") mapped onto the buckets";
  if (diff != p.i2) {
    s += "; that is i1 itself, so i2 is its partner " + std::to_string(p.i2) + " = i1 +- " +
         std::to_string(nb / 2);
  }
  return s +
         ". The same rule maps i2 back to i1, so a fingerprint and either bucket give the other";
}

int explain_cuckoo(bloomery::cuckoo_filter f, const std::string& file,
                   const std::vector<std::string>& keys, const std::vector<std::string>& queries) {
  std::printf(
      "The cuckoo filter %s: %llu buckets of %u slots, fingerprints of f = %u bits, %llu stored, "
      "stash %s.\n",
      quoted(file).c_str(), static_cast<unsigned long long>(f.bucket_count()),
      bloomery::cuckoo_filter::bucket_slots, f.fingerprint_bits(),
      static_cast<unsigned long long>(f.approximate_count()), stash_text(f).c_str());
  for (const std::string& key : keys) {
    const auto p = cuckoo_place(f, key);
    std::printf("\ninsert %s: fingerprint %llu (%u bits, never 0), i1 = %llu, i2 = %llu.\n",
                quoted(key).c_str(), static_cast<unsigned long long>(p.fp), f.fingerprint_bits(),
                static_cast<unsigned long long>(p.i1), static_cast<unsigned long long>(p.i2));
    std::printf("  %s.\n", alt_text(f, p).c_str());
    const bool room1 = bucket_has_room(f, p.i1);
    const bool room2 = bucket_has_room(f, p.i2);
    const bool was_full = f.is_full();
    if (!f.insert(key)) {
      std::printf("  -> refused: the table is full (the stash is in use); nothing changed.\n");
      continue;
    }
    if (room1) {
      std::printf("  bucket %llu has a free slot: store %llu there.\n",
                  static_cast<unsigned long long>(p.i1), static_cast<unsigned long long>(p.fp));
    } else if (room2) {
      std::printf("  bucket %llu is full; bucket %llu has a free slot: store %llu there.\n",
                  static_cast<unsigned long long>(p.i1), static_cast<unsigned long long>(p.i2),
                  static_cast<unsigned long long>(p.fp));
    } else {
      std::printf(
          "  both buckets are full: evict a fingerprint to make room, and move each evicted one "
          "to its other bucket (at most %u moves).\n",
          f.max_kicks());
    }
    std::printf("%s\n", bucket_text(f, p.i1).c_str());
    if (p.i2 != p.i1) std::printf("%s\n", bucket_text(f, p.i2).c_str());
    if (f.is_full() && !was_full) {
      std::printf("  the moves ran out: the last evicted fingerprint went to the stash (%s).\n",
                  stash_text(f).c_str());
    }
  }
  for (const std::string& key : queries) {
    namespace d = bloomery::detail;
    const auto p = cuckoo_place(f, key);
    std::printf("\nquery %s: fingerprint %llu, buckets i1 = %llu and i2 = %llu\n",
                quoted(key).c_str(), static_cast<unsigned long long>(p.fp),
                static_cast<unsigned long long>(p.i1), static_cast<unsigned long long>(p.i2));
    std::vector<std::uint64_t> holders;
    std::vector<std::uint64_t> buckets{p.i1};
    if (p.i2 != p.i1) buckets.push_back(p.i2);  // i2 = i1 only in a table of odd bucket count
    for (const std::uint64_t b : buckets) {
      const bool has = bucket_has(f, b, p.fp);
      if (has) holders.push_back(b);
      std::printf("%s%s\n", bucket_text(f, b).c_str(),
                  has ? (" <- holds " + std::to_string(p.fp)).c_str() : "");
    }
    const bool stashed = f.stash().holds(p);
    if (f.stash().used) {
      std::printf("  stash: %s%s\n", stash_text(f).c_str(),
                  stashed ? (" <- holds " + std::to_string(p.fp)).c_str() : "");
    }
    const d::cuckoo_lanes lanes(f.fingerprint_bits(), f.semi_sorted());
    if (d::cuckoo_probe(f.words().data(), lanes, f.stash(), p)) {
      std::printf(
          "  -> possibly present: fingerprint %llu is in %s. Another key with the same "
          "fingerprint and buckets would look the same (a false positive); the filter cannot "
          "tell.\n",
          static_cast<unsigned long long>(p.fp),
          holders.empty()
              ? "the stash"
              : ((holders.size() == 1 ? "bucket " : "buckets ") + join(holders)).c_str());
    } else {
      std::printf(
          "  -> definitely not present: fingerprint %llu is in neither bucket nor the stash, and "
          "an inserted key's fingerprint always stays in one of its two buckets (or the "
          "stash).\n",
          static_cast<unsigned long long>(p.fp));
    }
  }
  return 0;
}

// A scalable filter: a stack of classic sub-filters; inserts go to the newest (a new one is added
// when it is full), queries probe the newest first and stop at the first "maybe".
std::vector<std::uint64_t> positions_of(const bloomery::bloom_filter::view& f,
                                        std::string_view key) {
  std::vector<std::uint64_t> pos;
  bloomery::detail::for_each_position(bloomery::hash_key(f.hash(), key), f.bit_count(),
                                      f.hash_count(), [&](std::uint64_t p) { pos.push_back(p); });
  return pos;
}

std::string sub_filter_text(const bloomery::scalable_bloom_filter& f, std::size_t i) {
  const auto s = f.sub_filter(i);
  return "sub-filter " + std::to_string(i) + " (m = " + std::to_string(s.bit_count()) +
         " bits, k = " + std::to_string(s.hash_count()) + ", " + std::to_string(s.inserted()) +
         " of " + std::to_string(s.capacity()) + " keys)";
}

// The newest sub-filter that answers "maybe" for the key, if any.
std::optional<std::size_t> answering_sub_filter(const bloomery::scalable_bloom_filter& f,
                                                std::string_view key) {
  for (std::size_t i = f.sub_filter_count(); i-- > 0;) {
    if (f.sub_filter(i).may_contain(key)) return i;
  }
  return std::nullopt;
}

int explain_scalable(bloomery::scalable_bloom_filter f, const std::string& file,
                     const std::vector<std::string>& keys,
                     const std::vector<std::string>& queries) {
  std::printf(
      "The scalable Bloom filter %s: %zu sub-filter%s (growth %s, tightening %s), %llu keys.\n",
      quoted(file).c_str(), f.sub_filter_count(), f.sub_filter_count() == 1 ? "" : "s",
      fmt_real(f.options().growth).c_str(), fmt_real(f.options().tightening).c_str(),
      static_cast<unsigned long long>(f.inserted()));
  for (std::size_t i = f.sub_filter_count(); i-- > 0;) {
    std::printf("  %s\n", sub_filter_text(f, i).c_str());
  }
  for (const std::string& key : keys) {
    if (const auto at = answering_sub_filter(f, key)) {
      const bool added = f.insert(key);  // false: the filter skips keys it may already hold
      std::printf("\ninsert %s: sub-filter %zu already answers \"possibly present\"; %s.\n",
                  quoted(key).c_str(), *at,
                  added ? "inserted anyway" : "not inserted again (the filter skips it)");
      continue;
    }
    const std::size_t before = f.sub_filter_count();
    const std::string newest = sub_filter_text(f, before - 1);
    f.insert(key);
    const std::size_t last = f.sub_filter_count() - 1;
    const auto pos = positions_of(f.sub_filter(last), key);
    if (f.sub_filter_count() != before) {
      std::printf(
          "\ninsert %s: the newest, %s, is full: add sub-filter %zu (m = %llu bits, k = "
          "%u); its %u hashes give bits %s; set them to 1.\n",
          quoted(key).c_str(), newest.c_str(), last,
          static_cast<unsigned long long>(f.sub_filter(last).bit_count()),
          f.sub_filter(last).hash_count(), f.sub_filter(last).hash_count(), join(pos).c_str());
    } else {
      std::printf(
          "\ninsert %s: goes to the newest, sub-filter %zu; its %u hashes give bits %s; "
          "set them to 1.\n",
          quoted(key).c_str(), last, f.sub_filter(last).hash_count(), join(pos).c_str());
    }
  }
  for (const std::string& key : queries) {
    std::printf("\nquery %s: probe the sub-filters newest first\n", quoted(key).c_str());
    std::optional<std::size_t> answered;
    for (std::size_t i = f.sub_filter_count(); i-- > 0;) {
      const auto s = f.sub_filter(i);
      const auto pos = positions_of(s, key);
      std::vector<std::uint64_t> clear;
      for (const auto p : pos) {
        if (!bit_set_in(s.words(), p)) clear.push_back(p);
      }
      std::printf("  sub-filter %zu: bits %s -> %s\n", i, join(pos).c_str(),
                  clear.empty() ? "all 1: possibly here"
                                : (zero_list("bit", clear) + " 0: not here").c_str());
      if (s.may_contain(key)) {
        answered = i;
        if (i != 0) std::printf("  (the older sub-filters are not probed)\n");
        break;
      }
    }
    if (answered) {
      std::printf(
          "  -> possibly present: sub-filter %zu answered (all %u of its bits are 1). They may "
          "have been set by other keys (a false positive); the filter cannot tell.\n",
          *answered, f.sub_filter(*answered).hash_count());
    } else {
      std::printf(
          "  -> definitely not present: every sub-filter has a 0 bit, and every inserted key "
          "sets all of its bits in the sub-filter it went to.\n");
    }
  }
  return 0;
}

// A static (binary fuse) filter: each key has an f-bit fingerprint and three slots, one in each
// of three consecutive segments (detail::fuse_positions); the build made the XOR of a member's
// three slots equal its fingerprint.
template <class Slot>
void explain_static_query(const bloomery::static_filter& f, const std::string& key) {
  namespace d = bloomery::detail;
  const d::fuse_layout layout{f.segment_length(), f.segment_count(), f.array_length()};
  const auto* slots = reinterpret_cast<const unsigned char*>(f.fingerprint_bytes().data());
  const std::uint64_t x = d::fuse_hash(bloomery::hash_key(f.hash(), key), f.construction_seed());
  const d::fuse_slots at = d::fuse_positions(x, layout);
  const auto fp = static_cast<unsigned>(d::fuse_fingerprint<Slot>(x));
  const int w = static_cast<int>(sizeof(Slot) * 2);
  std::printf(
      "\nquery %s: fingerprint 0x%0*x, slots %llu, %llu, %llu (segments %llu, %llu, %llu)\n",
      quoted(key).c_str(), w, fp, static_cast<unsigned long long>(at.at[0]),
      static_cast<unsigned long long>(at.at[1]), static_cast<unsigned long long>(at.at[2]),
      static_cast<unsigned long long>(at.at[0] / layout.segment_length),
      static_cast<unsigned long long>(at.at[1] / layout.segment_length),
      static_cast<unsigned long long>(at.at[2] / layout.segment_length));
  unsigned sum = 0;
  std::string terms;
  for (const std::uint64_t i : at.at) {
    const auto v = static_cast<unsigned>(d::load_slot<Slot>(slots, i));
    sum ^= v;
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%0*x", w, v);
    terms += (terms.empty() ? "" : " ^ ") + std::string(hex);
    std::printf("  slot %llu holds %s\n", static_cast<unsigned long long>(i), hex);
  }
  std::printf("  XOR of the three slots: %s = 0x%0*x\n", terms.c_str(), w, sum);
  if (d::fuse_probe<Slot>(slots, layout, x)) {
    std::printf(
        "  -> possibly present: the XOR equals the fingerprint 0x%0*x. An absent key matches by "
        "chance with probability 2^-%u (a false positive); the filter cannot tell.\n",
        w, fp, f.fingerprint_bits());
  } else {
    std::printf(
        "  -> definitely not present: the XOR is not the fingerprint 0x%0*x, and the build made "
        "the XOR equal the fingerprint for every key of its set.\n",
        w, fp);
  }
}

int explain_static(const bloomery::static_filter& f, const std::string& file,
                   const std::vector<std::string>& queries) {
  std::printf(
      "The static (binary fuse) filter %s: %llu keys, %u-bit fingerprints in %llu slots (%llu "
      "segments of %u), built once from its keys: it takes no inserts.\n",
      quoted(file).c_str(), static_cast<unsigned long long>(f.key_count()), f.fingerprint_bits(),
      static_cast<unsigned long long>(f.array_length()),
      static_cast<unsigned long long>(f.array_length() /
                                      std::max<std::uint32_t>(1, f.segment_length())),
      f.segment_length());
  for (const std::string& key : queries) {
    if (f.array_length() == 0) {
      std::printf("\nquery %s\n  -> definitely not present: the filter holds no keys.\n",
                  quoted(key).c_str());
    } else if (f.fingerprint_bits() == 8) {
      explain_static_query<std::uint8_t>(f, key);
    } else {
      explain_static_query<std::uint16_t>(f, key);
    }
  }
  return 0;
}

int cmd_explain(const explain_args& a) {
  std::vector<std::string> keys = a.args;
  std::optional<bloomery::bloom_filter> f;
  if (a.m || a.k) {
    if (!a.m || !a.k) throw cli_error("explain: -m and -k go together");
    bloomery::detail::check_bits(*a.m, "-m");
    bloomery::detail::check_hashes(*a.k, "-k");
    f.emplace(bloomery::bloom_parameters{*a.m, *a.k}, parse_seed(a.seed));
    std::printf("An empty Bloom filter of m = %llu bits with k = %u hash functions.\n",
                static_cast<unsigned long long>(*a.m), *a.k);
  } else {
    if (keys.empty()) throw cli_error("explain: give -m BITS -k HASHES or a filter FILE");
    const std::string file = keys.front();
    keys.erase(keys.begin());
    any_filter loaded = load_any(file);
    if (!a.seed.empty()) throw cli_error("--seed: a filter file brings its own seed");
    if (auto* bb = std::get_if<bloomery::blocked_bloom_filter>(&loaded)) {
      return explain_blocked(std::move(*bb), file, keys, a.queries);
    }
    if (auto* cb = std::get_if<bloomery::counting_bloom_filter>(&loaded)) {
      return explain_counting(std::move(*cb), file, keys, a.queries);
    }
    if (auto* cf = std::get_if<bloomery::cuckoo_filter>(&loaded)) {
      return explain_cuckoo(std::move(*cf), file, keys, a.queries);
    }
    if (auto* sb = std::get_if<bloomery::scalable_bloom_filter>(&loaded)) {
      return explain_scalable(std::move(*sb), file, keys, a.queries);
    }
    if (auto* st = std::get_if<bloomery::static_filter>(&loaded)) {
      if (!keys.empty()) {
        throw cli_error(
            quoted(file) + ": a static filter takes no inserts, so explain cannot insert " +
            quoted(std::as_const(keys).front()) + "; give the keys to test with --query");
      }
      return explain_static(*st, file, a.queries);
    }
    f.emplace(std::get<bloomery::bloom_filter>(std::move(loaded)));
    std::printf("The Bloom filter %s: m = %llu bits, k = %u hash functions, %llu bits set.\n",
                quoted(file).c_str(), static_cast<unsigned long long>(f->bit_count()),
                f->hash_count(), static_cast<unsigned long long>(f->set_bit_count()));
  }
  draw_bits(*f);
  // Which inserted keys set each bit, to explain the answers.
  std::vector<std::pair<std::uint64_t, std::string>> setters;
  for (const std::string& key : keys) {
    const auto pos = positions_of(*f, key);
    f->insert(key);
    std::printf("\ninsert %s: its %u hashes give bits %s; set them to 1.\n", quoted(key).c_str(),
                f->hash_count(), join(pos).c_str());
    for (const auto p : pos) setters.emplace_back(p, key);
    draw_bits(*f);
  }
  for (const std::string& key : a.queries) {
    const auto pos = positions_of(*f, key);
    std::printf("\nquery %s: bits %s\n", quoted(key).c_str(), join(pos).c_str());
    std::vector<std::uint64_t> clear;
    for (const auto p : pos) {
      std::string by;
      for (const auto& [sp, who] : setters) {
        if (sp == p && by.find(quoted(who)) == std::string::npos)
          by += (by.empty() ? "" : ", ") + quoted(who);
      }
      const bool set = bit_set(*f, p);
      if (!set) clear.push_back(p);
      std::printf("  bit %llu is %s%s\n", static_cast<unsigned long long>(p), set ? "1" : "0",
                  set ? (by.empty() ? "" : (" (set by " + by + ")").c_str()) : "");
    }
    if (!clear.empty()) {
      std::printf(
          "  -> definitely not present: %s %s 0, and every inserted key sets all of "
          "its bits.\n",
          clear.size() == 1 ? "bit" : "bits",
          (join(clear) + (clear.size() == 1 ? " is" : " are")).c_str());
    } else {
      std::printf(
          "  -> possibly present: all %u bits are 1. They may have been set by other keys "
          "(a false positive); the filter cannot tell.\n",
          f->hash_count());
    }
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Argument parsing
// ---------------------------------------------------------------------------------------------

constexpr const char* kinds_help = "bloom|blocked|counting|cuckoo|scalable|static";

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

  build_args build;
  auto* c_build = app.add_subcommand("build", "build a filter from keys, one per line");
  c_build->add_option("-n,--capacity", build.n, "keys the filter is sized for (static: optional)");
  c_build->add_option("-p,--fpr", build.p, "target false-positive rate, in (0, 1)")->required();
  c_build->add_option("--kind", build.kind, std::string("filter kind: ") + kinds_help)
      ->check(CLI::IsMember({"bloom", "blocked", "counting", "cuckoo", "scalable", "static"}));
  c_build->add_option("--seed", build.seed, "hash seed (number) or 'random' for a keyed filter");
  c_build->add_option("-o,--output", build.out, "the filter file to write")->required();
  c_build->add_option("keyfiles", build.in.files, "key files ('-' or none: standard input)");
  add_input_options(c_build, build.in);
  c_build->footer(
      "Examples:\n"
      "  bloomery build -n 1000000 -p 0.01 -o urls.bloom urls.txt\n"
      "  cut -d, -f1 export.csv | bloomery build -n 5000000 -p 0.001 --kind blocked -o ids.bf -\n"
      "  bloomery build -p 0.004 --kind static -o sstable.flt keys.txt\n"
      "  bloomery build -n 10000 -p 0.01 --field 2 --delimiter , -o f.bf data.csv");

  filter_args add;
  auto* c_add = app.add_subcommand("add", "add keys to a filter file, in place and crash-safely");
  c_add->add_option("file", add.file, "filter file")->required();
  c_add->add_option("keyfiles", add.in.files, "key files ('-' or none: standard input)");
  add_input_options(c_add, add.in);
  c_add->footer(
      "Examples:\n  bloomery add urls.bloom new-urls.txt\n  echo key | bloomery add f.bf");

  filter_args rem;
  auto* c_remove =
      app.add_subcommand("remove", "remove keys from a counting or cuckoo filter file, in place");
  c_remove->add_option("file", rem.file, "filter file")->required();
  c_remove->add_option("keyfiles", rem.in.files, "key files ('-' or none: standard input)");
  add_input_options(c_remove, rem.in);
  c_remove->footer("Examples:\n  bloomery remove sessions.cbf expired.txt");

  query_args query;
  auto* c_query = app.add_subcommand(
      "query", "print the keys that are possibly present (like grep; -v: definitely absent)");
  c_query->add_option("file", query.f.file, "filter file")->required();
  c_query->add_option("keyfiles", query.f.in.files, "key files ('-' or none: standard input)");
  c_query->add_flag("-v,--invert-match", query.invert, "print the keys that are definitely absent");
  c_query->add_flag("-c,--count", query.count, "print only the number of lines");
  add_input_options(c_query, query.f.in);
  c_query->footer(
      "Exit status: 0 when a line was printed (or counted), 1 when none, 2 on error.\n"
      "Examples:\n"
      "  bloomery query urls.bloom candidates.txt\n"
      "  bloomery query -v urls.bloom candidates.txt > certainly-new.txt\n"
      "  echo example.com | bloomery query -c urls.bloom");

  std::string info_file;
  bool info_json = false;
  auto* c_info = app.add_subcommand("info", "describe a filter file");
  c_info->add_option("file", info_file, "filter file")->required();
  c_info->add_flag("--json", info_json, "one JSON object on standard output");
  c_info->footer("Examples:\n  bloomery info urls.bloom\n  bloomery info --json urls.bloom");

  std::vector<std::string> merge_in, inter_in;
  std::string merge_out, inter_out;
  auto* c_merge = app.add_subcommand("merge", "union of compatible filters");
  c_merge->add_option("-o,--output", merge_out, "the filter file to write")->required();
  c_merge->add_option("inputs", merge_in, "two or more filter files")->required();
  c_merge->footer("Examples:\n  bloomery merge -o all.bloom monday.bloom tuesday.bloom");
  auto* c_inter = app.add_subcommand("intersect", "intersection of compatible filters");
  c_inter->add_option("-o,--output", inter_out, "the filter file to write")->required();
  c_inter->add_option("inputs", inter_in, "two or more filter files")->required();
  c_inter->footer("Examples:\n  bloomery intersect -o both.bloom a.bloom b.bloom");

  std::uint64_t size_n = 0;
  double size_p = 0;
  bool size_json = false;
  auto* c_size = app.add_subcommand("size", "memory and parameters of every kind for n keys at p");
  c_size->add_option("-n,--capacity", size_n, "keys")->required();
  c_size->add_option("-p,--fpr", size_p, "target false-positive rate, in (0, 1)")->required();
  c_size->add_flag("--json", size_json, "JSON output");
  c_size->footer(
      "Examples:\n  bloomery size -n 5000000 -p 0.01\n  bloomery size -n 1000000 -p 1e-4 --json");

  advise_args adv;
  auto* c_adv = app.add_subcommand("advise", "which filter kind to use, ranked by memory");
  c_adv->add_option("-n,--capacity", adv.n, "keys")->required();
  c_adv->add_option("-p,--fpr", adv.p, "target false-positive rate, in (0, 1)")->required();
  c_adv->add_flag("--deletes", adv.deletes, "keys are removed as well as added");
  c_adv->add_flag("--static", adv.static_set, "the key set is known once and never changes");
  c_adv->add_flag("--grows", adv.grows, "the key count may exceed -n many times");
  c_adv->add_option("--key-bytes", adv.key_bytes, "average key length (exact-set baseline)");
  c_adv->add_flag("--json", adv.json, "JSON output");
  c_adv->footer(
      "Examples:\n  bloomery advise -n 1000000 -p 0.01 --deletes\n"
      "  bloomery advise -n 10000000 -p 0.001 --static --key-bytes 40 --json");

  explain_args ex;
  auto* c_ex = app.add_subcommand(
      "explain", "teaching mode: where each key goes and why a query says no or maybe");
  c_ex->add_option("-m,--bits", ex.m, "bits of a new, empty Bloom filter");
  c_ex->add_option("-k,--hashes", ex.k, "hash functions of that filter");
  c_ex->add_option("--seed", ex.seed, "hash seed of the new filter (default: the library's)");
  c_ex->add_option("args", ex.args,
                   "[FILE] KEY...: keys to insert (into FILE's filter, in memory; not static)");
  c_ex->add_option("--query", ex.queries, "keys to query after the inserts");
  c_ex->footer(
      "Examples:\n"
      "  bloomery explain -m 32 -k 3 example.com --query example.com nonexistent.com\n"
      "  bloomery explain urls.bloom --query example.com\n"
      "  bloomery explain sessions.cbf new-key --query new-key old-key\n"
      "  bloomery explain sstable.flt --query k1 k2   (static: no inserts, queries only)");

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

  if (c_build->parsed()) return cmd_build(build);
  if (c_add->parsed()) return cmd_add(add);
  if (c_remove->parsed()) return cmd_remove(rem);
  if (c_query->parsed()) return cmd_query(query);
  if (c_info->parsed()) return cmd_info(info_file, info_json);
  if (c_merge->parsed()) return cmd_combine<false>(merge_in, merge_out);
  if (c_inter->parsed()) return cmd_combine<true>(inter_in, inter_out);
  if (c_size->parsed()) return cmd_size(size_n, size_p, size_json);
  if (c_adv->parsed()) return cmd_advise(adv);
  if (c_ex->parsed()) return cmd_explain(ex);
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
