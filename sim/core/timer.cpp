#include "sim/core/timer.hpp"

namespace lockstep {

void Timer::arm_at(Time deadline) {
  deadline_ = deadline;
  armed_ = true;
  if (event_pending_ && pending_at_ <= deadline) return;
  ++generation_;
  push_event(deadline);
}

void Timer::push_event(Time at) {
  event_pending_ = true;
  pending_at_ = at;
  sim_.schedule_raw(at, Phase::kNormal, &Timer::on_event, this, generation_);
}

void Timer::on_event(void* self, std::uint64_t generation) {
  auto& timer = *static_cast<Timer*>(self);
  if (generation != timer.generation_) return;  // superseded by an earlier deadline
  timer.event_pending_ = false;
  if (!timer.armed_) return;
  if (timer.deadline_ > timer.sim_.now()) {
    timer.push_event(timer.deadline_);
    return;
  }
  timer.armed_ = false;
  timer.callback_(timer.owner_, timer.argument_);
}

}  // namespace lockstep
