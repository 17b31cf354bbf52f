// A first-in, first-out queue in one block that grows: push at the back, take from the front. A
// queue whose front keeps moving on (a GPU stream's operations, one after another for the whole
// run) makes std::deque allocate and free a block every few elements; this allocates only when it
// holds more than ever before, doubling its room, and keeps that room. An element taken off stays
// in its slot until a later push overwrites it, so it suits values that own nothing, or that are
// moved out before they are taken off.
#pragma once

#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

namespace lockstep {

template <class T>
class RingQueue {
 public:
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }
  // The elements it can hold before it grows again.
  [[nodiscard]] std::size_t capacity() const { return slots_.size(); }

  [[nodiscard]] T& front() {
    assert(size_ > 0);
    return slots_[head_];
  }
  [[nodiscard]] const T& front() const {
    assert(size_ > 0);
    return slots_[head_];
  }

  void push_back(const T& value) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = value;
    ++size_;
  }
  void push_back(T&& value) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(value);
    ++size_;
  }

  void pop_front() {
    assert(size_ > 0);
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }

  // Empties it, keeping its room; what the elements own is released.
  void clear() {
    for (std::size_t i = 0; i < size_; ++i) slots_[(head_ + i) & (slots_.size() - 1)] = T();
    head_ = 0;
    size_ = 0;
  }

 private:
  static constexpr std::size_t kFirstCapacity = 8;  // a power of two, as every capacity after it

  void grow() {
    std::vector<T> larger(slots_.empty() ? kFirstCapacity : 2 * slots_.size());
    for (std::size_t i = 0; i < size_; ++i) {
      larger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    }
    slots_ = std::move(larger);
    head_ = 0;
  }

  std::vector<T> slots_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace lockstep
