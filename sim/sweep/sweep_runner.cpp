#include "sim/sweep/sweep_runner.hpp"

#include <ctime>
#include <deque>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace lockstep {

void report_point(const SweepPlan& plan, const FinishedPoint& finished) {
  if (finished.interrupted) return;
  const SweepPoint& point = plan.points[finished.index];
  std::ostringstream line;
  line << "lockstep sweep: point " << point.index << " (";
  const char* separator = "";
  for (const std::string& parameter : plan.parameters) {
    line << separator << parameter << "=" << SweepPlan::value_of(point, parameter);
    separator = ", ";
  }
  if (point.seed) line << separator << "seed " << *point.seed;
  line << ") ";
  if (finished.succeeded) {
    line << "done in " << std::fixed << std::setprecision(1) << finished.wall_seconds << " s";
  } else {
    const std::string first_line = finished.message.substr(0, finished.message.find('\n'));
    line << "failed: " << first_line;
  }
  std::cout << line.str() << std::endl;
}

void pause_briefly() {
  const timespec pause{0, kPollNanoseconds};
  nanosleep(&pause, nullptr);
}

SweepTally run_points_locally(const SweepPlan& plan, const SweepDirectory& directory,
                              const std::vector<std::size_t>& todo, std::size_t jobs,
                              const StopRequested& stop_requested) {
  PointLauncher launcher(plan, directory);
  std::deque<std::size_t> waiting(todo.begin(), todo.end());
  SweepTally tally;
  while (!waiting.empty() || launcher.running() > 0) {
    if (stop_requested()) {
      launcher.stop_all();
      tally.interrupted = true;
      return tally;
    }
    while (launcher.running() < jobs && !waiting.empty()) {
      launcher.start(plan.points[waiting.front()]);
      waiting.pop_front();
    }
    if (const std::optional<FinishedPoint> finished = launcher.collect(false)) {
      report_point(plan, *finished);
      tally.add(*finished);
    } else {
      pause_briefly();
    }
  }
  return tally;
}

}  // namespace lockstep
