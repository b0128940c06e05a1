// The outcomes of insert and remove, one type each for every filter, so that code written for one
// filter reads the same for another. Each converts to bool ("it worked"), so code written when
// these verbs returned bool keeps compiling and meaning the same. Verbs whose result must be
// looked at (a cuckoo insert, a counting remove, every check_and_insert) are [[nodiscard]].
#pragma once

#include <cstdint>

namespace bloomery {
namespace detail {

// An outcome code that tests true for its one success value.
template <class Code, Code Success>
class outcome {
 public:
  using code = Code;
  constexpr outcome(Code c) noexcept : code_(c) {}
  constexpr Code value() const noexcept { return code_; }
  constexpr operator bool() const noexcept { return code_ == Success; }
  friend constexpr bool operator==(outcome, outcome) = default;

 private:
  Code code_;
};

enum class insert_code : std::uint8_t {
  inserted,         // the key was not present before and is now
  already_present,  // the key answered "possibly present" before the insert
  full,             // a cuckoo table is full: nothing changed
};
enum class remove_code : std::uint8_t {
  removed,      // one occurrence of the key was removed
  not_present,  // the key is certainly absent; nothing changed
};

}  // namespace detail

struct insert_result : detail::outcome<detail::insert_code, detail::insert_code::inserted> {
  using outcome::outcome;
  static const insert_result inserted, already_present, full;
};
inline constexpr insert_result insert_result::inserted{code::inserted};
inline constexpr insert_result insert_result::already_present{code::already_present};
inline constexpr insert_result insert_result::full{code::full};

struct remove_result : detail::outcome<detail::remove_code, detail::remove_code::removed> {
  using outcome::outcome;
  static const remove_result removed, not_present;
};
inline constexpr remove_result remove_result::removed{code::removed};
inline constexpr remove_result remove_result::not_present{code::not_present};

constexpr const char* to_string(insert_result r) noexcept {
  switch (r.value()) {
    case insert_result::code::inserted:
      return "inserted";
    case insert_result::code::already_present:
      return "already_present";
    case insert_result::code::full:
      return "full";
  }
  return "unknown";
}

constexpr const char* to_string(remove_result r) noexcept {
  return r ? "removed" : "not_present";
}

}  // namespace bloomery
