// Where the demo builds its stores: --dir, or a temporary directory.
#pragma once

#include <bloomery/lsm/store.hpp>
#include <bloomery/support/temp_dir.hpp>

#include <optional>

#include "options.hpp"

namespace bloomery_lsm_demo {

namespace lsm = bloomery::lsm;

// The directory holding one store per filter kind. A temporary one (no --dir) is removed at exit
// unless --keep, and each store in it is deleted as soon as it has been measured, so the disk
// holds one store at a time (about 2 GB at full scale, not 8).
class work_dir {
 public:
  explicit work_dir(const config& c);
  work_dir(const work_dir&) = delete;
  work_dir& operator=(const work_dir&) = delete;

  // An empty subdirectory for `kind`. A previous run's store there is deleted (stores only add
  // tables, so measuring on top of it would be wrong); anything that does not look like a store
  // is left alone and reported instead, since --dir may point somewhere precious.
  fs::path prepare(lsm::table_filter_kind kind) const;
  void done_with(lsm::table_filter_kind kind) const {
    if (temp_ && !keep_) fs::remove_all(path_ / std::string(lsm::name_of(kind)));
  }
  const fs::path& path() const noexcept { return path_; }
  bool kept() const noexcept { return keep_; }

 private:
  fs::path path_;
  bool keep_;
  std::optional<bloomery::support::temp_dir> temp_;  // none with --dir
};

}  // namespace bloomery_lsm_demo
