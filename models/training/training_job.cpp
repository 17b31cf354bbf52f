#include "models/training/training_job.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <deque>
#include <stdexcept>
#include <unordered_map>

#include "models/gpu/gpu.hpp"
#include "models/training/checkpoint_pricing.hpp"
#include "models/training/job_communicators.hpp"
#include "models/training/memory_footprint.hpp"
#include "models/training/training_tables.hpp"
#include "sim/core/quantity.hpp"

namespace lockstep {
namespace {

// Simulated steps before a job that reuses its steady step gives up waiting for two equal ones and
// takes the last.
constexpr std::size_t kMostPricingSteps = 8;

// Operations a rank keeps queued on its compute stream ahead of the running one: enough that the
// stream never idles between them, few enough that a rank's queue stays small at any scale.
constexpr std::size_t kLookahead = 4;

// Gradients are reduced in fp32 (Megatron's main_grad buffers for bf16 training) and parameters
// gathered in the model's 16-bit type.
constexpr std::int64_t kGradientBytes = 4;
constexpr std::int64_t kParameterBytes = 2;
// A checkpoint holds 16-bit weights, fp32 master weights and Adam's two moments.
constexpr std::int64_t kCheckpointBytesPerParameter = 14;

// A queue of at most N elements in place: a rank's compute stream never holds more than the
// lookahead, and a deque's allocations on every push and pop showed in the profile.
template <class T, std::size_t N>
class BoundedQueue {
 public:
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] T& front() { return slots_[head_]; }
  [[nodiscard]] const T& front() const { return slots_[head_]; }
  void push_back(const T& value) {
    assert(size_ < N);
    slots_[(head_ + size_) % N] = value;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) % N;
    --size_;
  }

 private:
  std::array<T, N> slots_{};
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

struct Instruction {
  enum class Kind : std::uint8_t {
    kKernel,
    kKernelRun,       // kernels between two collectives, as one GPU operation
    kTensor,          // a tensor- or context-parallel collective of a layer
    kReceive,         // from the neighbouring pipeline stage
    kSend,            // to it
    kGradientsReady,  // `parameters` more gradients are final
    kFlushBucket,     // the chunk's gradients are all final
    kOptimizer,       // wait for the gradients, then the optimizer step
    kStepEnd,         // wait for the parameters; the rank's step is over
  };
  Kind kind = Kind::kKernel;
  bool forward = true;  // receive/send: activations (true) or gradients
  std::int32_t micro_batch = -1;
  std::int32_t chunk = 0;
  std::int32_t layer = -1;
  std::int32_t peer = 0;  // receive/send: the other side's virtual stage
  std::int64_t parameters = 0;
  const LayerOp* op = nullptr;
  const struct KernelRun* run = nullptr;
};

// Consecutive kernels of an op list, which a rank whose ops are not recorded launches as one
// sequence (gpu.hpp: the same times, one event instead of one per kernel).
struct KernelRun {
  std::vector<KernelCost> costs;
  double counted_flops = 0.0;
};

// An op list as a rank that does not record it runs it: its collectives one by one, the kernels
// between them as runs.
struct FusedOp {
  const LayerOp* collective = nullptr;
  const KernelRun* kernels = nullptr;
};

struct CollectiveKey {
  std::uint64_t group_and_kind = 0;
  std::uint64_t sequence = 0;
  bool operator==(const CollectiveKey&) const = default;
};

struct CollectiveKeyHash {
  std::size_t operator()(const CollectiveKey& key) const {
    return std::hash<std::uint64_t>()(key.group_and_kind * 0x9E3779B97F4A7C15ULL ^ key.sequence);
  }
};

enum class Communicator : std::uint8_t { kTensor, kContext, kPipeline, kData };

// Ranks as a report names them: "3 11 19".
std::string ranks_text(const std::vector<std::int32_t>& ranks) {
  std::string text;
  for (const std::int32_t rank : ranks) text += (text.empty() ? "" : " ") + std::to_string(rank);
  return text;
}

const char* communicator_name(Communicator c) {
  switch (c) {
    case Communicator::kTensor:
      return "tp";
    case Communicator::kContext:
      return "cp";
    case Communicator::kPipeline:
      return "pp";
    case Communicator::kData:
      return "dp";
  }
  return "";
}

}  // namespace

class TrainingJob::Impl {
 public:
  Impl(Simulator& sim, const TrainingJobConfig& config, Cluster& cluster, const ClusterSpec& spec,
       NetworkModel level, RecordBackend& output, const JobDefences& defences, DefenceLog& log);

  void start();
  void flush();
  void declare_hung();
  void set_gpu_clock(std::int32_t gpu, ClockFactor clock);
  void fail_gpu(std::int32_t gpu, const std::string& cause);
  [[nodiscard]] Goodput goodput() const;
  [[nodiscard]] const std::vector<std::int32_t>& gpus_in_use() const { return gpu_of_rank_; }
  [[nodiscard]] SharedStorage* storage() { return storage_.get(); }
  [[nodiscard]] TrainingJobSummary summary() const;
  [[nodiscard]] std::string report() const;

  std::function<void()> on_done;
  std::function<void(std::int64_t)> on_step_begins;
  std::function<void(std::int32_t)> on_node_repaired;
  std::int64_t steps_completed = 0;
  std::int64_t steps = 0;
  JobOutcome outcome = JobOutcome::kRunning;

 private:
  // A run of a rank's program: every op of `ops` (kernels and collectives of one layer, the
  // embedding or the head) with `instruction`'s micro-batch, chunk and layer, or, without `ops`,
  // `instruction` itself.
  struct Piece {
    const std::vector<LayerOp>* ops = nullptr;
    const std::vector<FusedOp>* fused = nullptr;  // instead of `ops`, when not recorded
    Instruction instruction;
  };
  // What one rank has spent its step on so far.
  struct StepTimes {
    Duration compute, tp, cp, pp, dp, bubble, data_wait, checkpoint, wait_for_others;
    double counted_flops = 0.0;  // by its kernels, as Megatron's formula counts them
  };
  // An operation enqueued on a stream and not yet finished.
  struct Queued {
    GpuOpId id = 0;
    Instruction instruction;
    Communicator communicator = Communicator::kTensor;
    CollectiveKey key;
    Bytes bytes;
    Stream stream = Stream::kCompute;
    Time joined;
    // Known once the last member has joined: the part spent waiting for the others.
    Duration waited;
    // Set while the rank is inside the collective: it joined, and its part is not over.
    Collective* collective = nullptr;
  };

  class Rank final : public GpuOpListener {
   public:
    Rank(Impl& job, std::int32_t id) : job_(job), id_(id) {}
    void on_gpu_op_started(GpuOpId id, Time at) override { job_.op_started(id_, id, at); }
    void on_gpu_op_finished(GpuOpId id, Time started, Time finished) override {
      job_.op_finished(id_, id, started, finished);
    }

   private:
    Impl& job_;
    std::int32_t id_;
  };

  struct RankState {
    std::unique_ptr<Gpu> gpu;
    std::unique_ptr<Rank> listener;
    std::int32_t gpu_index = 0;
    std::int32_t stage = 0;
    std::int32_t replica = 0;
    std::int32_t tensor_group = 0, tensor_member = 0;
    std::int32_t context_group = 0, context_member = 0;
    std::int32_t pipeline_group = 0;
    std::int32_t data_group = 0, data_member = 0;  // data and context parallel together
    std::size_t action = 0;
    // The current action's program, or the step's tail, as pieces: a whole op list of the layer
    // program (shared by every rank, so a rank's own state stays small at any scale) or one
    // instruction. `next_op` is the position in the current piece's op list.
    std::vector<Piece> program;
    std::size_t next = 0;
    std::size_t next_op = 0;
    bool tail_built = false;
    BoundedQueue<Queued, kLookahead> compute;
    std::deque<Queued> communication;
    std::uint64_t tensor_sequence = 0, context_sequence = 0, data_sequence = 0;
    std::int64_t bucket_fill = 0;
    std::vector<std::int64_t> buckets;   // launched this step, in order (their parameters)
    std::vector<std::int64_t> deferred;  // overlap off: launched after backward
    std::int64_t step = 0;
    Time step_start;
    Time last_compute_end;
    StepTimes times;
    bool recording = false;
  };

  struct StepTotals {
    Time end;
    std::int32_t ranks_done = 0;
    std::int64_t slowest_rank = 0;
    Duration most_busy = Duration::ps(-1);
    Duration checkpoint_stall;
    double counted_flops = 0.0;
    TrainingRankStepRow slowest_row{};
  };

  // What a stopped attempt leaves behind, kept to the end of the run: its GPUs have events
  // pending, and its collectives and data reads messages in flight, that must find their targets.
  struct Remains {
    std::vector<std::unique_ptr<Gpu>> gpus;
    std::vector<std::unique_ptr<Rank>> listeners;
    std::vector<std::unique_ptr<Collective>> collectives;
    std::unique_ptr<JobCommunicators> communicators;
    std::unique_ptr<DataLoader> loader;
  };

  // A job rank inside a collective: since when, and the collective's job ranks that never joined.
  struct Wait {
    std::int32_t rank = -1;
    Stream stream = Stream::kCompute;
    Time since = Time::max();
  };

  struct Rendezvous {
    std::unique_ptr<Collective> collective;
    std::int32_t joined = 0;
    std::int32_t members = 0;
  };

  struct ReplicaData {
    std::int64_t requested = -1;  // the last step whose batch was asked for
    std::optional<Time> ready;    // of that batch, once in
    std::vector<std::int32_t> waiting;
  };

  // Set-up, at the start and again at each restart.
  void make_ranks();
  void make_loader(std::int64_t first_step);
  void check_memory();
  void build_groups();
  // Each op list of the layer program as runs of kernels between its collectives.
  void fuse_kernels();
  [[nodiscard]] std::int32_t member_rank(std::int32_t group, std::int32_t member) const {
    return group_ranks_[static_cast<std::size_t>(group)][static_cast<std::size_t>(member)];
  }
  [[nodiscard]] std::int32_t virtual_stage(std::int32_t stage, std::int32_t chunk) const {
    return chunk * pipeline_ + stage;
  }

  // The program.
  void build_action(RankState& r);
  void build_tail(RankState& r);
  void append_ops(RankState& r, const std::vector<LayerOp>& ops, std::int32_t micro_batch,
                  std::int32_t chunk, std::int32_t layer);

  // Running it.
  void begin_step(std::int32_t rank);
  void begin_actions(std::int32_t rank);
  void feed(std::int32_t rank);
  void enqueue(std::int32_t rank, const Instruction& instruction);
  void launch_bucket(std::int32_t rank, std::int64_t parameters, CollectiveOp op,
                     std::int64_t bytes_per_parameter);
  // The collective `key` names, made by `make` for its first member; `closed` turns true for the
  // member that joins it last.
  template <class Make>
  Collective& join_point(CollectiveKey key, const Make& make, bool& closed);
  // Every member joined at `at`: those that joined before waited for the others.
  void record_waits(std::int32_t group, Stream stream, Time at);
  void op_started(std::int32_t rank, GpuOpId id, Time at);
  void op_finished(std::int32_t rank, GpuOpId id, Time started, Time finished);
  void collective_done(std::int32_t rank, Stream stream);
  [[nodiscard]] std::int64_t optimizer_shard(const RankState& r) const;
  void record_op(const RankState& r, std::int32_t rank, const Queued& q, Time start, Time end);
  void record_placement();
  void step_over(std::int32_t rank);
  void checkpoint(std::int32_t rank);
  void copied_to_host(std::uint64_t generation_and_rank);
  void report_done() {
    if (on_done) on_done();
  }
  void finish_step(std::int32_t rank, Duration checkpoint_stall);
  void checkpoint_written(std::int64_t step);
  void sweep_settled();
  [[nodiscard]] Bytes checkpoint_bytes(std::int32_t rank) const;
  // What each node of the cluster writes of a checkpoint (nothing for nodes without ranks).
  [[nodiscard]] std::vector<Bytes> checkpoint_bytes_by_node() const;
  [[nodiscard]] std::int32_t node_of_gpu(std::int32_t gpu) const {
    return gpu / cluster_.gpus_per_node();
  }

  // Defences.
  // The oldest wait inside a collective of a rank whose GPU still works.
  [[nodiscard]] Wait oldest_wait() const;
  void arm_watchdog();
  // The watchdog thread wakes every poll period from the start: what it finds at `at` it sees at
  // the first wake-up at or after it.
  [[nodiscard]] Time next_watchdog_poll(Time at) const {
    const std::int64_t poll = defences_.watchdog.poll.ps();
    return Time::zero() + Duration::ps((at.ps() + poll - 1) / poll * poll);
  }
  void watchdog_check(std::uint64_t generation);
  // A transfer of the collective of `group` lost its queue pair: NCCL's proxy records the error on
  // the communicator and its kernels keep waiting; PyTorch's watchdog, if enabled, finds the error
  // at its next poll and aborts the job (TORCH_NCCL_ASYNC_ERROR_HANDLING).
  void transfer_failed(std::int32_t group, const TransferFailure& failure);
  void network_error_check(std::uint64_t generation);
  void health_check(std::uint64_t generation);
  // Whether it drained a node (and so stopped the job).
  bool detect_stragglers(std::int64_t step);
  // The job ranks of `q`'s collective that had not joined it or whose GPU is lost: those a real
  // NCCL timeout leaves silent. Empty when all joined and live.
  [[nodiscard]] std::vector<std::int32_t> never_arrived(const Queued& q) const;
  [[nodiscard]] std::string wait_description(const Queued& q) const;
  // Stops every rank and collective of this attempt, then restarts or ends the job as `outcome`.
  void stop(JobOutcome outcome_if_not_restarted);
  void restart(std::uint64_t generation);
  void end_as(JobOutcome result);
  void record_blocked_ranks();
  // Halts what the current generation runs, keeping it for its pending events.
  void halt();
  // The node takes no ranks until repaired (defences.health_check.repair), if ever.
  void drain(std::int32_t node);
  void repaired(std::uint64_t node);

  // Replayed steps (job.reuse_steady_step).
  // After step `row` ended: whether the steps so far price the rest, and if so the switch.
  bool price_step(const TrainingStepRow& row, Duration checkpoint_stall);
  void replay_next();
  void replayed_step_done(std::uint64_t step_token);
  void replayed_checkpoint_written(std::uint64_t generation_and_step);
  void replay_watchdog(std::uint64_t generation);
  // The GPU lost in a replayed step: the step never ends; the defences that would act, do.
  void lose_replayed_step(std::int32_t gpu);
  // A lost GPU holds the job: no step runs until a health check or the watchdog stops it.
  void replay_blocked();
  [[nodiscard]] bool placement_has_lost_gpu() const {
    return std::any_of(gpu_of_rank_.begin(), gpu_of_rank_.end(), [this](std::int32_t gpu) {
      return gpu_failed_[static_cast<std::size_t>(gpu)] != 0;
    });
  }

  Simulator& sim_;
  TrainingJobConfig config_;
  TransformerSpec model_;
  Cluster& cluster_;
  RankLayout layout_;
  std::int32_t world_;
  std::int32_t pipeline_;
  std::int32_t chunks_;
  std::int32_t micro_batches_;
  std::int32_t layers_per_chunk_;
  GpuSpec gpu_spec_;
  KernelModel kernels_;
  LayerProgram program_;
  std::deque<KernelRun> kernel_runs_;  // stable addresses for FusedOp
  std::unordered_map<const std::vector<LayerOp>*, std::vector<FusedOp>> fused_;
  std::int64_t bucket_capacity_ = 0;
  Bytes activation_bytes_;  // what a stage hands the next per micro-batch, per rank
  std::vector<std::vector<PipelineAction>> actions_;  // by stage
  std::vector<std::int32_t> gpu_of_rank_;
  std::vector<std::int64_t> rank_parameters_;  // by stage
  std::unique_ptr<JobCommunicators> communicators_;
  std::vector<std::vector<std::int32_t>> group_ranks_;  // by communicator id: job rank of a member
  std::vector<RankState> ranks_;
  std::unordered_map<CollectiveKey, Rendezvous, CollectiveKeyHash> open_;
  std::vector<std::unique_ptr<Collective>> closed_;  // every member joined; kept until settled
  std::size_t closed_at_last_sweep_ = 0;
  std::unordered_map<std::int64_t, StepTotals> step_totals_;
  std::int32_t ranks_finished_ = 0;
  // Faults and defences.
  NetworkModel level_;
  ClusterSpec spec_;
  JobDefences defences_;
  DefenceLog& log_;
  std::vector<ClockFactor> gpu_clock_;          // by the cluster's GPU
  std::vector<char> gpu_failed_;                // by the cluster's GPU
  std::vector<char> node_drained_;              // by the cluster's node
  std::vector<std::optional<Time>> failed_at_;  // by the cluster's GPU
  std::vector<std::string> failure_cause_;      // by the cluster's GPU
  std::uint64_t attempt_ = 0;                   // restarts so far
  // Bumped whenever what the job's pending events and callbacks belong to is stopped (a restart,
  // the switch to replayed steps, a replayed step cut short): those of an older generation are
  // ignored.
  std::uint64_t generation_ = 0;
  std::vector<Remains> remains_;
  bool watchdog_armed_ = false;
  bool health_check_armed_ = false;
  // The straggler detector's window: each rank's own work in the last steps, oldest first.
  std::vector<std::deque<Duration>> recent_work_;
  // Goodput.
  std::vector<Duration> kept_step_time_;         // by step, of the steps the job keeps
  std::vector<Duration> kept_checkpoint_stall_;  // by step
  std::int64_t step_rows_ = 0;
  Duration restarting_;
  std::int64_t interruptions_ = 0;
  std::int64_t checkpointed_steps_ = 0;       // steps the last complete checkpoint holds
  std::int32_t job_nodes_ = 0;                // nodes the job's ranks are on
  std::string incident_;                      // what stopped or hung the job last, for people
  std::optional<std::string> network_error_;  // until the watchdog's next poll finds it
  // Replay.
  bool replaying_ = false;
  std::vector<Duration> plain_steps_;  // durations of the simulated steps without a checkpoint
  TrainingStepRow priced_row_{};
  Duration priced_step_;
  CheckpointCost checkpoint_cost_{};
  Time write_done_at_;                // asynchronous: when the last checkpoint's write ends
  Duration replayed_stall_;           // of the step in flight
  TrainingStepRow last_plain_row_{};  // the last simulated step without a checkpoint
  // Names the replayed step in flight; bumped when it is cut short, so its end is ignored.
  std::uint64_t replayed_step_ = 0;
  bool step_in_flight_ = false;
  // Whether a GPU the placement uses is lost: kept as they fail and at each restart, so that a
  // replayed step need not look through every rank.
  bool lost_gpu_in_use_ = false;
  std::int64_t restarts_ = 0;
  std::unordered_map<std::int64_t, std::int32_t> checkpoint_writes_left_;  // by step
  Table<BlockedRankRow> blocked_;
  Table<GoodputRow> goodput_;
  bool out_of_memory_ = false;
  std::vector<MemoryFootprint> footprints_;  // by rank
  // Storage, data and checkpoints.
  std::unique_ptr<SharedStorage> storage_;
  std::unique_ptr<DataLoader> loader_;
  std::int64_t loader_first_step_ = 0;  // the step of the loader's batch 0
  std::vector<ReplicaData> replicas_;
  std::int32_t at_checkpoint_ = 0;
  std::vector<Time> checkpoint_arrival_;        // by rank
  std::vector<std::int32_t> node_copies_left_;  // async: ranks of the node still copying
  std::vector<char> node_writing_;
  std::vector<std::vector<std::int32_t>> waiting_for_write_;  // by node
  double model_flops_ = 0.0;                                  // per step, without recomputation
  FlopRate peak_;
  Duration summed_steps_;
  Time previous_step_end_;
  TrainingStepRow last_step_{};
  Table<TrainingOpRow> ops_;
  Table<TrainingRankStepRow> rank_steps_;
  Table<TrainingStepRow> steps_table_;
  Table<TrainingMemoryRow> memory_;
  Table<RankPlacementRow> placement_;
  TrainingRankStepRow slowest_row_{};
};

namespace {

GpuSpec gpu_of(const Cluster& cluster) {
  if (!cluster.servers()) {
    throw std::invalid_argument("a training job runs on GPU servers: the scenario needs `servers`");
  }
  std::optional<GpuSpec> spec = gpu_spec(cluster.servers()->gpu);
  if (!spec) throw std::invalid_argument("unknown GPU " + cluster.servers()->gpu);
  return *spec;
}

std::int32_t checked_world(const ParallelDims& dims) {
  const std::int64_t world =
      std::int64_t{dims.tensor} * dims.context * dims.expert * dims.data * dims.pipeline;
  if (world > (std::int64_t{1} << 24)) {
    throw std::invalid_argument("the plan needs " + std::to_string(world) + " GPUs");
  }
  return static_cast<std::int32_t>(world);
}

struct PlanShape {
  std::int32_t micro_batches = 0;     // per replica and step
  std::int32_t layers_per_chunk = 0;  // per model chunk of a stage
};

PlanShape plan_shape(const TrainingJobConfig& config, const TransformerSpec& model) {
  const std::int64_t replicas = std::int64_t{config.parallelism.data} * config.micro_batch;
  if (config.global_batch % replicas != 0) {
    throw std::invalid_argument("the global batch " + std::to_string(config.global_batch) +
                                " is not a multiple of data-parallel size x micro-batch (" +
                                std::to_string(replicas) + ")");
  }
  const std::int64_t micro_batches = config.global_batch / replicas;
  if (micro_batches > (std::int64_t{1} << 24)) {
    throw std::invalid_argument(std::to_string(micro_batches) + " micro-batches per step");
  }
  const std::int64_t chunks =
      config.schedule == PipelineSchedule::kInterleaved ? config.parallelism.virtual_stages : 1;
  const std::int64_t virtual_stages = std::int64_t{config.parallelism.pipeline} * chunks;
  if (model.layers % virtual_stages != 0) {
    throw std::invalid_argument(std::to_string(model.layers) + " layers do not split evenly over " +
                                std::to_string(virtual_stages) + " pipeline stages");
  }
  return PlanShape{static_cast<std::int32_t>(micro_batches),
                   static_cast<std::int32_t>(model.layers / virtual_stages)};
}

LayerShard shard_of(const TrainingJobConfig& config) {
  LayerShard shard;
  shard.micro_batch = config.micro_batch;
  shard.tensor_parallel = config.parallelism.tensor;
  shard.context_parallel = config.parallelism.context;
  shard.sequence_parallel = config.parallelism.sequence_parallel;
  return shard;
}

}  // namespace

std::optional<std::string> training_plan_problem(const TrainingJobConfig& config,
                                                 const std::string& gpu, std::int32_t gpus,
                                                 std::int32_t gpus_per_node) {
  try {
    const TransformerSpec model = transformer_of(config.model);
    const std::optional<GpuSpec> spec = gpu_spec(gpu);
    if (!spec) return "unknown GPU " + gpu;
    if (spec->tensor_rate(model.type) == nullptr) {
      return spec->name + " tensor cores do not take " + std::string(data_type_name(model.type));
    }
    const PlanShape shape = plan_shape(config, model);
    const RankLayout layout(config.parallelism.dims(), config.parallelism.order);
    const std::int32_t chunks =
        config.schedule == PipelineSchedule::kInterleaved ? config.parallelism.virtual_stages : 1;
    (void)stage_actions(config.schedule, config.parallelism.pipeline, 0, shape.micro_batches,
                        chunks);
    (void)place_ranks(config.placement, layout.world_size(), gpus_per_node, gpus,
                      config.placement_gpus);
    const KernelModel kernels(*spec);
    (void)LayerProgram(model, shard_of(config), config.recompute, kernels);
  } catch (const std::invalid_argument& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

TrainingJob::Impl::Impl(Simulator& sim, const TrainingJobConfig& config, Cluster& cluster,
                        const ClusterSpec& spec, NetworkModel level, RecordBackend& output,
                        const JobDefences& defences, DefenceLog& log)
    : steps(config.steps),
      sim_(sim),
      config_(config),
      model_(transformer_of(config.model)),
      cluster_(cluster),
      layout_(config.parallelism.dims(), config.parallelism.order),
      world_(checked_world(config.parallelism.dims())),
      pipeline_(config.parallelism.pipeline),
      chunks_(config.schedule == PipelineSchedule::kInterleaved ? config.parallelism.virtual_stages
                                                                : 1),
      micro_batches_(0),
      layers_per_chunk_(0),
      gpu_spec_(gpu_of(cluster)),
      kernels_(gpu_spec_),
      program_(model_, shard_of(config), config.recompute, kernels_),
      communicators_(std::make_unique<JobCommunicators>(sim, cluster, spec, level)),
      level_(level),
      spec_(spec),
      defences_(defences),
      log_(log),
      gpu_clock_(static_cast<std::size_t>(cluster.ranks()), ClockFactor::full()),
      gpu_failed_(static_cast<std::size_t>(cluster.ranks()), 0),
      node_drained_(static_cast<std::size_t>(cluster.ranks() / cluster.gpus_per_node()), 0),
      failed_at_(static_cast<std::size_t>(cluster.ranks())),
      failure_cause_(static_cast<std::size_t>(cluster.ranks())),
      blocked_(output, blocked_rank_layout()),
      goodput_(output, goodput_layout()),
      ops_(output, training_op_layout()),
      rank_steps_(output, training_rank_step_layout()),
      steps_table_(output, training_step_layout()),
      memory_(output, training_memory_layout()),
      placement_(output, rank_placement_layout()) {
  const PlanShape shape = plan_shape(config, model_);
  micro_batches_ = shape.micro_batches;
  layers_per_chunk_ = shape.layers_per_chunk;
  for (std::int32_t s = 0; s < pipeline_; ++s) {
    actions_.push_back(stage_actions(config.schedule, pipeline_, s, micro_batches_, chunks_));
  }
  gpu_of_rank_ = place_ranks(config.placement, world_, cluster.gpus_per_node(), cluster.ranks(),
                             config.placement_gpus);
  record_placement();
  const std::int32_t tp = config.parallelism.tensor;
  for (std::int32_t s = 0; s < pipeline_; ++s) {
    std::int64_t parameters = layer_parameters(model_, tp) * layers_per_chunk_ * chunks_;
    if (s == 0) parameters += embedding_parameters(model_, tp);
    if (s == pipeline_ - 1) parameters += output_layer_parameters(model_, tp);
    rank_parameters_.push_back(parameters);
  }
  const std::int64_t data_and_context =
      std::int64_t{config.parallelism.data} * config.parallelism.context;
  bucket_capacity_ = config.bucket_parameters.value_or(
      std::max<std::int64_t>(40'000'000, 1'000'000 * data_and_context));
  const TensorRate* rate = gpu_spec_.tensor_rate(model_.type);
  if (rate == nullptr) {
    throw std::invalid_argument(gpu_spec_.name + " tensor cores do not take " +
                                std::string(data_type_name(model_.type)));
  }
  peak_ = rate->dense_peak;
  // b s h 16-bit values, the s/cp tokens of the rank's context slice, and with sequence
  // parallelism only its 1/t of them (Megatron sends each TP rank's own slice).
  activation_bytes_ =
      Bytes(config.micro_batch * (model_.sequence / config.parallelism.context) * model_.hidden *
            kParameterBytes / (config.parallelism.sequence_parallel ? tp : 1));
  // In floating point: a large model's step passes the 64-bit FLOP count.
  model_flops_ = static_cast<double>(model_sample_flops(model_).count()) *
                 static_cast<double>(config.global_batch);
  for (const SlowGpu& slow : config.slow_gpus) {
    gpu_clock_[static_cast<std::size_t>(gpu_of_rank_[static_cast<std::size_t>(slow.rank)])] =
        ClockFactor::ppm(std::llround(slow.clock * ClockFactor::kFull));
  }
  make_ranks();
  build_groups();
  fuse_kernels();
  check_memory();
  if (config.storage) {
    const std::int32_t nodes = cluster.ranks() / cluster.gpus_per_node();
    storage_ = std::make_unique<SharedStorage>(sim, *config.storage, nodes);
    make_loader(0);
  }
}

void TrainingJob::Impl::make_ranks() {
  ranks_.clear();
  ranks_.resize(static_cast<std::size_t>(world_));
  for (std::int32_t r = 0; r < world_; ++r) {
    RankState& state = ranks_[static_cast<std::size_t>(r)];
    state.gpu_index = gpu_of_rank_[static_cast<std::size_t>(r)];
    state.stage = layout_.coordinate(r, ParallelDim::kPipeline);
    state.replica = layout_.coordinate(r, ParallelDim::kData);
    state.gpu = std::make_unique<Gpu>(sim_, gpu_spec_);
    state.gpu->set_clock(gpu_clock_[static_cast<std::size_t>(state.gpu_index)]);
    if (gpu_failed_[static_cast<std::size_t>(state.gpu_index)] != 0) state.gpu->fail();
    state.listener = std::make_unique<Rank>(*this, r);
    const std::vector<std::int32_t>& recorded = config_.record_ops.ranks;
    state.recording =
        recorded.empty() || std::find(recorded.begin(), recorded.end(), r) != recorded.end();
  }
  const auto nodes = static_cast<std::size_t>(cluster_.ranks() / cluster_.gpus_per_node());
  node_copies_left_.assign(nodes, 0);
  node_writing_.assign(nodes, 0);
  waiting_for_write_.assign(nodes, {});
  checkpoint_arrival_.assign(static_cast<std::size_t>(world_), Time());
  at_checkpoint_ = 0;
  recent_work_.assign(static_cast<std::size_t>(world_), {});
  std::vector<char> used(nodes, 0);
  job_nodes_ = 0;
  for (const std::int32_t gpu : gpu_of_rank_) {
    char& seen = used[static_cast<std::size_t>(node_of_gpu(gpu))];
    job_nodes_ += seen == 0 ? 1 : 0;
    seen = 1;
  }
}

void TrainingJob::Impl::make_loader(std::int64_t first_step) {
  if (!config_.data) return;
  std::vector<std::int32_t> readers(static_cast<std::size_t>(config_.parallelism.data));
  for (std::int32_t r = world_ - 1; r >= 0; --r) {
    const RankState& state = ranks_[static_cast<std::size_t>(r)];
    if (state.stage == 0) {
      readers[static_cast<std::size_t>(state.replica)] = node_of_gpu(state.gpu_index);
    }
  }
  // A restarted job's loader reads from the restored step on: its batches count from there.
  loader_ = std::make_unique<DataLoader>(sim_, *storage_, *config_.data, std::move(readers),
                                         config_.global_batch / config_.parallelism.data,
                                         steps - first_step);
  replicas_.assign(static_cast<std::size_t>(config_.parallelism.data), ReplicaData{});
  loader_first_step_ = first_step;
}

void TrainingJob::Impl::build_groups() {
  auto add = [this](const std::vector<std::int32_t>& ranks) {
    std::vector<std::int32_t> gpus;
    for (const std::int32_t r : ranks) gpus.push_back(gpu_of_rank_[static_cast<std::size_t>(r)]);
    group_ranks_.push_back(ranks);
    return communicators_->add_group(std::move(gpus));
  };
  // Each group of `groups` becomes a communicator; its ranks learn its id and their place in it.
  auto assign = [&](const std::vector<std::vector<std::int32_t>>& groups,
                    std::int32_t RankState::*group_id, std::int32_t RankState::*member) {
    for (const std::vector<std::int32_t>& group : groups) {
      const std::int32_t id = add(group);
      for (std::size_t m = 0; m < group.size(); ++m) {
        RankState& r = ranks_[static_cast<std::size_t>(group[m])];
        r.*group_id = id;
        r.*member = static_cast<std::int32_t>(m);
      }
    }
  };
  assign(layout_.groups(ParallelDim::kTensor), &RankState::tensor_group, &RankState::tensor_member);
  assign(layout_.groups(ParallelDim::kContext), &RankState::context_group,
         &RankState::context_member);
  // A rank's place in its pipeline group is its stage.
  assign(layout_.groups(ParallelDim::kPipeline), &RankState::pipeline_group, &RankState::stage);
  // Gradients are reduced over data and context parallel ranks together (Megatron's
  // data-parallel group "with context parallel"): the ranks that hold the same parameters.
  std::unordered_map<std::int64_t, std::vector<std::int32_t>> same_parameters;
  std::vector<std::int64_t> order;
  for (std::int32_t r = 0; r < world_; ++r) {
    const std::int64_t key = std::int64_t{layout_.coordinate(r, ParallelDim::kTensor)} * pipeline_ +
                             layout_.coordinate(r, ParallelDim::kPipeline);
    auto [it, added] = same_parameters.try_emplace(key);
    if (added) order.push_back(key);
    it->second.push_back(r);
  }
  std::vector<std::vector<std::int32_t>> data_groups;
  for (const std::int64_t key : order) data_groups.push_back(std::move(same_parameters[key]));
  assign(data_groups, &RankState::data_group, &RankState::data_member);
}

void TrainingJob::Impl::fuse_kernels() {
  for (const std::vector<LayerOp>* ops :
       {&program_.layer_forward(), &program_.layer_backward(), &program_.embedding_forward(),
        &program_.embedding_backward(), &program_.head_forward(), &program_.head_backward()}) {
    std::vector<FusedOp>& fused = fused_[ops];
    KernelRun* run = nullptr;
    for (const LayerOp& op : *ops) {
      if (op.kind != LayerOp::Kind::kKernel) {
        fused.push_back(FusedOp{&op, nullptr});
        run = nullptr;
        continue;
      }
      if (run == nullptr) {
        run = &kernel_runs_.emplace_back();
        fused.push_back(FusedOp{nullptr, run});
      }
      run->costs.push_back(op.cost);
      run->counted_flops += static_cast<double>(op.counted.count());
    }
  }
}

void TrainingJob::Impl::check_memory() {
  for (std::int32_t r = 0; r < world_; ++r) {
    const RankState& state = ranks_[static_cast<std::size_t>(r)];
    FootprintPlan plan;
    plan.tensor_parallel = config_.parallelism.tensor;
    plan.pipeline_parallel = pipeline_;
    plan.data_parallel = config_.parallelism.data;
    plan.context_parallel = config_.parallelism.context;
    plan.virtual_stages = chunks_;
    plan.sequence_parallel = config_.parallelism.sequence_parallel;
    plan.distributed_optimizer = config_.distributed_optimizer;
    plan.recompute = config_.recompute;
    plan.micro_batch = config_.micro_batch;
    plan.in_flight_micro_batches =
        peak_in_flight(config_.schedule, pipeline_, state.stage, micro_batches_, chunks_);
    plan.workspace = config_.workspace;
    const MemoryFootprint footprint = rank_footprint(model_, plan, state.stage);
    const bool fits = footprint.total() <= gpu_spec_.hbm_capacity;
    out_of_memory_ = out_of_memory_ || !fits;
    footprints_.push_back(footprint);
    memory_.append(TrainingMemoryRow{r, state.stage, footprint.weights.count(),
                                     footprint.gradients.count(), footprint.optimizer_state.count(),
                                     footprint.activations.count(), footprint.workspace.count(),
                                     footprint.total().count(), gpu_spec_.hbm_capacity.count(),
                                     fits ? 1 : 0});
  }
}

void TrainingJob::Impl::start() {
  if (out_of_memory_) {
    sim_.schedule<&Impl::report_done>(sim_.now(), this);
    outcome = JobOutcome::kOutOfMemory;
    return;
  }
  if (loader_) loader_->start();
  if (on_step_begins) on_step_begins(0);
  for (std::int32_t r = 0; r < world_; ++r) begin_step(r);
}

void TrainingJob::Impl::append_ops(RankState& r, const std::vector<LayerOp>& ops,
                                   std::int32_t micro_batch, std::int32_t chunk,
                                   std::int32_t layer) {
  const bool recorded = r.recording && r.step < config_.record_ops.steps;
  Piece piece{recorded ? &ops : nullptr, recorded ? nullptr : &fused_.at(&ops), Instruction{}};
  piece.instruction.micro_batch = micro_batch;
  piece.instruction.chunk = chunk;
  piece.instruction.layer = layer;
  r.program.push_back(piece);
}

void TrainingJob::Impl::build_action(RankState& r) {
  const PipelineAction& action = actions_[static_cast<std::size_t>(r.stage)][r.action];
  r.program.clear();
  r.next = 0;
  r.next_op = 0;
  const std::int32_t vs = virtual_stage(r.stage, action.chunk);
  const std::int32_t last = pipeline_ * chunks_ - 1;
  const std::int32_t first_layer = vs * layers_per_chunk_;
  const std::int32_t mb = action.micro_batch;
  auto transfer = [&](Instruction::Kind kind, bool forward, std::int32_t peer_vs) {
    Instruction i;
    i.kind = kind;
    i.forward = forward;
    i.micro_batch = mb;
    i.chunk = action.chunk;
    i.peer = peer_vs;
    r.program.push_back(Piece{nullptr, nullptr, i});
  };
  auto gradients = [&](std::int64_t parameters) {
    if (mb != micro_batches_ - 1) return;
    Instruction i;
    i.kind = Instruction::Kind::kGradientsReady;
    i.parameters = parameters;
    r.program.push_back(Piece{nullptr, nullptr, i});
  };
  const std::int32_t tp = config_.parallelism.tensor;
  if (action.kind == PipelineAction::Kind::kForward) {
    if (vs > 0) transfer(Instruction::Kind::kReceive, true, vs - 1);
    if (vs == 0) append_ops(r, program_.embedding_forward(), mb, action.chunk, -1);
    for (std::int32_t l = 0; l < layers_per_chunk_; ++l) {
      append_ops(r, program_.layer_forward(), mb, action.chunk, first_layer + l);
    }
    if (vs == last) append_ops(r, program_.head_forward(), mb, action.chunk, -1);
    if (vs < last) transfer(Instruction::Kind::kSend, true, vs + 1);
    return;
  }
  if (vs < last) transfer(Instruction::Kind::kReceive, false, vs + 1);
  if (vs == last) {
    append_ops(r, program_.head_backward(), mb, action.chunk, -1);
    gradients(output_layer_parameters(model_, tp));
  }
  for (std::int32_t l = layers_per_chunk_ - 1; l >= 0; --l) {
    append_ops(r, program_.layer_backward(), mb, action.chunk, first_layer + l);
    gradients(layer_parameters(model_, tp));
  }
  if (vs == 0) {
    append_ops(r, program_.embedding_backward(), mb, action.chunk, -1);
    gradients(embedding_parameters(model_, tp));
  }
  if (mb == micro_batches_ - 1) {
    Instruction flush;
    flush.kind = Instruction::Kind::kFlushBucket;
    r.program.push_back(Piece{nullptr, nullptr, flush});
  }
  if (vs > 0) transfer(Instruction::Kind::kSend, false, vs - 1);
}

void TrainingJob::Impl::build_tail(RankState& r) {
  r.program.clear();
  r.next = 0;
  r.next_op = 0;
  Instruction optimizer;
  optimizer.kind = Instruction::Kind::kOptimizer;
  r.program.push_back(Piece{nullptr, nullptr, optimizer});
  Instruction end;
  end.kind = Instruction::Kind::kStepEnd;
  r.program.push_back(Piece{nullptr, nullptr, end});
}

void TrainingJob::Impl::begin_step(std::int32_t rank) {
  RankState& r = ranks_[static_cast<std::size_t>(rank)];
  r.step_start = sim_.now();
  r.last_compute_end = sim_.now();
  r.times = StepTimes{};
  const bool needs_batch = r.stage == 0 || r.stage == pipeline_ - 1;
  if (!loader_ || !needs_batch) {
    begin_actions(rank);
    return;
  }
  ReplicaData& data = replicas_[static_cast<std::size_t>(r.replica)];
  if (data.requested == r.step) {
    if (data.ready) {
      begin_actions(rank);
    } else {
      data.waiting.push_back(rank);
    }
    return;
  }
  data.requested = r.step;
  data.ready.reset();
  data.waiting.push_back(rank);
  loader_->want(r.replica, r.step - loader_first_step_,
                [this, replica = r.replica, generation = generation_](Time ready) {
                  if (generation != generation_) return;
                  ReplicaData& d = replicas_[static_cast<std::size_t>(replica)];
                  d.ready = ready;
                  std::vector<std::int32_t> waiting = std::move(d.waiting);
                  d.waiting.clear();
                  for (const std::int32_t w : waiting) begin_actions(w);
                });
}

void TrainingJob::Impl::begin_actions(std::int32_t rank) {
  RankState& r = ranks_[static_cast<std::size_t>(rank)];
  r.times.data_wait = sim_.now() - r.step_start;
  r.last_compute_end = sim_.now();
  r.action = 0;
  r.tail_built = false;
  r.bucket_fill = 0;
  r.buckets.clear();
  r.deferred.clear();
  build_action(r);
  feed(rank);
}

void TrainingJob::Impl::feed(std::int32_t rank) {
  RankState& r = ranks_[static_cast<std::size_t>(rank)];
  while (r.compute.size() < kLookahead) {
    if (r.next == r.program.size()) {
      if (r.tail_built) return;
      if (++r.action < actions_[static_cast<std::size_t>(r.stage)].size()) {
        build_action(r);
      } else {
        build_tail(r);
        r.tail_built = true;
      }
      continue;
    }
    const Piece& piece = r.program[r.next];
    if (piece.ops == nullptr && piece.fused == nullptr) {
      ++r.next;
      enqueue(rank, piece.instruction);
      continue;
    }
    const std::size_t length = piece.ops != nullptr ? piece.ops->size() : piece.fused->size();
    if (r.next_op == length) {
      ++r.next;
      r.next_op = 0;
      continue;
    }
    Instruction instruction = piece.instruction;
    if (piece.ops != nullptr) {
      instruction.op = &(*piece.ops)[r.next_op++];
      instruction.kind = instruction.op->kind == LayerOp::Kind::kKernel
                             ? Instruction::Kind::kKernel
                             : Instruction::Kind::kTensor;
    } else {
      const FusedOp& fused = (*piece.fused)[r.next_op++];
      instruction.op = fused.collective;
      instruction.run = fused.kernels;
      instruction.kind =
          fused.collective != nullptr ? Instruction::Kind::kTensor : Instruction::Kind::kKernelRun;
    }
    enqueue(rank, instruction);
  }
}

template <class Make>
Collective& TrainingJob::Impl::join_point(CollectiveKey key, const Make& make, bool& closed) {
  auto [it, added] = open_.try_emplace(key);
  Rendezvous& point = it->second;
  if (added) {
    point.collective = make();
    point.members = static_cast<std::int32_t>(point.collective->participants().size());
    point.collective->when_failed(
        [this, group = static_cast<std::int32_t>(key.group_and_kind >> 2)](
            const TransferFailure& f) { transfer_failed(group, f); });
  }
  Collective& collective = *point.collective;
  closed = ++point.joined == point.members;
  if (closed) {
    // Swept before the closing member arrives, so that this one is not taken for settled.
    if (closed_.size() >= 2 * closed_at_last_sweep_ + 1024) sweep_settled();
    closed_.push_back(std::move(point.collective));
    open_.erase(it);
  }
  return collective;
}

void TrainingJob::Impl::sweep_settled() {
  // An aborted collective (a member's GPU was lost) stays: its live members still wait in it, and
  // the watchdog and the hang report look at it.
  std::erase_if(closed_, [](const std::unique_ptr<Collective>& c) {
    return c->settled() && c->state() == CollectiveState::kFinished;
  });
  closed_at_last_sweep_ = closed_.size();
}

void TrainingJob::Impl::launch_bucket(std::int32_t rank, std::int64_t parameters, CollectiveOp op,
                                      std::int64_t bytes_per_parameter) {
  RankState& r = ranks_[static_cast<std::size_t>(rank)];
  Queued q;
  q.instruction.kind = Instruction::Kind::kGradientsReady;
  q.instruction.parameters = parameters;
  q.communicator = Communicator::kData;
  q.key = CollectiveKey{(static_cast<std::uint64_t>(r.data_group) << 2) | 3, r.data_sequence++};
  q.bytes = Bytes(parameters * bytes_per_parameter);
  q.stream = Stream::kCommunication;
  // Tagged by the op: all-gathers of parameters come after the optimizer.
  q.instruction.forward = op == CollectiveOp::kAllGather;
  r.gpu->wait_event(Stream::kCommunication, r.gpu->record_event(Stream::kCompute));
  q.id = r.gpu->enqueue_external(Stream::kCommunication, *r.listener);
  r.communication.push_back(q);
  if (op != CollectiveOp::kAllGather) r.buckets.push_back(parameters);
}

void TrainingJob::Impl::enqueue(std::int32_t rank, const Instruction& instruction) {
  RankState& r = ranks_[static_cast<std::size_t>(rank)];
  Gpu& gpu = *r.gpu;
  const CollectiveOp gradient_op =
      config_.distributed_optimizer ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
  Queued q;
  q.instruction = instruction;
  switch (instruction.kind) {
    case Instruction::Kind::kKernel:
      q.id = gpu.launch_kernel(Stream::kCompute, instruction.op->cost, r.listener.get());
      break;
    case Instruction::Kind::kKernelRun:
      q.id = gpu.launch_kernels(Stream::kCompute, instruction.run->costs, r.listener.get());
      break;
    case Instruction::Kind::kTensor: {
      const bool tensor = instruction.op->group == CommGroup::kTensor;
      q.communicator = tensor ? Communicator::kTensor : Communicator::kContext;
      const std::int32_t group = tensor ? r.tensor_group : r.context_group;
      q.key = CollectiveKey{(static_cast<std::uint64_t>(group) << 2) | (tensor ? 0U : 1U),
                            tensor ? r.tensor_sequence++ : r.context_sequence++};
      q.bytes = instruction.op->size;
      q.id = gpu.enqueue_external(Stream::kCompute, *r.listener);
      break;
    }
    case Instruction::Kind::kReceive:
    case Instruction::Kind::kSend: {
      // Keyed by the step, the micro-batch, the receiving virtual stage and the direction: both
      // sides name the same transfer (the sender's chunk is not the receiver's when a transfer
      // wraps from the last stage to the first).
      const bool receive = instruction.kind == Instruction::Kind::kReceive;
      const std::int32_t receiver =
          receive ? virtual_stage(r.stage, instruction.chunk) : instruction.peer;
      const std::uint64_t sequence =
          ((static_cast<std::uint64_t>(r.step) * static_cast<std::uint64_t>(micro_batches_) +
            static_cast<std::uint64_t>(instruction.micro_batch)) *
               static_cast<std::uint64_t>(pipeline_ * chunks_) +
           static_cast<std::uint64_t>(receiver)) *
              2 +
          (instruction.forward ? 1U : 0U);
      q.communicator = Communicator::kPipeline;
      q.key = CollectiveKey{(static_cast<std::uint64_t>(r.pipeline_group) << 2) | 2, sequence};
      q.bytes = activation_bytes_;
      q.id = gpu.enqueue_external(Stream::kCompute, *r.listener);
      break;
    }
    case Instruction::Kind::kGradientsReady:
    case Instruction::Kind::kFlushBucket: {
      // A bucket closes once it holds its capacity, or at the chunk's last gradients.
      r.bucket_fill += instruction.parameters;
      const bool closes = instruction.kind == Instruction::Kind::kFlushBucket
                              ? r.bucket_fill > 0
                              : r.bucket_fill >= bucket_capacity_;
      if (!closes) return;
      if (config_.overlap_grad_reduce) {
        launch_bucket(rank, r.bucket_fill, gradient_op, kGradientBytes);
      } else {
        r.deferred.push_back(r.bucket_fill);
      }
      r.bucket_fill = 0;
      return;
    }
    case Instruction::Kind::kOptimizer:
      for (const std::int64_t bucket : r.deferred) {
        launch_bucket(rank, bucket, gradient_op, kGradientBytes);
      }
      r.deferred.clear();
      gpu.wait_event(Stream::kCompute, gpu.record_event(Stream::kCommunication));
      q.id = gpu.launch_kernel(
          Stream::kCompute,
          optimizer_step(kernels_, config_.distributed_optimizer
                                       ? optimizer_shard(r)
                                       : rank_parameters_[static_cast<std::size_t>(r.stage)]),
          r.listener.get());
      break;
    case Instruction::Kind::kStepEnd:
      if (config_.distributed_optimizer) {
        const std::vector<std::int64_t> buckets = r.buckets;
        for (const std::int64_t bucket : buckets) {
          launch_bucket(rank, bucket, CollectiveOp::kAllGather, kParameterBytes);
        }
      }
      gpu.wait_event(Stream::kCompute, gpu.record_event(Stream::kCommunication));
      q.id = gpu.enqueue_external(Stream::kCompute, *r.listener);
      break;
  }
  r.compute.push_back(q);
}

void TrainingJob::Impl::op_started(std::int32_t rank, GpuOpId id, Time at) {
  RankState& r = ranks_[static_cast<std::size_t>(rank)];
  const bool on_compute = !r.compute.empty() && r.compute.front().id == id;
  Queued& q = on_compute ? r.compute.front() : r.communication.front();
  const Instruction& i = q.instruction;
  if (i.kind == Instruction::Kind::kKernel || i.kind == Instruction::Kind::kKernelRun ||
      i.kind == Instruction::Kind::kOptimizer) {
    return;
  }
  if (i.kind == Instruction::Kind::kStepEnd) {
    r.gpu->finish_external(id);
    return;
  }
  q.joined = at;
  const Stream stream = q.stream;
  const CollectiveKey key = q.key;
  const Bytes bytes = q.bytes;
  bool closed = false;
  if (i.kind == Instruction::Kind::kReceive || i.kind == Instruction::Kind::kSend) {
    const bool receive = i.kind == Instruction::Kind::kReceive;
    const std::int32_t sender = receive ? i.peer % pipeline_ : r.stage;
    const std::int32_t receiver = receive ? r.stage : i.peer % pipeline_;
    const std::int32_t group = r.pipeline_group;
    Collective& c = join_point(
        key,
        [&] {
          return communicators_->send(
              group, sender, receiver, bytes, [this, group, receiver](std::int32_t member, Time) {
                if (member != receiver) return;
                collective_done(member_rank(group, member), Stream::kCompute);
              });
        },
        closed);
    c.arrive(communicators_->participant(group, r.stage), at);
    if (receive) {
      q.collective = &c;
      arm_watchdog();
    }
    if (closed && !receive) {
      // The receiver had posted its receive and waited since for the sending stage: the bubble.
      Queued& posted =
          ranks_[static_cast<std::size_t>(member_rank(group, receiver))].compute.front();
      posted.waited = at - posted.joined;
    }
    if (!receive) r.gpu->finish_external(id);
    return;
  }
  // A collective over a whole group.
  const bool data = q.communicator == Communicator::kData;
  const bool tensor = q.communicator == Communicator::kTensor;
  const std::int32_t group = data ? r.data_group : tensor ? r.tensor_group : r.context_group;
  const std::int32_t member = data ? r.data_member : tensor ? r.tensor_member : r.context_member;
  CollectiveOp op = data ? CollectiveOp::kAllReduce : i.op->op;
  if (data && i.forward) op = CollectiveOp::kAllGather;
  if (data && !i.forward && config_.distributed_optimizer) op = CollectiveOp::kReduceScatter;
  Collective& c = join_point(
      key,
      [&] {
        return communicators_->collective(group, op, bytes,
                                          [this, group, stream](std::int32_t m, Time) {
                                            collective_done(member_rank(group, m), stream);
                                          });
      },
      closed);
  c.arrive(communicators_->participant(group, member), at);
  q.collective = &c;
  if (closed) record_waits(group, stream, at);
  arm_watchdog();
}

void TrainingJob::Impl::record_waits(std::int32_t group, Stream stream, Time at) {
  for (const std::int32_t member_rank : group_ranks_[static_cast<std::size_t>(group)]) {
    RankState& member = ranks_[static_cast<std::size_t>(member_rank)];
    Queued& q = stream == Stream::kCompute ? member.compute.front() : member.communication.front();
    q.waited = at - q.joined;
  }
}

void TrainingJob::Impl::collective_done(std::int32_t rank, Stream stream) {
  RankState& r = ranks_[static_cast<std::size_t>(rank)];
  r.gpu->finish_external(stream == Stream::kCompute ? r.compute.front().id
                                                    : r.communication.front().id);
}

std::int64_t TrainingJob::Impl::optimizer_shard(const RankState& r) const {
  const std::int64_t holders = communicators_->group_size(r.data_group);
  const std::int64_t parameters = rank_parameters_[static_cast<std::size_t>(r.stage)];
  return (parameters + holders - 1) / holders;
}

void TrainingJob::Impl::op_finished(std::int32_t rank, GpuOpId id, Time started, Time finished) {
  RankState& r = ranks_[static_cast<std::size_t>(rank)];
  const bool on_compute = !r.compute.empty() && r.compute.front().id == id;
  const Queued q = on_compute ? r.compute.front() : r.communication.front();
  if (on_compute) {
    r.compute.pop_front();
  } else {
    r.communication.pop_front();
  }
  if (r.recording && r.step < config_.record_ops.steps) record_op(r, rank, q, started, finished);
  if (!on_compute) return;
  StepTimes& t = r.times;
  const Duration took = finished - started;
  switch (q.instruction.kind) {
    case Instruction::Kind::kKernel:
      t.compute += took;
      t.counted_flops += static_cast<double>(q.instruction.op->counted.count());
      break;
    case Instruction::Kind::kKernelRun:
      t.compute += took;
      t.counted_flops += q.instruction.run->counted_flops;
      break;
    case Instruction::Kind::kOptimizer:
      // What the stream waited for before it: the gradients' reduction not hidden by backward.
      t.dp += started - r.last_compute_end;
      t.compute += took;
      break;
    case Instruction::Kind::kTensor:
      t.wait_for_others += q.waited;
      (q.communicator == Communicator::kTensor ? t.tp : t.cp) += took - q.waited;
      break;
    case Instruction::Kind::kReceive:
      t.bubble += q.waited;
      t.pp += took - q.waited;
      break;
    case Instruction::Kind::kStepEnd:
      t.dp += started - r.last_compute_end;
      break;
    default:
      break;
  }
  r.last_compute_end = finished;
  if (q.instruction.kind == Instruction::Kind::kStepEnd) {
    step_over(rank);
    return;
  }
  feed(rank);
}

void TrainingJob::Impl::record_op(const RankState& r, std::int32_t rank, const Queued& q,
                                  Time start, Time end) {
  const Instruction& i = q.instruction;
  const char* kind = "kernel";
  const char* name = "";
  std::int64_t flops = 0;
  std::int64_t bytes = q.bytes.count();
  const char* communicator = "";
  switch (i.kind) {
    case Instruction::Kind::kKernel:
      name = i.op->name.data();
      flops = i.op->counted.count();
      bytes = i.op->cost.bytes.count();
      break;
    case Instruction::Kind::kOptimizer:
      name = "optimizer";
      break;
    case Instruction::Kind::kTensor:
      kind = "collective";
      name = i.op->name.data();
      communicator = communicator_name(q.communicator);
      break;
    case Instruction::Kind::kReceive:
    case Instruction::Kind::kSend:
      kind = i.kind == Instruction::Kind::kReceive ? "recv" : "send";
      name = i.forward ? "activations" : "gradients";
      communicator = "pp";
      break;
    case Instruction::Kind::kGradientsReady:
      kind = "collective";
      name = i.forward ? "parameter_all_gather"
                       : (config_.distributed_optimizer ? "gradient_reduce_scatter"
                                                        : "gradient_all_reduce");
      communicator = "dp";
      break;
    case Instruction::Kind::kStepEnd:
      kind = "marker";
      name = "step_end";
      break;
    case Instruction::Kind::kFlushBucket:
    case Instruction::Kind::kKernelRun:  // runs only where ops are not recorded
      break;
  }
  const bool communicates = communicator[0] != '\0';
  ops_.append(TrainingOpRow{
      rank, r.step, static_cast<std::int64_t>(attempt_), i.micro_batch, r.stage, i.layer,
      q.stream == Stream::kCompute ? "compute" : "communication", kind, name, start.ps(), end.ps(),
      communicates ? q.waited.ps() : 0, flops, bytes, communicator,
      communicates ? static_cast<std::int64_t>(q.key.group_and_kind >> 2) : -1,
      communicates ? static_cast<std::int64_t>(q.key.sequence) : -1});
}

void TrainingJob::Impl::record_placement() {
  for (std::size_t rank = 0; rank < gpu_of_rank_.size(); ++rank) {
    const std::int32_t gpu = gpu_of_rank_[rank];
    placement_.append(RankPlacementRow{static_cast<std::int64_t>(attempt_),
                                       static_cast<std::int64_t>(rank), gpu, node_of_gpu(gpu)});
  }
}

Bytes TrainingJob::Impl::checkpoint_bytes(std::int32_t rank) const {
  const RankState& r = ranks_[static_cast<std::size_t>(rank)];
  const std::int64_t parameters = rank_parameters_[static_cast<std::size_t>(r.stage)];
  // Sharded as torch.distributed.checkpoint saves it: each of the ranks holding the same
  // parameters writes its part, so the whole is written once.
  const std::int64_t holders = communicators_->group_size(r.data_group);
  const std::int64_t share = (parameters + holders - 1) / holders;
  return Bytes(share * kCheckpointBytesPerParameter);
}

std::vector<Bytes> TrainingJob::Impl::checkpoint_bytes_by_node() const {
  std::vector<Bytes> by_node(node_drained_.size());
  for (std::int32_t rank = 0; rank < world_; ++rank) {
    by_node[static_cast<std::size_t>(node_of_gpu(gpu_of_rank_[static_cast<std::size_t>(rank)]))] +=
        checkpoint_bytes(rank);
  }
  return by_node;
}

void TrainingJob::Impl::step_over(std::int32_t rank) {
  RankState& r = ranks_[static_cast<std::size_t>(rank)];
  const bool due =
      config_.checkpoint.every > 0 && storage_ && (r.step + 1) % config_.checkpoint.every == 0;
  if (!due) {
    finish_step(rank, Duration());
    return;
  }
  checkpoint_arrival_[static_cast<std::size_t>(rank)] = sim_.now();
  const std::int32_t gpus_per_node = cluster_.gpus_per_node();
  const auto node = static_cast<std::size_t>(r.gpu_index / gpus_per_node);
  if (config_.checkpoint.mode == CheckpointMode::kSynchronous) {
    // Every rank stalls until every node has written its part: the save ends with a barrier.
    if (++at_checkpoint_ < world_) return;
    at_checkpoint_ = 0;
    const std::vector<Bytes> per_node = checkpoint_bytes_by_node();
    auto writes_left = std::make_shared<std::int32_t>(0);
    for (const Bytes bytes : per_node) *writes_left += bytes > Bytes() ? 1 : 0;
    for (std::size_t n = 0; n < per_node.size(); ++n) {
      if (per_node[n] == Bytes()) continue;
      storage_->transfer(static_cast<std::int32_t>(n), per_node[n],
                         [this, writes_left, generation = generation_, step = r.step](Time) {
                           if (generation != generation_ || --*writes_left > 0) return;
                           checkpoint_written(step);
                           // A rank's step end may stop the job (the straggler detector).
                           for (std::int32_t w = 0; w < world_ && generation == generation_; ++w) {
                             finish_step(
                                 w, sim_.now() - checkpoint_arrival_[static_cast<std::size_t>(w)]);
                           }
                         });
    }
    return;
  }
  // Asynchronous: the previous write of the node must be over before its buffers are reused.
  if (node_writing_[node] != 0) {
    waiting_for_write_[node].push_back(rank);
    return;
  }
  checkpoint(rank);
}

void TrainingJob::Impl::checkpoint(std::int32_t rank) {
  const RankState& r = ranks_[static_cast<std::size_t>(rank)];
  const std::int32_t gpus_per_node = cluster_.gpus_per_node();
  const auto node = static_cast<std::size_t>(r.gpu_index / gpus_per_node);
  if (node_copies_left_[node] == 0) {
    for (const RankState& other : ranks_) {
      if (static_cast<std::size_t>(other.gpu_index / gpus_per_node) == node) {
        ++node_copies_left_[node];
      }
    }
  }
  sim_.schedule<&Impl::copied_to_host>(
      sim_.now() + tx_time(checkpoint_bytes(rank), config_.checkpoint.host_copy), this,
      generation_ << 32 | static_cast<std::uint64_t>(rank));
}

void TrainingJob::Impl::copied_to_host(std::uint64_t generation_and_rank) {
  if (generation_and_rank >> 32 != generation_) return;
  const auto rank = static_cast<std::int32_t>(generation_and_rank & 0xFFFF'FFFFU);
  const auto node =
      static_cast<std::size_t>(node_of_gpu(ranks_[static_cast<std::size_t>(rank)].gpu_index));
  const std::int64_t step = ranks_[static_cast<std::size_t>(rank)].step;
  finish_step(rank, sim_.now() - checkpoint_arrival_[static_cast<std::size_t>(rank)]);
  if (generation_and_rank >> 32 != generation_ || --node_copies_left_[node] > 0) return;
  const Bytes bytes = checkpoint_bytes_by_node()[node];
  node_writing_[node] = 1;
  checkpoint_writes_left_.try_emplace(step, job_nodes_);
  storage_->transfer(static_cast<std::int32_t>(node), bytes,
                     [this, node, step, generation = generation_](Time) {
                       if (generation != generation_) return;
                       node_writing_[node] = 0;
                       if (--checkpoint_writes_left_[step] == 0) {
                         checkpoint_writes_left_.erase(step);
                         checkpoint_written(step);
                       }
                       std::vector<std::int32_t> waiting = std::move(waiting_for_write_[node]);
                       waiting_for_write_[node].clear();
                       for (const std::int32_t w : waiting) checkpoint(w);
                     });
}

void TrainingJob::Impl::checkpoint_written(std::int64_t step) {
  checkpointed_steps_ = std::max(checkpointed_steps_, step + 1);
}

void TrainingJob::Impl::finish_step(std::int32_t rank, Duration checkpoint_stall) {
  RankState& r = ranks_[static_cast<std::size_t>(rank)];
  StepTimes& t = r.times;
  t.checkpoint = checkpoint_stall;
  const Time end = sim_.now();
  const Duration total = end - r.step_start;
  const Duration parts = t.compute + t.tp + t.cp + t.pp + t.dp + t.bubble + t.data_wait +
                         t.checkpoint + t.wait_for_others;
  const TrainingRankStepRow row{rank,
                                r.step,
                                static_cast<std::int64_t>(attempt_),
                                r.step_start.ps(),
                                end.ps(),
                                t.compute.ps(),
                                t.tp.ps(),
                                t.cp.ps(),
                                t.pp.ps(),
                                t.dp.ps(),
                                t.bubble.ps(),
                                t.data_wait.ps(),
                                t.checkpoint.ps(),
                                t.wait_for_others.ps(),
                                (total - parts).ps()};
  rank_steps_.append(row);
  StepTotals& totals = step_totals_[r.step];
  totals.end = std::max(totals.end, end);
  totals.counted_flops += t.counted_flops;
  totals.checkpoint_stall = std::max(totals.checkpoint_stall, t.checkpoint);
  // The rank the others waited for is the one with the most work of its own: its kernels and
  // its transfers once every peer was in; the lowest such rank on a tie.
  const Duration busy = t.compute + t.tp + t.cp + t.pp;
  if (defences_.straggler_detector.enabled) {
    std::deque<Duration>& recent = recent_work_[static_cast<std::size_t>(rank)];
    recent.push_back(busy);
    if (static_cast<std::int64_t>(recent.size()) > defences_.straggler_detector.window) {
      recent.pop_front();
    }
  }
  if (busy > totals.most_busy || (busy == totals.most_busy && rank < totals.slowest_rank)) {
    totals.most_busy = busy;
    totals.slowest_rank = rank;
    totals.slowest_row = row;
  }
  if (++totals.ranks_done == world_) {
    // Steps follow each other: a step is the time from the previous one's end (the last rank's)
    // to its own, though ranks that finish early begin the next step before that.
    const Time start = previous_step_end_;
    previous_step_end_ = totals.end;
    const Duration step_time = totals.end - start;
    const double seconds = step_time.seconds();
    const double tokens =
        static_cast<double>(config_.global_batch) * static_cast<double>(model_.sequence);
    const double gpus = static_cast<double>(world_);
    last_step_ =
        TrainingStepRow{r.step,
                        static_cast<std::int64_t>(attempt_),
                        start.ps(),
                        totals.end.ps(),
                        totals.slowest_rank,
                        tokens / seconds,
                        totals.counted_flops / seconds / gpus * 1e-12,
                        model_flops_ / (seconds * gpus * static_cast<double>(peak_.per_second()))};
    steps_table_.append(last_step_);
    slowest_row_ = totals.slowest_row;
    summed_steps_ += step_time;
    ++step_rows_;
    kept_step_time_.push_back(step_time);
    const Duration step_stall = totals.checkpoint_stall;
    kept_checkpoint_stall_.push_back(step_stall);
    step_totals_.erase(r.step);  // `totals` with it
    ++steps_completed;
    if (defences_.straggler_detector.enabled && detect_stragglers(r.step)) return;
    if (config_.reuse_steady_step && steps_completed < steps &&
        price_step(last_step_, step_stall)) {
      return;
    }
    if (steps_completed < steps && on_step_begins) on_step_begins(steps_completed);
  }
  ++r.step;
  if (r.step < steps) {
    begin_step(rank);
    return;
  }
  if (++ranks_finished_ == world_) end_as(JobOutcome::kCompleted);
}

void TrainingJob::Impl::set_gpu_clock(std::int32_t gpu, ClockFactor clock) {
  gpu_clock_[static_cast<std::size_t>(gpu)] = clock;
  for (RankState& r : ranks_) {
    if (r.gpu_index == gpu && r.gpu) r.gpu->set_clock(clock);
  }
}

void TrainingJob::Impl::fail_gpu(std::int32_t gpu, const std::string& cause) {
  if (gpu_failed_[static_cast<std::size_t>(gpu)] != 0) return;
  gpu_failed_[static_cast<std::size_t>(gpu)] = 1;
  failed_at_[static_cast<std::size_t>(gpu)] = sim_.now();
  failure_cause_[static_cast<std::size_t>(gpu)] = cause;
  const auto node = static_cast<std::size_t>(node_of_gpu(gpu));
  if (defences_.health_check.enabled && node_drained_[node] == 0 &&
      std::none_of(gpu_of_rank_.begin(), gpu_of_rank_.end(),
                   [&](std::int32_t g) { return node_of_gpu(g) == node_of_gpu(gpu); })) {
    // An idle node's health check drains it before any restart could land there.
    drain(static_cast<std::int32_t>(node));
    log_.record("health_check", sim_.now(), "node " + std::to_string(node),
                "idle node: GPU " + std::to_string(gpu) + ": " + cause + "; drained");
  }
  if (replaying_) {
    if (std::find(gpu_of_rank_.begin(), gpu_of_rank_.end(), gpu) == gpu_of_rank_.end()) return;
    lost_gpu_in_use_ = true;
    // Lost while the job is down, it is found when the job restarts.
    if (step_in_flight_) lose_replayed_step(gpu);
    return;
  }
  for (RankState& r : ranks_) {
    if (r.gpu_index != gpu || !r.gpu) continue;
    r.gpu->fail();
    // NCCL's kernels on the dead GPU stop too: a collective it was inside never finishes for
    // anyone.
    for (Queued* q : {r.compute.empty() ? nullptr : &r.compute.front(),
                      r.communication.empty() ? nullptr : &r.communication.front()}) {
      if (q != nullptr && q->collective != nullptr) q->collective->abort();
    }
    if (defences_.health_check.enabled && !health_check_armed_ && outcome == JobOutcome::kRunning) {
      // The check runs every interval from the start; the first run after the failure finds it.
      const std::int64_t interval = defences_.health_check.interval.ps();
      const std::int64_t next = (sim_.now().ps() / interval + 1) * interval;
      health_check_armed_ = true;
      sim_.schedule<&Impl::health_check>(Time::zero() + Duration::ps(next), this, generation_);
    }
  }
}

TrainingJob::Impl::Wait TrainingJob::Impl::oldest_wait() const {
  Wait oldest;
  for (std::int32_t rank = 0; rank < world_; ++rank) {
    const RankState& r = ranks_[static_cast<std::size_t>(rank)];
    if (gpu_failed_[static_cast<std::size_t>(r.gpu_index)] != 0) continue;
    for (const Stream stream : {Stream::kCompute, Stream::kCommunication}) {
      const bool empty = stream == Stream::kCompute ? r.compute.empty() : r.communication.empty();
      if (empty) continue;
      const Queued& q = stream == Stream::kCompute ? r.compute.front() : r.communication.front();
      if (q.collective != nullptr && q.joined < oldest.since) oldest = Wait{rank, stream, q.joined};
    }
  }
  return oldest;
}

void TrainingJob::Impl::arm_watchdog() {
  if (!defences_.watchdog.enabled || watchdog_armed_) return;
  watchdog_armed_ = true;
  const Wait oldest = oldest_wait();
  const Time due = oldest.since == Time::max() ? sim_.now() + defences_.watchdog.timeout
                                               : oldest.since + defences_.watchdog.timeout;
  sim_.schedule<&Impl::watchdog_check>(next_watchdog_poll(due), this, generation_);
}

void TrainingJob::Impl::watchdog_check(std::uint64_t generation) {
  if (generation != generation_ || outcome != JobOutcome::kRunning) return;
  watchdog_armed_ = false;
  const Wait oldest = oldest_wait();
  if (oldest.since == Time::max()) return;  // armed again by the next collective
  if (sim_.now() - oldest.since < defences_.watchdog.timeout) {
    arm_watchdog();
    return;
  }
  const RankState& r = ranks_[static_cast<std::size_t>(oldest.rank)];
  const Queued& q = oldest.stream == Stream::kCompute ? r.compute.front() : r.communication.front();
  const std::string culprits = ranks_text(never_arrived(q));
  const std::string detail =
      "collective timeout: " + wait_description(q) + " (group " +
      std::to_string(q.key.group_and_kind >> 2) + ", entered " +
      format_rounded(oldest.since.since_start()) + ", timeout " +
      format_rounded(defences_.watchdog.timeout) + "); never arrived or lost: " +
      (culprits.empty() ? "none (every rank joined; the data never came)" : culprits);
  log_.record("watchdog", sim_.now(), "rank " + std::to_string(oldest.rank), detail);
  incident_ = "watchdog at " + format_rounded(sim_.now().since_start()) + ", rank " +
              std::to_string(oldest.rank) + ": " + detail;
  record_blocked_ranks();
  stop(JobOutcome::kCollectiveTimeout);
}

void TrainingJob::Impl::transfer_failed(std::int32_t group, const TransferFailure& failure) {
  if (!defences_.watchdog.enabled || outcome != JobOutcome::kRunning || network_error_) return;
  auto describe = [&](std::int32_t participant) {
    const std::int32_t rank = member_rank(group, communicators_->member(group, participant));
    const std::int32_t gpu = gpu_of_rank_[static_cast<std::size_t>(rank)];
    return "rank " + std::to_string(rank) + " (GPU " + std::to_string(gpu) + ", node " +
           std::to_string(node_of_gpu(gpu)) + ")";
  };
  network_error_ = "NCCL error: the queue pair from " + describe(failure.from) + " to " +
                   describe(failure.to) + " ran out of retries at " +
                   format_rounded(failure.at.since_start()) +
                   " (transport retry counter exceeded, IBV_WC_RETRY_EXC_ERR): its path is dead";
  sim_.schedule<&Impl::network_error_check>(next_watchdog_poll(sim_.now()), this, generation_);
}

void TrainingJob::Impl::network_error_check(std::uint64_t generation) {
  if (generation != generation_ || outcome != JobOutcome::kRunning || !network_error_) return;
  const std::string detail = *network_error_;
  network_error_.reset();
  log_.record("watchdog", sim_.now(), "job", detail);
  incident_ = "watchdog at " + format_rounded(sim_.now().since_start()) + ": " + detail;
  record_blocked_ranks();
  stop(JobOutcome::kNetworkError);
}

void TrainingJob::Impl::health_check(std::uint64_t generation) {
  health_check_armed_ = false;
  if (generation != generation_ || outcome != JobOutcome::kRunning) return;
  bool found = false;
  for (const RankState& r : ranks_) {
    const auto gpu = static_cast<std::size_t>(r.gpu_index);
    const auto node = static_cast<std::size_t>(node_of_gpu(r.gpu_index));
    if (gpu_failed_[gpu] == 0 || node_drained_[node] != 0) continue;
    drain(static_cast<std::int32_t>(node));
    found = true;
    const std::string detail = "GPU " + std::to_string(gpu) + " lost at " +
                               format_rounded(failed_at_[gpu]->since_start()) + " (" +
                               failure_cause_[gpu] + "); node drained";
    log_.record("health_check", sim_.now(), "node " + std::to_string(node), detail);
    incident_ = "health check at " + format_rounded(sim_.now().since_start()) + ", node " +
                std::to_string(node) + ": " + detail;
  }
  if (found) stop(JobOutcome::kNodeDrained);
}

bool TrainingJob::Impl::detect_stragglers(std::int64_t step) {
  const StragglerDetectorConfig& detector = defences_.straggler_detector;
  // Ranks of one pipeline stage do the same work; stages differ (the last holds the loss).
  std::vector<std::vector<std::pair<Duration, std::int32_t>>> by_stage(
      static_cast<std::size_t>(pipeline_));
  for (std::int32_t rank = 0; rank < world_; ++rank) {
    const RankState& r = ranks_[static_cast<std::size_t>(rank)];
    const std::deque<Duration>& recent = recent_work_[static_cast<std::size_t>(rank)];
    if (static_cast<std::int64_t>(recent.size()) < detector.window) return false;
    Duration sum;
    for (const Duration d : recent) sum += d;
    by_stage[static_cast<std::size_t>(r.stage)].emplace_back(sum, rank);
  }
  std::optional<std::pair<double, std::int32_t>> worst;
  for (std::vector<std::pair<Duration, std::int32_t>>& stage : by_stage) {
    std::sort(stage.begin(), stage.end());
    const Duration median = stage[stage.size() / 2].first;
    if (median <= Duration()) continue;
    const auto& [slowest, rank] = stage.back();
    const double ratio = static_cast<double>(slowest.ps()) / static_cast<double>(median.ps());
    if (ratio > 1.0 + detector.threshold && (!worst || ratio > worst->first)) {
      worst = std::pair(ratio, rank);
    }
  }
  if (!worst) return false;
  const std::int32_t gpu = ranks_[static_cast<std::size_t>(worst->second)].gpu_index;
  const std::int32_t node = node_of_gpu(gpu);
  drain(node);
  char detail[200];
  std::snprintf(detail, sizeof detail,
                "rank %d (GPU %d) did %.2fx the median work of its stage over steps %lld-%lld; "
                "node drained",
                worst->second, gpu, worst->first,
                static_cast<long long>(step + 1 - detector.window), static_cast<long long>(step));
  log_.record("straggler_detector", sim_.now(), "node " + std::to_string(node), detail);
  incident_ = "straggler detector at " + format_rounded(sim_.now().since_start()) + ", node " +
              std::to_string(node) + ": " + detail;
  stop(JobOutcome::kNodeDrained);
  return true;
}

std::vector<std::int32_t> TrainingJob::Impl::never_arrived(const Queued& q) const {
  std::vector<std::int32_t> missing;
  const auto group = static_cast<std::int32_t>(q.key.group_and_kind >> 2);
  const std::vector<std::int32_t>& members = group_ranks_[static_cast<std::size_t>(group)];
  const Collective& c = *q.collective;
  for (std::size_t m = 0; m < members.size(); ++m) {
    const std::int32_t participant =
        communicators_->participant(group, static_cast<std::int32_t>(m));
    const std::vector<std::int32_t>& taking_part = c.participants();
    if (std::find(taking_part.begin(), taking_part.end(), participant) == taking_part.end()) {
      continue;
    }
    const bool lost =
        gpu_failed_[static_cast<std::size_t>(gpu_of_rank_[static_cast<std::size_t>(members[m])])] !=
        0;
    if (!c.arrived_at(participant) || lost) missing.push_back(members[m]);
  }
  return missing;
}

std::string TrainingJob::Impl::wait_description(const Queued& q) const {
  const Instruction& i = q.instruction;
  switch (i.kind) {
    case Instruction::Kind::kReceive:
      return std::string("pp recv ") + (i.forward ? "activations" : "gradients");
    case Instruction::Kind::kTensor:
      return std::string(communicator_name(q.communicator)) + " " + i.op->name.data();
    case Instruction::Kind::kGradientsReady:
      return std::string("dp ") + (i.forward
                                       ? "parameter_all_gather"
                                       : (config_.distributed_optimizer ? "gradient_reduce_scatter"
                                                                        : "gradient_all_reduce"));
    default:
      return "kernel";
  }
}

void TrainingJob::Impl::record_blocked_ranks() {
  for (std::int32_t rank = 0; rank < world_; ++rank) {
    const RankState& r = ranks_[static_cast<std::size_t>(rank)];
    const auto gpu = static_cast<std::size_t>(r.gpu_index);
    if (gpu_failed_[gpu] != 0) {
      blocked_.append(BlockedRankRow{rank, r.gpu_index, r.step, "", "failed GPU", -1,
                                     failed_at_[gpu]->ps(), ""});
      continue;
    }
    for (const Stream stream : {Stream::kCompute, Stream::kCommunication}) {
      const bool empty = stream == Stream::kCompute ? r.compute.empty() : r.communication.empty();
      if (empty) continue;
      const Queued& q = stream == Stream::kCompute ? r.compute.front() : r.communication.front();
      if (q.collective == nullptr) continue;
      const std::string missing = ranks_text(never_arrived(q));
      blocked_.append(BlockedRankRow{rank, r.gpu_index, r.step,
                                     stream == Stream::kCompute ? "compute" : "communication",
                                     std::string_view(wait_description(q)),
                                     static_cast<std::int64_t>(q.key.group_and_kind >> 2),
                                     q.joined.ps(), std::string_view(missing)});
    }
  }
}

void TrainingJob::Impl::drain(std::int32_t node) {
  node_drained_[static_cast<std::size_t>(node)] = 1;
  if (defences_.health_check.repair) {
    sim_.schedule<&Impl::repaired>(sim_.now() + *defences_.health_check.repair, this,
                                   static_cast<std::uint64_t>(node));
  }
}

void TrainingJob::Impl::repaired(std::uint64_t node) {
  // Its GPUs are replaced or reset, its NIC cables mended (by whoever failed them).
  node_drained_[node] = 0;
  const std::int32_t per_node = cluster_.gpus_per_node();
  for (std::int32_t g = 0; g < per_node; ++g) {
    const auto gpu = static_cast<std::size_t>(static_cast<std::int32_t>(node) * per_node + g);
    gpu_failed_[gpu] = 0;
    failed_at_[gpu].reset();
  }
  log_.record(
      "repair", sim_.now(), "node " + std::to_string(node),
      "back in the pool of idle nodes after " + format_rounded(*defences_.health_check.repair));
  if (on_node_repaired) on_node_repaired(static_cast<std::int32_t>(node));
}

void TrainingJob::Impl::halt() {
  Remains remains;
  for (RankState& r : ranks_) {
    if (!r.gpu) continue;
    r.gpu->fail();
    remains.gpus.push_back(std::move(r.gpu));
    remains.listeners.push_back(std::move(r.listener));
  }
  // A collective that had finished as the job stopped may still have ranks to report: nobody
  // listens any more (the ranks it would name may belong to the next attempt).
  for (auto& [key, point] : open_) {
    point.collective->abort();
    point.collective->when_rank_finished({});
    remains.collectives.push_back(std::move(point.collective));
  }
  for (std::unique_ptr<Collective>& c : closed_) {
    c->abort();
    c->when_rank_finished({});
    remains.collectives.push_back(std::move(c));
  }
  open_.clear();
  closed_.clear();
  closed_at_last_sweep_ = 0;
  remains.loader = std::move(loader_);
  remains_.push_back(std::move(remains));
  ++generation_;
  watchdog_armed_ = false;
  health_check_armed_ = false;
  network_error_.reset();
}

void TrainingJob::Impl::stop(JobOutcome outcome_if_not_restarted) {
  halt();
  ++attempt_;
  ++interruptions_;
  ++replayed_step_;
  step_in_flight_ = false;
  if (!defences_.restart.enabled) {
    end_as(outcome_if_not_restarted);
    return;
  }
  if (restarts_ == defences_.restart.max_restarts) {
    incident_ += "; not restarted: " + std::to_string(restarts_) + " restarts already";
    end_as(outcome_if_not_restarted);
    return;
  }
  ++restarts_;
  log_.record("restart", sim_.now(), "job",
              "restarting from the checkpoint of step " + std::to_string(checkpointed_steps_) +
                  " in " + format_rounded(defences_.restart.delay));
  sim_.schedule<&Impl::restart>(sim_.now() + defences_.restart.delay, this, generation_);
}

void TrainingJob::Impl::restart(std::uint64_t generation) {
  if (generation != generation_) return;
  restarting_ += defences_.restart.delay;
  const std::int32_t per_node = cluster_.gpus_per_node();
  const auto nodes = static_cast<std::int32_t>(node_drained_.size());
  std::vector<char> in_use(node_drained_.size(), 0);
  for (const std::int32_t gpu : gpu_of_rank_) {
    in_use[static_cast<std::size_t>(node_of_gpu(gpu))] = 1;
    // A GPU lost while the job was down is what the health checks of the restart delay find.
    const auto node = static_cast<std::size_t>(node_of_gpu(gpu));
    if (defences_.health_check.enabled && gpu_failed_[static_cast<std::size_t>(gpu)] != 0 &&
        node_drained_[node] == 0) {
      drain(static_cast<std::int32_t>(node));
      log_.record("health_check", sim_.now(), "node " + std::to_string(node),
                  "GPU " + std::to_string(gpu) + " lost while the job was down (" +
                      failure_cause_[static_cast<std::size_t>(gpu)] + "); node drained");
    }
  }
  // The drained nodes' ranks move, node by node, to the lowest idle healthy nodes.
  std::unordered_map<std::int32_t, std::int32_t> moved;  // drained node -> spare
  std::int32_t candidate = 0;
  std::vector<std::int32_t> placement = gpu_of_rank_;
  for (std::int32_t& gpu : placement) {
    const std::int32_t node = node_of_gpu(gpu);
    if (node_drained_[static_cast<std::size_t>(node)] == 0) continue;
    auto [it, added] = moved.try_emplace(node, -1);
    if (added) {
      while (candidate < nodes && (in_use[static_cast<std::size_t>(candidate)] != 0 ||
                                   node_drained_[static_cast<std::size_t>(candidate)] != 0)) {
        ++candidate;
      }
      if (candidate == nodes) {
        log_.record("restart", sim_.now(), "job",
                    "no healthy idle node left to replace node " + std::to_string(node));
        incident_ = "restart at " + format_rounded(sim_.now().since_start()) +
                    ": no healthy idle node left to replace node " + std::to_string(node);
        end_as(JobOutcome::kNoSpareNodes);
        return;
      }
      it->second = candidate;
      in_use[static_cast<std::size_t>(candidate)] = 1;
      log_.record("restart", sim_.now(), "node " + std::to_string(candidate),
                  "spare node " + std::to_string(candidate) + " replaces drained node " +
                      std::to_string(node));
    }
    gpu = it->second * per_node + gpu % per_node;
  }
  gpu_of_rank_ = std::move(placement);
  record_placement();
  lost_gpu_in_use_ = placement_has_lost_gpu();
  const std::int64_t restored = checkpointed_steps_;
  kept_step_time_.resize(static_cast<std::size_t>(restored));
  kept_checkpoint_stall_.resize(static_cast<std::size_t>(restored));
  steps_completed = restored;
  previous_step_end_ = sim_.now();
  log_.record(
      "restart", sim_.now(), "job",
      "attempt " + std::to_string(attempt_) + " starts at step " + std::to_string(restored));
  if (replaying_) {
    for (std::int32_t rank = 0; rank < world_; ++rank) {
      ranks_[static_cast<std::size_t>(rank)].gpu_index =
          gpu_of_rank_[static_cast<std::size_t>(rank)];
    }
    write_done_at_ = sim_.now();
    replay_next();
    return;
  }
  remains_.back().communicators = std::move(communicators_);
  communicators_ = std::make_unique<JobCommunicators>(sim_, cluster_, spec_, level_);
  group_ranks_.clear();
  make_ranks();
  build_groups();
  step_totals_.clear();
  checkpoint_writes_left_.clear();
  ranks_finished_ = 0;
  if (storage_) make_loader(restored);
  if (loader_) loader_->start();
  if (on_step_begins) on_step_begins(restored);
  for (std::int32_t rank = 0; rank < world_; ++rank) {
    ranks_[static_cast<std::size_t>(rank)].step = restored;
    begin_step(rank);
  }
}

void TrainingJob::Impl::end_as(JobOutcome result) {
  outcome = result;
  if (on_done) on_done();
}

bool TrainingJob::Impl::price_step(const TrainingStepRow& row, Duration checkpoint_stall) {
  if (checkpoint_stall == Duration()) {
    plain_steps_.push_back(Duration::ps(row.end_ps - row.start_ps));
    last_plain_row_ = row;
  }
  const std::size_t n = plain_steps_.size();
  const bool steady = n >= 2 && plain_steps_[n - 1] == plain_steps_[n - 2];
  if (!steady && steps_completed < static_cast<std::int64_t>(kMostPricingSteps)) return false;
  // A checkpoint still being written would be lost by the switch: wait for a step without one.
  if (n == 0 || std::any_of(node_writing_.begin(), node_writing_.end(), [](char w) { return w; })) {
    return false;
  }
  priced_step_ = plain_steps_.back();
  priced_row_ = last_plain_row_;
  if (config_.checkpoint.every > 0 && storage_) {
    Bytes largest;
    for (std::int32_t rank = 0; rank < world_; ++rank)
      largest = std::max(largest, checkpoint_bytes(rank));
    checkpoint_cost_ =
        price_checkpoint(storage_->spec(), checkpoint_bytes_by_node(), largest, config_.checkpoint);
  }
  // The ranks already in the next step stop where they are; the steps from there on are replayed.
  // A GPU lost meanwhile is found by the defences the replay arms.
  halt();
  replaying_ = true;
  lost_gpu_in_use_ = placement_has_lost_gpu();
  write_done_at_ = sim_.now();
  char detail[160];
  std::snprintf(detail, sizeof detail,
                "steps from %lld on replayed at %s each (checkpoint stall %s, write %s)",
                static_cast<long long>(steps_completed), format_rounded(priced_step_).c_str(),
                format_rounded(checkpoint_cost_.stall).c_str(),
                format_rounded(checkpoint_cost_.write).c_str());
  incident_ = detail;
  replay_next();
  return true;
}

void TrainingJob::Impl::replay_next() {
  if (steps_completed == steps) {
    end_as(JobOutcome::kCompleted);
    return;
  }
  const std::uint64_t generation = generation_;
  if (on_step_begins) on_step_begins(steps_completed);
  // A fault at this step may have stopped the job, or lost one of its GPUs.
  if (outcome != JobOutcome::kRunning || generation != generation_) return;
  if (lost_gpu_in_use_) {
    replay_blocked();
    return;
  }
  const Time end = sim_.now() + priced_step_;
  replayed_stall_ = Duration();
  const bool checkpoint = config_.checkpoint.every > 0 && storage_ &&
                          (steps_completed + 1) % config_.checkpoint.every == 0;
  if (checkpoint) {
    // An asynchronous checkpoint waits for the previous one's write before reusing its buffers.
    const Time start = std::max(end, write_done_at_);
    replayed_stall_ = (start - end) + checkpoint_cost_.stall;
    write_done_at_ = start + checkpoint_cost_.write;
    sim_.schedule<&Impl::replayed_checkpoint_written>(
        write_done_at_, this, generation_ << 32 | static_cast<std::uint64_t>(steps_completed));
  }
  step_in_flight_ = true;
  sim_.schedule<&Impl::replayed_step_done>(end + replayed_stall_, this, ++replayed_step_);
}

void TrainingJob::Impl::replayed_checkpoint_written(std::uint64_t generation_and_step) {
  if (generation_and_step >> 32 != generation_) return;
  checkpoint_written(static_cast<std::int64_t>(generation_and_step & 0xFFFF'FFFFU));
}

void TrainingJob::Impl::replayed_step_done(std::uint64_t step_token) {
  if (step_token != replayed_step_) return;
  step_in_flight_ = false;
  const Time start = previous_step_end_;
  previous_step_end_ = sim_.now();
  const Duration took = sim_.now() - start;
  const double scale = static_cast<double>(priced_row_.end_ps - priced_row_.start_ps) /
                       static_cast<double>(took.ps());
  last_step_ = TrainingStepRow{steps_completed,
                               static_cast<std::int64_t>(attempt_),
                               start.ps(),
                               sim_.now().ps(),
                               priced_row_.slowest_rank,
                               priced_row_.tokens_per_second * scale,
                               priced_row_.tflops_per_gpu * scale,
                               priced_row_.mfu * scale};
  steps_table_.append(last_step_);
  summed_steps_ += took;
  ++step_rows_;
  kept_step_time_.push_back(took);
  kept_checkpoint_stall_.push_back(replayed_stall_);
  ++steps_completed;
  replay_next();
}

void TrainingJob::Impl::lose_replayed_step(std::int32_t gpu) {
  // The step in flight never ends; a checkpoint being written goes on until the job is stopped.
  ++replayed_step_;
  step_in_flight_ = false;
  incident_ = "GPU " + std::to_string(gpu) + " lost in a replayed step at " +
              format_rounded(sim_.now().since_start());
  replay_blocked();
}

void TrainingJob::Impl::replay_blocked() {
  const Time now = sim_.now();
  // Whichever acts first stops the job; both are of this generation.
  if (defences_.health_check.enabled) {
    const std::int64_t interval = defences_.health_check.interval.ps();
    sim_.schedule<&Impl::health_check>(
        Time::zero() + Duration::ps((now.ps() / interval + 1) * interval), this, generation_);
  }
  if (defences_.watchdog.enabled) {
    // The ranks block within the collective under way, microseconds to milliseconds after the
    // loss: the watchdog sees the timeout at its first poll after that.
    sim_.schedule<&Impl::replay_watchdog>(next_watchdog_poll(now + defences_.watchdog.timeout),
                                          this, generation_);
  }
}

void TrainingJob::Impl::replay_watchdog(std::uint64_t generation) {
  if (generation != generation_ || outcome != JobOutcome::kRunning) return;
  std::vector<std::int32_t> lost;
  for (std::int32_t rank = 0; rank < world_; ++rank) {
    if (gpu_failed_[static_cast<std::size_t>(gpu_of_rank_[static_cast<std::size_t>(rank)])] != 0) {
      lost.push_back(rank);
    }
  }
  const std::string detail = "collective timeout in a replayed step (timeout " +
                             format_rounded(defences_.watchdog.timeout) +
                             "); never arrived or lost: " + ranks_text(lost);
  log_.record("watchdog", sim_.now(), "job", detail);
  incident_ = "watchdog at " + format_rounded(sim_.now().since_start()) + ": " + detail;
  stop(JobOutcome::kCollectiveTimeout);
}

Goodput TrainingJob::Impl::goodput() const {
  Goodput g;
  g.total = sim_.now().since_start();
  for (std::size_t s = 0; s < kept_step_time_.size(); ++s) {
    g.useful += kept_step_time_[s] - kept_checkpoint_stall_[s];
    g.checkpointing += kept_checkpoint_stall_[s];
  }
  g.restarting = restarting_;
  g.lost = g.total - g.useful - g.checkpointing - g.restarting;
  g.interruptions = interruptions_;
  g.steps_redone = step_rows_ - static_cast<std::int64_t>(kept_step_time_.size());
  return g;
}

void TrainingJob::Impl::declare_hung() {
  if (outcome != JobOutcome::kRunning) return;
  outcome = JobOutcome::kHung;
  record_blocked_ranks();
  std::int32_t waiting = 0, dead = 0;
  for (const RankState& r : ranks_) {
    if (gpu_failed_[static_cast<std::size_t>(r.gpu_index)] != 0) {
      ++dead;
    } else {
      ++waiting;
    }
  }
  const Wait oldest = oldest_wait();
  incident_ = "hang: nothing left could move the job; " + std::to_string(waiting) +
              " ranks blocked, " + std::to_string(dead) + " on failed GPUs (blocked_ranks table" +
              (replaying_ ? ", which for a replayed step lists the failed GPUs only)" : ")");
  if (oldest.rank >= 0) {
    const RankState& r = ranks_[static_cast<std::size_t>(oldest.rank)];
    const Queued& q =
        oldest.stream == Stream::kCompute ? r.compute.front() : r.communication.front();
    const std::string missing = ranks_text(never_arrived(q));
    incident_ += "; longest wait: rank " + std::to_string(oldest.rank) + " in " +
                 wait_description(q) + " since " + format_rounded(oldest.since.since_start()) +
                 (missing.empty() ? "" : ", never arrived or lost: " + missing);
  }
}

void TrainingJob::Impl::flush() {
  const Goodput g = goodput();
  goodput_.append(GoodputRow{g.total.ps(), g.useful.ps(), g.checkpointing.ps(), g.restarting.ps(),
                             g.lost.ps(), g.interruptions, g.steps_redone, g.share()});
  goodput_.flush();
  blocked_.flush();
  ops_.flush();
  rank_steps_.flush();
  steps_table_.flush();
  memory_.flush();
  placement_.flush();
}

TrainingJobSummary TrainingJob::Impl::summary() const {
  TrainingJobSummary s;
  s.steps_completed = steps_completed;
  s.out_of_memory = out_of_memory_;
  if (step_rows_ == 0) return s;
  s.mean_step = Duration::ps(summed_steps_.ps() / step_rows_);
  s.mfu = last_step_.mfu;
  s.tflops_per_gpu = last_step_.tflops_per_gpu;
  s.tokens_per_second = last_step_.tokens_per_second;
  s.slowest_rank = last_step_.slowest_rank;
  return s;
}

std::string TrainingJob::Impl::report() const {
  char line[512];
  const TransformerSpec& m = model_;
  const ParallelPlan& d = config_.parallelism;
  std::snprintf(line, sizeof line,
                "%d GPUs (%s): TP=%d CP=%d PP=%d DP=%d, %lld micro-batches of %lld per replica, "
                "%lld layers, hidden %lld, sequence %lld",
                world_, gpu_spec_.name.c_str(), d.tensor, d.context, d.pipeline, d.data,
                static_cast<long long>(micro_batches_), static_cast<long long>(config_.micro_batch),
                static_cast<long long>(m.layers), static_cast<long long>(m.hidden),
                static_cast<long long>(m.sequence));
  std::string report = line;
  if (out_of_memory_) {
    std::size_t worst = 0;
    std::int32_t over = 0;
    for (std::size_t r = 0; r < footprints_.size(); ++r) {
      if (footprints_[r].total() > gpu_spec_.hbm_capacity) ++over;
      if (footprints_[r].total() > footprints_[worst].total()) worst = r;
    }
    const MemoryFootprint& f = footprints_[worst];
    report += "\nout of memory: " + std::to_string(over) + " of " + std::to_string(world_) +
              " ranks need more than the " + format(gpu_spec_.hbm_capacity) + " of HBM; rank " +
              std::to_string(worst) + " needs " + format(f.total()) + " (weights " +
              format(f.weights) + ", gradients " + format(f.gradients) + ", optimizer state " +
              format(f.optimizer_state) + ", activations " + format(f.activations) +
              ", workspace " + format(f.workspace) + ")";
    return report;
  }
  const TrainingJobSummary s = summary();
  report += "\n" + std::to_string(s.steps_completed) + " of " + std::to_string(steps) + " steps";
  std::string incidents;
  if (outcome != JobOutcome::kRunning && outcome != JobOutcome::kCompleted) {
    incidents += "\njob outcome: " + std::string(job_outcome_name(outcome));
  }
  if (!incident_.empty()) incidents += "\n" + incident_;
  if (interruptions_ > 0) {
    const Goodput g = goodput();
    char figures[256];
    std::snprintf(figures, sizeof figures,
                  "\n%lld interruptions (%.2f per day), %lld steps redone; goodput %.1f%% (useful "
                  "%s, checkpointing %s, restarting %s, lost %s)",
                  static_cast<long long>(g.interruptions),
                  static_cast<double>(g.interruptions) / (g.total.seconds() / 86'400.0),
                  static_cast<long long>(g.steps_redone), 100 * g.share(),
                  format_rounded(g.useful).c_str(), format_rounded(g.checkpointing).c_str(),
                  format_rounded(g.restarting).c_str(), format_rounded(g.lost).c_str());
    incidents += figures;
  }
  if (step_rows_ == 0) return report + incidents;
  std::snprintf(
      line, sizeof line, ", step time %s, MFU %.1f%%, %.1f TFLOP/s per GPU, %.0f tokens/s",
      format_rounded(s.mean_step).c_str(), 100 * s.mfu, s.tflops_per_gpu, s.tokens_per_second);
  report += line;
  const TrainingRankStepRow& w = slowest_row_;
  const double total = static_cast<double>(w.end_ps - w.start_ps);
  auto share = [total](std::int64_t part) { return 100.0 * static_cast<double>(part) / total; };
  std::snprintf(line, sizeof line,
                "\nlast step of the slowest rank (%lld): compute %.1f%%, TP %.1f%%, CP %.1f%%, "
                "PP %.1f%%, DP %.1f%%, bubble %.1f%%, data %.1f%%, checkpoint %.1f%%, waiting "
                "for others %.1f%%",
                static_cast<long long>(w.rank), share(w.compute_ps), share(w.tp_comm_ps),
                share(w.cp_comm_ps), share(w.pp_comm_ps), share(w.dp_comm_ps), share(w.bubble_ps),
                share(w.data_wait_ps), share(w.checkpoint_ps), share(w.wait_for_others_ps));
  report += line;
  return report + incidents;
}

TrainingJob::TrainingJob(Simulator& sim, const TrainingJobConfig& config, Cluster& cluster,
                         const ClusterSpec& spec, NetworkModel level, RecordBackend& output,
                         const JobDefences& defences, DefenceLog& log)
    : impl_(std::make_unique<Impl>(sim, config, cluster, spec, level, output, defences, log)) {}

TrainingJob::~TrainingJob() = default;

void TrainingJob::start() { impl_->start(); }
void TrainingJob::when_done(std::function<void()> callback) {
  impl_->on_done = std::move(callback);
}
void TrainingJob::flush() { impl_->flush(); }
std::int64_t TrainingJob::steps_completed() const { return impl_->steps_completed; }
double TrainingJob::progress() const {
  return static_cast<double>(impl_->steps_completed) / static_cast<double>(impl_->steps);
}
TrainingJobSummary TrainingJob::summary() const { return impl_->summary(); }
void TrainingJob::set_gpu_clock(std::int32_t gpu, ClockFactor clock) {
  impl_->set_gpu_clock(gpu, clock);
}
void TrainingJob::fail_gpu(std::int32_t gpu, const std::string& cause) {
  impl_->fail_gpu(gpu, cause);
}
void TrainingJob::when_step_begins(std::function<void(std::int64_t)> callback) {
  impl_->on_step_begins = std::move(callback);
}
const std::vector<std::int32_t>& TrainingJob::gpus_in_use() const { return impl_->gpus_in_use(); }
void TrainingJob::when_node_repaired(std::function<void(std::int32_t)> callback) {
  impl_->on_node_repaired = std::move(callback);
}
JobOutcome TrainingJob::outcome() const { return impl_->outcome; }
SharedStorage* TrainingJob::storage() { return impl_->storage(); }
Goodput TrainingJob::goodput() const { return impl_->goodput(); }
void TrainingJob::declare_hung() { impl_->declare_hung(); }

const char* job_outcome_name(JobOutcome outcome) {
  switch (outcome) {
    case JobOutcome::kRunning:
      return "running";
    case JobOutcome::kCompleted:
      return "completed";
    case JobOutcome::kOutOfMemory:
      return "out_of_memory";
    case JobOutcome::kHung:
      return "hang";
    case JobOutcome::kCollectiveTimeout:
      return "collective_timeout";
    case JobOutcome::kNetworkError:
      return "network_error";
    case JobOutcome::kNodeDrained:
      return "node_drained";
    case JobOutcome::kNoSpareNodes:
      return "no_spare_nodes";
  }
  return "";
}
std::string TrainingJob::report() const { return impl_->report(); }

}  // namespace lockstep
