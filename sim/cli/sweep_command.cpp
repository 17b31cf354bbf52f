#include <boost/program_options.hpp>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "sim/cli/commands.hpp"
#include "sim/cli/interrupt.hpp"
#include "sim/sweep/mpi_sweep.hpp"
#include "sim/sweep/sweep_directory.hpp"
#include "sim/sweep/sweep_index.hpp"
#include "sim/sweep/sweep_plan.hpp"
#include "sim/sweep/sweep_runner.hpp"

namespace lockstep {
namespace {

namespace po = boost::program_options;

// Which of a sweep's points this process runs: those whose index is `shard` modulo `shards` (round
// robin, so that every shard gets its share of each parameter's expensive values).
struct Share {
  std::size_t shard = 0;
  std::size_t shards = 1;

  [[nodiscard]] bool includes(std::size_t index) const { return index % shards == shard; }
};

std::optional<std::size_t> whole_number(const std::string& text) {
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// `--shard I/N`, or else a Slurm job array's task: the array's tasks share the points out.
std::optional<Share> share_of(const std::string& option) {
  if (!option.empty()) {
    const std::size_t slash = option.find('/');
    if (slash == std::string::npos) return std::nullopt;
    const std::optional<std::size_t> shard = whole_number(option.substr(0, slash));
    const std::optional<std::size_t> shards = whole_number(option.substr(slash + 1));
    if (!shard || !shards || *shards == 0 || *shard >= *shards) return std::nullopt;
    return Share{*shard, *shards};
  }
  const char* count = std::getenv("SLURM_ARRAY_TASK_COUNT");
  const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
  if (count == nullptr || task == nullptr) return Share{};
  const auto variable = [](const char* name, std::size_t otherwise) -> std::optional<std::size_t> {
    const char* value = std::getenv(name);
    return value != nullptr ? whole_number(value) : otherwise;
  };
  const std::optional<std::size_t> shards = whole_number(count);
  const std::optional<std::size_t> id = whole_number(task);
  const std::optional<std::size_t> first = variable("SLURM_ARRAY_TASK_MIN", 0);
  const std::optional<std::size_t> step = variable("SLURM_ARRAY_TASK_STEP", 1);  // --array=0-9:3
  if (!shards || !id || !first || !step || *shards == 0 || *step == 0 || *id < *first ||
      (*id - *first) % *step != 0 || (*id - *first) / *step >= *shards)
    return std::nullopt;
  return Share{(*id - *first) / *step, *shards};
}

// Creates DIR/points and records the plan's points; a directory holding another sweep's points is
// refused rather than mixed with this one's.
bool prepare_directory(const SweepPlan& plan, const SweepDirectory& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory.root() / "points", error);
  if (error) {
    std::cerr << "lockstep sweep: cannot create " << (directory.root() / "points").string() << ": "
              << error.message() << "\n";
    return false;
  }
  const std::string manifest = manifest_text(plan);
  if (std::filesystem::exists(directory.manifest_file())) {
    std::ifstream in(directory.manifest_file());
    std::ostringstream recorded;
    recorded << in.rdbuf();
    if (recorded.str() != manifest) {
      std::cerr << "lockstep sweep: " << directory.root().string()
                << " holds another sweep's points (" << directory.manifest_file().string()
                << " lists other overrides or another base): give another -o, or remove it\n";
      return false;
    }
    return true;
  }
  try {
    write_file_atomically(directory.manifest_file(), manifest);
  } catch (const std::runtime_error& e) {
    std::cerr << "lockstep sweep: " << e.what() << "\n";
    return false;
  }
  return true;
}

void list_points(const SweepPlan& plan, const SweepDirectory& directory) {
  for (const SweepPoint& point : plan.points) {
    const PointState state = directory.state(point.index);
    std::cout << point.index << " "
              << (state == PointState::kDone     ? "done   "
                  : state == PointState::kFailed ? "failed "
                                                 : "to do  ");
    for (const SweepSetting& setting : point.settings)
      std::cout << " --set " << setting.key << "=" << setting.value;
    if (point.seed) std::cout << " --seed " << *point.seed;
    std::cout << "\n";
  }
}

// After the points ran: the index if the whole study is done, and the exit status.
int finish(const SweepPlan& plan, const SweepDirectory& directory,
           const std::filesystem::path& sweep_file, const SweepTally& tally) {
  if (tally.interrupted) {
    std::cerr << "lockstep sweep: interrupted; finished points are kept: run the same command to "
                 "resume\n";
    return exit_code::kInterrupted;
  }
  std::size_t pending = 0;
  std::size_t failed = 0;
  for (const SweepPoint& point : plan.points) {
    const PointState state = directory.state(point.index);
    pending += state == PointState::kPending ? 1 : 0;
    failed += state == PointState::kFailed ? 1 : 0;
  }
  if (pending > 0) {
    std::cout << "lockstep sweep: " << pending
              << " points are other shards' to run; the last shard to finish writes "
              << directory.index_file().string() << "\n";
  } else {
    write_sweep_index(plan, directory, sweep_file);
    std::cout << "lockstep sweep: " << plan.points.size() - failed << " points done, " << failed
              << " failed; wrote " << std::filesystem::absolute(directory.index_file()).string()
              << "\n";
  }
  return failed > 0 ? exit_code::kFailure : exit_code::kOk;
}

}  // namespace

int sweep_command(const std::vector<std::string>& args) {
  po::options_description options("lockstep sweep SWEEP.yaml [options]");
  std::string sweep_path;
  std::string output_path;
  std::string shard_option;
  std::size_t jobs = 1;
  bool list_only = false;
  options.add_options()("help,h", "show this help")(
      "output,o", po::value(&output_path), "directory of the study (default: SWEEP's name)")(
      "jobs,j", po::value(&jobs), "points run at once on this machine (default 1)")(
      "shard", po::value(&shard_option),
      "I/N: run the points whose index is I modulo N (default: a Slurm array task's share)")(
      "list", po::bool_switch(&list_only), "print the points and their state; run nothing");
  po::options_description hidden;
  hidden.add_options()("sweep", po::value(&sweep_path));
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("sweep", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "lockstep sweep: " << e.what() << "\n" << options;
    return exit_code::kBadInput;
  }
  if (vm.count("help") != 0) {
    std::cout << "Runs a scenario at every point of a study: the sweep file's `base` scenario "
                 "with the\n`vary` keys' values as --set overrides (cartesian, or `zip`ped), "
                 "`seeds` times each.\nOne HDF5 file per point in DIR/points/, then "
                 "DIR/index.h5 (table `points`): a row per\npoint with its parameters and "
                 "headline results. Points already done are skipped, so\nrunning it again "
                 "resumes. Under `mpirun -n N` the processes share the points out.\n\n"
              << options;
    return exit_code::kOk;
  }
  if (sweep_path.empty()) {
    std::cerr << "lockstep sweep: name a sweep file\n" << options;
    return exit_code::kBadInput;
  }
  if (jobs == 0) {
    std::cerr << "lockstep sweep: -j must be at least 1\n";
    return exit_code::kBadInput;
  }
  const std::optional<Share> share = share_of(shard_option);
  if (!share) {
    std::cerr << "lockstep sweep: "
              << (shard_option.empty()
                      ? "the Slurm array variables (SLURM_ARRAY_TASK_ID, _COUNT, _MIN, _STEP) do "
                        "not name a task of an evenly spaced array (give --shard I/N)"
                      : "--shard takes I/N with 0 <= I < N, e.g. --shard 2/8")
              << "\n";
    return exit_code::kBadInput;
  }

  std::optional<MpiSession> mpi;
  if (launched_under_mpi()) mpi.emplace();
  const bool leader = !mpi || mpi->rank() == 0;
  const auto agreed = [&](int status) { return mpi ? mpi->broadcast(status) : status; };

  const SweepPlanLoad load = load_sweep_file(sweep_path);
  if (!load.plan) {
    if (leader) {
      for (const Diagnostic& problem : load.diagnostics.all())
        std::cerr << problem.to_string() << "\n";
    }
    return exit_code::kBadInput;
  }
  const SweepPlan& plan = *load.plan;
  const std::filesystem::path root = output_path.empty() ? std::filesystem::path(sweep_path).stem()
                                                         : std::filesystem::path(output_path);
  const SweepDirectory directory(root, plan.points.size());
  if (list_only) {
    if (leader) list_points(plan, directory);
    return exit_code::kOk;
  }
  if (mpi && jobs > 1) {
    if (leader)
      std::cerr << "lockstep sweep: under MPI each process runs one point at a time; "
                   "start more processes instead of -j\n";
    return exit_code::kBadInput;
  }
  if (agreed(leader && !prepare_directory(plan, directory) ? 1 : 0) != 0)
    return exit_code::kBadInput;

  std::vector<std::size_t> todo;
  std::size_t in_share = 0;
  for (const SweepPoint& point : plan.points) {
    if (!share->includes(point.index)) continue;
    ++in_share;
    if (directory.state(point.index) != PointState::kDone) todo.push_back(point.index);
  }
  if (leader) {
    std::cout << "lockstep sweep: " << plan.points.size() << " points";
    if (share->shards > 1)
      std::cout << ", " << in_share << " in shard " << share->shard << "/" << share->shards;
    std::cout << "; " << in_share - todo.size() << " already done, " << todo.size() << " to run"
              << (mpi ? " by " + std::to_string(mpi->size()) + " MPI processes"
                      : " " + std::to_string(jobs) + " at a time")
              << std::endl;
  }

  install_interrupt_handlers();
  const SweepTally tally =
      mpi ? run_points_under_mpi(*mpi, plan, directory, todo, interrupt_requested)
          : run_points_locally(plan, directory, todo, jobs, interrupt_requested);
  if (!leader) return agreed(0);
  return agreed(finish(plan, directory, sweep_path, tally));
}

}  // namespace lockstep
