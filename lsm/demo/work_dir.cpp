#include "work_dir.hpp"

#include <stdexcept>
#include <string>

namespace bloomery_lsm_demo {

work_dir::work_dir(const config& c) : keep_(c.keep || c.dir.has_value()) {
  if (c.dir) {
    path_ = *c.dir;
    fs::create_directories(path_);
    return;
  }
  temp_.emplace("bloomery-lsm-demo");  // under $TMPDIR or /tmp
  if (keep_) temp_->keep();
  path_ = temp_->path();
}

fs::path work_dir::prepare(lsm::table_filter_kind kind) const {
  const fs::path sub = path_ / std::string(lsm::name_of(kind));
  if (fs::exists(sub)) {
    if (!fs::is_directory(sub)) {
      throw std::runtime_error(sub.string() + " exists and is not a directory");
    }
    for (const auto& e : fs::directory_iterator(sub)) {
      const std::string name = e.path().filename().string();
      const std::string ext = e.path().extension().string();
      const bool store_file =
          e.is_regular_file() && (name == "MANIFEST" || ext == ".sst" || ext == ".tmp");
      if (!store_file) {
        throw std::runtime_error(sub.string() + " holds " + name +
                                 ", which is not part of a bloomery::lsm store; refusing to "
                                 "delete it (choose another --dir)");
      }
    }
    fs::remove_all(sub);
  }
  fs::create_directories(sub);
  return sub;
}

}  // namespace bloomery_lsm_demo
