// The pending-event set, ordered by (time, phase, insertion sequence): ties at one time run lowest
// phase first, then in the order they were scheduled, so a run never depends on container layout.
//
// It is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, J. ACM 1990), which fits discrete-event
// simulation because no event is ever scheduled before the last one taken out. Bucket b holds the
// events whose time first differs from that last time in bit b-1; bucket 0 holds the events at
// exactly that time, kept as a small binary heap on (phase, sequence). Taking out an event empties
// bucket 0 first; when it is empty, the lowest non-empty bucket is found with one bit scan and its
// events are spread into lower buckets around the new minimum. Each event moves down at most 64
// times in its life and typically a few, so the cost per event barely grows with the number
// pending: measured here, 2x a 4-ary heap at 10^4 pending and 5x at 10^6
// (tests/bench/event_queue_bench). Events are 40-byte values in vectors that keep their capacity,
// so once warmed up, pushing and popping allocate nothing.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/time.hpp"

namespace lockstep {

// Orders events that fall on the same picosecond: lower phases run first.
enum class Phase : std::uint8_t {
  kFirst = 0,
  kNormal = 128,
  // State derived from everything that happened at an instant (flow-level rates after all the
  // flows that start or end then), settled once before it is observed.
  kSettle = 192,
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
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }

  // `at` must not precede the time of the last event popped.
  void push(Time at, Phase phase, EventFn fn, void* target, std::uint64_t arg) {
    assert(at.ps() >= base_);
    const std::uint64_t order =
        (static_cast<std::uint64_t>(phase) << Event::kSequenceBits) | next_sequence_++;
    const int b = bucket_of(at.ps());
    buckets_[static_cast<std::size_t>(b)].push_back(Event{at, order, fn, target, arg});
    if (b == 0) {
      std::push_heap(buckets_[0].begin(), buckets_[0].end(), LaterInOrder{});
    } else {
      occupied_ |= std::uint64_t{1} << (b - 1);
    }
    ++size_;
  }

  // Removes the earliest event into `out`, unless it lies after `limit`; the queue must not be
  // empty. When nothing is left up to `limit`, pushes from `limit` on become valid (the caller's
  // clock moves to the limit).
  [[nodiscard]] bool pop_not_after(Time limit, Event& out) {
    settle();
    if (base_ > limit.ps()) {
      rebase(limit.ps());
      return false;
    }
    std::vector<Event>& now = buckets_[0];
    if (now.size() > 1) std::pop_heap(now.begin(), now.end(), LaterInOrder{});
    out = now.back();
    now.pop_back();
    --size_;
    prefetch_next();
    return true;
  }

  // Removes and returns the earliest event; the queue must not be empty.
  Event pop() {
    Event earliest{};
    [[maybe_unused]] const bool popped = pop_not_after(Time::max(), earliest);
    assert(popped);
    return earliest;
  }

 private:
  struct LaterInOrder {
    bool operator()(const Event& a, const Event& b) const { return a.order > b.order; }
  };

  [[nodiscard]] int bucket_of(std::int64_t time) const {
    return 64 - std::countl_zero(static_cast<std::uint64_t>(time ^ base_));
  }

  // Lowers base_ to `floor` and redistributes every event, so that pushes at or after `floor` keep
  // the radix invariant. Linear, but only run when a run stops at its time limit.
  void rebase(std::int64_t floor) {
    std::vector<Event> all;
    all.reserve(size_);
    for (std::vector<Event>& bucket : buckets_) {
      all.insert(all.end(), bucket.begin(), bucket.end());
      bucket.clear();
    }
    occupied_ = 0;
    base_ = floor;
    for (const Event& e : all) {
      const int b = bucket_of(e.at.ps());
      buckets_[static_cast<std::size_t>(b)].push_back(e);
      if (b != 0) occupied_ |= std::uint64_t{1} << (b - 1);
    }
    std::make_heap(buckets_[0].begin(), buckets_[0].end(), LaterInOrder{});
  }

  // Starts fetching what the next event will touch while this one runs: its target and its
  // argument, often a pointer too (a prefetch of a non-address is harmless). The next event is the
  // top of bucket 0, or else one of the few in the lowest occupied bucket, which are all fetched.
  void prefetch_next() const {
    auto prefetch = [](const Event& e) {
      __builtin_prefetch(e.target);
      __builtin_prefetch(reinterpret_cast<const void*>(e.arg));
    };
    if (!buckets_[0].empty()) {
      prefetch(buckets_[0].front());
      return;
    }
    if (occupied_ == 0) return;
    const std::vector<Event>& next =
        buckets_[static_cast<std::size_t>(std::countr_zero(occupied_) + 1)];
    constexpr std::size_t kFewEnough = 4;
    if (next.size() <= kFewEnough) {
      for (const Event& e : next) prefetch(e);
    }
  }

  // Makes bucket 0 hold the earliest events, if it does not already.
  void settle() {
    assert(size_ > 0);
    if (!buckets_[0].empty()) return;
    const int lowest = std::countr_zero(occupied_) + 1;
    occupied_ &= occupied_ - 1;
    std::vector<Event>& spread = buckets_[static_cast<std::size_t>(lowest)];
    std::int64_t minimum = spread.front().at.ps();
    for (const Event& e : spread) minimum = std::min(minimum, e.at.ps());
    base_ = minimum;
    for (const Event& e : spread) {
      const int b = bucket_of(e.at.ps());
      buckets_[static_cast<std::size_t>(b)].push_back(e);
      if (b != 0) occupied_ |= std::uint64_t{1} << (b - 1);
    }
    spread.clear();
    std::make_heap(buckets_[0].begin(), buckets_[0].end(), LaterInOrder{});
  }

  std::array<std::vector<Event>, 65> buckets_;
  std::uint64_t occupied_ = 0;  // bit b-1 set when bucket b (b >= 1) holds events
  std::int64_t base_ = 0;       // time of the events in bucket 0
  std::size_t size_ = 0;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace lockstep
