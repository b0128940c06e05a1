// The harness every application example shares: workloads (workload.hpp), measurement
// (measure.hpp), the result table and --json (report.hpp), and the command line below, so each
// example is only its own scenario. Exit status: 0 success, 1 the example's own check failed (a
// false negative, say), 2 bad arguments or input.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "bloomery/examples/measure.hpp"
#include "bloomery/examples/report.hpp"
#include "bloomery/examples/workload.hpp"

namespace bloomery::examples {

// Options every example has.
struct common_options {
  bool json = false;       // print the result as one JSON object
  std::uint64_t seed = 1;  // seed of every generated workload
};

inline void add_common_options(CLI::App& app, common_options& o) {
  app.add_flag("--json", o.json, "print the result as one JSON object on standard output");
  app.add_option("--seed", o.seed, "seed of the generated workload")->capture_default_str();
}

// Checks for options the examples share, whose messages name the allowed range: a rate strictly
// between 0 and 1 (--fpr), and a count of at least 1 (--keys, --users).
inline CLI::Validator open_unit_interval() {
  return CLI::Validator(
      [](std::string& s) {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (end == s.c_str() || *end != '\0' || !(v > 0 && v < 1)) {
          return s + " is invalid; allowed range is (0, 1), exclusive";
        }
        return std::string();
      },
      "in (0, 1)");
}
inline CLI::Validator at_least_one() {
  return CLI::Validator(
      [](std::string& s) {
        char* end = nullptr;
        const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
        if (end == s.c_str() || *end != '\0' || v == 0 || s.front() == '-') {
          return s + " is invalid; it must be a whole number of at least 1";
        }
        return std::string();
      },
      ">= 1");
}

// Parses the command line and runs `body`, which returns the exit status. Every error, from the
// command line or thrown by the body, is one line "NAME: error: ..." on standard error and
// status 2; --help prints the help and status 0.
template <class Body>
int run_example(CLI::App& app, int argc, char** argv, Body&& body) {
  const std::string name = app.get_name().empty() ? std::string("example") : app.get_name();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "%s: error: %s\n", name.c_str(), e.what());
    return 2;
  }
  try {
    return body();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", name.c_str(), e.what());
    return 2;
  }
}

}  // namespace bloomery::examples
