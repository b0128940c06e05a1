// A plain-text table for terminal output: columns as wide as their widest cell, numbers
// right-aligned, an optional header underlined with dashes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace bloomery::support {

struct table_style {
  std::size_t indent = 2;   // spaces before the first column
  std::size_t gap = 2;      // spaces between columns
  bool first_left = false;  // the first column left-aligned (labels); the others always right
};

class text_table {
 public:
  explicit text_table(table_style style = {}) : style_(style) {}
  explicit text_table(std::vector<std::string> header, table_style style = {})
      : style_(style), header_(std::move(header)) {}

  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }

  // The whole table, one line per row, each ending in '\n' and without trailing spaces.
  std::string str() const {
    std::vector<std::size_t> width;
    const auto widen = [&](const std::vector<std::string>& r) {
      width.resize(std::max(width.size(), r.size()), 0);
      for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
    };
    widen(header_);
    for (const auto& r : rows_) widen(r);
    std::string out;
    const auto line = [&](const std::vector<std::string>& r, bool rule) {
      std::string s(style_.indent, ' ');
      for (std::size_t c = 0; c < width.size(); ++c) {
        const std::string cell = rule           ? std::string(width[c], '-')
                                 : c < r.size() ? r[c]
                                                : std::string();
        const std::size_t pad = width[c] - cell.size();
        if (c != 0) s.append(style_.gap, ' ');
        if (c == 0 && style_.first_left) {
          s.append(cell).append(pad, ' ');
        } else {
          s.append(pad, ' ').append(cell);
        }
      }
      s.erase(s.find_last_not_of(' ') + 1);
      out.append(s).append("\n");
    };
    if (!header_.empty()) {
      line(header_, false);
      line(header_, true);
    }
    for (const auto& r : rows_) line(r, false);
    return out;
  }

  void print(std::FILE* out = stdout) const { std::fputs(str().c_str(), out); }

 private:
  table_style style_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace bloomery::support
