#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "models/workload/data_parallel_job.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/interrupt.hpp"
#include "sim/cli/progress.hpp"
#include "sim/cli/scenario_arguments.hpp"
#include "sim/core/quantity.hpp"
#include "sim/output/hdf5_output.hpp"
#include "sim/scenario/scenario.hpp"

namespace lockstep {
namespace {

namespace po = boost::program_options;

const char* outcome_name(RunOutcome outcome) {
  switch (outcome) {
    case RunOutcome::kDrained:
      return "completed";
    case RunOutcome::kReachedLimit:
      return "reached_until";
    case RunOutcome::kStopped:
      return "stopped";
  }
  return "unknown";
}

std::filesystem::path default_output(const std::filesystem::path& scenario) {
  return std::filesystem::path(scenario.stem().string() + ".h5");
}

struct RunSummary {
  RunOutcome outcome;
  Time end;
  std::uint64_t events;
  std::int64_t steps_completed;
  Duration all_reduce;
};

RunSummary simulate(const LoadedScenario& loaded, Hdf5Output& output, bool show_progress) {
  const Scenario& scenario = loaded.scenario;
  Simulator sim;
  DataParallelJob job(sim, scenario.job, scenario.simulation.seed, output);
  const std::optional<Time> end = scenario.simulation.until
                                      ? std::optional(Time::zero() + *scenario.simulation.until)
                                      : std::nullopt;
  ProgressReporter progress(show_progress, end,
                            [&job]() -> std::optional<double> { return job.progress(); });
  sim.set_monitor(&progress, ProgressReporter::kPeriodEvents);
  job.start();
  const std::optional<Duration>& until = scenario.simulation.until;
  const RunOutcome outcome = sim.run(until ? Time::zero() + *until : Time::max());
  progress.finish();
  job.flush();
  return RunSummary{outcome, sim.now(), sim.events_processed(), job.steps_completed(),
                    job.all_reduce_duration()};
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  po::options_description options("lockstep run [SCENARIO] [options]");
  ScenarioArguments scenario_arguments;
  std::string output_path;
  bool quiet = false;
  options.add_options()("help,h", "show this help")(
      "output,o", po::value(&output_path), "output file (default: SCENARIO's name with .h5)")(
      "quiet,q", po::bool_switch(&quiet), "no progress line");
  scenario_arguments.add_to(options);
  po::positional_options_description positional;
  positional.add("scenario", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "lockstep run: " << e.what() << "\n" << options;
    return exit_code::kBadInput;
  }
  if (vm.count("help") != 0) {
    std::cout << "Runs a scenario and writes its results to an HDF5 file.\n"
              << "Without SCENARIO, runs " << default_scenario_path().string() << ".\n\n"
              << options;
    return exit_code::kOk;
  }

  const std::filesystem::path scenario_path = scenario_arguments.scenario_path();
  const ScenarioLoad load = load_scenario_file(scenario_path, scenario_arguments.overrides());
  if (!load.loaded) {
    for (const Diagnostic& d : load.diagnostics.all()) std::cerr << d.to_string() << "\n";
    std::cerr << "lockstep run: " << load.diagnostics.all().size()
              << " problem(s) in the scenario; nothing was run\n";
    return exit_code::kBadInput;
  }
  const std::filesystem::path output =
      output_path.empty() ? default_output(scenario_path) : std::filesystem::path(output_path);
  const std::filesystem::path directory = output.parent_path().empty() ? "." : output.parent_path();
  if (!std::filesystem::is_directory(directory)) {
    std::cerr << "lockstep run: cannot write '" << output.string() << "': directory '"
              << directory.string() << "' does not exist\n";
    return exit_code::kBadInput;
  }
  if (std::filesystem::is_directory(output)) {
    std::cerr << "lockstep run: cannot write '" << output.string() << "': it is a directory\n";
    return exit_code::kBadInput;
  }

  install_interrupt_handlers();
  const auto wall_start = std::chrono::steady_clock::now();
  Hdf5Output file(output);
  const LoadedScenario& loaded = *load.loaded;
  file.write_meta_text("scenario", loaded.resolved_yaml);
  file.write_meta_text("scenario_file", scenario_path.string());
  file.write_meta_integer("seed", static_cast<std::int64_t>(loaded.scenario.simulation.seed));
  file.write_meta_text("version", LOCKSTEP_VERSION);
  const bool show_progress = !quiet && isatty(STDERR_FILENO) != 0;
  const RunSummary summary = simulate(loaded, file, show_progress);
  if (summary.outcome == RunOutcome::kStopped) {
    std::cerr << "lockstep run: interrupted at simulated time " << format(summary.end)
              << "; no output written\n";
    return exit_code::kInterrupted;
  }
  file.write_meta_text("outcome", outcome_name(summary.outcome));
  file.write_meta_integer("end_ps", summary.end.ps());
  file.write_meta_integer("events", static_cast<std::int64_t>(summary.events));
  file.commit();

  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  std::cout << "lockstep: " << loaded.scenario.job.ranks << " ranks, " << summary.steps_completed
            << " of " << loaded.scenario.job.steps << " steps in "
            << format_rounded(summary.end.since_start()) << " simulated (all-reduce "
            << format_rounded(summary.all_reduce) << " per step); " << summary.events
            << " events in " << wall << " s\n"
            << "lockstep: wrote " << std::filesystem::absolute(output).string() << "\n";
  return exit_code::kOk;
}

}  // namespace lockstep
