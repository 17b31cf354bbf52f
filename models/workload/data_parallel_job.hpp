// A synchronous data-parallel training job: every step, each rank computes its forward and
// backward pass (a log-normal draw around the configured mean, stretched on slow ranks), then all
// ranks all-reduce their gradients; nobody starts the next step before the all-reduce ends. Step
// time is therefore the slowest rank's compute plus the collective, the effect that makes one
// straggler cost the whole job. The all-reduce is priced by the alpha-beta model
// (models/collective/alpha_beta.hpp) when the job has no network, and otherwise runs on the
// network as NCCL's ring (ring_collective.hpp, Simple protocol, a channel per GPU of a server laid
// out rail-aligned): each rank joins it when its own compute ends, and it shares the fabric with
// whatever else runs there. Left out: overlap of gradient communication with backward, data
// loading, pipeline and tensor parallelism; the training-job model replaces this job. Records three
// tables: rank_ops (one row per compute or collective span of a rank), rank_steps (per rank and
// step, where the time went) and steps (per step, its span and slowest rank).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "models/collective/communicator.hpp"
#include "models/collective/ring_collective.hpp"
#include "models/network/network.hpp"
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

  // On `network` when given (null: the alpha-beta model), whose servers hold `gpus_per_node` GPUs
  // each: job rank r on network rank config.placement[r], or r without a placement. Throws
  // std::invalid_argument for a placement the network cannot hold.
  DataParallelJob(Simulator& sim, const DataParallelJobConfig& config, std::uint64_t seed,
                  RecordBackend& output, Network* network = nullptr,
                  std::int32_t gpus_per_node = 1);

  // Schedules the first step at the current time.
  void start();
  // Called once, when the last step has ended.
  void when_done(std::function<void()> callback) { on_done_ = std::move(callback); }
  // Writes out buffered rows; call once the run is over.
  void flush();

  [[nodiscard]] std::int64_t steps_completed() const { return steps_completed_; }
  [[nodiscard]] double progress() const {
    return static_cast<double>(steps_completed_) / static_cast<double>(config_.steps);
  }
  // The alpha-beta model's all-reduce time, or on a network the mean of the steps so far.
  [[nodiscard]] Duration all_reduce_duration() const;

 private:
  void begin_step();
  void end_compute(std::int64_t rank);
  void end_all_reduce();
  // The step's all-reduce as a collective on the network, which ranks join as their compute ends.
  [[nodiscard]] std::unique_ptr<RingCollective> network_all_reduce();

  Simulator& sim_;
  DataParallelJobConfig config_;
  // The job's communicator: its ranks as the network's ranks they are placed on.
  std::unique_ptr<CommunicatorNetwork> communicator_;
  Network* network_;
  std::int32_t gpus_per_node_;  // of the communicator's nodes
  std::int32_t nodes_ = 1;
  std::vector<std::int32_t> local_of_rank_;      // the communicator's rank of each job rank
  std::vector<std::int64_t> job_rank_of_local_;  // and back
  Duration all_reduce_duration_;                 // alpha-beta; on a network, summed over the steps
  // This step's collective, and those before it that the network may still call back.
  std::unique_ptr<RingCollective> collective_;
  std::deque<std::unique_ptr<RingCollective>> finished_collectives_;
  std::vector<Time> all_reduce_end_;  // per rank, on a network
  std::function<void()> on_done_;
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
