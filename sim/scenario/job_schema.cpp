#include "sim/scenario/job_schema.hpp"

#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

namespace lockstep {
namespace {

// Sizes up to a million: beyond any model trained, and small enough that products of them stay
// far from overflowing the counts derived from them.
constexpr std::int64_t kLargestSize = 1'000'000;
// Ranks per parallel dimension: the largest cluster lockstep lays out has 2^24 GPUs.
constexpr std::int32_t kLargestDimension = 1 << 24;

Schema<ModelConfig> model_schema() {
  using M = ModelConfig;
  std::string presets;
  for (const TransformerPreset& p : transformer_presets()) {
    presets += (presets.empty() ? "" : ", ") + std::string(p.name);
  }
  Schema<M> s;
  s.value("preset", &M::preset, "llama2-70b", "a published model's shape: " + presets)
      .value("layers", &M::layers, std::nullopt, "transformer layers (default: the preset's)",
             between<std::int64_t>(1, kLargestSize))
      .value("hidden", &M::hidden, std::nullopt, "hidden size",
             between<std::int64_t>(1, kLargestSize))
      .value("heads", &M::heads, std::nullopt, "attention heads",
             between<std::int64_t>(1, kLargestSize))
      .value("kv_heads", &M::kv_heads, std::nullopt,
             "key/value heads (fewer than heads: grouped-query attention)",
             between<std::int64_t>(1, kLargestSize))
      .value("ffn_hidden", &M::ffn_hidden, std::nullopt, "MLP inner size",
             between<std::int64_t>(1, kLargestSize))
      .value("vocabulary", &M::vocabulary, std::nullopt, "vocabulary size",
             between<std::int64_t>(1, 100 * kLargestSize))
      .value("sequence", &M::sequence, std::nullopt, "tokens per sample",
             between<std::int64_t>(1, kLargestSize))
      .choice("data_type", &M::data_type,
              {{"bf16", DataType::kBf16}, {"fp16", DataType::kFp16}, {"fp8", DataType::kFp8}},
              "bf16", "the GEMMs' type (fp8 as Transformer Engine runs it; not on A100)")
      .check([](const M& m, const Schema<M>::Checker& report) {
        if (!transformer_preset(m.preset)) {
          report.error("preset", "no preset '" + m.preset + "'");
          return;
        }
        // The shape as the preset and the keys given make it: the key blamed is the one given.
        const TransformerSpec spec = transformer_of(m);
        if (spec.heads > 0 && spec.hidden % spec.heads != 0) {
          report.error(m.hidden ? "hidden" : "heads",
                       std::to_string(spec.heads) +
                           " attention heads do not divide the hidden size " +
                           std::to_string(spec.hidden));
        }
        if (spec.kv_heads > 0 && spec.heads % spec.kv_heads != 0) {
          report.error(m.kv_heads ? "kv_heads" : "heads",
                       std::to_string(spec.kv_heads) + " KV heads do not divide the " +
                           std::to_string(spec.heads) + " attention heads");
        }
      });
  return s;
}

Schema<ParallelPlan> parallelism_schema() {
  using P = ParallelPlan;
  Schema<P> s;
  s.value("tensor", &P::tensor, "8", "tensor-parallel size (TP)",
          between<std::int32_t>(1, kLargestDimension))
      .value("context", &P::context, "1", "context-parallel size (CP)",
             between<std::int32_t>(1, kLargestDimension))
      .value("data", &P::data, "8", "data-parallel size (DP)",
             between<std::int32_t>(1, kLargestDimension))
      .value("pipeline", &P::pipeline, "4", "pipeline-parallel size (PP)",
             between<std::int32_t>(1, kLargestDimension))
      .value("virtual_stages", &P::virtual_stages, "1",
             "model chunks per pipeline stage (the interleaved schedule's v)",
             between<std::int32_t>(1, 1024))
      .value("sequence_parallel", &P::sequence_parallel, "true",
             "sequence parallelism: TP's all-reduces become reduce-scatter + all-gather")
      .value("order", &P::order, "tp-cp-ep-dp-pp",
             "Megatron's rank order, fastest-varying first: which ranks are neighbours (and so "
             "share a node)");
  return s;
}

Schema<SlowGpu> slow_gpu_schema() {
  Schema<SlowGpu> s;
  s.value("rank", &SlowGpu::rank, std::nullopt, "the job rank whose GPU is slow",
          at_least<std::int64_t>(0))
      .value("clock", &SlowGpu::clock, std::nullopt,
             "its SM clock as a share of full, e.g. 80% (a thermally throttled GPU)",
             fraction_above_zero());
  return s;
}

Schema<StorageSpec> storage_schema() {
  Schema<StorageSpec> s;
  s.value("aggregate", &StorageSpec::aggregate, "400GB/s",
          "what the parallel file system delivers in total", above(BitRate::bps(0)))
      .value("per_node", &StorageSpec::per_node, "25GB/s", "one node's client limit",
             above(BitRate::bps(0)))
      .value("latency", &StorageSpec::latency, "1ms", "per request, before data flows",
             at_least(Duration()));
  return s;
}

Schema<DataLoading> data_schema() {
  Schema<DataLoading> s;
  s.value("bytes_per_sample", &DataLoading::bytes_per_sample, std::nullopt,
          "what reading one sample costs (e.g. sequence x 4B for pre-tokenized data)",
          at_least(Bytes()))
      .value("cache_hit", &DataLoading::cache_hit, "0%",
             "share of bytes served from the node's local NVMe cache", between(0.0, 1.0))
      .value("cache_rate", &DataLoading::cache_rate, "6GB/s", "local NVMe read bandwidth per node",
             above(BitRate::bps(0)))
      .value("prefetch", &DataLoading::prefetch, "2", "batches read ahead (0: on demand)",
             between<std::int32_t>(0, 1024));
  return s;
}

Schema<CheckpointConfig> checkpoint_schema() {
  Schema<CheckpointConfig> s;
  s.value("every", &CheckpointConfig::every, "0", "steps between checkpoints (0: none)",
          at_least<std::int64_t>(0))
      .choice("mode", &CheckpointConfig::mode,
              {{"async", CheckpointMode::kAsynchronous}, {"sync", CheckpointMode::kSynchronous}},
              "async",
              "sync: every rank stalls for the write; async: for the copy to host memory, then "
              "the write shares the file system in the background")
      .value("host_copy", &CheckpointConfig::host_copy, "50GB/s",
             "device-to-host copy per GPU (async)", above(BitRate::bps(0)));
  return s;
}

Schema<OpRecording> recording_schema() {
  Schema<OpRecording> s;
  s.value("steps", &OpRecording::steps, "1", "record every op of this many first steps",
          at_least<std::int64_t>(0))
      .rank_list("ranks", &OpRecording::ranks, "of these job ranks (default: every rank)");
  return s;
}

// A lower bound of the job's simulated length in seconds, when it passes the picosecond clock's
// range (with room to spare for everything but the FLOPs): every GPU at 2 PFLOP/s, above any
// GPU's dense peak, doing only the model's FLOPs.
std::optional<double> too_long(const TrainingJobConfig& job, std::int64_t world) {
  std::optional<TransformerSpec> model;
  try {
    model = transformer_of(job.model);
    validate_transformer(*model);
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // reported at the model's keys
  }
  constexpr double kFastestGpu = 2e15;
  const double step = static_cast<double>(model_sample_flops(*model).count()) *
                      static_cast<double>(job.global_batch) /
                      (static_cast<double>(world) * kFastestGpu);
  const double total = step * static_cast<double>(job.steps);
  constexpr double kLongestSeconds = 9.2e6;  // 2^63 ps
  if (!(total < kLongestSeconds / 2)) return total;
  return std::nullopt;
}

}  // namespace

Schema<TrainingJobConfig> job_schema() {
  using Job = TrainingJobConfig;
  Schema<Job> s;
  s.section("model", &Job::model, model_schema(), "the dense transformer trained")
      .section("parallelism", &Job::parallelism, parallelism_schema(),
               "how the model is split over GPUs")
      .value("global_batch", &Job::global_batch, "512", "samples per step",
             between<std::int64_t>(1, 1'000'000'000))
      .value("micro_batch", &Job::micro_batch, "1", "samples per micro-batch",
             between<std::int64_t>(1, 1'000'000))
      .choice("schedule", &Job::schedule,
              {{"1f1b", PipelineSchedule::kOneFOneB},
               {"interleaved", PipelineSchedule::kInterleaved},
               {"gpipe", PipelineSchedule::kGpipe}},
              "1f1b", "the pipeline schedule (interleaved needs parallelism.virtual_stages > 1)")
      .choice("recompute", &Job::recompute,
              {{"none", Recompute::kNone},
               {"selective", Recompute::kSelective},
               {"full", Recompute::kFull}},
              "none", "activation recomputation")
      .value("distributed_optimizer", &Job::distributed_optimizer, "true",
             "shard optimizer state over data-parallel ranks: reduce-scatter gradients, "
             "all-gather parameters")
      .value("overlap_grad_reduce", &Job::overlap_grad_reduce, "true",
             "reduce each gradient bucket as soon as backward has produced it")
      .value("bucket_parameters", &Job::bucket_parameters, std::nullopt,
             "gradients per bucket (default: Megatron's max(40M, 1M x data-parallel size))",
             at_least<std::int64_t>(1))
      .value("steps", &Job::steps, "3", "training steps to run", at_least<std::int64_t>(1))
      .words_or_ranks(
          "placement", &Job::placement, &Job::placement_gpus,
          {{"packed", PlacementKind::kPacked}, {"scattered", PlacementKind::kScattered}},
          PlacementKind::kExplicit, "packed",
          "packed: ranks fill nodes in order; scattered: round-robin over nodes, as "
          "a topology-blind scheduler; or the GPU of each rank")
      .list("slow_gpus", &Job::slow_gpus, slow_gpu_schema(), "GPUs running below full clock")
      .value("workspace", &Job::workspace, "4GiB",
             "HBM each GPU keeps beyond weights, gradients, optimizer state and activations",
             at_least(Bytes()))
      .optional_section("storage", &Job::storage, storage_schema(),
                        "the shared parallel file system (data and checkpoints)")
      .optional_section("data", &Job::data, data_schema(),
                        "each step's batch read from `storage` (default: no data wait)")
      .section("checkpoint", &Job::checkpoint, checkpoint_schema(), "checkpoints to `storage`")
      .section("record_ops", &Job::record_ops, recording_schema(),
               "which ops the rank_ops table holds")
      .value("reuse_steady_step", &Job::reuse_steady_step, "false",
             "once two steps in a row take the same time, run the rest at that time, one event "
             "each, through failures and restarts (exact while nothing changes a step; only "
             "faults that lose GPUs may run with it)")
      .check([](const Job& job, const Schema<Job>::Checker& report) {
        if (job.data && !job.storage) {
          report.error("data", "reads from a file system: add job.storage");
        }
        if (job.checkpoint.every > 0 && !job.storage) {
          report.error("checkpoint.every", "writes to a file system: add job.storage");
        }
        const std::int64_t world = std::int64_t{job.parallelism.tensor} * job.parallelism.context *
                                   job.parallelism.data * job.parallelism.pipeline;
        if (world > kLargestDimension) {
          report.error("parallelism", std::to_string(world) +
                                          " GPUs: more than lockstep lays out (" +
                                          std::to_string(kLargestDimension) + ")");
        }
        if (const std::optional<double> seconds = too_long(job, world)) {
          char line[200];
          std::snprintf(line, sizeof line,
                        "%.3g s of steps at least (the model's FLOPs at 2 PFLOP/s per GPU): the "
                        "run would pass the longest simulated time, about 106 days",
                        *seconds);
          report.error("steps", line);
        }
        for (std::size_t i = 0; i < job.slow_gpus.size(); ++i) {
          if (job.slow_gpus[i].rank >= world) {
            report.error("slow_gpus[" + std::to_string(i) + "].rank",
                         "rank " + std::to_string(job.slow_gpus[i].rank) + " does not exist (" +
                             std::to_string(world) + " ranks)");
          }
        }
        if (job.schedule == PipelineSchedule::kInterleaved && job.parallelism.virtual_stages < 2) {
          report.error("schedule", "interleaved needs parallelism.virtual_stages of 2 or more");
        }
        if (job.schedule != PipelineSchedule::kInterleaved && job.parallelism.virtual_stages != 1) {
          report.error("parallelism.virtual_stages",
                       "only the interleaved schedule has model chunks");
        }
      });
  return s;
}

}  // namespace lockstep
