#include "models/training/memory_footprint.hpp"

#include <stdexcept>

namespace lockstep {
namespace {

// Megatron-LM's distributed-optimizer documentation, bf16 weights with fp32 gradients.
constexpr std::int64_t kWeightBytes = 2;
constexpr std::int64_t kGradientBytes = 4;
constexpr std::int64_t kOptimizerBytes = 12;  // fp32 master weight and two Adam moments
constexpr std::int64_t kFp32Bytes = 4;
// Korthikanti et al.: softmax output, dropout mask and dropout output per attention score; the
// softmax output alone without attention dropout.
constexpr std::int64_t kScoreBytesWithDropout = 5;
constexpr std::int64_t kScoreBytesWithoutDropout = 2;

std::int64_t divided(std::int64_t what, std::int64_t by, const char* message) {
  if (by < 1 || what % by != 0) throw std::invalid_argument(message);
  return what / by;
}

// One micro-batch's sizes on one rank.
struct Shard {
  Shard(const TransformerSpec& spec, const FootprintPlan& plan) {
    validate_transformer(spec);
    if (plan.micro_batch < 1) throw std::invalid_argument("the micro-batch is at least 1");
    const std::int64_t tp = plan.tensor_parallel;
    w = tensor_parallel_widths(spec, tp);
    const bool sp = plan.sequence_parallel && tp > 1;
    rank_sequence = context_parallel_tokens(spec, plan.context_parallel, tp, sp);
    tokens = plan.micro_batch * rank_sequence;
    norm_tokens = sp ? tokens / tp : tokens;
    e = element_bytes(spec.type == DataType::kFp8 ? DataType::kBf16 : spec.type);
  }

  TensorParallelWidths w;
  std::int64_t rank_sequence = 0, tokens = 0, norm_tokens = 0;
  std::int64_t e = 2;
};

// What a layer stores when nothing is recomputed (scores only when attention materializes them).
Bytes stored_layer(const TransformerSpec& spec, const FootprintPlan& plan, const Shard& shard,
                   bool keep_scores) {
  const std::int64_t masks = spec.dropout ? 2 : 0;
  const std::int64_t norm_region = shard.norm_tokens * spec.hidden * (4 * shard.e + masks);
  const std::int64_t gathered_kv =
      plan.micro_batch * spec.sequence * 2 * shard.w.kv_width * shard.e;
  const std::int64_t tp_region =
      shard.tokens * (2 * shard.w.q_width + shard.w.fc1 + shard.w.ffn) * shard.e + gathered_kv;
  const std::int64_t score_bytes =
      spec.dropout ? kScoreBytesWithDropout : kScoreBytesWithoutDropout;
  const std::int64_t scores = keep_scores ? shard.w.heads * plan.micro_batch * shard.rank_sequence *
                                                spec.sequence * score_bytes
                                          : 0;
  return Bytes(norm_region + tp_region + scores);
}

bool keeps_scores(const FootprintPlan& plan) {
  return !plan.flash_attention && plan.recompute == Recompute::kNone;
}

}  // namespace

Bytes MemoryFootprint::total() const {
  return weights + gradients + optimizer_state + activations + workspace;
}

Bytes layer_activations(const TransformerSpec& spec, const FootprintPlan& plan) {
  const Shard shard(spec, plan);
  if (plan.recompute == Recompute::kFull) return Bytes(shard.norm_tokens * spec.hidden * shard.e);
  return stored_layer(spec, plan, shard, keeps_scores(plan));
}

MemoryFootprint rank_footprint(const TransformerSpec& spec, const FootprintPlan& plan,
                               std::int32_t stage) {
  const Shard shard(spec, plan);
  if (plan.pipeline_parallel < 1 || plan.virtual_stages < 1 || plan.data_parallel < 1 ||
      plan.context_parallel < 1 || plan.in_flight_micro_batches < 1) {
    throw std::invalid_argument("parallel sizes and in-flight micro-batches are at least 1");
  }
  if (stage < 0 || stage >= plan.pipeline_parallel) {
    throw std::invalid_argument("the stage is outside the pipeline");
  }
  const std::int64_t chunk_layers =
      divided(spec.layers, std::int64_t{plan.pipeline_parallel} * plan.virtual_stages,
              "pipeline stages x virtual stages divide the layers");
  const std::int64_t stage_layers = chunk_layers * plan.virtual_stages;
  const bool first = stage == 0;
  const bool last = stage == plan.pipeline_parallel - 1;

  std::int64_t parameters = stage_layers * layer_parameters(spec, plan.tensor_parallel);
  if (first) parameters += embedding_parameters(spec, plan.tensor_parallel);
  if (last) {
    parameters += output_layer_parameters(spec, plan.tensor_parallel) + final_norm_parameters(spec);
    if (spec.tied_embeddings && plan.pipeline_parallel > 1) {
      parameters += shard.w.vocabulary * spec.hidden;  // the last stage's copy of the embedding
    }
  }
  const std::int64_t sharing_ranks = std::int64_t{plan.data_parallel} * plan.context_parallel;
  const std::int64_t optimizer_bytes =
      plan.distributed_optimizer
          ? (kOptimizerBytes * parameters + sharing_ranks - 1) / sharing_ranks
          : kOptimizerBytes * parameters;

  Bytes activations = layer_activations(spec, plan) * (plan.in_flight_micro_batches * chunk_layers);
  if (plan.recompute == Recompute::kFull) {
    activations += stored_layer(spec, plan, shard, !plan.flash_attention);
  }
  const std::int64_t norm_region = shard.norm_tokens * spec.hidden;
  if (first && spec.dropout) activations += Bytes(norm_region * plan.in_flight_micro_batches);
  if (last) {
    activations +=
        Bytes(2 * norm_region * shard.e + shard.tokens * shard.w.vocabulary * kFp32Bytes);
  }
  return MemoryFootprint{.weights = Bytes(kWeightBytes * parameters),
                         .gradients = Bytes(kGradientBytes * parameters),
                         .optimizer_state = Bytes(optimizer_bytes),
                         .activations = activations,
                         .workspace = plan.workspace};
}

}  // namespace lockstep
