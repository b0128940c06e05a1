// A downstream LevelDB user: needs nothing but find_package(bloomery) and bloomery::leveldb.
#include <leveldb/db.h>

#include <bloomery/leveldb/filter_policy.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: leveldb_consumer DIRECTORY\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::filesystem::remove_all(dir);
  auto policy = bloomery::leveldb_integration::new_filter_policy();
  leveldb::Options options;
  options.create_if_missing = true;
  options.filter_policy = policy.get();
  leveldb::DB* raw = nullptr;
  leveldb::Status s = leveldb::DB::Open(options, dir, &raw);
  if (!s.ok()) {
    std::fprintf(stderr, "open: %s\n", s.ToString().c_str());
    return 1;
  }
  std::unique_ptr<leveldb::DB> db(raw);  // closed before the policy it points to
  for (int i = 0; i < 1000; ++i) {
    const std::string key = "key" + std::to_string(i);
    if (!db->Put({}, key, "value" + std::to_string(i)).ok()) return 1;
  }
  db->CompactRange(nullptr, nullptr);  // write tables, so Gets go through the filters
  std::string value;
  if (!db->Get({}, "key123", &value).ok() || value != "value123") return 1;
  if (!db->Get({}, "absent", &value).IsNotFound()) return 1;
  db.reset();
  std::filesystem::remove_all(dir);
  std::printf("leveldb consumer ok: %s\n", policy->Name());
  return 0;
}
