// The discrete-event engine: a clock and the pending-event set. Models are plain objects that hold
// a Simulator& and schedule their own member functions; the engine knows nothing about what they
// model. Single-threaded by design: determinism comes from the (time, phase, sequence) order alone.
#pragma once

#include <cstdint>
#include <type_traits>

#include "sim/core/check.hpp"
#include "sim/core/event_queue.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

class Simulator;

// Called by the run loop every `period_events` events, e.g. to print progress or to honour Ctrl-C.
class RunMonitor {
 public:
  virtual ~RunMonitor() = default;
  virtual void on_progress(Simulator& sim) = 0;
};

enum class RunOutcome {
  kDrained,       // nothing left to do but observe (events of Phase::kObserve)
  kReachedLimit,  // the next event lies beyond the time limit; the clock now stands at the limit
  kStopped,       // stop() was called
};

namespace detail {

template <class Method>
struct MethodTraits;
template <class C>
struct MethodTraits<void (C::*)()> {
  using Class = C;
  using Arg = void;
};
template <class C, class A>
struct MethodTraits<void (C::*)(A)> {
  using Class = C;
  using Arg = A;
};

// An event argument is one word: an integer, or a pointer to something the target owns or borrows.
template <class A>
std::uint64_t pack_argument(A value) {
  if constexpr (std::is_pointer_v<A>) {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(value));
  } else {
    static_assert(std::is_integral_v<A> || std::is_enum_v<A>, "event arguments are one word");
    return static_cast<std::uint64_t>(value);
  }
}

template <class A>
A unpack_argument(std::uint64_t word) {
  if constexpr (std::is_pointer_v<A>) {
    return reinterpret_cast<A>(static_cast<std::uintptr_t>(word));
  } else {
    return static_cast<A>(word);
  }
}

template <auto Method, class... Given>
std::uint64_t pack_arguments(Given... given) {
  using Arg = typename MethodTraits<decltype(Method)>::Arg;
  if constexpr (std::is_void_v<Arg>) {
    static_assert(sizeof...(Given) == 0, "this method takes no argument");
    return 0;
  } else {
    static_assert(sizeof...(Given) == 1, "this method takes one argument");
    return pack_argument<Arg>(static_cast<Arg>(given)...);
  }
}

template <auto Method>
void invoke(void* target, std::uint64_t word) {
  using Traits = MethodTraits<decltype(Method)>;
  auto* object = static_cast<typename Traits::Class*>(target);
  if constexpr (std::is_void_v<typename Traits::Arg>) {
    (object->*Method)();
  } else {
    (object->*Method)(unpack_argument<typename Traits::Arg>(word));
  }
}

}  // namespace detail

class Simulator {
 public:
  Simulator() = default;
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  [[nodiscard]] Time now() const { return now_; }
  [[nodiscard]] std::uint64_t events_processed() const { return events_processed_; }
  [[nodiscard]] std::size_t pending() const { return queue_.size(); }

  // Events of `Method` get a second look shortly before they run (EventQueue::look_ahead_for).
  template <auto Method>
  void look_ahead_for(EventQueue::LookAhead look, EventQueue::LookAhead last_look = nullptr) {
    queue_.look_ahead_for(&detail::invoke<Method>, look, last_look);
  }

  // Schedules `object->Method()` or `object->Method(arg)` at an absolute time.
  template <auto Method, class... Arg>
  void schedule(Time at, typename detail::MethodTraits<decltype(Method)>::Class* object,
                Arg... arg) {
    schedule_raw(at, Phase::kNormal, &detail::invoke<Method>, object,
                 detail::pack_arguments<Method>(arg...));
  }

  template <auto Method, class... Arg>
  void schedule_in(Duration delay, typename detail::MethodTraits<decltype(Method)>::Class* object,
                   Arg... arg) {
    schedule<Method>(now_ + delay, object, arg...);
  }

  template <auto Method, class... Arg>
  void schedule_in_phase(Time at, Phase phase,
                         typename detail::MethodTraits<decltype(Method)>::Class* object,
                         Arg... arg) {
    schedule_raw(at, phase, &detail::invoke<Method>, object,
                 detail::pack_arguments<Method>(arg...));
  }

  void schedule_raw(Time at, Phase phase, EventFn fn, void* target, std::uint64_t arg) {
    LOCKSTEP_CHECK(at >= now_, now_, "simulator", "event scheduled in the past");
    if (phase == Phase::kObserve) ++pending_observers_;
    queue_.push(at, phase, fn, target, arg);
  }

  // Runs events in order until none is left but observers (a periodic sampler would otherwise keep
  // a run whose work can never finish going forever), the next one lies after `limit`, or stop()
  // is called.
  RunOutcome run(Time limit = Time::max());

  // Asks the running loop to return after the event in progress; safe to call from any event.
  void stop() { stop_requested_ = true; }

  void set_monitor(RunMonitor* monitor, std::uint64_t period_events) {
    monitor_ = monitor;
    monitor_period_ = period_events == 0 ? 1 : period_events;
  }

 private:
  EventQueue queue_;
  std::size_t pending_observers_ = 0;  // events of Phase::kObserve in queue_
  Time now_;
  std::uint64_t events_processed_ = 0;
  bool stop_requested_ = false;
  RunMonitor* monitor_ = nullptr;
  std::uint64_t monitor_period_ = 1;
};

}  // namespace lockstep
