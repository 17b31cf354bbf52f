// A transformer training job on the cluster, as Megatron-LM runs one: every rank is a GPU
// (models/gpu) with a compute and a communication stream, and walks, step after step, its pipeline
// stage's schedule (pipeline_schedule.hpp) of forward and backward passes over its layers' kernels
// (layer_ops.hpp). Tensor- and context-parallel collectives sit on the compute stream, since the
// next kernel needs their result; a pipeline receive blocks it too, while a send is NCCL's
// non-blocking isend; gradients of a DDP bucket are reduced on the communication stream once the
// last micro-batch's backward has produced them (after backward when overlap is off), and the
// compute stream waits for them before the optimizer step, after which the distributed optimizer
// all-gathers the parameters. Collectives run on the job's communicators (job_communicators.hpp).
// Ranks whose stage needs the batch (the first for tokens, the last for labels) wait for their
// replica's batch from the data loader at the start of each step; checkpoints stall every rank for
// the write (synchronous) or for the copy to host memory (asynchronous, the write then shares the
// file system in the background; a checkpoint waits for the previous one's write).
//
// So step time is the maximum over ranks of compute, exposed communication and data wait: a slow
// GPU makes its tensor-parallel peers wait inside every layer, its pipeline neighbours wait in
// their receives and every data-parallel peer waits for its gradients.
//
// A plan whose HBM footprint (memory_footprint.hpp) exceeds a GPU's capacity does not run: the job
// ends at once as out of memory, with the footprint of every rank recorded.
//
// Faults reach the job through the GPUs they break (a clock factor, a GPU that stops), and its
// defences (job_defences.hpp) act on what the job sees: a collective that has not finished
// `timeout` after a rank entered it fires the watchdog, which aborts the job and names the ranks
// that never arrived; a health check finds a failed GPU and drains its node; the straggler
// detector drains the node of a rank whose own work stands out; and a stopped job restarts from
// its last complete checkpoint onto the cluster's GPUs less its drained nodes, each replaced by an
// idle node. A job whose every rank is blocked with nothing left that could unblock it is hung:
// the run ends and hang_report() says who waits where. The time that counts (steps kept) against
// the time lost to failures, detection, restarts and recomputation is its goodput.
//
// Left out: the embedding's gradient all-reduce between the first and last stage when embeddings
// are tied, overlap of the parameter all-gather with the next step's forward, tensor-parallel
// communication overlap, and contention between streams for SMs and HBM (gpu.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/cluster/cluster.hpp"
#include "models/gpu/clock_factor.hpp"
#include "models/training/defence_log.hpp"
#include "models/training/job_defences.hpp"
#include "models/training/shared_storage.hpp"
#include "models/training/training_job_config.hpp"
#include "sim/core/simulator.hpp"
#include "sim/core/table.hpp"

namespace lockstep {

enum class JobOutcome : std::uint8_t {
  kRunning,
  kCompleted,
  kOutOfMemory,
  kHung,               // every rank blocked, nothing pending could unblock one
  kCollectiveTimeout,  // the watchdog aborted the job, and it was not restarted
  kNetworkError,       // a queue pair ran out of retries, the watchdog aborted the job on NCCL's
                       // error, and it was not restarted
  kNodeDrained,        // a health check or the straggler detector stopped it, not restarted
  kNoSpareNodes,       // a restart found too few healthy nodes
};

// As /meta/outcome records it: completed, out_of_memory, hang, collective_timeout, network_error,
// node_drained, no_spare_nodes.
[[nodiscard]] const char* job_outcome_name(JobOutcome outcome);

// Where the job's time went over the whole run, for checkpoint-cadence studies.
struct Goodput {
  Duration total;          // from the start to the end of the run
  Duration useful;         // the steps the job kept, each once, less their checkpoint stalls
  Duration checkpointing;  // those stalls
  Duration restarting;     // restart delays
  Duration lost;           // the rest: steps redone after a restore, hangs until detection
  std::int64_t interruptions = 0;
  std::int64_t steps_redone = 0;
  [[nodiscard]] double share() const {
    return total.ps() > 0 ? static_cast<double>(useful.ps()) / static_cast<double>(total.ps())
                          : 0.0;
  }
};

struct TrainingJobSummary {
  std::int64_t steps_completed = 0;
  Duration mean_step;  // over the completed steps
  double mfu = 0.0;
  double tflops_per_gpu = 0.0;
  double tokens_per_second = 0.0;
  std::int64_t slowest_rank = -1;  // of the last step
  bool out_of_memory = false;
};

// What a plan does not allow, checked before anything runs: a global batch that data-parallel
// ranks and micro-batches do not divide, layers that the pipeline's stages do not, a schedule
// that the micro-batches do not fit, a split the model's shapes refuse, a data type the GPU lacks,
// or more GPUs than the cluster has (`gpus` of `gpu`, `gpus_per_node` per server). Empty when it
// runs.
[[nodiscard]] std::optional<std::string> training_plan_problem(const TrainingJobConfig& config,
                                                               const std::string& gpu,
                                                               std::int32_t gpus,
                                                               std::int32_t gpus_per_node);

class TrainingJob {
 public:
  // Throws std::invalid_argument for a plan that cannot be laid out on the cluster (world size
  // beyond its GPUs, a split the model does not allow, an unknown GPU).
  TrainingJob(Simulator& sim, const TrainingJobConfig& config, Cluster& cluster,
              const ClusterSpec& spec, NetworkModel level, RecordBackend& output,
              const JobDefences& defences, DefenceLog& log);
  ~TrainingJob();
  TrainingJob(const TrainingJob&) = delete;
  TrainingJob& operator=(const TrainingJob&) = delete;

  // Begins step 0 on every rank now (or records the out-of-memory result and ends).
  void start();
  // Called once, when every rank has finished its last step (or at once when out of memory).
  void when_done(std::function<void()> callback);
  // Writes out buffered rows, and the goodput and, for a hung job, its blocked ranks; call once
  // the run is over.
  void flush();

  // The cluster's GPU `gpu` (its network rank) runs at `clock` from now: whichever job rank runs on
  // it, now or after a restart. A failed GPU stays failed.
  void set_gpu_clock(std::int32_t gpu, ClockFactor clock);
  // The GPU is lost for good (an Xid, a dead node, a NIC whose link died under NCCL): its rank's
  // kernels and collectives never finish. `cause` is what a health check reports.
  void fail_gpu(std::int32_t gpu, const std::string& cause);
  // Called with k as step k begins: 0 at the start, k once every rank has ended step k - 1 (after
  // a restart, the step restored).
  void when_step_begins(std::function<void(std::int64_t step)> callback);
  // Called with a drained node's index when it is repaired (defences.health_check.repair).
  void when_node_repaired(std::function<void(std::int32_t node)> callback);
  // The job's ranks in use now, by the GPU each runs on.
  [[nodiscard]] const std::vector<std::int32_t>& gpus_in_use() const;

  // The job's file system, for faults that slow it; null without `job.storage`.
  [[nodiscard]] SharedStorage* storage();
  [[nodiscard]] JobOutcome outcome() const;
  // The run has nothing left to do and the job is unfinished: it is hung. Records each rank's
  // wait (the blocked_ranks table) and the outcome.
  void declare_hung();
  [[nodiscard]] Goodput goodput() const;

  [[nodiscard]] std::int64_t steps_completed() const;
  [[nodiscard]] double progress() const;
  [[nodiscard]] TrainingJobSummary summary() const;
  // What ran and how it went, for people: step time, MFU, where the time went, the slowest rank.
  [[nodiscard]] std::string report() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep
