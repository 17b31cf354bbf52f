// A re-armable, cancellable timeout for one owner method (retransmission, rate timers, watchdogs).
// Cancelling does not search the heap: the pending event stays and finds the timer disarmed when it
// fires. Re-arming to a later deadline reuses the pending event (it re-schedules itself on firing),
// so a timer pushed forward on every packet costs no heap operation; only an earlier deadline
// pushes a new event, and the superseded one is recognised by its generation. Stale events are thus
// bounded by the number of times a deadline moved earlier. The timer must outlive the run loop that
// may fire it.
#pragma once

#include <cstdint>

#include "sim/core/simulator.hpp"

namespace lockstep {

class Timer {
 public:
  // The timer calls `owner->Method()`, or `owner->Method(argument)` when Method takes one.
  template <auto Method>
  static Timer calling(Simulator& sim,
                       typename detail::MethodTraits<decltype(Method)>::Class* owner,
                       std::uint64_t argument = 0) {
    return Timer(sim, &detail::invoke<Method>, owner, argument);
  }

  // As calling(), built in place (std::optional::emplace): Timer(sim, Timer::Calling<&C::m>{}, c).
  template <auto Method>
  struct Calling {};
  template <auto Method>
  Timer(Simulator& sim, Calling<Method> /*method*/,
        typename detail::MethodTraits<decltype(Method)>::Class* owner, std::uint64_t argument = 0)
      : Timer(sim, &detail::invoke<Method>, owner, argument) {}

  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  void arm_at(Time deadline);
  void arm_in(Duration delay) { arm_at(sim_.now() + delay); }
  void cancel() { armed_ = false; }

  [[nodiscard]] bool armed() const { return armed_; }

 private:
  Timer(Simulator& sim, EventFn callback, void* owner, std::uint64_t argument)
      : sim_(sim), callback_(callback), owner_(owner), argument_(argument) {}

  static void on_event(void* self, std::uint64_t generation);
  void push_event(Time at);

  Simulator& sim_;
  EventFn callback_;
  void* owner_;
  std::uint64_t argument_;
  Time deadline_;
  Time pending_at_;
  std::uint64_t generation_ = 0;
  bool armed_ = false;
  bool event_pending_ = false;
};

}  // namespace lockstep
