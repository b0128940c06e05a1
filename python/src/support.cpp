// Errors, argument conversions and result builders shared by every class.
#include <pybind11/numpy.h>

#include <cerrno>
#include <limits>
#include <system_error>
#include <variant>

#include "bindings.hpp"

namespace bloomery_py {

void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

std::string type_name(py::handle obj) {
  return Py_TYPE(obj.ptr())->tp_name;
}

bool is_integer(py::handle obj) {
  return !PyBool_Check(obj.ptr()) && (PyLong_Check(obj.ptr()) || PyIndex_Check(obj.ptr()));
}

std::string int_text(py::handle value) {
  const auto v = py::reinterpret_borrow<py::object>(value);
  const auto bits = v.attr("bit_length")().cast<std::size_t>();
  return bits <= 256 ? std::string(py::str(v)) : "an int of " + std::to_string(bits) + " bits";
}

namespace {

PyObject* format_error_type = nullptr;
PyObject* filter_full_type = nullptr;

// An int argument as a Python int (numpy integers through __index__), or TypeError.
py::int_ index_of(py::handle value, const char* name) {
  if (!is_integer(value)) {
    raise(PyExc_TypeError,
          std::string("bloomery: ") + name + " must be an int, not " + type_name(value));
  }
  return py::reinterpret_steal<py::int_>(PyNumber_Index(value.ptr()));
}

// The value of an int argument in [0, max], or ValueError in the library's words.
std::uint64_t bounded_int(py::handle value, const char* name, std::uint64_t max,
                          const char* allowed) {
  const py::int_ v = index_of(value, name);
  int overflow = 0;
  const long long s = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow == 0 && s == -1 && PyErr_Occurred()) throw py::error_already_set();
  std::uint64_t u = 0;
  bool fits = false;
  if (overflow == 0 && s >= 0) {
    u = static_cast<std::uint64_t>(s);
    fits = u <= max;
  } else if (overflow > 0) {
    u = PyLong_AsUnsignedLongLong(v.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
    } else {
      fits = u <= max;
    }
  }
  if (!fits) {
    raise(PyExc_ValueError, std::string("bloomery: ") + name + " = " +
                                py::str(py::handle(v)).cast<std::string>() + " is invalid; " +
                                allowed);
  }
  return u;
}

}  // namespace

void register_errors(py::module_& m) {
  format_error_type = PyErr_NewExceptionWithDoc(
      "bloomery.FormatError",
      "Bytes or a file that are not a valid bloomery filter (bad magic, truncated, checksum "
      "mismatch, a field out of range, or a filter of another kind than asked for). A "
      "ValueError; the message is the library's, naming the file when there is one.",
      PyExc_ValueError, nullptr);
  filter_full_type = PyErr_NewExceptionWithDoc(
      "bloomery.FilterFull",
      "A cuckoo filter's table is full (or a scalable filter can add no more sub-filters): the "
      "key was not inserted, and every key inserted before is still answered \"possibly "
      "present\". ``added`` counts the keys of the failing call that were inserted before it "
      "(``update`` inserts the keys before the one that did not fit).",
      PyExc_RuntimeError, nullptr);
  if (format_error_type == nullptr || filter_full_type == nullptr) throw py::error_already_set();
  if (PyObject_SetAttrString(filter_full_type, "added", py::int_(0).ptr()) != 0) {
    throw py::error_already_set();
  }
  m.attr("FormatError") = py::handle(format_error_type);
  m.attr("FilterFull") = py::handle(filter_full_type);

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const filter_full& e) {
      const py::object exc =
          py::reinterpret_steal<py::object>(PyObject_CallFunction(filter_full_type, "s", e.what()));
      if (!exc) return;  // the call's own error is set
      if (PyObject_SetAttrString(exc.ptr(), "added", py::int_(e.added()).ptr()) != 0) return;
      PyErr_SetObject(filter_full_type, exc.ptr());
    } catch (const bloomery::format_error& e) {
      PyErr_SetString(format_error_type, e.what());
    } catch (const bloomery::allocation_error& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const std::system_error& e) {
      // OSError(errno, message) becomes the errno's subclass (FileNotFoundError, ...).
      const py::object exc = py::reinterpret_steal<py::object>(
          PyObject_CallFunction(PyExc_OSError, "is", e.code().value(), e.what()));
      if (!exc) return;
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    }
  });
}

std::uint64_t capacity_arg(py::handle capacity) {
  const py::int_ v = index_of(capacity, "capacity");
  if (PyObject_RichCompareBool(v.ptr(), py::int_(0).ptr(), Py_LT) == 1) {
    raise(PyExc_ValueError, "bloomery: capacity = " + py::str(py::handle(v)).cast<std::string>() +
                                " is invalid; it must be at least 1");
  }
  return bounded_int(v, "capacity", std::numeric_limits<std::uint64_t>::max(),
                     "allowed range is [1, 2**64)");
}

double real_arg(py::handle value, const char* name) {
  if (!PyFloat_Check(value.ptr()) && !is_integer(value)) {
    raise(PyExc_TypeError,
          std::string("bloomery: ") + name + " must be a float, not " + type_name(value));
  }
  const double v = PyFloat_AsDouble(value.ptr());
  if (v == -1.0 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

double fpr_arg(py::handle fpr) {
  const double p = real_arg(fpr, "fpr");
  bloomery::check_fpr(p);  // the library's message for p outside (0, 1) or NaN
  return p;
}

bloomery::hasher hasher_arg(py::handle seed, bool keyed) {
  if (keyed) {
    if (!seed.is_none()) {
      raise(PyExc_ValueError,
            "bloomery: seed= and keyed=True exclude each other: a keyed filter hashes with a "
            "random secret key instead of a seed");
    }
    return bloomery::hasher(bloomery::random_key());
  }
  if (seed.is_none()) return {};
  return bloomery::hasher(bounded_int(seed, "seed", std::numeric_limits<std::uint64_t>::max(),
                                      "allowed range is [0, 2**64)"));
}

std::uint32_t u32_arg(py::handle value, const char* name) {
  return static_cast<std::uint32_t>(bounded_int(
      value, name, std::numeric_limits<std::uint32_t>::max(), "allowed range is [0, 2**32)"));
}

py::dict stats_dict(const bloomery::filter_stats& s) {
  py::dict d;
  d["kind"] = bloomery::to_string(s.kind);
  d["bits"] = s.bits;
  d["hashes"] = s.hashes ? py::object(py::int_(*s.hashes)) : py::none();
  d["seed"] = s.keyed ? py::none() : py::object(py::int_(s.seed));
  d["hash"] = bloomery::to_string(s.hash);
  d["size_in_bytes"] = s.size_in_bytes;
  d["bits_per_key"] = s.bits_per_key();
  d["capacity"] = s.capacity;
  d["inserted"] = s.inserted;
  d["approximate_count"] = s.approximate_count;
  d["fill_ratio"] = s.fill_ratio ? py::object(py::float_(*s.fill_ratio)) : py::none();
  d["target_fpr"] = s.target_fpr;
  d["estimated_fpr"] = s.estimated_fpr;
  d["keyed"] = s.keyed;
  d["over_capacity"] = s.over_capacity;
  for (const bloomery::filter_param& p : s.params) {
    d[p.name] = std::visit([](auto v) { return py::cast(v); }, p.value);
  }
  return d;
}

py::object new_bool_array(std::size_t n, bool*& out) {
  try {
    py::array_t<bool> a(static_cast<py::ssize_t>(n));
    out = a.mutable_data();
    return a;
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_ImportError)) throw;
    out = nullptr;  // no NumPy: the caller answers with a list
    return py::none();
  }
}

py::object bool_list(const std::vector<unsigned char>& hits) {
  py::list list(hits.size());
  for (std::size_t i = 0; i < hits.size(); ++i) {
    PyObject* b = hits[i] ? Py_True : Py_False;
    Py_INCREF(b);
    PyList_SET_ITEM(list.ptr(), static_cast<Py_ssize_t>(i), b);
  }
  return list;
}

std::string full_message(bloomery::filter_kind kind, const std::string& detail) {
  if (!detail.empty()) return detail + "; the key was not inserted";
  if (kind == bloomery::filter_kind::scalable_cuckoo) {
    return "bloomery: the scalable cuckoo filter is full: its newest sub-filter is full and no "
           "sub-filter can be added (max_sub_filters reached); the key was not inserted, and "
           "every key inserted before is still found";
  }
  return "bloomery: the cuckoo filter is full: the key was not inserted, and every key inserted "
         "before is still found; build it with a larger capacity, or use a ScalableCuckooFilter";
}

void register_kind_table(py::module_& m) {
  py::dict classes;
  [&]<class... Fs>(bloomery::type_list<Fs...>) {
    (
        [&] {
          // define_filter_class records the name of the class it registers.
          if (class_name<Fs> == nullptr) {
            throw std::logic_error(std::string("bloomery: the ") + bloomery::to_string(Fs::kind) +
                                   " filter of the kind table has no Python class");
          }
          classes[bloomery::to_string(Fs::kind)] = m.attr(class_name<Fs>);
        }(),
        ...);
  }(bloomery::filter_types{});
  m.attr("_kind_classes") = classes;
}

}  // namespace bloomery_py
