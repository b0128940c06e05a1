// The library's own exception types, beside the standard ones it also throws
// (std::invalid_argument for bad parameters, std::system_error for I/O).
#pragma once

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

namespace bloomery {

// A file or buffer that is not a valid bloomery filter of the expected kind. I/O failures
// (missing file, permissions) are std::system_error instead.
class format_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Memory for a filter (or a file's bytes) could not be allocated: parameters that pass validation
// can still ask for more than the machine has. A std::bad_alloc, so existing handlers still catch
// it, whose message starts "bloomery:" and says how many bytes were asked for, so a server can
// report it and go on instead of aborting.
class allocation_error : public std::bad_alloc {
 public:
  allocation_error(std::uint64_t bytes, const char* what)
      : bytes_(bytes),
        message_("bloomery: cannot allocate " + std::to_string(bytes) + " bytes for " + what) {}
  const char* what() const noexcept override { return message_.c_str(); }
  std::uint64_t bytes() const noexcept { return bytes_; }

 private:
  std::uint64_t bytes_;
  std::string message_;
};

}  // namespace bloomery
