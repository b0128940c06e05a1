#include "keys.hpp"

#include <cstring>

namespace bloomery_py {
namespace {

[[noreturn]] void throw_python_error() {
  throw py::error_already_set();
}

[[noreturn]] void not_a_key(PyObject* obj) {
  const char* type = Py_TYPE(obj)->tp_name;
  if (PyBool_Check(obj)) {
    PyErr_SetString(PyExc_TypeError,
                    "bloomery: a key must be str, bytes, bytearray, memoryview or int, not bool "
                    "(True and False are not keys: use 1 and 0 if that is what you mean)");
  } else {
    PyErr_Format(PyExc_TypeError,
                 "bloomery: a key must be str, bytes, bytearray, memoryview or int, not %s", type);
  }
  throw_python_error();
}

[[noreturn]] void out_of_range(PyObject* value) {
  // The value itself when it prints short, else its size: a huge int's digits help nobody.
  const py::object v = py::reinterpret_borrow<py::object>(value);
  const auto bits = v.attr("bit_length")().cast<std::size_t>();
  const std::string shown =
      bits <= 256 ? std::string(py::str(v)) : "an int of " + std::to_string(bits) + " bits";
  PyErr_Format(PyExc_OverflowError,
               "bloomery: integer key %s is out of range: integer keys are 64-bit, in "
               "[-2**63, 2**64)",
               shown.c_str());
  throw_python_error();
}

// Little-endian hosts only (the library asserts it): a '<' or '=' buffer is native order.
bool native_order(char c) {
  return c == '@' || c == '=' || c == '<';
}

}  // namespace

std::uint64_t integer_key(PyObject* obj) {
  py::object index;
  if (!PyLong_Check(obj)) {
    index = py::reinterpret_steal<py::object>(PyNumber_Index(obj));
    if (!index) throw_python_error();
    obj = index.ptr();
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (overflow == 0) {
    if (v == -1 && PyErr_Occurred()) throw_python_error();
    return static_cast<std::uint64_t>(v);
  }
  if (overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(obj);
    if (u != static_cast<unsigned long long>(-1) || !PyErr_Occurred()) return u;
    PyErr_Clear();
  }
  out_of_range(obj);
}

classified_key classify_key(PyObject* obj, std::string& scratch) {
  classified_key k;
  if (PyUnicode_Check(obj)) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(obj, &size);
    if (data == nullptr) throw_python_error();
    k.bytes = {data, static_cast<std::size_t>(size)};
  } else if (PyBytes_Check(obj)) {
    k.bytes = {PyBytes_AS_STRING(obj), static_cast<std::size_t>(PyBytes_GET_SIZE(obj))};
  } else if (PyByteArray_Check(obj)) {
    k.bytes = {PyByteArray_AS_STRING(obj), static_cast<std::size_t>(PyByteArray_GET_SIZE(obj))};
  } else if (PyMemoryView_Check(obj)) {
    const Py_buffer* b = PyMemoryView_GET_BUFFER(obj);
    if (PyBuffer_IsContiguous(b, 'C')) {
      k.bytes = {static_cast<const char*>(b->buf), static_cast<std::size_t>(b->len)};
    } else {  // the bytes of bytes(view): C order
      scratch.resize(static_cast<std::size_t>(b->len));
      if (PyBuffer_ToContiguous(scratch.data(), b, b->len, 'C') != 0) throw_python_error();
      k.bytes = scratch;
    }
  } else if (!PyBool_Check(obj) && (PyLong_Check(obj) || PyIndex_Check(obj))) {
    k.integer = true;
    k.value = integer_key(obj);
  } else {
    not_a_key(obj);
  }
  return k;
}

void key_batch::clear() {
  bytes_.clear();
  spans_.clear();
  views_.clear();
  ints_.clear();
  runs_.clear();
  count_ = 0;
}

void key_batch::add(PyObject* obj) {
  const classified_key k = classify_key(obj, scratch_);
  if (runs_.empty() || runs_.back().integers != k.integer) {
    runs_.push_back({k.integer, k.integer ? ints_.size() : spans_.size(), 0, count_});
  }
  if (k.integer) {
    ints_.push_back(k.value);
  } else {
    spans_.emplace_back(bytes_.size(), k.bytes.size());
    bytes_.insert(bytes_.end(), k.bytes.begin(), k.bytes.end());
  }
  ++runs_.back().count;
  ++count_;
}

void key_batch::finish() {
  views_.resize(spans_.size());
  for (std::size_t i = 0; i < spans_.size(); ++i) {
    views_[i] = std::string_view(bytes_.data() + spans_[i].first, spans_[i].second);
  }
}

void reject_single_key(py::handle keys, const char* verb) {
  PyObject* obj = keys.ptr();
  if (PyUnicode_Check(obj) || PyBytes_Check(obj) || PyByteArray_Check(obj)) {
    PyErr_Format(PyExc_TypeError,
                 "bloomery: %s() takes a collection of keys, and a %s is one key, not a "
                 "collection: pass [key] (or use the single-key method)",
                 verb, Py_TYPE(obj)->tp_name);
    throw_python_error();
  }
}

key_source::key_source(py::handle keys, const char* verb) {
  reject_single_key(keys, verb);
  if (PyList_Check(keys.ptr()) || PyTuple_Check(keys.ptr())) {
    sequence_ = py::reinterpret_borrow<py::object>(keys);
  } else {
    iterator_ = py::reinterpret_steal<py::object>(PyObject_GetIter(keys.ptr()));
    if (!iterator_) throw_python_error();
  }
}

bool key_source::fill(key_batch& batch, std::size_t max_keys, std::size_t max_bytes) {
  batch.clear();
  try {
    while (batch.size() < max_keys && batch.byte_size() < max_bytes) {
      py::object item;
      if (sequence_) {
        // A list may change size between batches (the GIL is released in between): read its
        // current length each time.
        PyObject* seq = sequence_.ptr();
        const Py_ssize_t n = PyList_Check(seq) ? PyList_GET_SIZE(seq) : PyTuple_GET_SIZE(seq);
        if (static_cast<Py_ssize_t>(next_) >= n) break;
        item = py::reinterpret_borrow<py::object>(PyList_Check(seq) ? PyList_GET_ITEM(seq, next_)
                                                                    : PyTuple_GET_ITEM(seq, next_));
        ++next_;
      } else {
        item = py::reinterpret_steal<py::object>(PyIter_Next(iterator_.ptr()));
        if (!item) {
          if (PyErr_Occurred()) throw_python_error();
          break;
        }
      }
      batch.add(item.ptr());
    }
  } catch (...) {
    batch.finish();
    throw;
  }
  batch.finish();
  return batch.size() > 0;
}

std::optional<int_buffer> int_buffer::of(py::handle obj) {
  PyObject* o = obj.ptr();
  if (!PyObject_CheckBuffer(o) || PyUnicode_Check(o) || PyBytes_Check(o) || PyByteArray_Check(o)) {
    return std::nullopt;
  }
  int_buffer b;
  if (PyObject_GetBuffer(o, b.view_.get(), PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();  // not a buffer after all (a NumPy object array): iterate it instead
    return std::nullopt;
  }
  b.held_ = true;
  const Py_buffer& v = *b.view_;
  const char* f = v.format != nullptr ? v.format : "B";
  if (*f == '>' || *f == '!') return std::nullopt;  // big-endian: iterating it is correct
  if (native_order(*f)) ++f;
  const Py_ssize_t item = v.itemsize;
  const bool integer = f[0] != '\0' && f[1] == '\0' && std::strchr("bBhHiIlLqQnN", f[0]);
  if (!integer || v.ndim != 1 || (item != 1 && item != 2 && item != 4 && item != 8)) {
    return std::nullopt;  // floats, records, n-D arrays: iterating them gives the right error
  }
  b.is_signed_ = f[0] >= 'a' && f[0] <= 'z';
  b.size_ = static_cast<std::size_t>(v.shape != nullptr ? v.shape[0] : v.len / item);
  return std::optional<int_buffer>(std::move(b));
}

int_buffer::int_buffer(int_buffer&& other) noexcept
    : view_(std::move(other.view_)),
      held_(std::exchange(other.held_, false)),
      is_signed_(other.is_signed_),
      size_(other.size_) {}

int_buffer::~int_buffer() {
  if (held_) PyBuffer_Release(view_.get());
}

const std::uint64_t* int_buffer::contiguous_u64() const noexcept {
  if (view_->itemsize != 8) return nullptr;
  if (view_->strides != nullptr && view_->strides[0] != 8 && size_ > 1) return nullptr;
  return static_cast<const std::uint64_t*>(view_->buf);
}

void int_buffer::copy(std::size_t first, std::size_t count, std::uint64_t* out) const noexcept {
  const Py_ssize_t stride = view_->strides != nullptr ? view_->strides[0] : view_->itemsize;
  const char* at = static_cast<const char*>(view_->buf) + static_cast<Py_ssize_t>(first) * stride;
  // Widened with the value's own signedness, as the C++ library widens an integer key.
  const auto widen = [&]<class S, class U>() {
    for (std::size_t i = 0; i < count; ++i, at += stride) {
      U u;
      std::memcpy(&u, at, sizeof u);
      out[i] = is_signed_ ? static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<S>(u)))
                          : static_cast<std::uint64_t>(u);
    }
  };
  switch (view_->itemsize) {
    case 1:
      widen.template operator()<std::int8_t, std::uint8_t>();
      break;
    case 2:
      widen.template operator()<std::int16_t, std::uint16_t>();
      break;
    case 4:
      widen.template operator()<std::int32_t, std::uint32_t>();
      break;
    default:
      widen.template operator()<std::int64_t, std::uint64_t>();
      break;
  }
}

}  // namespace bloomery_py
