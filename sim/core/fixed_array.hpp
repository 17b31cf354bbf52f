// Objects that can be neither copied nor moved (others point at them), built in place one after
// the other in one block sized up front. A vector of unique_ptr would put a pointer load, and at
// scale a cache miss, in front of every access; here an element's address is computed.
#pragma once

#include <cassert>
#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace lockstep {

template <class T>
class FixedArray {
 public:
  explicit FixedArray(std::size_t capacity)
      : elements_(static_cast<T*>(::operator new(capacity * sizeof(T), kAlignment))),
        capacity_(capacity) {}
  FixedArray(const FixedArray&) = delete;
  FixedArray& operator=(const FixedArray&) = delete;
  ~FixedArray() {
    while (size_ > 0) std::destroy_at(&elements_[--size_]);
    ::operator delete(elements_, kAlignment);
  }

  template <class... Args>
  T& emplace_back(Args&&... args) {
    assert(size_ < capacity_);
    T* element = std::construct_at(&elements_[size_], std::forward<Args>(args)...);
    ++size_;
    return *element;
  }

  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] T& operator[](std::size_t i) { return elements_[i]; }
  [[nodiscard]] const T& operator[](std::size_t i) const { return elements_[i]; }

 private:
  static constexpr std::align_val_t kAlignment{alignof(T)};

  T* elements_;
  std::size_t size_ = 0;
  std::size_t capacity_;
};

}  // namespace lockstep
