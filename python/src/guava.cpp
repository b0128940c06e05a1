// GuavaBloomFilter and guava_shape: Guava's BloomFilter (bloomery/interop/guava.hpp), bit-exact
// with Guava 31.1. Its own class, not a bloomery.Filter: its stream is Guava's, not bloomery's file
// format, and its keys go through the funnel the Java side used, which the stream does not record.
#include <bloomery/interop/guava.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"

namespace bloomery_py {
namespace {

namespace guava = bloomery::interop::guava;

using funnel_arg = text_arg;

// The Python object: the filter and its readers-writer lock (queries share it, add takes it
// alone), as for the other filter classes.
struct py_guava {
  explicit py_guava(guava::bloom_filter f) : filter(std::move(f)) {}
  guava::bloom_filter filter;
  mutable std::shared_mutex mutex;
};

// ------------------------------------------------------------------------------------------------
// Arguments.

guava::funnel funnel_of(funnel_arg name) {
  if (!PyUnicode_Check(name.ptr())) {
    raise(PyExc_TypeError, "bloomery: funnel must be a str (string, chars, long or int), not " +
                               type_name(name.ptr()));
  }
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(name.ptr(), &size);
  if (text != nullptr) {
    if (const auto f = guava::parse_funnel({text, static_cast<std::size_t>(size)})) return *f;
  } else {
    PyErr_Clear();  // a str with lone surrogates: no funnel's name either
  }
  raise(PyExc_ValueError,
        "bloomery: unknown Guava funnel " + std::string(py::repr(name.value)) +
            "; the funnels are string (Funnels.stringFunnel(UTF_8) or byteArrayFunnel()), chars "
            "(unencodedCharsFunnel()), long (longFunnel()) and int (integerFunnel())");
}

// expected_insertions: an int in [0, 2^64) (guava_shape refuses more than 2^63 - 1 itself).
std::uint64_t insertions_of(int_arg value) {
  if (!is_integer(value.ptr())) {
    raise(PyExc_TypeError,
          "bloomery: expected_insertions must be an int, not " + type_name(value.ptr()));
  }
  const auto v = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!v) throw py::error_already_set();
  int overflow = 0;
  const long long s = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow == 0 && s == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow < 0 || (overflow == 0 && s < 0)) {
    raise(PyExc_ValueError,
          "bloomery: expected_insertions = " + int_text(v.ptr()) + " is invalid; it must be >= 0");
  }
  if (overflow > 0) {
    raise(PyExc_ValueError, "bloomery: Guava's expected insertions are a Java long; " +
                                int_text(v.ptr()) + " is beyond 2**63 - 1");
  }
  return static_cast<std::uint64_t>(s);
}

// ------------------------------------------------------------------------------------------------
// Keys: what the filter's funnel feeds for a Python object.

// The bytes to hash (for the string and chars funnels), valid while the key object lives and
// `scratch` is untouched; or the value (for the long and int funnels).
struct funneled_key {
  bool integer = false;
  std::int64_t value = 0;
  std::span<const std::byte> bytes;
};

[[noreturn]] void wrong_key(guava::funnel f, PyObject* obj) {
  const char* takes = f == guava::funnel::string  ? "str or bytes-like"
                      : f == guava::funnel::chars ? "str"
                                                  : "int";
  std::string message = "bloomery: the Guava " + std::string(guava::to_string(f)) +
                        " funnel's keys are " + takes + ", not " + type_name(obj);
  if (PyBool_Check(obj)) message += " (True and False are not keys)";
  if (f == guava::funnel::chars && PyObject_CheckBuffer(obj)) {
    message +=
        " (the chars funnel hashes a str's UTF-16 code units; bytes go to the string funnel)";
  }
  raise(PyExc_TypeError, message);
}

void append_utf8(std::uint32_t c, std::string& out) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xc0 | c >> 6));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | c >> 12));
    out.push_back(static_cast<char>(0x80 | (c >> 6 & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | c >> 18));
    out.push_back(static_cast<char>(0x80 | (c >> 12 & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (c >> 6 & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  }
}

bool is_high_surrogate(std::uint32_t c) {
  return c >= 0xd800 && c < 0xdc00;
}
bool is_low_surrogate(std::uint32_t c) {
  return c >= 0xdc00 && c < 0xe000;
}

// fn(pointer, length) over the code points of a str, in its storage width.
template <class Fn>
decltype(auto) with_code_points(PyObject* str, Fn&& fn) {
  const auto n = static_cast<std::size_t>(PyUnicode_GET_LENGTH(str));
  const void* data = PyUnicode_DATA(str);
  switch (PyUnicode_KIND(str)) {
    case PyUnicode_1BYTE_KIND:
      return fn(static_cast<const Py_UCS1*>(data), n);
    case PyUnicode_2BYTE_KIND:
      return fn(static_cast<const Py_UCS2*>(data), n);
    default:
      return fn(static_cast<const Py_UCS4*>(data), n);
  }
}

// The bytes Java's String.getBytes(UTF_8) gives for the String of the str's code points (as Java
// chars): a high surrogate followed by a low one is one supplementary character, and any other
// surrogate becomes '?'. For a str with surrogates (Python's own UTF-8 refuses them).
void java_utf8(PyObject* str, std::string& out) {
  out.clear();
  with_code_points(str, [&](const auto* s, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      auto c = static_cast<std::uint32_t>(s[i]);
      if (is_high_surrogate(c) && i + 1 < n && is_low_surrogate(s[i + 1])) {
        c = 0x10000 + ((c - 0xd800) << 10) + (static_cast<std::uint32_t>(s[i + 1]) - 0xdc00);
        ++i;
      }
      if (is_high_surrogate(c) || is_low_surrogate(c)) {
        out.push_back('?');
      } else {
        append_utf8(c, out);
      }
    }
  });
}

// The UTF-16 code units of a str, 2 little-endian bytes each: a code point beyond U+FFFF is a
// surrogate pair, and a surrogate code point is the one unit it is (a lone Java char).
void utf16le(PyObject* str, std::string& out) {
  out.clear();
  const auto unit = [&](std::uint32_t u) {
    out.push_back(static_cast<char>(u & 0xff));
    out.push_back(static_cast<char>(u >> 8));
  };
  with_code_points(str, [&](const auto* s, std::size_t n) {
    out.reserve(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto c = static_cast<std::uint32_t>(s[i]);
      if (c < 0x10000) {
        unit(c);
      } else {
        unit(0xd800 + ((c - 0x10000) >> 10));
        unit(0xdc00 + ((c - 0x10000) & 0x3ff));
      }
    }
  });
}

std::span<const std::byte> byte_view(const char* data, std::size_t size) {
  return std::as_bytes(std::span<const char>(data, size));
}

funneled_key key_of(guava::funnel f, PyObject* obj, std::string& scratch) {
  funneled_key k;
  if (f == guava::funnel::string) {
    if (PyUnicode_Check(obj)) {
      Py_ssize_t size = 0;
      if (const char* data = PyUnicode_AsUTF8AndSize(obj, &size)) {
        k.bytes = byte_view(data, static_cast<std::size_t>(size));
        return k;
      }
      if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) throw py::error_already_set();
      PyErr_Clear();  // lone surrogates: encoded as Java does
      java_utf8(obj, scratch);
    } else if (PyBytes_Check(obj)) {
      k.bytes = byte_view(PyBytes_AS_STRING(obj), static_cast<std::size_t>(PyBytes_GET_SIZE(obj)));
      return k;
    } else if (!is_integer(obj) && PyObject_CheckBuffer(obj)) {  // NumPy's integers have buffers
      // Copied, in C order: a bytearray may change while the filter waits for its lock without
      // the GIL.
      Py_buffer view;
      if (PyObject_GetBuffer(obj, &view, PyBUF_FULL_RO) != 0) throw py::error_already_set();
      scratch.resize(static_cast<std::size_t>(view.len));
      const int copied = PyBuffer_ToContiguous(scratch.data(), &view, view.len, 'C');
      PyBuffer_Release(&view);
      if (copied != 0) throw py::error_already_set();
    } else {
      wrong_key(f, obj);
    }
    k.bytes = byte_view(scratch.data(), scratch.size());
    return k;
  }
  if (f == guava::funnel::chars) {
    if (!PyUnicode_Check(obj)) wrong_key(f, obj);
    utf16le(obj, scratch);
    k.bytes = byte_view(scratch.data(), scratch.size());
    return k;
  }
  if (!is_integer(obj)) wrong_key(f, obj);
  const auto v = py::reinterpret_steal<py::object>(PyNumber_Index(obj));
  if (!v) throw py::error_already_set();
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow == 0 && value == -1 && PyErr_Occurred()) throw py::error_already_set();
  const bool int32 = f == guava::funnel::int32;
  if (overflow != 0 || (int32 && (value < std::numeric_limits<std::int32_t>::min() ||
                                  value > std::numeric_limits<std::int32_t>::max()))) {
    raise(PyExc_OverflowError,
          "bloomery: integer key " + int_text(v.ptr()) + " is out of range: the Guava " +
              std::string(guava::to_string(f)) + " funnel's keys are Java " +
              (int32 ? "ints, in [-2**31, 2**31)" : "longs, in [-2**63, 2**63)"));
  }
  k.integer = true;
  k.value = value;
  return k;
}

bool query(const guava::bloom_filter& f, const funneled_key& k) {
  return k.integer ? f.may_contain(k.value) : f.may_contain_funneled(k.bytes);
}

bool insert(guava::bloom_filter& f, const funneled_key& k) {
  const bloomery::insert_result r = k.integer ? f.insert(k.value) : f.insert_funneled(k.bytes);
  return r == bloomery::insert_result::inserted;
}

// ------------------------------------------------------------------------------------------------
// Docstrings.

constexpr const char* class_doc =
    R"(Guava's BloomFilter (com.google.common.hash), bit-exact with Guava 31.1: ``from_bytes`` reads
the stream ``BloomFilter.writeTo`` writes, ``in`` answers as ``mightContain``, ``add`` sets the
bits ``put`` sets, and ``to_bytes`` writes a stream ``BloomFilter.readFrom`` reads.

The stream does not store the funnel, so name the one the Java side used: ``"string"``
(``Funnels.stringFunnel(UTF_8)``, or ``byteArrayFunnel()``), ``"chars"``
(``unencodedCharsFunnel()``), ``"long"`` (``longFunnel()``) or ``"int"`` (``integerFunnel()``).
Keys, by funnel:

- string: a str (its UTF-8 bytes, each unpaired surrogate as ``b"?"``, as Java's
  ``String.getBytes(UTF_8)``), or a bytes-like object (its bytes, as ``byteArrayFunnel()``);
- chars: a str (its UTF-16 code units; an unpaired surrogate is kept, as a Java char);
- long: an int in [-2**63, 2**63); int: an int in [-2**31, 2**31).

Another type raises TypeError (bool included), an int out of range OverflowError.

Thread safety: queries (``in``, ``to_bytes``, the properties, ``==``) share the object's
readers-writer lock and run in parallel; ``add`` takes it alone.)";

constexpr const char* init_doc =
    R"(An empty filter as ``BloomFilter.create(funnel, expected_insertions, fpp)`` creates it:
strategy MURMUR128_MITZ_64, sized by Guava 31.1's formulas (see ``guava_shape``). Raises
ValueError for ``expected_insertions`` < 0 or beyond 2**63 - 1, ``fpp`` outside (0, 1) or NaN, a
size Guava cannot create, or an unknown funnel name.)";

constexpr const char* from_bytes_doc =
    R"(The filter in ``data`` (a bytes-like object holding exactly one stream that Guava's
``BloomFilter.writeTo`` wrote), with the funnel ``funnel`` (the stream does not store it: name the
one the Java side used). Both strategies are read: MURMUR128_MITZ_32 (Guava 11) and
MURMUR128_MITZ_64. Raises ``bloomery.FormatError`` for a stream that is truncated, has bytes
after its end, or a field out of range.)";

constexpr const char* shape_doc =
    R"(``(words, hashes)``: the size of the filter Guava 31.1's ``BloomFilter.create`` makes for
``expected_insertions`` keys at false-positive probability ``fpp`` (64-bit words, and k), computed
without allocating it. Raises ValueError as ``GuavaBloomFilter()`` does.)";

}  // namespace

void register_guava(py::module_& m) {
  using P = py_guava;
  py::class_<P> cls(m, "GuavaBloomFilter", class_doc);
  cls.attr("__module__") = "bloomery";
  cls.def(py::init([](int_arg expected_insertions, float_arg fpp, funnel_arg funnel) {
            const std::uint64_t n = insertions_of(expected_insertions);
            const double p = real_arg(fpp, "fpp");
            const guava::funnel f = funnel_of(funnel);
            py::gil_scoped_release nogil;  // zeroing a large bit array takes a while
            return std::make_unique<P>(guava::bloom_filter(n, p, f));
          }),
          py::arg("expected_insertions"), py::arg("fpp"), py::arg("funnel") = "string", init_doc);
  cls.def_static(
      "from_bytes",
      [](bytes_arg data, funnel_arg funnel) {
        const guava::funnel f = funnel_of(funnel);
        return with_buffer_released(data, [&](std::span<const std::byte> bytes) {
          return std::make_unique<P>(guava::bloom_filter::from_bytes(bytes, f));
        });
      },
      py::arg("data"), py::arg("funnel") = "string", from_bytes_doc);
  cls.def(
      "to_bytes",
      [](const P& self) {
        const std::vector<std::byte> bytes =
            released_locked<false>(self.mutex, [&] { return self.filter.to_bytes(); });
        return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      },
      "The stream Guava's ``BloomFilter.writeTo`` writes for this filter (``readFrom`` reads it, "
      "with the same funnel).");
  cls.def(
      "add",
      [](P& self, guava_key_arg key) {
        std::string scratch;
        const funneled_key k = key_of(self.filter.key_funnel(), key.ptr(), scratch);
        return quick_locked<true>(self.mutex, [&] { return insert(self.filter, k); });
      },
      py::arg("key"),
      "Adds ``key`` (as ``put``): True when a bit changed, False when the key was possibly present "
      "already. The key's type must suit the funnel (see the class).");
  cls.def(
      "__contains__",
      [](const P& self, guava_key_arg key) {
        std::string scratch;
        const funneled_key k = key_of(self.filter.key_funnel(), key.ptr(), scratch);
        return quick_locked<false>(self.mutex, [&] { return query(self.filter, k); });
      },
      py::arg("key"),
      "``key in f`` (as ``mightContain``): False when the key is certainly absent, True when it "
      "is possibly present.");

  const auto field = [](auto get) {
    return [get](const P& self) {
      return quick_locked<false>(self.mutex, [&] { return get(self.filter); });
    };
  };
  cls.def_property_readonly("funnel", field([](const guava::bloom_filter& f) {
                              return std::string(guava::to_string(f.key_funnel()));
                            }),
                            "The funnel's name: string, chars, long or int.");
  cls.def_property_readonly("strategy", field([](const guava::bloom_filter& f) {
                              return std::string(guava::to_string(f.hash_strategy()));
                            }),
                            "MURMUR128_MITZ_64 (Guava 12 and later), or MURMUR128_MITZ_32 for a "
                            "stream Guava 11 wrote.");
  cls.def_property_readonly("hashes",
                            field([](const guava::bloom_filter& f) { return f.hashes(); }),
                            "The number of hash functions, k.");
  cls.def_property_readonly("bits", field([](const guava::bloom_filter& f) { return f.bits(); }),
                            "The size of the bit array in bits (a multiple of 64).");
  cls.def_property_readonly("bits_set",
                            field([](const guava::bloom_filter& f) { return f.bits_set(); }),
                            "The number of bits set.");
  cls.def_property_readonly("size_in_bytes",
                            field([](const guava::bloom_filter& f) { return f.size_in_bytes(); }),
                            "The bit array's bytes (the stream has 6 more).");
  cls.def_property_readonly("approximate_count", field([](const guava::bloom_filter& f) {
                              return f.approximate_count();
                            }),
                            "Guava's ``approximateElementCount()``: the number of distinct keys "
                            "added, estimated from the bits set.");
  cls.def_property_readonly("estimated_fpr",
                            field([](const guava::bloom_filter& f) { return f.estimated_fpr(); }),
                            "Guava's ``expectedFpp()``: (bits_set / bits) ** hashes.");
  cls.def(
      "__eq__",
      [](const P& self, const py::object& other) {
        return equal_locked(self, other,
                            [](const P& a, const P& b) { return a.filter == b.filter; });
      },
      py::arg("other"),
      "True when both filters have the same funnel, strategy, k and bits, so they answer every "
      "query alike.");
  cls.attr("__hash__") = py::none();
  cls.def("__repr__", [](const P& self) {
    return quick_locked<false>(self.mutex, [&] {
      const guava::bloom_filter& f = self.filter;
      return "GuavaBloomFilter(funnel='" + std::string(guava::to_string(f.key_funnel())) +
             "', strategy='" + std::string(guava::to_string(f.hash_strategy())) +
             "', hashes=" + std::to_string(f.hashes()) + ", bits=" + std::to_string(f.bits()) + ")";
    });
  });

  m.def(
      "guava_shape",
      [](int_arg expected_insertions, float_arg fpp) {
        const guava::shape s =
            guava::guava_shape(insertions_of(expected_insertions), real_arg(fpp, "fpp"));
        return std::make_pair(s.words, s.hashes);
      },
      py::arg("expected_insertions"), py::arg("fpp"), shape_doc);
  m.attr("guava_shape").attr("__module__") = "bloomery";
}

}  // namespace bloomery_py
