// The extension module bloomery._bloomery: the filter classes, files (load, loads, open and the
// memory-mapped MappedFilter), the exceptions and the version. bloomery/__init__.py re-exports it.
#include <cstring>
#include <fstream>
#include <optional>
#include <variant>

#include "bindings.hpp"
#include "methods.hpp"

namespace bloomery_py {
namespace {

template <class List>
struct mapped_variant;
template <class... Fs>
struct mapped_variant<bloomery::type_list<Fs...>> {
  using type = std::variant<std::unique_ptr<bloomery::mapped_filter<Fs>>...>;
};

// A read-only filter queried in place from a memory-mapped file, whatever its kind.
struct py_mapped {
  mapped_variant<bloomery::filter_types>::type map;
  std::filesystem::path path;
  bloomery::filter_kind kind = bloomery::filter_kind::bloom;
  bool open = true;
  mutable std::shared_mutex mutex;

  // fn(view) for the mapped filter; ValueError once closed. Call under the lock.
  template <class Fn>
  decltype(auto) visit(Fn&& fn) const {
    if (!open) throw std::invalid_argument("bloomery: the mapped filter is closed");
    return std::visit([&](const auto& p) -> decltype(auto) { return fn(**p); }, map);
  }
};

// The kind field of a file that starts like a bloomery filter (docs/file-format.md: the magic,
// then the format version and the kind as little-endian u32 at offsets 8 and 12); nullopt for
// anything else, which map_file then describes precisely.
std::optional<bloomery::filter_kind> peek_kind(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char head[16];
  if (!in.read(reinterpret_cast<char*>(head), sizeof head)) return std::nullopt;
  if (std::memcmp(head, bloomery::format_magic, sizeof bloomery::format_magic) != 0) {
    return std::nullopt;
  }
  const std::uint32_t kind = std::uint32_t{head[12]} | std::uint32_t{head[13]} << 8 |
                             std::uint32_t{head[14]} << 16 | std::uint32_t{head[15]} << 24;
  if (!bloomery::is_known_kind(kind)) return std::nullopt;
  return static_cast<bloomery::filter_kind>(kind);
}

std::unique_ptr<py_mapped> map_any(const std::filesystem::path& path) {
  auto m = std::make_unique<py_mapped>();
  m->path = path;
  const std::optional<bloomery::filter_kind> kind = peek_kind(path);
  if (!kind) {  // not a filter file: the library says why (or, if it changed meanwhile, maps it)
    m->map = std::make_unique<bloomery::mapped_filter<bloomery::bloom_filter>>(path);
    return m;
  }
  m->kind = *kind;
  [&]<class... Fs>(bloomery::type_list<Fs...>) {
    (void)((Fs::kind == *kind &&
            (m->map = std::make_unique<bloomery::mapped_filter<Fs>>(path), true)) ||
           ...);
  }(bloomery::filter_types{});
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
      [](const P& self) { return quick_locked<false>(self.mutex, [&] { return !self.open; }); },
      "True once ``close()`` has unmapped the file.");
  cls.def(
      "close",
      [](P& self) {
        released_locked<true>(self.mutex, [&] {
          if (!self.open) return;
          self.open = false;
          std::visit([](auto& p) { p.reset(); }, self.map);
        });
      },
      "Unmaps the file (waiting for running queries). Closing twice is harmless.");
  cls.def(
      "__enter__", [](P& self) -> P& { return self; }, py::return_value_policy::reference,
      "Returns the view itself.");
  cls.def(
      "__exit__",
      [](P& self, const py::object&, const py::object&, const py::object&) {
        released_locked<true>(self.mutex, [&] {
          self.open = false;
          std::visit([](auto& p) { p.reset(); }, self.map);
        });
        return false;
      },
      py::arg("exc_type"), py::arg("exc_value"), py::arg("traceback"), "Closes the view.");
  cls.def("__repr__", [](const P& self) {
    return std::string("<bloomery.MappedFilter kind=") + bloomery::to_string(self.kind) +
           " path='" + self.path.string() + "'" +
           (quick_locked<false>(self.mutex, [&] { return self.open; }) ? "" : " closed") + ">";
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
  m.attr("__version__") = bloomery::version_string;
}
