// What the Python classes over bloomery's filters share: one template (py_filter<F>) for every
// kind, the locks that make each object safe to share between threads, the argument and result
// types, and the batched queries and inserts (methods.hpp defines the methods). Uses only the
// library's public headers.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl/filesystem.h>

#include <bloomery/bloomery.hpp>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "keys.hpp"

namespace bloomery_py {

namespace py = pybind11;

// Keys converted per batch before the filter works on them with the GIL released.
inline constexpr std::size_t batch_keys = 8192;
inline constexpr std::size_t batch_bytes = std::size_t{1} << 20;

// ------------------------------------------------------------------------------------------------
// Arguments. The methods take their arguments as they come and convert them themselves, so that a
// wrong one gets bloomery's message, not pybind11's list of overloads; arg_of<Name> carries the
// object, and Name the type that help() shows for it.

template <class Name>
struct arg_of {
  py::handle value;
  PyObject* ptr() const noexcept { return value.ptr(); }
  bool is_none() const noexcept { return value.is_none(); }
  operator py::handle() const noexcept { return value; }  // NOLINT(google-explicit-constructor)
};

#define BLOOMERY_PY_ARG_NAME(tag, text)                        \
  struct tag {                                                 \
    static constexpr auto name = py::detail::const_name(text); \
  }
BLOOMERY_PY_ARG_NAME(key_name, "Key");
BLOOMERY_PY_ARG_NAME(keys_name, "Iterable[Key]");
BLOOMERY_PY_ARG_NAME(int_name, "int");
BLOOMERY_PY_ARG_NAME(optional_int_name, "int | None");
BLOOMERY_PY_ARG_NAME(float_name, "float");
BLOOMERY_PY_ARG_NAME(filter_name, "Filter");
BLOOMERY_PY_ARG_NAME(bytes_name, "bytes");
BLOOMERY_PY_ARG_NAME(bools_name, "list[bool] | numpy.ndarray");
BLOOMERY_PY_ARG_NAME(static_name, "StaticFilter");
BLOOMERY_PY_ARG_NAME(text_name, "str");
BLOOMERY_PY_ARG_NAME(guava_key_name, "str | bytes | int");
BLOOMERY_PY_ARG_NAME(parquet_key_name, "str | bytes | int | float");
#undef BLOOMERY_PY_ARG_NAME

using key_arg = arg_of<key_name>;                    // one key
using keys_arg = arg_of<keys_name>;                  // an iterable of keys or a buffer of integers
using int_arg = arg_of<int_name>;                    // capacity, counter_bits
using optional_int_arg = arg_of<optional_int_name>;  // seed, expansion, max_sub_filters
using float_arg = arg_of<float_name>;                // fpr, growth, tightening
using filter_arg = arg_of<filter_name>;              // the other operand of |, &
using bytes_arg = arg_of<bytes_name>;                // loads()'s data
using text_arg = arg_of<text_name>;                  // a name: a funnel, a Parquet type or column
using guava_key_arg = arg_of<guava_key_name>;        // a GuavaBloomFilter's key
using parquet_key_arg = arg_of<parquet_key_name>;    // a ParquetBloomFilter's key

// A result built as a Python object, with the type help() shows for it.
template <class Name>
struct result_of {
  py::object value;
};
using filter_result = result_of<filter_name>;  // load(), loads(), |, &
using bools_result = result_of<bools_name>;    // contains_many()
using static_result = result_of<static_name>;  // StaticFilter.build()

// ------------------------------------------------------------------------------------------------
// Errors.

// A cuckoo table (or a scalable filter's chain) that cannot take the key: bloomery.FilterFull.
// `added` counts the keys of the failing call that were inserted before it.
class filter_full : public std::runtime_error {
 public:
  filter_full(const std::string& what, std::uint64_t added)
      : std::runtime_error(what), added_(added) {}
  std::uint64_t added() const noexcept { return added_; }

 private:
  std::uint64_t added_;
};

// Registers bloomery.FormatError, bloomery.FilterFull and the translation of the library's
// exceptions (format_error, system_error -> OSError, allocation_error -> MemoryError).
void register_errors(py::module_& m);

// ------------------------------------------------------------------------------------------------
// Conversions of constructor arguments, with the library's own messages where it has them.

std::uint64_t capacity_arg(py::handle capacity);
double fpr_arg(py::handle fpr);
double real_arg(py::handle value, const char* name);
bloomery::hasher hasher_arg(py::handle seed, bool keyed);
std::uint32_t u32_arg(py::handle value, const char* name);

// ------------------------------------------------------------------------------------------------
// Locks. Every filter object holds a readers-writer lock: queries share it, writes take it alone,
// which is exactly the C++ rule (insert needs exclusive access; queries may run together). A
// thread never waits for a lock while holding the GIL, and never needs the GIL while holding a
// lock, so the two cannot deadlock.

// fn() under `mu` (shared, or exclusive when Exclusive), taken with the GIL held when it is free
// and waited for with the GIL released otherwise. For short operations: fn runs with the GIL.
template <bool Exclusive, class Fn>
decltype(auto) quick_locked(std::shared_mutex& mu, Fn&& fn) {
  using lock_type = std::conditional_t<Exclusive, std::unique_lock<std::shared_mutex>,
                                       std::shared_lock<std::shared_mutex>>;
  lock_type lock(mu, std::try_to_lock);
  if (!lock.owns_lock()) {
    py::gil_scoped_release nogil;
    lock.lock();
  }
  return fn();
}

// fn() under `mu` with the GIL released: for operations that take long. fn must not touch Python.
template <bool Exclusive, class Fn>
decltype(auto) released_locked(std::shared_mutex& mu, Fn&& fn) {
  using lock_type = std::conditional_t<Exclusive, std::unique_lock<std::shared_mutex>,
                                       std::shared_lock<std::shared_mutex>>;
  py::gil_scoped_release nogil;
  lock_type lock(mu);
  return fn();
}

// ------------------------------------------------------------------------------------------------
// The objects.

// The common base of the filter classes (bloomery.Filter), for isinstance().
struct filter_base {
  virtual ~filter_base() = default;
};

template <class F>
struct py_filter final : filter_base {
  explicit py_filter(F f) : filter(std::move(f)) {}
  F filter;
  mutable std::shared_mutex mutex;
};

// A new filter F(args...) for a constructor, built with the GIL released: sizing it and zeroing
// its table can take long for large capacities, and neither touches Python.
template <class F, class... Args>
std::unique_ptr<py_filter<F>> construct_released(Args&&... args) {
  py::gil_scoped_release nogil;
  return std::make_unique<py_filter<F>>(F(std::forward<Args>(args)...));
}

// A new Python object of F's class owning `f`.
template <class F>
py::object wrap(F&& f) {
  using G = std::remove_cvref_t<F>;
  return py::cast(std::make_unique<py_filter<G>>(std::forward<F>(f)));
}

// The Python class name of each kind, set when define_filter_class registers it (nullptr before).
template <class F>
inline const char* class_name = nullptr;

// ------------------------------------------------------------------------------------------------
// Statistics, queries and inserts shared by the owning filters and the mapped views.

py::dict stats_dict(const bloomery::filter_stats& s);

// The answer for each key of `keys` (a buffer of integers: a NumPy bool array; any other
// iterable: a list of bools). `query(fn)` runs fn(filter or view) under the object's shared lock
// with the GIL released.
template <class Query>
py::object contains_many(py::handle keys, Query&& query);

// A NumPy bool array of n elements (its data pointer in `out`), or, without NumPy, a bytearray.
py::object new_bool_array(std::size_t n, bool*& out);
py::object bool_list(const std::vector<unsigned char>& hits);

// Answers every key of an integer buffer into out[0, size), under query(fn).
template <class Query, class Out>
void contains_buffer(const int_buffer& buf, Query& query, Out* out) {
  query([&](const auto& f) {
    const std::size_t n = buf.size();
    if (const std::uint64_t* all = buf.contiguous_u64()) {
      f.may_contain_many(std::span<const std::uint64_t>(all, n), std::span<Out>(out, n));
      return;
    }
    std::vector<std::uint64_t> tmp(std::min(n, batch_keys));
    for (std::size_t first = 0; first < n; first += tmp.size()) {
      const std::size_t count = std::min(tmp.size(), n - first);
      buf.copy(first, count, tmp.data());
      f.may_contain_many(std::span<const std::uint64_t>(tmp.data(), count),
                         std::span<Out>(out + first, count));
    }
  });
}

template <class Query>
py::object contains_many(py::handle keys, Query&& query) {
  if (auto buf = int_buffer::of(keys)) {
    bool* out = nullptr;
    py::object result = new_bool_array(buf->size(), out);
    if (out != nullptr) {
      contains_buffer(*buf, query, out);
      return result;
    }
    std::vector<unsigned char> hits(buf->size());  // no NumPy: a list
    contains_buffer(*buf, query, hits.data());
    return bool_list(hits);
  }
  key_source source(keys, "contains_many");
  key_batch batch;
  std::vector<unsigned char> hits;
  while (source.fill(batch, batch_keys, batch_bytes)) {
    const std::size_t base = hits.size();
    hits.resize(base + batch.size());
    query([&](const auto& f) {
      batch.for_each_run([&](auto run, std::size_t pos) {
        f.may_contain_many(run, std::span<unsigned char>(hits.data() + base + pos, run.size()));
      });
    });
  }
  return bool_list(hits);
}

std::string full_message(bloomery::filter_kind kind, const std::string& detail);

template <class F>
[[noreturn]] void throw_full(const F& f, std::uint64_t added, const std::string& detail = {}) {
  (void)f;
  throw filter_full(full_message(F::kind, detail), added);
}

// Inserts every key of `keys`, counting them in `added`; throws filter_full at the first key the
// filter cannot take (the keys before it stay inserted).
template <class F, class Keys>
void insert_all(F& f, const Keys& keys, std::uint64_t& added) {
  if constexpr (requires { f.insert_many(keys); }) {
    f.insert_many(keys);
    added += std::ranges::size(keys);
  } else {
    for (const auto& key : keys) {
      try {
        if (f.insert(key) == bloomery::insert_result::full) throw_full(f, added);
      } catch (const std::length_error& e) {  // a scalable Bloom filter at its last sub-filter
        throw_full(f, added, e.what());
      }
      ++added;
    }
  }
}

// Registers each kind's class (one translation unit per family, compiled in parallel).
// Raises a Python exception of `type` with `message` (as py::error_already_set).
[[noreturn]] void raise(PyObject* type, const std::string& message);
// The name of an object's type, for messages.
std::string type_name(py::handle obj);
// An int or an object with __index__ (NumPy's integers), but not a bool.
bool is_integer(py::handle obj);
// An int's digits when they print short, else its size in bits.
std::string int_text(py::handle value);

// `self == other` for a class holding `filter` and `mutex`: NotImplemented for another type,
// else fn(self.filter, other.filter) under both readers' locks, taken together (std::lock) so
// that a == b and b == a in two threads cannot deadlock.
template <class P, class Fn>
py::object equal_locked(const P& self, const py::object& other, Fn&& fn) {
  if (!py::isinstance<P>(other)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  const P& o = other.cast<const P&>();
  if (&o == &self) return py::bool_(true);
  bool equal = false;
  {
    py::gil_scoped_release nogil;
    std::shared_lock a(self.mutex, std::defer_lock);
    std::shared_lock b(o.mutex, std::defer_lock);
    std::lock(a, b);
    equal = fn(self, o);
  }
  return py::bool_(equal);
}

// fn(bytes) over a bytes-like object's contiguous buffer, run with the GIL released (for readers
// of whole files or streams); the buffer is released however fn returns. Non-contiguous buffers
// raise BufferError.
template <class Fn>
auto with_buffer_released(py::handle data, Fn&& fn) {
  Py_buffer view;
  if (PyObject_GetBuffer(data.ptr(), &view, PyBUF_SIMPLE) != 0) throw py::error_already_set();
  struct release {
    Py_buffer* view;
    ~release() { PyBuffer_Release(view); }
  } guard{&view};
  py::gil_scoped_release nogil;
  return fn(std::span(static_cast<const std::byte*>(view.buf), static_cast<std::size_t>(view.len)));
}

void register_bloom_kinds(py::module_& m);       // bloom, blocked, counting
void register_cuckoo_kinds(py::module_& m);      // cuckoo, scalable cuckoo
void register_other_kinds(py::module_& m);       // scalable, static
void register_module_functions(py::module_& m);  // load, loads, open, MappedFilter
void register_guava(py::module_& m);             // GuavaBloomFilter, guava_shape
void register_parquet(py::module_& m);           // ParquetBloomFilter, parquet_bloom_filters, ...
// _bloomery._kind_classes: each kind of the kind table (kinds.hpp) by name, to its class. Fails
// (and so does the import) when a kind has no class, so the table and the classes stay in step.
void register_kind_table(py::module_& m);

}  // namespace bloomery_py

namespace pybind11::detail {

// Accepts any object: the method converts it (see arg_of).
template <class Name>
struct type_caster<bloomery_py::arg_of<Name>> {
  PYBIND11_TYPE_CASTER(bloomery_py::arg_of<Name>, Name::name);
  bool load(handle src, bool) {
    value.value = src;
    return static_cast<bool>(src);
  }
  static handle cast(const bloomery_py::arg_of<Name>& a, return_value_policy, handle) {
    return a.value.inc_ref();
  }
};

template <class Name>
struct type_caster<bloomery_py::result_of<Name>> {
  PYBIND11_TYPE_CASTER(bloomery_py::result_of<Name>, Name::name);
  bool load(handle, bool) { return false; }  // results only
  static handle cast(const bloomery_py::result_of<Name>& r, return_value_policy, handle) {
    return r.value.inc_ref();
  }
};

}  // namespace pybind11::detail
