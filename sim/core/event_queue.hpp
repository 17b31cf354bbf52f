// The pending-event set: a 4-ary min-heap of small value events in one vector, ordered by
// (time, phase, insertion sequence). Ties at one time run lowest phase first, then in the order they
// were scheduled, so a run never depends on heap layout. After the vector has grown to the largest
// pending count (warm-up), pushing and popping allocate nothing. A 4-ary heap halves the depth of a
// binary one and its four children share cache lines, which is what dominates at 10^4+ pending events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/time.hpp"

namespace lockstep {

// Orders events that fall on the same picosecond: lower phases run first.
enum class Phase : std::uint8_t {
  kFirst = 0,
  kNormal = 128,
  // Observers (counter sampling) see the state after everything else at that instant.
  kObserve = 255,
};

using EventFn = void (*)(void* target, std::uint64_t arg);

struct Event {
  Time at;
  std::uint64_t order;  // phase in the top 8 bits, insertion sequence below
  EventFn fn;
  void* target;
  std::uint64_t arg;

  void fire() const { fn(target, arg); }
  [[nodiscard]] Phase phase() const { return static_cast<Phase>(order >> kSequenceBits); }
  static constexpr int kSequenceBits = 56;
};

class EventQueue {
 public:
  [[nodiscard]] bool empty() const { return heap_.empty(); }
  [[nodiscard]] std::size_t size() const { return heap_.size(); }
  [[nodiscard]] const Event& top() const { return heap_.front(); }
  void reserve(std::size_t n) { heap_.reserve(n); }

  void push(Time at, Phase phase, EventFn fn, void* target, std::uint64_t arg) {
    const std::uint64_t order =
        (static_cast<std::uint64_t>(phase) << Event::kSequenceBits) | next_sequence_++;
    heap_.push_back(Event{at, order, fn, target, arg});
    sift_up(heap_.size() - 1);
  }

  // Removes and returns the earliest event.
  Event pop() {
    Event earliest = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down_from_root(last);
    return earliest;
  }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.at < b.at || (a.at == b.at && a.order < b.order);
  }

  void sift_up(std::size_t hole) {
    const Event moving = heap_[hole];
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / 4;
      if (!before(moving, heap_[parent])) break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = moving;
  }

  // Places `moving` (the former last element) starting from an empty root.
  void sift_down_from_root(const Event& moving) {
    const std::size_t n = heap_.size();
    std::size_t hole = 0;
    while (true) {
      const std::size_t first_child = 4 * hole + 1;
      if (first_child >= n) break;
      std::size_t best = first_child;
      const std::size_t end = first_child + 4 < n ? first_child + 4 : n;
      for (std::size_t c = first_child + 1; c < end; ++c) {
        if (before(heap_[c], heap_[best])) best = c;
      }
      if (!before(heap_[best], moving)) break;
      heap_[hole] = heap_[best];
      hole = best;
    }
    heap_[hole] = moving;
  }

  std::vector<Event> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace lockstep
