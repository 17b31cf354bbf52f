#include "models/workload/data_parallel_job.hpp"
#include "sim/cli/progress.hpp"
#include "sim/cli/simulation_run.hpp"
#include "sim/core/quantity.hpp"

namespace lockstep {

Time run_limit(const Scenario& scenario) {
  return scenario.simulation.until ? Time::zero() + *scenario.simulation.until : Time::max();
}

RunSummary run_job(const LoadedScenario& loaded, Hdf5Output& output, bool show_progress) {
  const Scenario& scenario = loaded.scenario;
  const DataParallelJobConfig& config = *scenario.job;
  Simulator sim;
  DataParallelJob job(sim, config, scenario.simulation.seed, output);
  const Time limit = run_limit(scenario);
  ProgressReporter progress(show_progress,
                            limit == Time::max() ? std::nullopt : std::optional(limit),
                            [&job]() -> std::optional<double> { return job.progress(); });
  sim.set_monitor(&progress, ProgressReporter::kPeriodEvents);
  job.start();
  const RunOutcome outcome = sim.run(limit);
  progress.finish();
  job.flush();
  RunSummary summary{outcome, sim.now(), sim.events_processed(), {}};
  summary.report =
      std::to_string(config.ranks) + " ranks, " + std::to_string(job.steps_completed()) + " of " +
      std::to_string(config.steps) + " steps in " + format_rounded(sim.now().since_start()) +
      " simulated (all-reduce " + format_rounded(job.all_reduce_duration()) + " per step)";
  return summary;
}

}  // namespace lockstep
