// JSON output for the tools, demos, examples and benchmarks: string escaping, numbers in a chosen
// printf format, and a writer that places the commas, colons and brackets. Writing only: nothing
// in the project reads JSON back.
#pragma once

#include <bloomery/support/text.hpp>

#include <cmath>
#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace bloomery::support {

// s as a JSON string literal: quotes and backslashes escaped, newline and tab as \n and \t, the
// other control characters as \u00XX, every other byte (UTF-8 included) as it is.
inline std::string json_quote(std::string_view s) {
  std::string out(1, '"');
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
          out += fmt("\\u%04x", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

// v printed with the printf `format`, or null where JSON has no number (NaN and infinities).
inline std::string json_number(double v, const char* format = "%.6g") {
  return std::isfinite(v) ? fmt(format, v) : std::string("null");
}

// The separators between members and elements, and between a key and its value.
struct json_style {
  std::string_view comma;
  std::string_view colon;
};
inline constexpr json_style json_compact{",", ":"};
inline constexpr json_style json_spaced{", ", ": "};

// Builds one JSON document in a string. Calls chain, and the separators come from the calls'
// order: w.begin_object().key("n").integer(3).key("tags").begin_array().string("a").end_array()
// .end_object() gives {"n":3,"tags":["a"]} in the compact style. Only the nesting of begins and
// ends is the caller's to get right.
class json_writer {
 public:
  explicit json_writer(json_style style = json_compact) : style_(style) {}

  json_writer& begin_object() { return open('{'); }
  json_writer& end_object() { return close('}'); }
  json_writer& begin_array() { return open('['); }
  json_writer& end_array() { return close(']'); }

  // A member's name; its value is the next call.
  json_writer& key(std::string_view name) {
    separate();
    out_ += json_quote(name);
    out_ += style_.colon;
    after_key_ = true;
    return *this;
  }

  json_writer& string(std::string_view s) { return raw(json_quote(s)); }
  template <std::integral T>
  requires(!std::same_as<T, bool>) json_writer& integer(T v) { return raw(std::to_string(v)); }
  json_writer& number(double v, const char* format = "%.6g") { return raw(json_number(v, format)); }
  json_writer& boolean(bool b) { return raw(b ? "true" : "false"); }
  json_writer& null() { return raw("null"); }
  // A value already in JSON form, such as one made by json_quote or json_number earlier.
  json_writer& raw(std::string_view json) {
    separate();
    out_ += json;
    return *this;
  }

  // The next member or element starts a new line, indented by `indent` spaces (after its comma),
  // for documents laid out a row per line.
  json_writer& new_line(std::size_t indent) {
    line_indent_ = indent;
    new_line_ = true;
    return *this;
  }

  const std::string& str() const noexcept { return out_; }

 private:
  // Whatever comes before the next key or value: nothing after a key, else a comma unless it is
  // the first in its object or array, and a requested line break.
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    const bool first = first_.empty() || first_.back();
    if (!first_.empty()) first_.back() = false;
    if (new_line_) {
      if (!first) out_ += ',';
      out_ += '\n';
      out_.append(line_indent_, ' ');
      new_line_ = false;
    } else if (!first) {
      out_ += style_.comma;
    }
  }
  json_writer& open(char bracket) {
    separate();
    out_ += bracket;
    first_.push_back(true);
    return *this;
  }
  json_writer& close(char bracket) {
    first_.pop_back();
    out_ += bracket;
    return *this;
  }

  json_style style_;
  std::string out_;
  std::vector<bool> first_;  // per open object or array: nothing written in it yet
  bool after_key_ = false;
  bool new_line_ = false;
  std::size_t line_indent_ = 0;
};

}  // namespace bloomery::support
