#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "models/transport/network_footprint.hpp"
#include "sim/cli/checked_inputs.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/interrupt.hpp"
#include "sim/cli/scenario_arguments.hpp"
#include "sim/core/quantity.hpp"
#include "sim/output/hdf5_output.hpp"
#include "sim/run/peak_memory.hpp"
#include "sim/run/run.hpp"
#include "sim/scenario/scenario.hpp"

namespace lockstep {
namespace {

namespace po = boost::program_options;

std::string outcome_name(const RunSummary& summary) {
  if (summary.outcome == RunOutcome::kReachedLimit) return "reached_until";
  if (!summary.job_outcome.empty()) return summary.job_outcome;
  if (summary.stalled) return "stalled";
  return summary.flows_failed ? "flows_failed" : "completed";
}

// A network that takes long to build or much memory is announced before the wait, with what to
// change, rather than leaving a silent terminal for a minute.
void announce_heavy_network(const LoadedScenario& loaded) {
  constexpr double kNoticeableSeconds = 10;
  constexpr std::int64_t kNoticeableBytes = std::int64_t{2} << 30;
  if (!loaded.topology) return;
  const NetworkFootprint footprint =
      network_footprint(*loaded.topology, loaded.scenario.network->model);
  if (footprint.setup_seconds < kNoticeableSeconds && footprint.memory.count() < kNoticeableBytes)
    return;
  std::cerr << "lockstep run: a network of " << footprint.ports << " ports: about "
            << static_cast<std::int64_t>(footprint.setup_seconds) << " s to build and "
            << footprint.memory.count() / 1'000'000 << " MB before the first event"
            << (loaded.scenario.network->model == NetworkModel::kPacket
                    ? " (network.model: flow needs a third of the memory)"
                    : "")
            << "\n";
}

std::filesystem::path default_output(const std::filesystem::path& scenario) {
  return std::filesystem::path(scenario.stem().string() + ".h5");
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
  const std::optional<LoadedScenario> load =
      load_or_report("run", scenario_path, scenario_arguments.overrides());
  if (!load) return exit_code::kBadInput;
  if (!load->scenario.job && !load->scenario.traffic) {
    std::cerr << scenario_path.string()
              << ": a `network` without `traffic`: nothing for `lockstep run` to play (`lockstep "
                 "nccl-tests OP "
              << scenario_path.string() << "` runs collectives on it)\n";
    return exit_code::kBadInput;
  }
  announce_heavy_network(*load);
  const std::filesystem::path output =
      output_path.empty() ? default_output(scenario_path) : std::filesystem::path(output_path);
  if (!output_writable("run", output)) return exit_code::kBadInput;

  install_interrupt_handlers();
  const auto wall_start = std::chrono::steady_clock::now();
  Hdf5Output file(output);
  remove_on_second_signal(file.temporary_path());
  const LoadedScenario& loaded = *load;
  file.write_meta_text("scenario", loaded.resolved_yaml);
  file.write_meta_text("scenario_file", scenario_path.string());
  file.write_meta_integer("seed", static_cast<std::int64_t>(loaded.scenario.simulation.seed));
  file.write_meta_text("version", LOCKSTEP_VERSION);
  const bool show_progress = !quiet && isatty(STDERR_FILENO) != 0;
  const RunSummary summary =
      run_scenario(loaded, file, RunOptions{show_progress, interrupt_requested});
  if (interrupt_requested()) {
    std::cerr << "lockstep run: interrupted at simulated time " << format(summary.end)
              << "; no output written\n";
    return exit_code::kInterrupted;
  }
  file.write_meta_text("kind", summary.kind);
  file.write_meta_text("outcome", outcome_name(summary));
  file.write_meta_integer("end_ps", summary.end.ps());
  file.write_meta_integer("events", static_cast<std::int64_t>(summary.events));
  file.commit();

  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  std::istringstream report(summary.report);
  for (std::string line; std::getline(report, line);) std::cout << "lockstep: " << line << "\n";
  std::cout << "lockstep: " << summary.events << " events; " << wall
            << " s wall in all (set-up and output included)\n";
  if (const std::optional<Bytes> peak = peak_resident_memory()) {
    std::cout << "lockstep: peak resident memory " << std::fixed << std::setprecision(1)
              << static_cast<double>(peak->count()) / (1 << 20) << " MiB\n"
              << std::defaultfloat;
  }
  std::cout << "lockstep: wrote " << std::filesystem::absolute(output).string() << "\n";
  return exit_code::kOk;
}

}  // namespace lockstep
