// What one rank of a Megatron-LM training job keeps in HBM: weights, gradients, optimizer state,
// stored activations and a workspace margin; so a plan that cannot fit is known before it runs.
//
// Model state, per parameter, as Megatron-LM's distributed-optimizer documentation gives it for
// bf16 weights with fp32 gradients: 18 bytes without the distributed optimizer (weights 2,
// gradients 4, fp32 master weights and two Adam moments 12), 6 + 12/d with it, the 12 sharded over
// the d ranks that hold the same parameters: Megatron-core shards over the data-parallel group
// with context parallelism (DP x CP), as CP ranks hold the same weights. FP8 training keeps the
// same state (Transformer Engine's FP8 copies are transient). The rank's parameters are its
// layers' TP shards, plus the embedding on the first stage, and on the last the final norm and
// the output layer; with tied embeddings and more than one stage, Megatron keeps a copy of the
// word embeddings on the last stage for the logits (synchronized by an all-reduce).
//
// Activations per layer and micro-batch, from Korthikanti et al. 2022 ("Reducing Activation
// Recomputation in Large Transformer Models", section 4 and Table 2): s b h (34 + 5 a s / h) bytes
// in BF16 with dropout, made of terms one can name and so rescale for any shape (e = 2 bytes):
// - norm region, b s tokens (b s / t with SP): the two norm inputs and the QKV and FC1 inputs,
//   4 tensors of h, e bytes each, and two 1-byte dropout masks when the spec drops out;
// - TP region, b s tokens, / t: Q (h), K and V (KV width each), the output projection's input
//   (h), the activation's input (FC1's width: 4h, or 8h gated) and FC2's input (ffn), e bytes each;
// - attention scores, a s^2 b / t: softmax output (e), dropout mask (1) and dropout output (e),
//   5 bytes, or 2 without attention dropout. Flash attention never stores them, nor does selective
//   recomputation.
// For the GPT layout these sum to Korthikanti's 10 + 24/t (TP), 34/t (TP + SP) and 5 a s / (h t).
// Full recomputation keeps the layer input only: 2 s b h, or 2 s b h / t with SP (Megatron
// checkpoints the sharded input), plus, once per rank, one layer's full set rebuilt during that
// layer's backward. CP: each rank stores its s / CP tokens, except K and V, which are kept
// gathered over the whole sequence for attention's backward (layer_ops.hpp).
//
// A rank holds `in_flight_micro_batches` (micro-batch, model chunk) pairs of activations: with v
// virtual stages a chunk is layers / (p v) layers, so for 1F1B (v = 1) stage i of p holds p - i
// micro-batches of layers / p layers. The first stage adds the embedding's dropout mask per
// in-flight micro-batch (Korthikanti's s b h p / t); the last stage adds, for the one micro-batch
// whose loss is computed, the final norm's and output layer's inputs and the fp32 softmax of the
// logits (Korthikanti's 4 s b h / t (1 + V / h)).
//
// Left out: pipeline send/receive buffers, the gradient buckets' temporary copies, allocator
// fragmentation and library workspaces (the caller's workspace margin holds those), and uneven
// pipeline splits.
#pragma once

#include <cstdint>

#include "models/training/layer_ops.hpp"
#include "models/training/transformer.hpp"
#include "sim/core/bytes.hpp"

namespace lockstep {

struct FootprintPlan {
  std::int32_t tensor_parallel = 1, pipeline_parallel = 1, data_parallel = 1, context_parallel = 1;
  std::int32_t virtual_stages = 1;
  bool sequence_parallel = false;
  bool distributed_optimizer = false;
  Recompute recompute = Recompute::kNone;
  std::int64_t micro_batch = 1;
  std::int64_t in_flight_micro_batches = 1;  // the schedule's peak on this stage (given by caller)
  Bytes workspace;              // cuBLAS/NCCL buffers, allocator fragmentation: a margin
  bool flash_attention = true;  // as LayerProgram runs attention; false gives Korthikanti's tables
};

struct MemoryFootprint {
  Bytes weights, gradients, optimizer_state, activations, workspace;
  Bytes total() const;
};

// The activations one layer stores for one micro-batch under the plan's parallelism and
// recomputation (full recomputation: the checkpointed input only). Throws std::invalid_argument
// when TP or CP does not divide what they split (as LayerProgram does).
Bytes layer_activations(const TransformerSpec& spec, const FootprintPlan& plan);

// Footprint of a rank of pipeline stage `stage` (first holds the embedding, last the head /
// untied output layer). Throws std::invalid_argument for a stage outside the pipeline, sizes below
// 1, or p x v not dividing the layers.
MemoryFootprint rank_footprint(const TransformerSpec& spec, const FootprintPlan& plan,
                               std::int32_t stage);

}  // namespace lockstep
