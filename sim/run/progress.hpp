// Progress of a long run on stderr, one self-overwriting line: simulated time reached, event rate
// and, when the end is known, an ETA. Shown only on a terminal, only after the run has taken a
// couple of seconds, and never with --quiet. It also relays a request to stop (Ctrl-C) to the run
// loop.
#pragma once

#include <chrono>
#include <functional>
#include <optional>

#include "sim/core/simulator.hpp"

namespace lockstep {

class ProgressReporter final : public RunMonitor {
 public:
  // `fraction_done` estimates the share of the work done, when the model can tell; the run stops
  // when `stop` (may be empty) turns true.
  ProgressReporter(bool show, std::optional<Time> end,
                   std::function<std::optional<double>()> fraction_done,
                   std::function<bool()> stop);

  void on_progress(Simulator& sim) override;
  // Clears the progress line, if one was drawn.
  void finish();

  static constexpr std::uint64_t kPeriodEvents = 1 << 16;

 private:
  using Clock = std::chrono::steady_clock;

  bool show_;
  std::optional<Time> end_;
  std::function<std::optional<double>()> fraction_done_;
  std::function<bool()> stop_;
  Clock::time_point started_ = Clock::now();
  Clock::time_point last_drawn_ = started_;
  std::uint64_t events_at_last_draw_ = 0;
  bool drawn_ = false;
};

}  // namespace lockstep
