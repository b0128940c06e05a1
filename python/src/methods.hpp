// The methods of the filter classes, written once for every kind: which ones a class gets follows
// from what its C++ filter can do (bloomery/concepts.hpp).
#pragma once

#include <algorithm>
#include <cstdio>
#include <exception>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "bindings.hpp"

namespace bloomery_py {

inline constexpr const char* thread_safety_doc = R"(
Thread safety: every method may be called from any thread. The C++ filter allows any number of
concurrent queries but needs exclusive access for every write; this object enforces that with a
readers-writer lock. Queries (``in``, ``contains_many``, ``info``, ``fpr``, ``approx_len``,
``save``, ``bytes()``, copies) share the lock and run in parallel; writes (``add``, ``add_new``,
``update``, ``remove``, ``discard``, ``clear``, ``|=``, ``&=``) take it alone. Long operations
release the GIL while they work, so other Python threads keep running. ``update`` takes the lock
once per batch of keys: another thread may see part of an update, never a torn filter.
)";

// fn() holding the locks of `a` (exclusive when ExclusiveA, else shared) and `b` (shared), or
// only a's when they are the same object; the GIL is released meanwhile. Both locks are taken
// together (std::lock), so `a |= b` and `b |= a` in two threads cannot deadlock.
template <bool ExclusiveA, class F, class Fn>
decltype(auto) pair_locked(py_filter<F>& a, const py_filter<F>& b, Fn&& fn) {
  using lock_a = std::conditional_t<ExclusiveA, std::unique_lock<std::shared_mutex>,
                                    std::shared_lock<std::shared_mutex>>;
  py::gil_scoped_release nogil;
  if (&a == &b) {
    lock_a la(a.mutex);
    return fn();
  }
  lock_a la(a.mutex, std::defer_lock);
  std::shared_lock lb(b.mutex, std::defer_lock);
  std::lock(la, lb);
  return fn();
}

template <class F>
using filter_class = py::class_<py_filter<F>, filter_base>;

// The filter held by `obj` when it is an F filter; nullptr otherwise.
template <class F>
py_filter<F>* same_kind(py::handle obj) {
  if (!py::isinstance<py_filter<F>>(obj)) return nullptr;
  return &obj.cast<py_filter<F>&>();
}

template <class F>
void define_common(filter_class<F>& cls) {
  using P = py_filter<F>;
  cls.def(
      "__contains__",
      [](const P& self, key_arg key) {
        std::string scratch;
        return with_key(key.ptr(), scratch, [&](const auto& k) {
          return quick_locked<false>(self.mutex, [&] { return self.filter.may_contain(k); });
        });
      },
      py::arg("key"),
      "``key in f``: False when the key is certainly absent, True when it is possibly present "
      "(a false positive at about the filter's FPR). Raises TypeError for an object that is not "
      "a key.");
  cls.def(
      "contains_many",
      [](const P& self, keys_arg keys) -> bools_result {
        return {contains_many(keys, [&](auto&& fn) {
          released_locked<false>(self.mutex, [&] { fn(self.filter); });
        })};
      },
      py::arg("keys"),
      R"(The answer of ``key in f`` for every key of ``keys``, computed in batches in C++ with the
GIL released.

``keys`` is an iterable of keys (a list, tuple, generator...): the result is a list of bools in
the same order. A 1-D buffer of integers (a NumPy integer array, ``array.array``) is read in place
without a Python object per key: the result is then a NumPy bool array. A str, bytes or bytearray
is one key, not a collection: passing one raises TypeError.)");
  cls.def(
      "approx_len",
      [](const P& self) {
        return released_locked<false>(self.mutex, [&] { return self.filter.approximate_count(); });
      },
      "The number of distinct keys the filter holds, estimated from its contents (a filter cannot "
      "count exactly, so ``len(f)`` is not defined). Cuckoo filters count their stored "
      "fingerprints; static filters return their key count.");
  cls.def(
      "fpr",
      [](const P& self) {
        return released_locked<false>(self.mutex, [&] { return self.filter.estimated_fpr(); });
      },
      "The false-positive rate the filter has now, estimated from its actual contents (compare "
      "``target_fpr``).");
  cls.def(
      "info",
      [](const P& self) {
        return stats_dict(released_locked<false>(self.mutex, [&] { return self.filter.stats(); }));
      },
      R"(The filter's statistics as a dict, with the names of ``bloomery info --json``: kind, bits,
hashes (None for fingerprint filters), seed (None when keyed), hash, size_in_bytes, bits_per_key,
capacity, inserted, approximate_count, fill_ratio (None for a static filter), target_fpr,
estimated_fpr, then keyed and over_capacity, then the kind's own parameters (set_bits,
counter_bits, fingerprint_bits, sub_filters, ...).)");
  cls.def_property_readonly(
      "kind", [](const P&) { return bloomery::to_string(F::kind); },
      "The kind's name, as the CLI spells it: bloom, blocked, counting, cuckoo, scalable, static "
      "or scalable-cuckoo.");
  cls.def_property_readonly(
      "capacity",
      [](const P& self) {
        return quick_locked<false>(self.mutex, [&] { return self.filter.capacity(); });
      },
      "The number of keys the filter was sized for (scalable filters: the initial capacity; "
      "static filters: the distinct key count).");
  cls.def_property_readonly(
      "target_fpr",
      [](const P& self) {
        return quick_locked<false>(self.mutex, [&] { return self.filter.target_fpr(); });
      },
      "The false-positive rate the filter was sized for.");
  cls.def_property_readonly(
      "size_in_bytes",
      [](const P& self) {
        return quick_locked<false>(self.mutex, [&] { return self.filter.size_in_bytes(); });
      },
      "The bytes of the filter's storage (what the file's payload holds).");
  cls.def_property_readonly(
      "keyed",
      [](const P& self) {
        return quick_locked<false>(self.mutex, [&] { return self.filter.hash().keyed(); });
      },
      "True when the filter hashes with a secret key (``keyed=True``) instead of a public seed.");
  cls.def_property_readonly(
      "seed",
      [](const P& self) -> py::object {
        const bloomery::hasher h =
            quick_locked<false>(self.mutex, [&] { return self.filter.hash(); });
        if (h.keyed()) return py::none();
        return py::int_(h.seed());
      },
      "The hash seed, or None for a keyed filter (its key is never reported).");
  cls.def(
      "save",
      [](const P& self, const std::filesystem::path& path) {
        released_locked<false>(self.mutex, [&] { bloomery::save(self.filter, path); });
      },
      py::arg("path"),
      R"(Writes the filter to ``path`` in bloomery's file format, crash-safely: a temporary file
beside it, fsync, then a rename over the target, so an interrupted save leaves the previous file
intact. The CLI and the C++ library read the file. A keyed filter's file holds its secret key and
is written owner-only (0600). Raises OSError on I/O failures.)");
  cls.def(
      "__bytes__",
      [](const P& self) {
        const std::vector<std::byte> bytes =
            released_locked<false>(self.mutex, [&] { return bloomery::serialize(self.filter); });
        return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      },
      "``bytes(f)``: exactly the bytes ``save`` writes; ``bloomery.loads`` reads them back.");
  cls.def(
      "__reduce__",
      [](const py::object& self) {
        const py::module_ m = py::module_::import("bloomery");
        return py::make_tuple(m.attr("_from_bytes"), py::make_tuple(self.attr("__bytes__")()));
      },
      "Pickles the filter as ``bytes(f)``; unpickling reads them as ``bloomery.loads`` does.");
  const auto copy = [](const P& self) {
    F copied = released_locked<false>(self.mutex, [&] { return self.filter; });
    return wrap(std::move(copied));
  };
  cls.def("copy", copy, "A new, independent filter equal to this one.");
  cls.def("__copy__", copy, "A new, independent filter equal to this one.");
  cls.def(
      "__deepcopy__", [copy](const P& self, const py::object&) { return copy(self); },
      py::arg("memo"), "A new, independent filter equal to this one.");
  cls.def(
      "__eq__",
      [](P& self, const py::object& other) -> py::object {
        const P* o = same_kind<F>(other);
        if (o == nullptr) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        return py::bool_(pair_locked<false>(self, *o, [&] { return self.filter == o->filter; }));
      },
      py::arg("other"),
      "True when both filters have the same kind, shape, hashing and contents, so they answer "
      "every query alike (capacity and insert counts are not compared).");
  cls.attr("__hash__") = py::none();
  cls.def("__repr__", [](const P& self) {
    return quick_locked<false>(self.mutex, [&] {
      char fpr[32];
      std::snprintf(fpr, sizeof fpr, "%.6g", self.filter.target_fpr());
      return std::string("<bloomery.") + class_name<F> +
             " capacity=" + std::to_string(self.filter.capacity()) + " target_fpr=" + fpr +
             " size_in_bytes=" + std::to_string(self.filter.size_in_bytes()) +
             (self.filter.hash().keyed() ? " keyed" : "") + ">";
    });
  });
  cls.def(
      "__sizeof__",
      [](const P& self) {
        return sizeof(P) +
               quick_locked<false>(self.mutex, [&] { return self.filter.size_in_bytes(); });
      },
      "The object's memory, the filter's storage included.");
}

template <class F>
void define_inserts(filter_class<F>& cls) {
  using P = py_filter<F>;
  cls.def(
      "add",
      [](P& self, key_arg key) {
        std::string scratch;
        with_key(key.ptr(), scratch, [&](const auto& k) {
          quick_locked<true>(self.mutex, [&] {
            bloomery::insert_result r = bloomery::insert_result::full;
            try {
              r = self.filter.insert(k);
            } catch (
                const std::length_error& e) {  // a scalable Bloom filter at its last sub-filter
              throw_full(self.filter, 0, e.what());
            }
            if (r == bloomery::insert_result::full) throw_full(self.filter, 0);
          });
        });
      },
      py::arg("key"),
      R"(Inserts ``key``. Keys are str (their UTF-8 bytes), bytes, bytearray, memoryview, or int in
[-2**63, 2**64); anything else raises TypeError, and an int out of range OverflowError. A cuckoo
filter whose table is full (or a scalable filter that can grow no more) raises
``bloomery.FilterFull`` and changes nothing.)");
  cls.def(
      "add_new",
      [](P& self, key_arg key) {
        std::string scratch;
        return with_key(key.ptr(), scratch, [&](const auto& k) {
          return quick_locked<true>(self.mutex, [&] {
            bloomery::insert_result r = bloomery::insert_result::full;
            try {
              r = self.filter.check_and_insert(k);
            } catch (const std::length_error& e) {
              throw_full(self.filter, 0, e.what());
            }
            if (r == bloomery::insert_result::full) throw_full(self.filter, 0);
            return r == bloomery::insert_result::inserted;
          });
        });
      },
      py::arg("key"),
      R"(Inserts ``key`` and returns True when it was new (the filter answered "certainly absent"
before), False when it was possibly present already: the seen-check of a crawler or a dedup
stage in one call. A False can be a false positive, at about the filter's FPR. Raises
``bloomery.FilterFull`` when a cuckoo table is full.)");
  cls.def(
      "update",
      [](P& self, const py::args& iterables) {
        for (const py::handle keys : iterables) {
          std::uint64_t added = 0;
          if (auto buf = int_buffer::of(keys)) {
            released_locked<true>(self.mutex, [&] {
              const std::size_t n = buf->size();
              if (const std::uint64_t* all = buf->contiguous_u64()) {
                insert_all(self.filter, std::span<const std::uint64_t>(all, n), added);
                return;
              }
              std::vector<std::uint64_t> tmp(std::min(n, batch_keys));
              for (std::size_t first = 0; first < n; first += tmp.size()) {
                const std::size_t count = std::min(tmp.size(), n - first);
                buf->copy(first, count, tmp.data());
                insert_all(self.filter, std::span<const std::uint64_t>(tmp.data(), count), added);
              }
            });
            continue;
          }
          key_source source(keys, "update");
          key_batch batch;
          for (bool more = true; more;) {
            // The keys before a bad one are inserted, then its error is raised.
            std::exception_ptr error;
            try {
              more = source.fill(batch, batch_keys, batch_bytes);
            } catch (...) {
              error = std::current_exception();
              more = false;
            }
            if (batch.size() != 0) {
              released_locked<true>(self.mutex, [&] {
                batch.for_each_run(
                    [&](auto run, std::size_t) { insert_all(self.filter, run, added); });
              });
            }
            if (error) std::rethrow_exception(error);
          }
        }
      },
      R"(Inserts every key of each iterable, in batches, in C++ with the GIL released. A 1-D buffer
of integers (a NumPy integer array) is read in place. A str, bytes or bytearray is one key, not a
collection (TypeError: use ``add``). On a bad key, the keys before it are inserted and the error
is raised. When a cuckoo table fills up, ``bloomery.FilterFull`` is raised after the keys before
the one that did not fit; its ``added`` attribute says how many keys of that iterable went in.)");
  cls.def(
      "clear", [](P& self) { released_locked<true>(self.mutex, [&] { self.filter.clear(); }); },
      "Removes every key (a scalable filter goes back to one sub-filter).");
}

template <class F>
void define_removes(filter_class<F>& cls) {
  using P = py_filter<F>;
  const auto remove = [](P& self, key_arg key) {
    std::string scratch;
    return with_key(key.ptr(), scratch, [&](const auto& k) {
      return quick_locked<true>(self.mutex,
                                [&] { return static_cast<bool>(self.filter.remove(k)); });
    });
  };
  cls.def(
      "remove",
      [remove](P& self, key_arg key) {
        if (!remove(self, key)) {
          PyErr_SetObject(PyExc_KeyError, key.ptr());
          throw py::error_already_set();
        }
      },
      py::arg("key"),
      R"(Removes one occurrence of ``key``. Raises KeyError when the key is certainly absent (the
filter then is unchanged). Remove only keys you inserted: removing a key that was never inserted
but answers "possibly present" (a false positive) takes away another key's trace and can make
that key read as absent; no filter can tell the two apart.)");
  cls.def("discard", remove, py::arg("key"),
          R"(Removes one occurrence of ``key`` if the filter may hold it: returns True when it
removed one, False when the key was certainly absent (nothing changed). The same caution as
``remove``: remove only keys you inserted.)");
}

template <class F>
void define_set_operators(filter_class<F>& cls, const char* no_union, const char* no_intersection) {
  using P = py_filter<F>;
  if constexpr (bloomery::mergeable_filter<F>) {
    (void)no_union;
    cls.def(
        "__or__",
        [](P& self, filter_arg other) -> filter_result {
          P* o = same_kind<F>(other);
          if (o == nullptr) return {py::reinterpret_borrow<py::object>(Py_NotImplemented)};
          F merged = pair_locked<false>(self, *o, [&] {
            F r = self.filter;
            r |= o->filter;
            return r;
          });
          return {wrap(std::move(merged))};
        },
        py::arg("other"),
        "``f | g``: a new filter that answers \"possibly present\" for every key of either. Both "
        "need the same kind, size and hashing (seed or key); otherwise ValueError names the "
        "difference.");
    cls.def(
        "__ior__",
        [](P& self, filter_arg other) -> filter_result {
          P* o = same_kind<F>(other);
          if (o == nullptr) return {py::reinterpret_borrow<py::object>(Py_NotImplemented)};
          pair_locked<true>(self, *o, [&] { self.filter |= o->filter; });
          return {py::cast(&self, py::return_value_policy::reference)};
        },
        py::arg("other"), "``f |= g``: the union, in place (see ``__or__``).");
  } else {
    const auto refuse = [no_union](const P&, filter_arg) -> filter_result {
      throw py::type_error(no_union);
    };
    cls.def("__or__", refuse, py::arg("other"), no_union);
    cls.def("__ior__", refuse, py::arg("other"), no_union);
  }
  if constexpr (bloomery::intersectable_filter<F>) {
    (void)no_intersection;
    cls.def(
        "__and__",
        [](P& self, filter_arg other) -> filter_result {
          P* o = same_kind<F>(other);
          if (o == nullptr) return {py::reinterpret_borrow<py::object>(Py_NotImplemented)};
          F both = pair_locked<false>(self, *o, [&] {
            F r = self.filter;
            r &= o->filter;
            return r;
          });
          return {wrap(std::move(both))};
        },
        py::arg("other"),
        "``f & g``: a new filter that answers \"possibly present\" for every key both held (and "
        "possibly others: bits set by different keys in each can survive). Same requirements as "
        "``|``.");
    cls.def(
        "__iand__",
        [](P& self, filter_arg other) -> filter_result {
          P* o = same_kind<F>(other);
          if (o == nullptr) return {py::reinterpret_borrow<py::object>(Py_NotImplemented)};
          pair_locked<true>(self, *o, [&] { self.filter &= o->filter; });
          return {py::cast(&self, py::return_value_policy::reference)};
        },
        py::arg("other"), "``f &= g``: the intersection, in place (see ``__and__``).");
  } else {
    const auto refuse = [no_intersection](const P&, filter_arg) -> filter_result {
      throw py::type_error(no_intersection);
    };
    cls.def("__and__", refuse, py::arg("other"), no_intersection);
    cls.def("__iand__", refuse, py::arg("other"), no_intersection);
  }
}

// `key in f` straight from the type's sq_contains slot, so the hot path of set-like code skips
// the method lookup and pybind11's argument dispatch (several times faster than the method). The
// same conversion, lock and answer as __contains__.
template <class F>
int contains_slot(PyObject* self, PyObject* key) {
  try {
    const auto& p = py::handle(self).cast<const py_filter<F>&>();
    std::string scratch;
    const bool hit = with_key(key, scratch, [&](const auto& k) {
      return quick_locked<false>(p.mutex, [&] { return p.filter.may_contain(k); });
    });
    return hit ? 1 : 0;
  } catch (py::error_already_set& e) {
    e.restore();
    return -1;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return -1;
  }
}

// A filter class named `name` with every method its kind supports. `doc` is the class docstring, to
// which the thread-safety rules are appended.
template <class F>
filter_class<F> define_filter_class(py::module_& m, const char* name, const std::string& doc,
                                    const char* no_union, const char* no_intersection) {
  class_name<F> = name;
  // pybind11 keeps the pointer: the docstring must outlive the module.
  static const std::string full_doc = doc + "\n" + thread_safety_doc;
  filter_class<F> cls(m, name, full_doc.c_str());
  cls.attr("__module__") = "bloomery";
  define_common<F>(cls);
  if constexpr (bloomery::insertable_filter<F>) define_inserts<F>(cls);
  if constexpr (bloomery::removable_filter<F>) define_removes<F>(cls);
  define_set_operators<F>(cls, no_union, no_intersection);
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  type->tp_as_sequence->sq_contains = &contains_slot<F>;
  PyType_Modified(type);
  return cls;
}

}  // namespace bloomery_py
