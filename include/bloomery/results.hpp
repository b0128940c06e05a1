// The outcomes of insert and remove, one type each for every filter, so that code written for one
// filter reads the same for another. Each converts to bool ("it worked"), so code written when
// these verbs returned bool keeps compiling and meaning the same. Verbs whose result must be
// looked at (a cuckoo insert, a counting remove, every check_and_insert) are [[nodiscard]].
#pragma once

#include <cstdint>

namespace bloomery {

class insert_result {
 public:
  enum class code : std::uint8_t {
    inserted,         // the key was not present before and is now
    already_present,  // the key answered "possibly present" before the insert
    full,             // a cuckoo table is full: nothing changed
  };
  static const insert_result inserted, already_present, full;

  constexpr insert_result(code c) noexcept : code_(c) {}
  constexpr code value() const noexcept { return code_; }
  // True when the key was newly inserted (for a cuckoo insert: when it was stored).
  constexpr operator bool() const noexcept { return code_ == code::inserted; }
  friend constexpr bool operator==(insert_result, insert_result) = default;

 private:
  code code_;
};
inline constexpr insert_result insert_result::inserted{insert_result::code::inserted};
inline constexpr insert_result insert_result::already_present{insert_result::code::already_present};
inline constexpr insert_result insert_result::full{insert_result::code::full};

class remove_result {
 public:
  enum class code : std::uint8_t {
    removed,      // one occurrence of the key was removed
    not_present,  // the key is certainly absent; nothing changed
  };
  static const remove_result removed, not_present;

  constexpr remove_result(code c) noexcept : code_(c) {}
  constexpr code value() const noexcept { return code_; }
  constexpr operator bool() const noexcept { return code_ == code::removed; }
  friend constexpr bool operator==(remove_result, remove_result) = default;

 private:
  code code_;
};
inline constexpr remove_result remove_result::removed{remove_result::code::removed};
inline constexpr remove_result remove_result::not_present{remove_result::code::not_present};

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
  return r.value() == remove_result::code::removed ? "removed" : "not_present";
}

}  // namespace bloomery
