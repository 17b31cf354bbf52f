// A rank's HBM footprint: Korthikanti et al.'s activation formulas (Table 2) reproduced, the same
// terms by hand for a GQA SwiGLU model, model state per Megatron's distributed-optimizer table,
// pipeline stages, and whether Llama 2 70B fits on 80 GB GPUs under two plans.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <stdexcept>

#include "models/gpu/gpu_spec.hpp"
#include "models/training/memory_footprint.hpp"

namespace lockstep {
namespace {

// h 16, a 4, s 32: 5 a s / h = 40, and with b 2 s b h = 1024.
TransformerSpec gpt_for_table() {
  return TransformerSpec{.layers = 4,
                         .hidden = 16,
                         .heads = 4,
                         .kv_heads = 4,
                         .ffn_hidden = 64,
                         .vocabulary = 64,
                         .sequence = 32};
}

FootprintPlan plan(std::int32_t tp, bool sp, Recompute recompute, bool flash) {
  FootprintPlan p;
  p.tensor_parallel = tp;
  p.sequence_parallel = sp;
  p.recompute = recompute;
  p.micro_batch = 2;
  p.flash_attention = flash;
  return p;
}

TEST_CASE("Korthikanti et al.'s Table 2, s b h = 1024, 5 a s / h = 40, t = 2") {
  const TransformerSpec spec = gpt_for_table();
  const std::int64_t sbh = 1024;
  // No parallelism: s b h (34 + 5 a s / h).
  CHECK(layer_activations(spec, plan(1, false, Recompute::kNone, false)) == Bytes(sbh * 74));
  // Tensor parallel: s b h (10 + 24 / t + 5 a s / (h t)).
  CHECK(layer_activations(spec, plan(2, false, Recompute::kNone, false)) ==
        Bytes(sbh * (10 + 12 + 20)));
  // Tensor + sequence parallel: s b h (34 / t + 5 a s / (h t)).
  CHECK(layer_activations(spec, plan(2, true, Recompute::kNone, false)) == Bytes(sbh * (17 + 20)));
  // Selective recomputation drops the scores: s b h (10 + 24 / t), and 34 s b h / t with SP.
  CHECK(layer_activations(spec, plan(2, false, Recompute::kSelective, false)) == Bytes(sbh * 22));
  CHECK(layer_activations(spec, plan(2, true, Recompute::kSelective, false)) == Bytes(sbh * 17));
  // Full recomputation keeps the layer input, 2 s b h, sharded over t with SP.
  CHECK(layer_activations(spec, plan(1, false, Recompute::kFull, false)) == Bytes(2 * sbh));
  CHECK(layer_activations(spec, plan(2, true, Recompute::kFull, false)) == Bytes(sbh));
  // Flash attention never stores the scores either.
  CHECK(layer_activations(spec, plan(2, true, Recompute::kNone, true)) == Bytes(sbh * 17));
}

TEST_CASE("the same terms for grouped-query attention, SwiGLU and no dropout, by hand") {
  // h 16, 4 heads of 4, 2 KV heads (K, V 8 wide), SwiGLU of 32 (FC1 64 wide), s 32, b 1.
  TransformerSpec spec{.layers = 2,
                       .hidden = 16,
                       .heads = 4,
                       .kv_heads = 2,
                       .ffn_hidden = 32,
                       .gated_mlp = true,
                       .vocabulary = 64,
                       .sequence = 32,
                       .tied_embeddings = false,
                       .linear_biases = false,
                       .rms_norm = true,
                       .learned_positions = false,
                       .dropout = false};
  FootprintPlan p;
  // Norm region: two norm inputs, QKV and FC1 inputs, 4 x 16 x 2 bytes a token, no masks: 32 x
  // 128. TP region per token: Q 16 and the projection's input 16, FC1's output 64, FC2's input
  // 32, 2 bytes each: 256; K and V: 2 x 8 x 2 = 32.
  CHECK(layer_activations(spec, p) == Bytes(32 * 128 + 32 * 256 + 32 * 32));
  // CP 2: 16 tokens a rank, but K and V of all 32 kept for attention's backward.
  p.context_parallel = 2;
  CHECK(layer_activations(spec, p) == Bytes(16 * 128 + 16 * 256 + 32 * 32));
}

TEST_CASE("model state: 18 bytes a parameter, 6 + 12 / d with the distributed optimizer") {
  const TransformerSpec spec = gpt_for_table();
  FootprintPlan p = plan(2, true, Recompute::kNone, true);
  p.pipeline_parallel = 2;
  p.data_parallel = 4;
  // A TP-2 layer: (12 h^2 + 7 h) / 2 + 6 h = 1688; the embedding's 32 words and 32 positions of 16.
  const std::int64_t first = 2 * 1688 + 32 * 16 + 32 * 16;
  // The last stage: the final LayerNorm and its copy of the tied word embeddings.
  const std::int64_t last = 2 * 1688 + 2 * 16 + 32 * 16;
  const MemoryFootprint stage0 = rank_footprint(spec, p, 0);
  CHECK(stage0.weights == Bytes(2 * first));
  CHECK(stage0.gradients == Bytes(4 * first));
  CHECK(stage0.optimizer_state == Bytes(12 * first));
  CHECK(rank_footprint(spec, p, 1).weights == Bytes(2 * last));
  p.distributed_optimizer = true;
  CHECK(rank_footprint(spec, p, 0).optimizer_state == Bytes(12 * first / 4));
  CHECK(rank_footprint(spec, p, 1).optimizer_state == Bytes(12 * last / 4));
  // CP ranks hold the same weights, so the optimizer shards over DP x CP.
  p.context_parallel = 2;
  CHECK(rank_footprint(spec, p, 0).optimizer_state == Bytes(12 * first / 8));
  CHECK(rank_footprint(spec, p, 0).weights == Bytes(2 * first));
}

TEST_CASE("activations of the stages of a 1F1B pipeline") {
  const TransformerSpec spec = gpt_for_table();  // 4 layers, V 64
  FootprintPlan p = plan(2, true, Recompute::kNone, true);
  p.pipeline_parallel = 2;
  p.workspace = Bytes(1000);
  const std::int64_t layer = 17 * 1024;  // 34 s b h / t
  const std::int64_t mask = 32 * 16;     // the embedding's dropout mask, s b h / t bytes
  // Stage 0 holds 2 micro-batches of its 2 layers, and their embedding masks.
  p.in_flight_micro_batches = 2;
  const MemoryFootprint stage0 = rank_footprint(spec, p, 0);
  CHECK(stage0.activations == Bytes(2 * 2 * layer + 2 * mask));
  CHECK(stage0.total() == stage0.weights + stage0.gradients + stage0.optimizer_state +
                              stage0.activations + Bytes(1000));
  // Stage 1 holds 1, plus the final norm's and logits' inputs (2 x 32 x 16 x 2 bytes) and the
  // fp32 softmax of 64 tokens over its 32 words: 4 s b h / t (1 + V / h).
  p.in_flight_micro_batches = 1;
  CHECK(rank_footprint(spec, p, 1).activations == Bytes(2 * layer + 2 * 32 * 16 * 2 + 64 * 32 * 4));
  // Full recomputation: each layer's sharded input, plus one layer rebuilt in its backward.
  p.recompute = Recompute::kFull;
  p.in_flight_micro_batches = 2;
  CHECK(rank_footprint(spec, p, 0).activations == Bytes(2 * 2 * 1024 + layer + 2 * mask));
  // Interleaved, 2 chunks of 1 layer: 3 (micro-batch, chunk) pairs in flight.
  p.recompute = Recompute::kNone;
  p.virtual_stages = 2;
  p.in_flight_micro_batches = 3;
  CHECK(rank_footprint(spec, p, 0).activations == Bytes(3 * layer + 3 * mask));
}

TEST_CASE("plans the pipeline cannot hold are refused") {
  const TransformerSpec spec = gpt_for_table();
  FootprintPlan p;
  p.pipeline_parallel = 3;  // 4 layers
  CHECK_THROWS_AS((void)rank_footprint(spec, p, 0), std::invalid_argument);
  p.pipeline_parallel = 2;
  CHECK_THROWS_AS((void)rank_footprint(spec, p, 2), std::invalid_argument);
  CHECK_THROWS_AS((void)rank_footprint(spec, p, -1), std::invalid_argument);
  p.virtual_stages = 4;  // 8 chunks
  CHECK_THROWS_AS((void)rank_footprint(spec, p, 0), std::invalid_argument);
  p.virtual_stages = 1;
  p.tensor_parallel = 3;
  CHECK_THROWS_AS((void)rank_footprint(spec, p, 0), std::invalid_argument);
}

TEST_CASE("Llama 2 70B fits on 80 GB with TP 8, PP 4, DP 8; not with TP 1, PP 4, DP 64") {
  const std::optional<TransformerSpec> llama = transformer_preset("llama2-70b");
  const std::optional<GpuSpec> h100 = gpu_spec("h100");
  REQUIRE(llama.has_value());
  REQUIRE(h100.has_value());
  REQUIRE(llama->sequence == 4096);
  FootprintPlan p;
  p.tensor_parallel = 8;
  p.pipeline_parallel = 4;
  p.data_parallel = 8;
  p.sequence_parallel = true;
  p.distributed_optimizer = true;
  p.recompute = Recompute::kFull;
  p.micro_batch = 1;
  p.workspace = Bytes(8'000'000'000);  // a generous margin for libraries and fragmentation
  for (std::int32_t stage = 0; stage < 4; ++stage) {
    CAPTURE(stage);
    p.in_flight_micro_batches = 4 - stage;  // 1F1B
    CHECK(rank_footprint(*llama, p, stage).total() < h100->hbm_capacity);
  }
  // One GPU's 20 layers of 0.86B parameters each cost 6.19 bytes apiece: 106 GB of state alone.
  p.tensor_parallel = 1;
  p.data_parallel = 64;
  p.workspace = Bytes();
  for (std::int32_t stage = 0; stage < 4; ++stage) {
    CAPTURE(stage);
    p.in_flight_micro_batches = 4 - stage;
    CHECK(rank_footprint(*llama, p, stage).total() > h100->hbm_capacity);
  }
}

}  // namespace
}  // namespace lockstep
