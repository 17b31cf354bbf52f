// Running a sweep's points in one process, up to N at a time, and reporting each as it ends. Once
// `stop_requested` says so (Ctrl-C, SIGTERM), starts no more points and stops the running ones
// (their partial files go with them), so that a resumed sweep starts them afresh.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "sim/sweep/point_launcher.hpp"
#include "sim/sweep/sweep_directory.hpp"
#include "sim/sweep/sweep_plan.hpp"

namespace lockstep {

// How this process's share of the points ended. Which points are done or failed is read from the
// sweep directory, the one record that every process and every resumption shares.
struct SweepTally {
  bool interrupted = false;

  void add(const FinishedPoint& finished) { interrupted = interrupted || finished.interrupted; }
};

// One line on stdout: the point, its settings, and how it ended.
void report_point(const SweepPlan& plan, const FinishedPoint& finished);

using StopRequested = std::function<bool()>;

[[nodiscard]] SweepTally run_points_locally(const SweepPlan& plan, const SweepDirectory& directory,
                                            const std::vector<std::size_t>& todo, std::size_t jobs,
                                            const StopRequested& stop_requested);

// How long a scheduler sleeps between looks at its children, signals and messages: short beside
// any point's run, long enough to cost nothing.
inline constexpr long kPollNanoseconds = 20'000'000;
void pause_briefly();

}  // namespace lockstep
