// A FIFO in a ring that doubles when full and keeps its capacity, so once it has grown to the
// deepest it has been, pushing and popping allocate nothing.
#pragma once

#include <cstddef>
#include <vector>

namespace lockstep {

template <class Entry>
class Ring {
 public:
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] const Entry& front() const { return slots_[head_]; }

  void push(const Entry& entry) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = entry;
    ++size_;
  }

  Entry pop() {
    const Entry entry = slots_[head_];
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
    return entry;
  }

  template <class Visit>
  void for_each(Visit&& visit) const {
    for (std::size_t i = 0; i < size_; ++i) visit(slots_[(head_ + i) & (slots_.size() - 1)]);
  }

 private:
  void grow() {
    std::vector<Entry> bigger(slots_.empty() ? 8 : slots_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = slots_[(head_ + i) & (slots_.size() - 1)];
    slots_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<Entry> slots_;  // capacity is a power of two
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace lockstep
