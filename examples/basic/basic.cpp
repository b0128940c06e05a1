// bloomery-example-basic: the library in one page. Builds a Bloom filter for a capacity and a
// false-positive rate, inserts keys, queries a present and an absent key, saves the filter, loads
// it back and takes the union of two filters. Exits 1 if any answer is not the expected one.
#include <bloomery/bloom_filter.hpp>
#include <bloomery/file.hpp>

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include <unistd.h>

using namespace std::string_view_literals;

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  std::printf("  %-52s %s\n", what, ok ? "ok" : "WRONG");
  if (!ok) ++failures;
}

}  // namespace

int main() {
  // Sized for 1,000 keys at a 1% false-positive rate: about 9.6 bits per key.
  bloomery::bloom_filter fruit({.capacity = 1000, .fpr = 0.01});
  for (const std::string_view key : {"apple"sv, "banana"sv, "cherry"sv}) fruit.insert(key);
  std::printf("bloom filter of %llu bytes holding about %llu keys\n",
              static_cast<unsigned long long>(fruit.size_in_bytes()),
              static_cast<unsigned long long>(fruit.approximate_count()));
  expect(fruit.may_contain("banana"sv), "an inserted key is possibly present");
  // An absent key says "no" except at the false-positive rate; this one is known to say "no".
  expect(!fruit.may_contain("durian"sv), "an absent key is definitely absent");

  // Save crash-safely (temporary file, fsync, rename) and load it back: the same filter.
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("bloomery-basic-" + std::to_string(::getpid()) + ".bloom");
  bloomery::save(fruit, path);
  const auto loaded = bloomery::load<bloomery::bloom_filter>(path);
  std::filesystem::remove(path);
  std::printf("saved to and loaded from %s\n", path.c_str());
  expect(loaded == fruit, "the loaded filter equals the saved one");
  expect(loaded.may_contain("cherry"sv), "the loaded filter knows its keys");

  // Filters built with the same capacity, rate and seed merge: the union holds both key sets.
  bloomery::bloom_filter veg({.capacity = 1000, .fpr = 0.01});
  veg.insert("carrot"sv);
  bloomery::bloom_filter both = fruit;
  both |= veg;
  expect(both.may_contain("carrot"sv) && both.may_contain("apple"sv),
         "the union holds the keys of both filters");

  std::printf("%s\n", failures == 0 ? "all answers as expected" : "some answers were WRONG");
  return failures == 0 ? 0 : 1;
}
