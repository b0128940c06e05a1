// The examples' result: one table whose rows are measurements and whose columns are the variants
// compared (the exact set, the filter, ...), printed for a person or, with --json, as one JSON
// object. Each cell carries both forms, so the two outputs always agree.
#pragma once

#include <bloomery/support/json.hpp>
#include <bloomery/support/table.hpp>
#include <bloomery/support/text.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace bloomery::examples {

struct cell {
  std::string json;  // a JSON value: a number, a string literal, true/false or null
  std::string text;  // what the table shows
};

inline cell count(std::uint64_t v) {
  return {std::to_string(v), support::grouped(v)};
}
inline cell number(double v, const char* format = "%.3g") {
  return {support::json_number(v), support::fmt(format, v)};
}
// A fraction shown as a percentage: 0.0123 -> "1.230%" (JSON keeps the fraction).
inline cell percent(double fraction, int decimals = 3) {
  return {support::json_number(fraction), support::fmt("%.*f%%", decimals, fraction * 100.0)};
}
inline cell bytes(std::uint64_t v) {
  const double d = static_cast<double>(v);
  std::string t = v >= 1'000'000'000 ? support::fmt("%.2f GB", d / 1e9)
                  : v >= 1'000'000   ? support::fmt("%.2f MB", d / 1e6)
                  : v >= 1'000       ? support::fmt("%.1f KB", d / 1e3)
                                     : support::fmt("%llu B", static_cast<unsigned long long>(v));
  return {std::to_string(v), std::move(t)};
}
inline cell per_second(double v) {
  return {support::json_number(v), support::si_count(v) + "/s"};
}
inline cell seconds(double v) {
  return {support::json_number(v), support::fmt("%.3f s", v)};
}
inline cell text(std::string s) {
  return {support::json_quote(s), std::move(s)};
}
inline cell flag(bool b) {
  return {b ? "true" : "false", b ? "yes" : "no"};
}
inline cell none() {
  return {"null", "-"};
}

class report {
 public:
  report(std::string example, std::vector<std::string> columns)
      : example_(std::move(example)), columns_(std::move(columns)) {}

  // A setting of the run (keys, skew, fpr...): printed above the table, and under "params".
  void param(std::string key, cell value) {
    params_.emplace_back(std::move(key), std::move(value));
  }

  // One measurement across the variants: `key` names it in JSON, `label` in the table. Missing
  // trailing cells are null ("-").
  void row(std::string key, std::string label, std::vector<cell> cells) {
    cells.resize(columns_.size(), none());
    rows_.push_back({std::move(key), std::move(label), std::move(cells)});
  }

  // One cell, for examples that measure one variant (column) at a time: the row `key` is made
  // the first time it is set (rows keep that order), and the cell replaces the column's.
  void set(std::size_t column, const std::string& key, const std::string& label, cell value) {
    auto it =
        std::find_if(rows_.begin(), rows_.end(), [&](const row_data& r) { return r.key == key; });
    if (it == rows_.end()) {
      row(key, label, {});
      it = rows_.end() - 1;
    }
    it->cells.at(column) = std::move(value);
  }

  // A sentence under the table (and in JSON's "notes").
  void note(std::string line) { notes_.push_back(std::move(line)); }

  std::string text() const {
    std::string out = example_;
    for (std::size_t i = 0; i < params_.size(); ++i) {
      out.append(i == 0 ? ": " : ", ").append(params_[i].first).append(" ");
      out.append(params_[i].second.text);
    }
    out += "\n\n";
    std::vector<std::string> header{""};
    header.insert(header.end(), columns_.begin(), columns_.end());
    support::text_table t(std::move(header), {.first_left = true});
    for (const auto& r : rows_) {
      std::vector<std::string> line{r.label};
      for (const auto& c : r.cells) line.push_back(c.text);
      t.row(std::move(line));
    }
    out += t.str();
    if (!notes_.empty()) out += "\n";
    for (const auto& n : notes_) out.append("  ").append(n).append("\n");
    return out;
  }

  std::string json() const {
    support::json_writer w;
    w.begin_object().key("example").string(example_).key("params").begin_object();
    for (const auto& [key, value] : params_) w.key(key).raw(value.json);
    w.end_object().key("results").begin_object();
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      w.key(columns_[c]).begin_object();
      for (const auto& r : rows_) w.key(r.key).raw(r.cells[c].json);
      w.end_object();
    }
    w.end_object().key("notes").begin_array();
    for (const auto& n : notes_) w.string(n);
    w.end_array().end_object();
    std::string out = w.str();
    out += '\n';
    return out;
  }

  void print(bool as_json, std::FILE* out = stdout) const {
    const std::string s = as_json ? json() : text();
    std::fwrite(s.data(), 1, s.size(), out);
    std::fflush(out);
  }

 private:
  struct row_data {
    std::string key;
    std::string label;
    std::vector<cell> cells;
  };
  std::string example_;
  std::vector<std::string> columns_;
  std::vector<std::pair<std::string, cell>> params_;
  std::vector<row_data> rows_;
  std::vector<std::string> notes_;
};

}  // namespace bloomery::examples
