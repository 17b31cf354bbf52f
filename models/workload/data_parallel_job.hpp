// A synchronous data-parallel training job on an analytical network: every step, each rank computes
// its forward and backward pass (a log-normal draw around the configured mean, stretched on slow
// ranks), then all ranks all-reduce their gradients; nobody starts the next step before the
// all-reduce ends. Step time is therefore the slowest rank's compute plus the collective, the
// effect that makes one straggler cost the whole job. The all-reduce time comes from the alpha-beta
// model (models/collective/alpha_beta.hpp). Left out: overlap of gradient communication with
// backward, data loading, pipeline and tensor parallelism, and the network's contention; the
// fabric, node and workload models replace these parts. Records three tables: rank_ops (one row per
// compute or collective span of a rank), rank_steps (per rank and step, where the time went) and
// steps (per step, its span and slowest rank).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/workload/data_parallel_job_config.hpp"
#include "sim/core/random.hpp"
#include "sim/core/simulator.hpp"
#include "sim/core/table.hpp"

namespace lockstep {

class DataParallelJob {
 public:
  struct OpRow {
    std::int64_t rank;
    std::int64_t step;
    FixedText<16> kind;
    std::int64_t start_ps;
    std::int64_t end_ps;
    std::int64_t bytes;
  };
  struct RankStepRow {
    std::int64_t rank;
    std::int64_t step;
    std::int64_t compute_ps;
    std::int64_t wait_for_slowest_ps;
    std::int64_t exposed_comm_ps;
  };
  struct StepRow {
    std::int64_t step;
    std::int64_t start_ps;
    std::int64_t end_ps;
    std::int64_t slowest_rank;
    std::int64_t all_reduce_ps;
  };

  DataParallelJob(Simulator& sim, const DataParallelJobConfig& config, std::uint64_t seed,
                  RecordBackend& output);

  // Schedules the first step at the current time.
  void start();
  // Writes out buffered rows; call once the run is over.
  void flush();

  [[nodiscard]] std::int64_t steps_completed() const { return steps_completed_; }
  [[nodiscard]] double progress() const {
    return static_cast<double>(steps_completed_) / static_cast<double>(config_.steps);
  }
  [[nodiscard]] Duration all_reduce_duration() const { return all_reduce_duration_; }

 private:
  void begin_step();
  void end_compute(std::int64_t rank);
  void end_all_reduce();

  Simulator& sim_;
  DataParallelJobConfig config_;
  Duration all_reduce_duration_;
  std::vector<RandomStream> compute_noise_;  // one stream per rank
  std::vector<double> compute_stretch_;      // 1 + slowdown, per rank
  std::vector<Time> compute_end_;
  Time step_start_;
  Time all_reduce_start_;
  std::int64_t ranks_computing_ = 0;
  std::int64_t slowest_rank_ = 0;
  std::int64_t steps_completed_ = 0;
  Table<OpRow> ops_;
  Table<RankStepRow> rank_steps_;
  Table<StepRow> steps_;
};

}  // namespace lockstep
