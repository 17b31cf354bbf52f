#include "sim/sweep/mpi_sweep.hpp"

#include <mpi.h>

#include <cstdlib>
#include <deque>

namespace lockstep {
namespace {

constexpr int kAskTag = 1;     // a worker, to rank 0: give me a point
constexpr int kAssignTag = 2;  // rank 0's answer: the point's index, or kNoMorePoints
constexpr int kNoMorePoints = -1;

SweepTally serve_and_run(const SweepPlan& plan, const SweepDirectory& directory,
                         const std::vector<std::size_t>& todo, int workers,
                         const StopRequested& stop_requested) {
  PointLauncher launcher(plan, directory);
  std::deque<std::size_t> waiting(todo.begin(), todo.end());
  SweepTally tally;
  while (workers > 0 || launcher.running() > 0 || (!waiting.empty() && !tally.interrupted)) {
    if (stop_requested() && !tally.interrupted) {
      tally.interrupted = true;
      launcher.stop_all();
    }
    int asked = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kAskTag, MPI_COMM_WORLD, &asked, &status);
    if (asked != 0) {
      int ignored = 0;
      MPI_Recv(&ignored, 1, MPI_INT, status.MPI_SOURCE, kAskTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      int next = kNoMorePoints;
      if (!waiting.empty() && !tally.interrupted) {
        next = static_cast<int>(waiting.front());
        waiting.pop_front();
      } else {
        --workers;
      }
      MPI_Send(&next, 1, MPI_INT, status.MPI_SOURCE, kAssignTag, MPI_COMM_WORLD);
      continue;
    }
    if (launcher.running() == 0 && !waiting.empty() && !tally.interrupted) {
      launcher.start(plan.points[waiting.front()]);
      waiting.pop_front();
      continue;
    }
    if (const std::optional<FinishedPoint> finished = launcher.collect(false)) {
      report_point(plan, *finished);
      tally.add(*finished);
      continue;
    }
    pause_briefly();
  }
  return tally;
}

SweepTally ask_and_run(const SweepPlan& plan, const SweepDirectory& directory,
                       const StopRequested& stop_requested) {
  PointLauncher launcher(plan, directory);
  SweepTally tally;
  for (;;) {
    int ask = 0;
    MPI_Send(&ask, 1, MPI_INT, 0, kAskTag, MPI_COMM_WORLD);
    int next = kNoMorePoints;
    MPI_Recv(&next, 1, MPI_INT, 0, kAssignTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (next == kNoMorePoints) return tally;
    // Interrupted, this process leaves points it is given to do; rank 0, signalled too, soon
    // gives no more.
    if (stop_requested()) {
      tally.interrupted = true;
      continue;
    }
    launcher.start(plan.points[static_cast<std::size_t>(next)]);
    while (launcher.running() > 0) {
      if (stop_requested()) {
        launcher.stop_all();
        tally.interrupted = true;
        break;
      }
      if (const std::optional<FinishedPoint> finished = launcher.collect(false)) {
        report_point(plan, *finished);
        tally.add(*finished);
      } else {
        pause_briefly();
      }
    }
  }
}

}  // namespace

bool launched_under_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"}) {
    if (std::getenv(variable) != nullptr) return true;
  }
  return false;
}

MpiSession::MpiSession() {
  MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

int MpiSession::broadcast(int value) const {
  MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return value;
}

SweepTally run_points_under_mpi(const MpiSession& session, const SweepPlan& plan,
                                const SweepDirectory& directory,
                                const std::vector<std::size_t>& todo,
                                const StopRequested& stop_requested) {
  if (session.rank() == 0)
    return serve_and_run(plan, directory, todo, session.size() - 1, stop_requested);
  return ask_and_run(plan, directory, stop_requested);
}

}  // namespace lockstep
