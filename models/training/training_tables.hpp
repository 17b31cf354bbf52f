// The tables a training job records (analysis/hdf5_schema.md): every op of the recorded ranks and
// steps (rank_ops), where each rank's step went (rank_steps), each step as a whole (steps), and
// each rank's HBM footprint (rank_memory). Times in picoseconds, sizes in bytes.
#pragma once

#include <cstdint>

#include "sim/core/table.hpp"

namespace lockstep {

struct TrainingOpRow {
  std::int64_t rank;
  std::int64_t step;
  std::int64_t attempt;
  std::int64_t micro_batch;  // -1: not of one micro-batch (optimizer, gradient buckets)
  std::int64_t stage;
  std::int64_t layer;  // -1: not of one layer (embedding, head, optimizer, pipeline transfers)
  FixedText<16> stream;
  FixedText<16> kind;
  FixedText<32> name;
  std::int64_t start_ps;
  std::int64_t end_ps;
  std::int64_t waited_ps;  // a collective: for members to join; a receive: for the sender
  std::int64_t flops;
  std::int64_t bytes;
  FixedText<8> communicator;  // tp, cp, pp, dp; empty for kernels
  // The communicator group and its operation's number in it: the same pair on every member.
  std::int64_t group;     // -1 for kernels
  std::int64_t sequence;  // -1 for kernels
};

// Which GPU each rank ran on, from the start and again after each restart onto spare nodes.
struct RankPlacementRow {
  std::int64_t attempt;
  std::int64_t rank;
  std::int64_t gpu;
  std::int64_t node;
};

// A rank's step, split so that the parts add up to end - start.
struct TrainingRankStepRow {
  std::int64_t rank;
  std::int64_t step;
  std::int64_t attempt;
  std::int64_t start_ps;
  std::int64_t end_ps;
  std::int64_t compute_ps;          // kernels on the compute stream
  std::int64_t tp_comm_ps;          // tensor-parallel collectives, once every member was in
  std::int64_t cp_comm_ps;          // context-parallel collectives, likewise
  std::int64_t pp_comm_ps;          // pipeline receives, once the sender had sent
  std::int64_t dp_comm_ps;          // gradient and parameter synchronization not hidden
  std::int64_t bubble_ps;           // pipeline receives waiting for the sending stage
  std::int64_t data_wait_ps;        // waiting for the batch
  std::int64_t checkpoint_ps;       // stalled by a checkpoint
  std::int64_t wait_for_others_ps;  // in TP/CP collectives, for members that had not arrived
  std::int64_t other_ps;            // the rest (none unless a stream idles between ops)
};

struct TrainingStepRow {
  std::int64_t step;
  std::int64_t attempt;  // 0, then 1 after the first restart (which may redo steps)
  std::int64_t start_ps;
  std::int64_t end_ps;
  std::int64_t slowest_rank;
  double tokens_per_second;
  double tflops_per_gpu;  // the FLOPs the kernels counted (recomputation included), per second
  double mfu;             // model FLOPs (without recomputation) over the GPUs' dense peak
};

struct TrainingMemoryRow {
  std::int64_t rank;
  std::int64_t stage;
  std::int64_t weights_bytes;
  std::int64_t gradients_bytes;
  std::int64_t optimizer_bytes;
  std::int64_t activations_bytes;
  std::int64_t workspace_bytes;
  std::int64_t total_bytes;
  std::int64_t capacity_bytes;
  std::int64_t fits;  // 1 when total <= capacity
};

// A rank of a hung or timed-out job: what it waits in, since when, and for whom.
struct BlockedRankRow {
  std::int64_t rank;
  std::int64_t gpu;
  std::int64_t step;
  FixedText<16> stream;
  FixedText<32> waiting_in;  // "tp reduce_scatter", "pp recv activations", "kernel", "failed GPU"
  std::int64_t group;        // the communicator's id (-1 for a kernel or a failed GPU)
  std::int64_t since_ps;
  FixedText<120> never_arrived;  // job ranks of the communicator that never joined
};

struct GoodputRow {
  std::int64_t total_ps;
  std::int64_t useful_ps;
  std::int64_t checkpointing_ps;
  std::int64_t restarting_ps;
  std::int64_t lost_ps;
  std::int64_t interruptions;
  std::int64_t steps_redone;
  double goodput;  // useful / total
};

[[nodiscard]] TableLayout training_op_layout();
[[nodiscard]] TableLayout rank_placement_layout();
[[nodiscard]] TableLayout blocked_rank_layout();
[[nodiscard]] TableLayout goodput_layout();
[[nodiscard]] TableLayout training_rank_step_layout();
[[nodiscard]] TableLayout training_step_layout();
[[nodiscard]] TableLayout training_memory_layout();

}  // namespace lockstep
