// A fresh temporary directory that is removed, with everything in it, when it goes out of scope.
#pragma once

#include <stdlib.h>  // mkdtemp

#include <cerrno>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace bloomery::support {

class temp_dir {
 public:
  // A new directory `<prefix>-XXXXXX` under the system's temporary directory ($TMPDIR or /tmp).
  explicit temp_dir(std::string_view prefix = "bloomery-test") {
    std::string pattern =
        (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::system_error(errno, std::generic_category(),
                              "cannot create a directory like " + pattern);
    }
    path_ = pattern;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ignored;  // a destructor cannot report; a leftover temp dir is harmless
    if (!kept_) std::filesystem::remove_all(path_, ignored);
  }

  const std::filesystem::path& path() const noexcept { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

  // Leaves the directory in place at scope exit (a --keep option, or a failure to look into).
  void keep() noexcept { kept_ = true; }

 private:
  std::filesystem::path path_;
  bool kept_ = false;
};

}  // namespace bloomery::support
