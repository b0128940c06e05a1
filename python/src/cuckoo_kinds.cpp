// CuckooFilter and ScalableCuckooFilter.
#include "bindings.hpp"
#include "methods.hpp"

namespace bloomery_py {
namespace {

constexpr const char* no_union =
    "bloomery: cuckoo filters have no union or intersection: two cuckoo tables cannot be merged "
    "without re-inserting every key, which may fail; insert the keys of both into one filter";

constexpr const char* cuckoo_init_doc =
    R"(Sized for ``capacity`` keys at false-positive rate ``fpr``.

``fpr`` must be at least about 1.16e-4 (16-bit fingerprints at 95% load); the fingerprint width is
the smallest that meets it. ``seed`` and ``keyed``: as for BloomFilter (a 64-bit seed; or a random
secret key for filters facing untrusted keys).)";

constexpr const char* scalable_cuckoo_init_doc =
    R"(Sized as CuckooFilter(capacity, fpr) for its first sub-filter.

The chain then grows by sub-filters ``expansion`` times larger than the previous one (default 2; a
power of two), up to ``max_sub_filters`` (default 32, at most 64). When either is given, the
filter is built from explicit parameters and ``target_fpr`` is the model's rate of the first
sub-filter at ``capacity`` keys (at most ``fpr``). ``seed`` and ``keyed``: as for BloomFilter.)";

}  // namespace

void register_cuckoo_kinds(py::module_& m) {
  auto cuckoo = define_filter_class<bloomery::cuckoo_filter>(
      m, "CuckooFilter",
      R"(The cuckoo filter: buckets of 4 fingerprints (semi-sorted), with removes (``remove``,
``discard``), smaller than Bloom filters below about 0.6% FPR. Its table can fill up: an insert
into a full table raises ``bloomery.FilterFull`` and changes nothing (every key inserted before is
still found). A key inserted twice is stored twice, and needs two removes. No union.)",
      no_union, no_union);
  cuckoo.def(py::init([](int_arg capacity, float_arg fpr, optional_int_arg seed, bool keyed) {
               const bloomery::target t{capacity_arg(capacity), fpr_arg(fpr)};
               return construct_released<bloomery::cuckoo_filter>(t, hasher_arg(seed, keyed));
             }),
             py::arg("capacity"), py::arg("fpr"), py::kw_only(), py::arg("seed") = py::none(),
             py::arg("keyed") = false, cuckoo_init_doc);

  auto scalable = define_filter_class<bloomery::scalable_cuckoo_filter>(
      m, "ScalableCuckooFilter",
      R"(The scalable cuckoo filter (RedisBloom's CF): a chain of cuckoo sub-filters that grows when
the newest one fills, with removes. Each sub-filter adds to the false-positive rate, so its rate
rises above ``target_fpr`` as it grows (``fpr()`` says by how much). ``bloomery.FilterFull`` once
the chain is at ``max_sub_filters`` and the newest sub-filter is full. No union.)",
      no_union, no_union);
  scalable.def(py::init([](int_arg capacity, float_arg fpr, optional_int_arg expansion,
                           optional_int_arg max_sub_filters, optional_int_arg seed, bool keyed) {
                 using bloomery::scalable_cuckoo_filter;
                 const bloomery::target t{capacity_arg(capacity), fpr_arg(fpr)};
                 bloomery::hasher h = hasher_arg(seed, keyed);
                 if (expansion.is_none() && max_sub_filters.is_none()) {
                   return construct_released<scalable_cuckoo_filter>(t, std::move(h));
                 }
                 bloomery::scalable_cuckoo_parameters p = scalable_cuckoo_filter::parameters_for(t);
                 if (!expansion.is_none()) p.expansion = u32_arg(expansion, "expansion");
                 if (!max_sub_filters.is_none()) {
                   p.max_sub_filters = u32_arg(max_sub_filters, "max_sub_filters");
                 }
                 return construct_released<scalable_cuckoo_filter>(p, std::move(h));
               }),
               py::arg("capacity"), py::arg("fpr"), py::kw_only(),
               py::arg("expansion") = py::none(), py::arg("max_sub_filters") = py::none(),
               py::arg("seed") = py::none(), py::arg("keyed") = false, scalable_cuckoo_init_doc);
}

}  // namespace bloomery_py
