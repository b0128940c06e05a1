// ScalableBloomFilter and StaticFilter.
#include <limits>
#include <optional>

#include "bindings.hpp"
#include "methods.hpp"

namespace bloomery_py {
namespace {

constexpr const char* scalable_init_doc =
    R"(Starts with one sub-filter for ``capacity`` keys and grows as keys arrive, keeping the compound false-positive rate below ``fpr`` however many come.

``growth``: each sub-filter holds ``growth`` times the keys of the previous one, in [1, 16]
(default 2). ``tightening``: each sub-filter's rate is ``tightening`` times the previous one's,
in (0, 1) (default 0.85). ``seed`` and ``keyed``: as for BloomFilter.)";

constexpr const char* static_no_init =
    "bloomery: a StaticFilter is built once from all its keys: use StaticFilter.build(keys, fpr)";

constexpr const char* build_doc =
    R"(Builds a static filter (a binary fuse filter) from every key of ``keys``.

``keys``: an iterable of keys, all bytes-like (str, bytes, bytearray, memoryview) or all int (a
mix of the two raises TypeError), or a 1-D buffer of integers such as a NumPy array, read in
place. Duplicates are fine. ``fpr`` must lie in [2**-32, 1): the filter delivers 2**-r for the
fewest r with 2**-r <= ``fpr`` (r-bit fingerprints: 7 at 1%, about 7.5 bits per key). The build
runs with the GIL released. ``seed`` and ``keyed``: as for BloomFilter.)";

}  // namespace

void register_other_kinds(py::module_& m) {
  auto scalable = define_filter_class<bloomery::scalable_bloom_filter>(
      m, "ScalableBloomFilter",
      R"(The scalable Bloom filter: a list of classic filters that grows as keys arrive, so it needs
no capacity guess up front, while its false-positive rate stays below the target. Keys already
answered "possibly present" are skipped on insert, so duplicates do not use up capacity. Supports
union (``|``) with a filter of the same options, hashing and number of sub-filters; no
intersection, no removes.)",
      "", "bloomery: scalable filters have no intersection (only union, |)");
  scalable.def(py::init([](int_arg capacity, float_arg fpr, float_arg growth, float_arg tightening,
                           optional_int_arg seed, bool keyed) {
                 const bloomery::target t{capacity_arg(capacity), fpr_arg(fpr)};
                 const bloomery::scalable_options o{real_arg(growth, "growth"),
                                                    real_arg(tightening, "tightening")};
                 return construct_released<bloomery::scalable_bloom_filter>(
                     t, o, hasher_arg(seed, keyed));
               }),
               py::arg("capacity"), py::arg("fpr"), py::kw_only(), py::arg("growth") = 2.0,
               py::arg("tightening") = 0.85, py::arg("seed") = py::none(), py::arg("keyed") = false,
               scalable_init_doc);

  auto fixed = define_filter_class<bloomery::static_filter>(
      m, "StaticFilter",
      R"(The static filter: a binary fuse filter for a set that never changes (an SSTable's keys,
a shipped blocklist), built once from all its keys with ``StaticFilter.build(keys, fpr)``. The
smallest filter here (about 7.5 bits per key at 1%, any rate 2^-r for r = 1..32), three or four
memory accesses per query, and immutable: no add, no remove, no union.)",
      "bloomery: static filters have no union or intersection: build one StaticFilter from both "
      "key sets",
      "bloomery: static filters have no union or intersection: build one StaticFilter from both "
      "key sets");
  fixed.def(py::init([](const py::args&,
                        const py::kwargs&) -> std::unique_ptr<py_filter<bloomery::static_filter>> {
              throw py::type_error(static_no_init);
            }),
            static_no_init);
  fixed.def_static(
      "build",
      [](keys_arg keys, float_arg fpr, optional_int_arg seed, bool keyed) {
        using bloomery::static_filter;
        const double p = fpr_arg(fpr);
        bloomery::hasher h = hasher_arg(seed, keyed);
        std::optional<static_filter> built;
        if (auto buf = int_buffer::of(keys)) {
          py::gil_scoped_release nogil;
          if (const std::uint64_t* all = buf->contiguous_u64()) {
            built.emplace(static_filter::build(std::span(all, buf->size()), p, std::move(h)));
          } else {
            std::vector<std::uint64_t> copy(buf->size());
            buf->copy(0, copy.size(), copy.data());
            built.emplace(static_filter::build(copy, p, std::move(h)));
          }
        } else {
          key_source source(keys, "build");
          key_batch batch;
          source.fill(batch, std::numeric_limits<std::size_t>::max(),
                      std::numeric_limits<std::size_t>::max());
          if (batch.runs().size() > 1) {
            throw py::type_error(
                "bloomery: StaticFilter.build needs keys of one type: all bytes-like (str, bytes, "
                "bytearray, memoryview) or all int, not a mix");
          }
          py::gil_scoped_release nogil;
          if (batch.runs().empty()) {
            built.emplace(static_filter::build(std::span<const std::uint64_t>(), p, std::move(h)));
          } else if (const key_batch::run& r = batch.runs().front(); r.integers) {
            built.emplace(static_filter::build(batch.integer_keys(r), p, std::move(h)));
          } else {
            built.emplace(static_filter::build(batch.byte_keys(r), p, std::move(h)));
          }
        }
        return static_result{wrap(std::move(*built))};
      },
      py::arg("keys"), py::arg("fpr"), py::kw_only(), py::arg("seed") = py::none(),
      py::arg("keyed") = false, build_doc);
  fixed.def_static("kept_build_scratch_bytes", &bloomery::static_filter::kept_build_scratch_bytes,
                   R"(Bytes of construction scratch the calling thread keeps for its next
``build`` (at most 32 MiB; 0 before its first build and after ``release_build_scratch()``).)");
  fixed.def_static("release_build_scratch", &bloomery::static_filter::release_build_scratch,
                   R"(Frees the construction scratch the calling thread keeps, for a program done
building filters for a while; the next ``build`` allocates afresh.)");
}

}  // namespace bloomery_py
