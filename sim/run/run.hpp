// Running a scenario, as a library call: whatever it holds (a training job, traffic on a network,
// or a job with background traffic) is built on one cluster (models/cluster) and run to its end
// or the scenario's time limit, its tables recorded into `output`, with a few lines saying what
// happened. The CLI's `lockstep run` is this call plus the output file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "models/cluster/cluster.hpp"
#include "sim/core/simulator.hpp"
#include "sim/core/table.hpp"
#include "sim/scenario/scenario.hpp"

namespace lockstep {

struct RunOptions {
  bool show_progress = false;  // a progress line on stderr (a terminal's)
  std::function<bool()> stop;  // polled; true stops the run early (Ctrl-C); may be empty
};

struct RunSummary {
  RunOutcome outcome = RunOutcome::kDrained;  // kStopped: `stop` asked for it
  // Drained with work unfinished: nothing left could move it (a flow over a cable at 0 b/s).
  bool stalled = false;
  // Some flow's queue pair ran out of retries (the traffic's; a job's shows in job_outcome).
  bool flows_failed = false;
  // How the training job ended (job_outcome_name: completed, out_of_memory, hang, ...): a crash
  // or a hang is a result of the simulated cluster, not an error. Empty without a job.
  std::string job_outcome;
  Time end;
  std::uint64_t events = 0;
  std::string kind;    // "job", "traffic" or "job with traffic", recorded in /meta
  std::string report;  // for people: what ran and how it went, one finding per line
};

// The scenario must hold a job or traffic (a network alone is for `lockstep nccl-tests`).
[[nodiscard]] RunSummary run_scenario(const LoadedScenario& loaded, RecordBackend& output,
                                      const RunOptions& options);

// The machine a scenario with a network describes: its fabric, servers, host paths and seed.
[[nodiscard]] ClusterSpec cluster_spec(const Scenario& scenario);

// The time limit of a scenario as a point on the clock.
[[nodiscard]] Time run_limit(const Scenario& scenario);

}  // namespace lockstep
