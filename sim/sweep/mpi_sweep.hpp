// A sweep across machines: `mpirun -n N lockstep sweep ...`. Rank 0 hands out points one at a time
// to whichever process asks (so a slow point does not hold back a fixed share), runs points itself
// between answers, and writes the index once every process has finished. Each process runs one
// point at a time, as a child of its own, in the shared sweep directory; no file is written by two
// processes.
#pragma once

#include <vector>

#include "sim/sweep/sweep_runner.hpp"

namespace lockstep {

// Whether an MPI launcher (mpirun, mpiexec, srun) started this process.
[[nodiscard]] bool launched_under_mpi();

// MPI_Init for the life of the object, then MPI_Finalize.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  // Rank 0's value of `value`, on every rank.
  [[nodiscard]] int broadcast(int value) const;

 private:
  int rank_ = 0;
  int size_ = 1;
};

// Every rank calls this; `todo` matters on rank 0 only. Returns what this rank ran.
[[nodiscard]] SweepTally run_points_under_mpi(const MpiSession& session, const SweepPlan& plan,
                                              const SweepDirectory& directory,
                                              const std::vector<std::size_t>& todo,
                                              const StopRequested& stop_requested);

}  // namespace lockstep
