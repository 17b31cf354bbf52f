// What a scenario's `job` says of a training job (scenarios/README.md): the model, how it is split
// over GPUs (Megatron-LM's tensor, context, data and pipeline parallelism), the batch and the
// schedule, how gradients are synchronized, where ranks go, where the data comes from, how often
// checkpoints are written, and which of its ops are recorded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/training/data_loader.hpp"
#include "models/training/layer_ops.hpp"
#include "models/training/pipeline_schedule.hpp"
#include "models/training/rank_layout.hpp"
#include "models/training/shared_storage.hpp"
#include "models/training/transformer.hpp"
#include "sim/core/bit_rate.hpp"
#include "sim/core/bytes.hpp"

namespace lockstep {

// The model: a named preset (transformer.hpp), each of whose sizes the scenario may override.
struct ModelConfig {
  std::string preset = "llama2-70b";
  std::optional<std::int64_t> layers, hidden, heads, kv_heads, ffn_hidden, vocabulary, sequence;
  DataType data_type = DataType::kBf16;
};

// Throws std::invalid_argument for an unknown preset.
[[nodiscard]] TransformerSpec transformer_of(const ModelConfig& model);

// How the model is split (Megatron-LM's parallel dimensions) and how ranks are numbered.
struct ParallelPlan {
  std::int32_t tensor = 1, context = 1, data = 1, pipeline = 1;
  std::int32_t virtual_stages = 1;  // model chunks per stage, for the interleaved schedule
  bool sequence_parallel = true;
  std::string order = "tp-cp-ep-dp-pp";

  [[nodiscard]] ParallelDims dims() const {
    return ParallelDims{tensor, context, 1, data, pipeline};
  }
};

// A GPU whose SMs run below their clock for the whole run (a thermally throttled part).
struct SlowGpu {
  std::int64_t rank = 0;
  double clock = 1.0;  // of the full clock, in (0, 1]
};

enum class CheckpointMode : std::uint8_t { kSynchronous, kAsynchronous };

struct CheckpointConfig {
  std::int64_t every = 0;  // steps between checkpoints; 0: none
  CheckpointMode mode = CheckpointMode::kAsynchronous;
  // Device-to-host copy per GPU, which an asynchronous checkpoint stalls for (pinned memory over
  // PCIe Gen5 x16, whose 64 GB/s line rate copies reach about 50 GB/s of).
  BitRate host_copy = BitRate::gbps(400);
};

struct OpRecording {
  std::int64_t steps = 1;           // the first this many steps
  std::vector<std::int32_t> ranks;  // empty: every rank
};

struct TrainingJobConfig {
  ModelConfig model;
  ParallelPlan parallelism;
  bool distributed_optimizer = true;
  std::int64_t global_batch = 0;
  std::int64_t micro_batch = 1;
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  Recompute recompute = Recompute::kNone;
  bool overlap_grad_reduce = true;
  // Gradients per DDP bucket; empty: Megatron's default, max(40M, 1M x data-parallel size)
  // parameters (megatron-core DistributedDataParallel).
  std::optional<std::int64_t> bucket_parameters;
  std::int64_t steps = 1;
  PlacementKind placement = PlacementKind::kPacked;
  std::vector<std::int32_t> placement_gpus;  // kExplicit
  std::vector<SlowGpu> slow_gpus;
  Bytes workspace = Bytes(std::int64_t{4} << 30);  // HBM kept for cuBLAS, NCCL, fragmentation
  std::optional<StorageSpec> storage;
  std::optional<DataLoading> data;
  CheckpointConfig checkpoint;
  OpRecording record_ops;
  // Once two steps in a row take the same time, run every later step at that time as one event
  // (its checkpoint priced by the file system model alone), through failures and restarts: weeks
  // of a large job in minutes. Exact while nothing changes a step; faults other than lost GPUs
  // are refused with it.
  bool reuse_steady_step = false;
};

}  // namespace lockstep
