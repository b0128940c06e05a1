// ParquetBloomFilter, parquet_bloom_filters and parquet_columns: Parquet's split-block Bloom
// filters (bloomery/interop/parquet.hpp), bit-exact with the Parquet format, and their reading from
// a Parquet file's column chunks. Its own class, not a bloomery.Filter: its bits are Parquet's, and
// its keys are values of a column's physical type, hashed as Parquet's plain encoding of them.
#include <bloomery/interop/parquet.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bindings.hpp"

namespace bloomery_py {
namespace {

namespace pq = bloomery::interop::parquet;

// The types whose values bloomery hashes, as the messages list them.
constexpr const char* keyed_type_list = "BYTE_ARRAY, INT32, INT64, FLOAT or DOUBLE";

// The Python object: the filter, the physical type of its column (fixed at construction, so read
// without the lock) and the readers-writer lock (queries share it, add takes it alone), as for the
// other filter classes.
struct py_parquet {
  py_parquet(pq::split_block_filter f, pq::physical_type t) : filter(std::move(f)), type(t) {}
  pq::split_block_filter filter;
  const pq::physical_type type;
  mutable std::shared_mutex mutex;
};

std::string type_text(pq::physical_type t) {
  return std::string(pq::to_string(t));
}

// ------------------------------------------------------------------------------------------------
// Arguments.

// `type`: one of the five names, as Parquet spells them.
pq::physical_type physical_type_of(text_arg name) {
  if (!PyUnicode_Check(name.ptr())) {
    raise(PyExc_TypeError, std::string("bloomery: type must be a str (") + keyed_type_list +
                               "), not " + type_name(name.ptr()));
  }
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(name.ptr(), &size);
  if (text == nullptr) {
    PyErr_Clear();  // a str with lone surrogates: no type's name either
  } else {
    const std::string_view given(text, static_cast<std::size_t>(size));
    for (std::int32_t i = 0; i <= 7; ++i) {
      const auto t = static_cast<pq::physical_type>(i);
      if (pq::to_string(t) != given) continue;
      if (pq::has_keys(t)) return t;
      raise(PyExc_ValueError, "bloomery: Parquet " + type_text(t) +
                                  " columns have no keys bloomery hashes; type must be " +
                                  keyed_type_list);
    }
  }
  raise(PyExc_ValueError, "bloomery: unknown Parquet physical type " +
                              std::string(py::repr(name.value)) + "; type must be " +
                              keyed_type_list);
}

// `column`: a column's dotted path, as UTF-8 (surrogateescape: the names parquet_columns gives for
// bytes that are not UTF-8 name those bytes).
std::string column_of(text_arg name) {
  if (!PyUnicode_Check(name.ptr())) {
    raise(PyExc_TypeError,
          "bloomery: column must be a str (the column's dotted path, e.g. 'a.b'), not " +
              type_name(name.ptr()));
  }
  const auto encoded = py::reinterpret_steal<py::object>(
      PyUnicode_AsEncodedString(name.ptr(), "utf-8", "surrogateescape"));
  if (!encoded) throw py::error_already_set();
  return {PyBytes_AS_STRING(encoded.ptr()),
          static_cast<std::size_t>(PyBytes_GET_SIZE(encoded.ptr()))};
}

// A str of bytes from a file (a column's path, a message naming one): UTF-8 as Parquet requires,
// any other byte kept by surrogateescape.
py::str file_text(const std::string& bytes) {
  PyObject* s =
      PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "surrogateescape");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

// `num_bytes`: an int; the library checks its range (a multiple of 32 in [32, 128 MiB]).
std::uint32_t num_bytes_of(int_arg value) {
  if (!is_integer(value.ptr())) {
    raise(PyExc_TypeError, "bloomery: num_bytes must be an int, not " + type_name(value.ptr()));
  }
  const auto v = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!v) throw py::error_already_set();
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow == 0 && n == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0 || n < 0 || n > std::numeric_limits<std::uint32_t>::max()) {
    raise(PyExc_ValueError,
          "bloomery: a split-block Bloom filter has a multiple of 32 bytes from 32 to 128 MiB, "
          "not " +
              int_text(v.ptr()));
  }
  return static_cast<std::uint32_t>(n);
}

// ------------------------------------------------------------------------------------------------
// Keys: a Python value of the column's type, hashed as the filter hashes it (XXH64 of its plain
// encoding). Hashed with the GIL held, before the filter's lock is taken, so a bytearray cannot
// change while it is read.

[[noreturn]] void wrong_key(pq::physical_type t, PyObject* obj) {
  const bool bytes = t == pq::physical_type::byte_array;
  const bool integral = t == pq::physical_type::int32 || t == pq::physical_type::int64;
  const char* takes = bytes      ? "str or bytes-like (bytes, bytearray, memoryview)"
                      : integral ? "int"
                                 : "float or int";
  std::string message = "bloomery: the keys of a Parquet " + type_text(t) + " column are " + takes +
                        ", not " + type_name(obj);
  if (PyBool_Check(obj)) {
    message += " (True and False are not keys)";
  } else if (!bytes && PyUnicode_Check(obj)) {
    message += integral ? " (convert the text with int() first)"
                        : " (convert the text with float() first)";
  }
  raise(PyExc_TypeError, message);
}

std::uint64_t byte_array_hash(PyObject* obj) {
  const auto hash = [](const char* data, Py_ssize_t size) {
    return pq::split_block_filter::hash(std::string_view(data, static_cast<std::size_t>(size)));
  };
  if (PyUnicode_Check(obj)) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(obj, &size);
    if (data == nullptr) throw py::error_already_set();  // lone surrogates: UnicodeEncodeError
    return hash(data, size);
  }
  if (PyBytes_Check(obj)) return hash(PyBytes_AS_STRING(obj), PyBytes_GET_SIZE(obj));
  if (PyByteArray_Check(obj)) return hash(PyByteArray_AS_STRING(obj), PyByteArray_GET_SIZE(obj));
  if (PyMemoryView_Check(obj)) {
    const Py_buffer* view = PyMemoryView_GET_BUFFER(obj);
    if (PyBuffer_IsContiguous(view, 'C'))
      return hash(static_cast<const char*>(view->buf), view->len);
    std::string copy(static_cast<std::size_t>(view->len), '\0');  // the bytes of bytes(view)
    if (PyBuffer_ToContiguous(copy.data(), view, view->len, 'C') != 0) {
      throw py::error_already_set();
    }
    return hash(copy.data(), view->len);
  }
  wrong_key(pq::physical_type::byte_array, obj);
}

std::uint64_t integer_hash(pq::physical_type t, PyObject* obj) {
  if (!is_integer(obj)) wrong_key(t, obj);
  const auto v = py::reinterpret_steal<py::object>(PyNumber_Index(obj));
  if (!v) throw py::error_already_set();
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow == 0 && value == -1 && PyErr_Occurred()) throw py::error_already_set();
  const bool int32 = t == pq::physical_type::int32;
  if (overflow != 0 || (int32 && (value < std::numeric_limits<std::int32_t>::min() ||
                                  value > std::numeric_limits<std::int32_t>::max()))) {
    raise(PyExc_OverflowError, "bloomery: integer key " + int_text(v.ptr()) +
                                   " is out of range: a Parquet " + type_text(t) +
                                   " column's values are in " +
                                   (int32 ? "[-2**31, 2**31)" : "[-2**63, 2**63)"));
  }
  if (int32) return pq::split_block_filter::hash(static_cast<std::int32_t>(value));
  return pq::split_block_filter::hash(static_cast<std::int64_t>(value));
}

[[noreturn]] void real_out_of_range(pq::physical_type t, const std::string& shown) {
  raise(PyExc_OverflowError, "bloomery: key " + shown + " is out of range: a Parquet " +
                                 type_text(t) + " column's finite values are within +-" +
                                 (t == pq::physical_type::float32 ? "3.4028234663852886e+38"
                                                                  : "1.7976931348623157e+308"));
}

// A float as is; an int as float(v): the nearest double.
double real_key(pq::physical_type t, PyObject* obj) {
  if (PyFloat_Check(obj)) return PyFloat_AS_DOUBLE(obj);
  if (!is_integer(obj)) wrong_key(t, obj);
  const auto v = py::reinterpret_steal<py::object>(PyNumber_Index(obj));
  if (!v) throw py::error_already_set();
  const double d = PyLong_AsDouble(v.ptr());
  if (d == -1.0 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) throw py::error_already_set();
    PyErr_Clear();
    real_out_of_range(t, int_text(v.ptr()));
  }
  return d;
}

// The FLOAT nearest to `d` (rounding to nearest, ties to even), as a column stores it; NaN and
// the infinities stay what they are. A finite double that rounds to an infinity is refused.
float nearest_float(double d) {
  constexpr double max = std::numeric_limits<float>::max();  // 2**128 - 2**104
  if (std::isfinite(d) && std::fabs(d) > max) {
    // Halfway from the largest float to 2**128: from there (a tie goes to the even 2**128) up, a
    // value rounds to infinity; below, to the largest float.
    if (std::fabs(d) >= std::ldexp(1.0, 128) - std::ldexp(1.0, 103)) {
      real_out_of_range(pq::physical_type::float32, py::repr(py::float_(d)));
    }
    return static_cast<float>(std::copysign(max, d));
  }
  return static_cast<float>(d);
}

std::uint64_t key_hash(pq::physical_type t, PyObject* obj) {
  switch (t) {
    case pq::physical_type::byte_array:
      return byte_array_hash(obj);
    case pq::physical_type::int32:
    case pq::physical_type::int64:
      return integer_hash(t, obj);
    case pq::physical_type::float32:
      return pq::split_block_filter::hash(nearest_float(real_key(t, obj)));
    case pq::physical_type::float64:
      return pq::split_block_filter::hash(real_key(t, obj));
    default:
      break;
  }
  throw std::logic_error("bloomery: a ParquetBloomFilter of a type without keys");
}

// ------------------------------------------------------------------------------------------------
// Files.

// What parquet_bloom_filters read: the column's type and each row group's filter, or why the
// column cannot be read (a ValueError's message).
struct column_filters {
  pq::physical_type type = pq::physical_type::byte_array;
  std::vector<std::optional<pq::split_block_filter>> filters;
  std::string refused;
};

// The column's filters. Needs no GIL.
column_filters read_column_filters(const std::filesystem::path& path, const std::string& column) {
  const pq::parquet_file f = pq::parquet_file::open(path);
  column_filters out;
  const std::optional<std::size_t> index = f.column_index(column);
  if (!index) {
    out.refused = "bloomery: no column '" + column + "' in " + path.string();
    if (f.row_groups().empty()) {
      out.refused += " (the file has no row groups)";
      return out;
    }
    const std::vector<pq::column_chunk>& columns = f.row_groups()[0].columns;
    constexpr std::size_t shown = 50;
    out.refused += "; its columns are: ";
    for (std::size_t i = 0; i < columns.size() && i < shown; ++i) {
      out.refused += (i == 0 ? "" : ", ") + columns[i].path;
    }
    if (columns.size() > shown) {
      out.refused += ", ... (" + std::to_string(columns.size()) + " in all)";
    }
    return out;
  }
  out.type = f.row_groups()[0].columns[*index].type;
  if (!pq::has_keys(out.type)) {
    out.refused = "bloomery: column '" + column + "' of " + path.string() + " is " +
                  type_text(out.type) +
                  "; bloomery reads the Bloom filters of BYTE_ARRAY, INT32, INT64, FLOAT and "
                  "DOUBLE columns";
    return out;
  }
  out.filters.reserve(f.row_groups().size());
  for (std::size_t g = 0; g < f.row_groups().size(); ++g) {
    out.filters.push_back(f.bloom_filter(g, *index));
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// Docstrings.

constexpr const char* class_doc =
    R"(A Parquet split-block Bloom filter (SBBF), the filter a Parquet file stores for a column
chunk, bit-exact with the Parquet format (parquet-format's BloomFilter.md): ``bitset()`` is the
bitset as the file stores it, and a filter rebuilt from a chunk's values equals the writer's.
``parquet_bloom_filters`` reads them from a file.

A filter has the physical type of its column, and its keys are values of that type, hashed as
XXH64 of their plain encoding:

- BYTE_ARRAY: a str (its UTF-8 bytes; a lone surrogate raises UnicodeEncodeError) or bytes-like
  (bytes, bytearray, memoryview: its bytes);
- INT32, INT64: an int in the type's range (OverflowError outside it);
- FLOAT, DOUBLE: a float, or an int (``float(v)``); a FLOAT key is rounded to the nearest 32-bit
  float first, and one too large for that raises OverflowError. A number's IEEE 754 bits are its
  key: 0.0 and -0.0 are different keys, and NaN is the key of its bits (Python's NaN is the one
  writers store).

Another type raises TypeError (bool too: True and False are not keys).

Thread safety: queries (``in``, ``bitset``, the properties, ``==``) share the object's
readers-writer lock and run in parallel; ``add`` takes it alone.)";

constexpr const char* init_doc =
    R"(An empty filter of ``num_bytes`` bytes (a multiple of 32 from 32 to 128 MiB; writers use
powers of two) for a column of physical type ``type``: ``"BYTE_ARRAY"``, ``"INT32"``,
``"INT64"``, ``"FLOAT"`` or ``"DOUBLE"``. Raises ValueError for another size or type.)";

constexpr const char* from_bitset_doc =
    R"(The filter whose bitset is ``data`` (a bytes-like object: the bytes a Parquet file stores
after the filter's header, 32-bit words little-endian), for a column of physical type ``type``.
Raises ``bloomery.FormatError`` when ``data`` is not a multiple of 32 bytes from 32 to 128 MiB,
and ValueError for an unknown type.)";

constexpr const char* filters_doc =
    R"(The Bloom filters of one column of the Parquet file ``path``: a list with one entry per row
group, a ``ParquetBloomFilter`` of the column's physical type, or None where the column chunk has
no filter (a row group whose filter rules a key out, ``key not in f``, cannot hold it). Only the
footer and the filters are read, with the GIL released.

``column`` is the column's dotted path (``"a"``, or ``"s.x"`` for the leaf x of a group s). Raises
ValueError for a column the file does not have (the message lists the file's columns) or of a
type bloomery has no keys for (BOOLEAN, INT96, FIXED_LEN_BYTE_ARRAY), ``bloomery.FormatError``
for a damaged file (truncated, a bad magic, footer or filter header), and OSError (such as
FileNotFoundError) when the file cannot be read.)";

constexpr const char* columns_doc =
    R"(The leaf columns of the Parquet file ``path``, as its footer describes them: a list of
``(path, type, has_filter)`` tuples, the dotted path, the physical type as Parquet spells it
(``"BYTE_ARRAY"``, ``"INT32"``, ..., ``"BOOLEAN"``, ``"INT96"``, ``"FIXED_LEN_BYTE_ARRAY"``) and
one bool per row group: whether the footer gives the chunk a Bloom filter (``parquet_bloom_filters``
reads and checks them). Empty for a file without row groups. Raises ``bloomery.FormatError`` for a
damaged footer and OSError when the file cannot be read.)";

}  // namespace

void register_parquet(py::module_& m) {
  using P = py_parquet;
  py::class_<P> cls(m, "ParquetBloomFilter", class_doc);
  cls.attr("__module__") = "bloomery";
  cls.def(py::init([](int_arg num_bytes, text_arg type) {
            const std::uint32_t bytes = num_bytes_of(num_bytes);
            const pq::physical_type t = physical_type_of(type);
            py::gil_scoped_release nogil;  // zeroing up to 128 MiB takes a while
            return std::make_unique<P>(pq::split_block_filter(bytes), t);
          }),
          py::arg("num_bytes"), py::arg("type") = "BYTE_ARRAY", init_doc);
  cls.def_static(
      "from_bitset",
      [](bytes_arg data, text_arg type) {
        const pq::physical_type t = physical_type_of(type);
        return with_buffer_released(data, [&](std::span<const std::byte> bytes) {
          return std::make_unique<P>(pq::split_block_filter::from_bitset(bytes), t);
        });
      },
      py::arg("data"), py::arg("type") = "BYTE_ARRAY", from_bitset_doc);
  cls.def(
      "bitset",
      [](const P& self) {
        const std::vector<std::byte> bytes =
            released_locked<false>(self.mutex, [&] { return self.filter.bitset(); });
        return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      },
      "The bitset as a Parquet file stores it (after the filter's header): ``num_bytes`` bytes, "
      "32-bit words little-endian.");
  cls.def(
      "add",
      [](P& self, parquet_key_arg value) {
        const std::uint64_t h = key_hash(self.type, value.ptr());
        return quick_locked<true>(self.mutex, [&] {
          if (self.filter.may_contain_hash(h)) return false;
          self.filter.insert_hash(h);
          return true;
        });
      },
      py::arg("value"),
      "Adds ``value``, a value of the column's type (see the class): True when a bit changed, "
      "False when the value was possibly present already.");
  cls.def(
      "__contains__",
      [](const P& self, parquet_key_arg value) {
        const std::uint64_t h = key_hash(self.type, value.ptr());
        return quick_locked<false>(self.mutex, [&] { return self.filter.may_contain_hash(h); });
      },
      py::arg("value"),
      "``value in f``: False when the value is certainly absent (a reader skips the row group), "
      "True when it is possibly present.");
  cls.def_property_readonly(
      "num_bytes",
      [](const P& self) {
        return quick_locked<false>(self.mutex, [&] { return self.filter.size_in_bytes(); });
      },
      "The bitset's size in bytes (numBytes in the filter's header).");
  cls.def_property_readonly(
      "blocks",
      [](const P& self) {
        return quick_locked<false>(self.mutex, [&] { return self.filter.blocks(); });
      },
      "The number of 256-bit blocks: num_bytes / 32.");
  cls.def_property_readonly(
      "type", [](const P& self) { return type_text(self.type); },
      "The column's physical type: BYTE_ARRAY, INT32, INT64, FLOAT or DOUBLE.");
  cls.def(
      "__eq__",
      [](const P& self, const py::object& other) {
        return equal_locked(self, other, [](const P& a, const P& b) {
          return a.type == b.type && a.filter == b.filter;
        });
      },
      py::arg("other"),
      "True when both filters have the same type and the same bitset, so they answer every query "
      "alike.");
  cls.attr("__hash__") = py::none();
  cls.def("__repr__", [](const P& self) {
    const std::uint32_t bytes =
        quick_locked<false>(self.mutex, [&] { return self.filter.size_in_bytes(); });
    return "ParquetBloomFilter(type='" + type_text(self.type) +
           "', num_bytes=" + std::to_string(bytes) + ")";
  });

  m.def(
      "parquet_bloom_filters",
      [](const std::filesystem::path& path, text_arg column) {
        const std::string name = column_of(column);
        std::optional<column_filters> read;
        {
          py::gil_scoped_release nogil;
          read.emplace(read_column_filters(path, name));
        }
        if (!read->refused.empty()) {
          PyErr_SetObject(PyExc_ValueError, file_text(read->refused).ptr());
          throw py::error_already_set();
        }
        py::list out;
        for (std::optional<pq::split_block_filter>& f : read->filters) {
          if (f) {
            out.append(py::cast(std::make_unique<P>(std::move(*f), read->type)));
          } else {
            out.append(py::none());
          }
        }
        return out;
      },
      py::arg("path"), py::arg("column"), filters_doc);
  m.def(
      "parquet_columns",
      [](const std::filesystem::path& path) {
        std::optional<pq::parquet_file> f;
        {
          py::gil_scoped_release nogil;
          f.emplace(pq::parquet_file::open(path));
        }
        const std::vector<pq::row_group>& groups = f->row_groups();
        py::list out;
        for (std::size_t c = 0; !groups.empty() && c < groups[0].columns.size(); ++c) {
          py::list has;
          for (const pq::row_group& g : groups)
            has.append(py::bool_(g.columns[c].has_bloom_filter()));
          const pq::column_chunk& chunk = groups[0].columns[c];
          out.append(py::make_tuple(file_text(chunk.path), type_text(chunk.type), has));
        }
        return out;
      },
      py::arg("path"), columns_doc);
  for (const char* name : {"parquet_bloom_filters", "parquet_columns"}) {
    m.attr(name).attr("__module__") = "bloomery";
  }
}

}  // namespace bloomery_py
