// What the examples measure: wall time, the bytes an exact container really allocates, and a
// filter's answers scored against the exact answer.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace bloomery::examples {

class stopwatch {
 public:
  stopwatch() : start_(clock::now()) {}
  void restart() { start_ = clock::now(); }
  double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

 private:
  using clock = std::chrono::steady_clock;
  clock::time_point start_;
};

// An allocator that adds every allocation's size to a shared counter, so an exact baseline (an
// unordered_set of strings, say) reports the bytes it holds rather than an estimate. Counts what
// the container asks for; malloc's own per-block overhead comes on top.
struct allocation_counter {
  std::size_t live_bytes = 0;
  std::size_t peak_bytes = 0;
};

template <class T>
class counting_allocator {
 public:
  using value_type = T;
  explicit counting_allocator(allocation_counter& c) noexcept : counter_(&c) {}
  template <class U>
  counting_allocator(const counting_allocator<U>& other) noexcept : counter_(other.counter()) {}

  T* allocate(std::size_t n) {
    T* p = std::allocator<T>{}.allocate(n);
    counter_->live_bytes += n * sizeof(T);
    if (counter_->live_bytes > counter_->peak_bytes) counter_->peak_bytes = counter_->live_bytes;
    return p;
  }
  void deallocate(T* p, std::size_t n) noexcept {
    counter_->live_bytes -= n * sizeof(T);
    std::allocator<T>{}.deallocate(p, n);
  }
  allocation_counter* counter() const noexcept { return counter_; }
  template <class U>
  bool operator==(const counting_allocator<U>& other) const noexcept {
    return counter_ == other.counter();
  }

 private:
  allocation_counter* counter_;
};

// A filter's answers against the truth. A false negative is the one error a filter must never
// make; every example asserts that count is zero.
struct answer_tally {
  std::uint64_t true_positives = 0;   // present, and the filter said "possibly"
  std::uint64_t false_positives = 0;  // absent, but the filter said "possibly"
  std::uint64_t true_negatives = 0;   // absent, and the filter said "no"
  std::uint64_t false_negatives = 0;  // present, but the filter said "no": a bug

  void record(bool filter_says_maybe, bool truly_present) noexcept {
    if (truly_present) {
      ++(filter_says_maybe ? true_positives : false_negatives);
    } else {
      ++(filter_says_maybe ? false_positives : true_negatives);
    }
  }
  std::uint64_t absent() const noexcept { return false_positives + true_negatives; }
  // Measured false-positive rate: the share of absent keys the filter let through.
  double fpr() const noexcept {
    return absent() == 0 ? 0.0
                         : static_cast<double>(false_positives) / static_cast<double>(absent());
  }
};

}  // namespace bloomery::examples
