// BloomFilter, BlockedBloomFilter and CountingBloomFilter.
#include "bindings.hpp"
#include "methods.hpp"

namespace bloomery_py {
namespace {

constexpr const char* init_doc =
    R"(Sized for ``capacity`` keys at false-positive rate ``fpr`` (in (0, 1)).

``seed``: a 64-bit hash seed (default: the library's fixed seed, so filters built separately with
the same parameters can be merged). ``keyed=True``: hash with a fresh random secret key instead,
for filters that face untrusted keys (an attacker cannot aim keys at it offline); a keyed filter
merges only with its own copies, and its file holds the key. Raises ValueError for parameters out
of range (the message names the value and the allowed range).)";

constexpr const char* counting_init_doc =
    R"(Sized for ``capacity`` keys at false-positive rate ``fpr`` (in (0, 1)).

``counter_bits``: 4 (default) or 8; 8-bit counters take twice the memory and saturate later.
``seed`` and ``keyed``: as for BloomFilter.)";

template <class F>
void define_target_init(filter_class<F>& cls) {
  cls.def(py::init([](int_arg capacity, float_arg fpr, optional_int_arg seed, bool keyed) {
            const bloomery::target t{capacity_arg(capacity), fpr_arg(fpr)};
            return construct_released<F>(t, hasher_arg(seed, keyed));
          }),
          py::arg("capacity"), py::arg("fpr"), py::kw_only(), py::arg("seed") = py::none(),
          py::arg("keyed") = false, init_doc);
}

}  // namespace

void register_bloom_kinds(py::module_& m) {
  auto bloom = define_filter_class<bloomery::bloom_filter>(
      m, "BloomFilter",
      R"(The classic Bloom filter: m bits, k probes per key, the smallest Bloom filter for a
target false-positive rate (9.6 bits per key at 1%). Supports union (``|``) and intersection
(``&``) with filters of the same size and hashing. No removes: use a CountingBloomFilter or a
CuckooFilter for that.)",
      "", "");
  define_target_init(bloom);

  auto blocked = define_filter_class<bloomery::blocked_bloom_filter>(
      m, "BlockedBloomFilter",
      R"(The cache-line-blocked Bloom filter: all k bits of a key lie in one 64-byte line, so a
query costs one cache miss (the fastest lookups; a few % more memory than BloomFilter at 1%).
Supports union and intersection, like BloomFilter.)",
      "", "");
  define_target_init(blocked);

  auto counting = define_filter_class<bloomery::counting_bloom_filter>(
      m, "CountingBloomFilter",
      R"(The counting Bloom filter: a classic filter whose bits are 4-bit (or 8-bit) counters, so
keys can be removed again (``remove``, ``discard``); about 4x the memory of a BloomFilter at the
same rate. Counters saturate instead of overflowing: a saturated counter never drops to zero, so
there is never a false negative. Supports union (``|``: counters add), not intersection.)",
      "", "bloomery: counting filters have no intersection (their union, |, adds counters)");
  counting.def(py::init([](int_arg capacity, float_arg fpr, int_arg counter_bits,
                           optional_int_arg seed, bool keyed) {
                 const bloomery::target t{capacity_arg(capacity), fpr_arg(fpr)};
                 const bloomery::counting_options o{u32_arg(counter_bits, "counter_bits")};
                 return construct_released<bloomery::counting_bloom_filter>(
                     t, o, hasher_arg(seed, keyed));
               }),
               py::arg("capacity"), py::arg("fpr"), py::kw_only(), py::arg("counter_bits") = 4,
               py::arg("seed") = py::none(), py::arg("keyed") = false, counting_init_doc);
}

}  // namespace bloomery_py
