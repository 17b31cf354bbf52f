// Running what a scenario describes, one function per kind of workload: each builds the components,
// runs the simulator to the end (or the scenario's time limit), flushes its tables into the output
// and says in a few lines what happened.
#pragma once

#include <cstdint>
#include <string>

#include "sim/core/simulator.hpp"
#include "sim/output/hdf5_output.hpp"
#include "sim/scenario/scenario.hpp"

namespace lockstep {

struct RunSummary {
  RunOutcome outcome = RunOutcome::kDrained;
  Time end;
  std::uint64_t events = 0;
  std::string report;  // for people: what ran and how it went, one finding per line
};

[[nodiscard]] RunSummary run_job(const LoadedScenario& loaded, Hdf5Output& output,
                                 bool show_progress);
[[nodiscard]] RunSummary run_traffic(const LoadedScenario& loaded, Hdf5Output& output,
                                     bool show_progress);

// The time limit of a scenario as a point on the clock.
[[nodiscard]] Time run_limit(const Scenario& scenario);

}  // namespace lockstep
