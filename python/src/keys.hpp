// Python objects -> bloomery keys. A key is a str (its UTF-8 bytes), bytes, bytearray, memoryview
// (its bytes), or an int in [-2^63, 2^64) (the same key as the C++ integer of that value); bool and
// everything else is a TypeError. Batches of keys are copied out of their Python objects while the
// GIL is held, so the filter can work on them with the GIL released.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bloomery_py {

namespace py = pybind11;

// The integer key of `obj` (an int other than bool, or an object with __index__ such as numpy's
// integers), as its 64-bit two's complement. OverflowError outside [-2^63, 2^64).
std::uint64_t integer_key(PyObject* obj);

// Calls fn(std::string_view) or fn(std::uint64_t) with the key of `obj`. The bytes stay valid
// during the call (mutable objects are copied into `scratch`). Raises TypeError for an object that
// is not a key. Needs the GIL.
template <class Fn>
decltype(auto) with_key(PyObject* obj, std::string& scratch, Fn&& fn);

// What kind of key an object is, and its bytes (valid while the object lives and, for a
// non-contiguous memoryview, while `scratch` is untouched).
struct classified_key {
  bool integer = false;
  std::uint64_t value = 0;
  std::string_view bytes;
};
classified_key classify_key(PyObject* obj, std::string& scratch);

template <class Fn>
decltype(auto) with_key(PyObject* obj, std::string& scratch, Fn&& fn) {
  const classified_key k = classify_key(obj, scratch);
  if (k.integer) return fn(k.value);
  if (PyByteArray_Check(obj) || PyMemoryView_Check(obj)) {
    // Another thread may resize a bytearray while the filter waits for its lock without the GIL.
    if (k.bytes.data() != scratch.data()) scratch.assign(k.bytes);
    return fn(std::string_view(scratch));
  }
  return fn(k.bytes);
}

// A batch of keys copied out of Python objects, kept in input order as runs of one key type (byte
// keys or integer keys), so each run goes to the filter as one homogeneous range.
class key_batch {
 public:
  struct run {
    bool integers;
    std::size_t first;  // index into the byte keys or the integer keys
    std::size_t count;
    std::size_t position;  // index of the run's first key in the batch
  };

  void clear();
  // Converts `obj` and appends its key. Needs the GIL; raises like classify_key.
  void add(PyObject* obj);
  // Builds the views of the byte keys; call after the last add, before for_each_run.
  void finish();

  std::size_t size() const noexcept { return count_; }
  std::size_t byte_size() const noexcept { return bytes_.size(); }
  const std::vector<run>& runs() const noexcept { return runs_; }
  std::span<const std::string_view> byte_keys(const run& r) const noexcept {
    return std::span<const std::string_view>(views_).subspan(r.first, r.count);
  }
  std::span<const std::uint64_t> integer_keys(const run& r) const noexcept {
    return std::span<const std::uint64_t>(ints_).subspan(r.first, r.count);
  }

  // fn(std::span<const std::string_view> or std::span<const std::uint64_t>, position) per run.
  // Needs no GIL.
  template <class Fn>
  void for_each_run(Fn&& fn) const {
    for (const run& r : runs_) {
      if (r.integers) {
        fn(integer_keys(r), r.position);
      } else {
        fn(byte_keys(r), r.position);
      }
    }
  }

 private:
  std::vector<char> bytes_;
  std::vector<std::pair<std::size_t, std::size_t>> spans_;  // offset and length in bytes_
  std::vector<std::string_view> views_;
  std::vector<std::uint64_t> ints_;
  std::vector<run> runs_;
  std::size_t count_ = 0;
  std::string scratch_;
};

// The keys of a Python iterable, converted batch by batch with the GIL held. A str, bytes or
// bytearray is one key, not a collection of keys: it is refused (TypeError) rather than iterated
// character by character.
class key_source {
 public:
  // `verb` names the method in error messages ("update", "contains_many").
  key_source(py::handle keys, const char* verb);

  // Clears `batch` and fills it with up to max_keys keys (or about max_bytes of byte keys); false
  // when the iterable had no keys left. On a conversion error the batch holds (finished) the keys
  // before the bad one, and the error propagates.
  bool fill(key_batch& batch, std::size_t max_keys, std::size_t max_bytes);

 private:
  py::object sequence_;  // a list or tuple, read by index
  py::object iterator_;  // anything else
  std::size_t next_ = 0;
};

// Refuses (TypeError) a str, bytes or bytearray passed where a collection of keys is expected.
void reject_single_key(py::handle keys, const char* verb);

// A 1-D buffer of native-order integers (a NumPy integer array, array.array, a memoryview of
// integers): its keys are read in place, without a Python object per key.
class int_buffer {
 public:
  // The buffer of `obj` when it exports one of that shape; nullopt otherwise (nothing raised).
  static std::optional<int_buffer> of(py::handle obj);

  int_buffer(int_buffer&& other) noexcept;
  int_buffer& operator=(int_buffer&&) = delete;
  int_buffer(const int_buffer&) = delete;
  ~int_buffer();  // releases the buffer: needs the GIL

  std::size_t size() const noexcept { return size_; }
  // The keys in place when they are contiguous 64-bit integers (signed ones hold the same bits as
  // their keys); nullptr otherwise.
  const std::uint64_t* contiguous_u64() const noexcept;
  // Keys [first, first + count) widened to 64 bits, into `out`. Needs no GIL.
  void copy(std::size_t first, std::size_t count, std::uint64_t* out) const noexcept;

 private:
  int_buffer() = default;
  // On the heap, never moved: an exporter may point into its own Py_buffer (array.array's
  // strides point at the view's itemsize).
  std::unique_ptr<Py_buffer> view_ = std::make_unique<Py_buffer>();
  bool held_ = false;
  bool is_signed_ = false;
  std::size_t size_ = 0;
};

}  // namespace bloomery_py
