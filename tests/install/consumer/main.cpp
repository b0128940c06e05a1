// A downstream project: needs nothing but find_package(bloomery).
#include <bloomery/bloomery.hpp>

#include <cstdio>

int main() {
  bloomery::bloom_filter f({.capacity = 1000, .fpr = 0.01});
  f.insert("installed");
  if (!f.may_contain("installed")) return 1;
  std::printf("consumer ok: %llu bits, %u hashes\n", static_cast<unsigned long long>(f.bit_count()),
              f.hash_count());
  return 0;
}
