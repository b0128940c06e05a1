// The extension module bloomery._bloomery: the filter classes, files (load, loads, open and the
// memory-mapped MappedFilter), Guava's BloomFilter (guava.cpp), Parquet's split-block Bloom
// filters (parquet.cpp), the exceptions and the version.
// bloomery/__init__.py re-exports it.
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>

#include "bindings.hpp"
#include "methods.hpp"

namespace bloomery_py {
namespace {

// A read-only filter queried in place from a memory-mapped file, whatever its kind.
struct py_mapped {
  std::unique_ptr<bloomery::mapped_any_filter> map;  // null once closed
  std::filesystem::path path;
  bloomery::filter_kind kind = bloomery::filter_kind::bloom;
  mutable std::shared_mutex mutex;

  // fn(view) for the mapped filter; ValueError once closed. Call under the lock.
  template <class Fn>
  decltype(auto) visit(Fn&& fn) const {
    if (!map) throw std::invalid_argument("bloomery: the mapped filter is closed");
    return map->visit(std::forward<Fn>(fn));
  }
};

std::unique_ptr<py_mapped> map_any(const std::filesystem::path& path) {
  auto m = std::make_unique<py_mapped>();
  m->path = path;
  m->map = std::make_unique<bloomery::mapped_any_filter>(bloomery::map_file(path));
  m->kind = m->map->kind();
  return m;
}

constexpr const char* mapped_doc =
    R"(A read-only filter queried in place from a memory-mapped file: ``bloomery.open(path)``.

Opening maps the file and validates it (its checksum is verified once, which reads the pages
through the page cache); the payload is never copied into the process, and queries probe the
mapped pages in place, so a large filter opens fast and shares its memory with every process that
maps the same file. It answers ``in``, ``contains_many``, ``info``, ``fpr``, ``approx_len`` like
the filter it holds; it cannot be changed (``bloomery.load`` gives a filter you can change). Use it
as a context manager, or call ``close()``, to unmap the file; queries on a closed view raise
ValueError. The file must not be modified in place while mapped (``save`` replaces files by
rename, which is safe).

Thread safety: queries may run from any number of threads at once (with the GIL released for the
long ones); ``close`` waits for running queries.)";

void define_mapped(py::module_& m) {
  using P = py_mapped;
  py::class_<P> cls(m, "MappedFilter", mapped_doc);
  cls.attr("__module__") = "bloomery";
  cls.def(
      "__contains__",
      [](const P& self, key_arg key) {
        std::string scratch;
        return with_key(key.ptr(), scratch, [&](const auto& k) {
          return quick_locked<false>(self.mutex, [&] {
            return self.visit([&](const auto& v) { return v.may_contain(k); });
          });
        });
      },
      py::arg("key"), "``key in m``: as for the filter the file holds.");
  cls.def(
      "contains_many",
      [](const P& self, keys_arg keys) -> bools_result {
        return {contains_many(
            keys, [&](auto&& fn) { released_locked<false>(self.mutex, [&] { self.visit(fn); }); })};
      },
      py::arg("keys"),
      "The answer for every key of ``keys``: a list of bools, or a NumPy bool array for a 1-D "
      "buffer of integers (see ``Filter.contains_many``).");
  cls.def(
      "approx_len",
      [](const P& self) {
        return released_locked<false>(self.mutex, [&] {
          return self.visit([](const auto& v) { return v.approximate_count(); });
        });
      },
      "The number of distinct keys, estimated from the contents.");
  cls.def(
      "fpr",
      [](const P& self) {
        return released_locked<false>(self.mutex, [&] {
          return self.visit([](const auto& v) { return v.estimated_fpr(); });
        });
      },
      "The false-positive rate estimated from the contents.");
  cls.def(
      "info",
      [](const P& self) {
        return stats_dict(released_locked<false>(
            self.mutex, [&] { return self.visit([](const auto& v) { return v.stats(); }); }));
      },
      "The statistics as a dict, as ``Filter.info``.");
  const auto field = [](auto get) {
    return [get](const P& self) {
      return quick_locked<false>(self.mutex, [&] { return self.visit(get); });
    };
  };
  cls.def_property_readonly(
      "kind", [](const P& self) { return bloomery::to_string(self.kind); },
      "The kind's name (bloom, blocked, counting, cuckoo, scalable, static, scalable-cuckoo).");
  cls.def_property_readonly("capacity", field([](const auto& v) { return v.capacity(); }),
                            "The number of keys the filter was sized for.");
  cls.def_property_readonly("target_fpr", field([](const auto& v) { return v.target_fpr(); }),
                            "The false-positive rate the filter was sized for.");
  cls.def_property_readonly("size_in_bytes", field([](const auto& v) { return v.size_in_bytes(); }),
                            "The bytes of the filter's storage.");
  cls.def_property_readonly("keyed", field([](const auto& v) { return v.hash().keyed(); }),
                            "True when the filter hashes with a secret key.");
  cls.def_property_readonly(
      "seed",
      [](const P& self) -> py::object {
        const bloomery::hasher h = quick_locked<false>(
            self.mutex, [&] { return self.visit([](const auto& v) { return v.hash(); }); });
        if (h.keyed()) return py::none();
        return py::int_(h.seed());
      },
      "The hash seed, or None for a keyed filter.");
  cls.def_property_readonly(
      "path", [](const P& self) { return self.path; }, "The mapped file's path.");
  cls.def_property_readonly(
      "closed",
      [](const P& self) { return quick_locked<false>(self.mutex, [&] { return !self.map; }); },
      "True once ``close()`` has unmapped the file.");
  cls.def(
      "close", [](P& self) { released_locked<true>(self.mutex, [&] { self.map.reset(); }); },
      "Unmaps the file (waiting for running queries). Closing twice is harmless.");
  cls.def(
      "__enter__", [](P& self) -> P& { return self; }, py::return_value_policy::reference,
      "Returns the view itself.");
  cls.def(
      "__exit__",
      [](P& self, const py::object&, const py::object&, const py::object&) {
        released_locked<true>(self.mutex, [&] { self.map.reset(); });
        return false;
      },
      py::arg("exc_type"), py::arg("exc_value"), py::arg("traceback"), "Closes the view.");
  cls.def("__repr__", [](const P& self) {
    return std::string("<bloomery.MappedFilter kind=") + bloomery::to_string(self.kind) +
           " path='" + self.path.string() + "'" +
           (quick_locked<false>(self.mutex, [&] { return self.map != nullptr; }) ? "" : " closed") +
           ">";
  });
}

}  // namespace

void register_module_functions(py::module_& m) {
  define_mapped(m);
  m.def(
      "load",
      [](const std::filesystem::path& path) {
        std::optional<bloomery::any_filter> f;
        {
          py::gil_scoped_release nogil;
          f.emplace(bloomery::load_any(path));
        }
        return filter_result{f->visit([](auto& concrete) { return wrap(std::move(concrete)); })};
      },
      py::arg("path"),
      R"(Loads a filter file of any kind (written by ``save``, the ``bloomery`` CLI or the C++
library) and returns a filter of the right class. Raises ``bloomery.FormatError`` for a file that
is not a valid filter (the message names the file and what is wrong) and OSError for I/O
failures. The file is read header first, so a foreign file is refused before it is read whole.)");
  m.def(
      "loads",
      [](bytes_arg data) {
        Py_buffer view;
        if (PyObject_GetBuffer(data.ptr(), &view, PyBUF_SIMPLE) != 0) throw py::error_already_set();
        std::optional<bloomery::any_filter> f;
        try {
          py::gil_scoped_release nogil;
          f.emplace(bloomery::deserialize_any(std::span(static_cast<const std::byte*>(view.buf),
                                                        static_cast<std::size_t>(view.len))));
        } catch (...) {
          PyBuffer_Release(&view);
          throw;
        }
        PyBuffer_Release(&view);
        return filter_result{f->visit([](auto& concrete) { return wrap(std::move(concrete)); })};
      },
      py::arg("data"),
      R"(The filter in ``data`` (``bytes(f)``, or a file's bytes: any bytes-like object), of the
right class. Raises ``bloomery.FormatError`` for bytes that are not a valid filter.)");
  m.def(
      "open",
      [](const std::filesystem::path& path) {
        std::unique_ptr<py_mapped> mapped;
        {
          py::gil_scoped_release nogil;
          mapped = map_any(path);
        }
        return mapped;
      },
      py::arg("path"),
      R"(Maps a filter file read-only and returns a ``MappedFilter`` that answers queries in place,
without copying the filter into memory (see MappedFilter). Raises ``bloomery.FormatError`` or
OSError as ``load`` does.)");
  for (const char* name : {"load", "loads", "open"}) m.attr(name).attr("__module__") = "bloomery";
}

}  // namespace bloomery_py

PYBIND11_MODULE(_bloomery, m) {
  namespace py = pybind11;
  m.doc() = "The compiled part of bloomery's Python bindings; import bloomery instead.";
  bloomery_py::register_errors(m);
  py::class_<bloomery_py::filter_base>(
      m, "Filter",
      "The base class of every filter class (BloomFilter, ..., ScalableCuckooFilter), for "
      "isinstance() checks. It cannot be instantiated.")
      .attr("__module__") = "bloomery";
  bloomery_py::register_bloom_kinds(m);
  bloomery_py::register_cuckoo_kinds(m);
  bloomery_py::register_other_kinds(m);
  bloomery_py::register_module_functions(m);
  bloomery_py::register_guava(m);
  bloomery_py::register_parquet(m);
  bloomery_py::register_kind_table(m);  // after every class: it checks that each kind has one
  m.attr("__version__") = bloomery::version_string;
}
