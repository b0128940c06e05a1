// Compiled by clang (ctest clang_headers) with every warning an error: the library builds with
// GCC in this project, but its consumers use clang too, whose front end rejects or warns about
// things GCC accepts silently. Every public header, and the verbs of every filter instantiated.
#include <bloomery/bloomery.hpp>
#include <bloomery/file.hpp>
#include <bloomery/interop/redisbloom_bloom.hpp>
#include <bloomery/interop/redisbloom_cuckoo.hpp>
#include <bloomery/positions.hpp>

#include <cstdint>
#include <string>
#include <vector>

template <class F>
void use(const F& f) {
  (void)f.may_contain(std::uint64_t{1});
  (void)f.may_contain(std::string("key"));
  (void)f.stats();
  (void)bloomery::serialize(f);
  (void)bloomery::deserialize<F>(bloomery::serialize(f));
}

int main() {
  using namespace bloomery;
  const target t{.capacity = 100, .fpr = 0.01};
  const std::vector<std::uint64_t> keys = {1, 2, 3};
  bloom_filter a(t);
  a.insert(1);
  blocked_bloom_filter b(t);
  b.insert_concurrent(1);
  counting_bloom_filter c(t);
  c.insert(1);
  (void)c.remove(1);
  cuckoo_filter d(t);
  (void)d.insert(1);
  scalable_bloom_filter e(t);
  (void)e.insert(1);
  const static_filter s = static_filter::build(keys, 0.01);
  scalable_cuckoo_filter g(t);
  (void)g.insert(1);
  (void)g.remove(1);
  use(a), use(b), use(c), use(d), use(e), use(s), use(g);
  const any_filter any = deserialize_any(serialize(a));
  (void)any.may_contain(1);
  (void)positions(a, 1);
  bip37_filter h(t, 5, bip37_update::all);
  h.insert(std::string("key"));
  (void)bip37_filter::deserialize(h.serialize()).may_contain(std::vector<std::uint8_t>{1, 2});
  return 0;
}
