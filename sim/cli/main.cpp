// lockstep: discrete-event simulator of AI training clusters.
#include <H5Cpp.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "sim/cli/commands.hpp"
#include "sim/core/check.hpp"
#include "sim/output/hdf5_output.hpp"

namespace {

constexpr const char* kUsage =
    "usage: lockstep <command> [arguments]\n"
    "\n"
    "commands:\n"
    "  run [SCENARIO] [-o OUT.h5] [--seed N] [--until TIME] [--set key=value]... [--quiet]\n"
    "                      run a scenario (default: scenarios/worked-example.yaml) and write HDF5\n"
    "  validate SCENARIO... [--set key=value]... [--resolved]\n"
    "                      check scenarios without running them\n"
    "  keys                list every scenario key with its type and default\n"
    "  nccl-tests OP (SCENARIO | --nodes N [--preset P]) [-b MIN] [-e MAX] [-f FACTOR]\n"
    "                      nccl-tests' sweep of a collective over a scenario's network or\n"
    "                      over GPU servers\n"
    "  sweep SWEEP.yaml [-j N] [-o DIR]\n"
    "                      run a scenario over a grid of overrides (also under mpirun, or as a\n"
    "                      Slurm array); one HDF5 per point and an index\n"
    "  diagnose OUT.h5     where the time went and why: ranked findings, also written to OUT.h5\n"
    "  trace OUT.h5 -o FILE\n"
    "                      the run's timeline for ui.perfetto.dev\n"
    "  plot KIND OUT.h5    step-time heatmap, Gantt, PFC heatmap, queues, busbw or FCT CDF\n"
    "\n"
    "  lockstep <command> --help    options of one command\n"
    "  lockstep --version           version\n";

int dispatch(const std::string& command, const std::vector<std::string>& rest) {
  if (command == "run") return lockstep::run_command(rest);
  if (command == "validate") return lockstep::validate_command(rest);
  if (command == "keys") return lockstep::keys_command(rest);
  if (command == "nccl-tests") return lockstep::nccl_tests_command(rest);
  if (command == "sweep") return lockstep::sweep_command(rest);
  if (command == "diagnose") return lockstep::analysis_command("diagnose.py", rest);
  if (command == "trace") return lockstep::analysis_command("trace.py", rest);
  if (command == "plot") return lockstep::analysis_command("plot.py", rest);
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return lockstep::exit_code::kOk;
  }
  if (command == "--version") {
    std::cout << "lockstep " << LOCKSTEP_VERSION << "\n";
    return lockstep::exit_code::kOk;
  }
  std::cerr << "lockstep: unknown command '" << command << "'\n\n" << kUsage;
  return lockstep::exit_code::kBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return lockstep::exit_code::kBadInput;
  }
  const std::vector<std::string> rest(argv + 2, argv + argc);
  try {
    return dispatch(argv[1], rest);
  } catch (const lockstep::InvariantViolation& e) {
    std::cerr << "lockstep: " << e.what() << "\n";
    return lockstep::exit_code::kInvariant;
  } catch (const lockstep::OutputError& e) {
    // The output is already removed; HDF5's own clean-up at exit would trip over the file it
    // could not close.
    std::cerr << "lockstep: " << e.what() << "; nothing was written" << std::endl;
    std::cout.flush();
    std::_Exit(lockstep::exit_code::kFailure);
  } catch (const lockstep::ClockOverflow& e) {
    std::cerr << "lockstep: " << e.what()
              << ": a rate, size or count of the scenario is beyond what it can simulate; nothing "
                 "was written\n";
    return lockstep::exit_code::kBadInput;
  } catch (const std::bad_alloc&) {
    std::cerr << "lockstep: out of memory: the scenario needs more memory than this machine "
                 "has; nothing was written\n";
    return lockstep::exit_code::kOutOfMemory;
  } catch (const H5::Exception& e) {
    std::cerr << "lockstep: HDF5 error in " << e.getFuncName() << ": " << e.getDetailMsg() << "\n";
    return lockstep::exit_code::kFailure;
  } catch (const std::exception& e) {
    std::cerr << "lockstep: " << e.what() << "\n";
    return lockstep::exit_code::kFailure;
  }
}
