#include "sim/core/simulator.hpp"

namespace lockstep {

RunOutcome Simulator::run(Time limit) {
  LOCKSTEP_CHECK(limit >= now_, now_, "simulator", "run limit lies before the clock");
  stop_requested_ = false;
  std::uint64_t until_monitor = monitor_period_;
  Event event{};
  while (queue_.size() > pending_observers_) {
    if (!queue_.pop_not_after(limit, event)) {
      now_ = limit;
      return RunOutcome::kReachedLimit;
    }
    if (event.phase() == Phase::kObserve) [[unlikely]] {
      --pending_observers_;
    }
    now_ = event.at;
    event.fire();
    ++events_processed_;
    if (stop_requested_) [[unlikely]] {
      return RunOutcome::kStopped;
    }
    if (monitor_ != nullptr && --until_monitor == 0) [[unlikely]] {
      until_monitor = monitor_period_;
      monitor_->on_progress(*this);
      if (stop_requested_) return RunOutcome::kStopped;
    }
  }
  return RunOutcome::kDrained;
}

}  // namespace lockstep
