// The shape of a GPT-style dense decoder-only transformer, the published models as presets, and the
// arithmetic that follows from the shape alone: parameter counts (whole model and per rank under
// Megatron-LM's tensor parallelism) and the model FLOPs of a training step.
//
// Why from the shapes: a simulator that runs per-rank kernels needs per-rank matrix sizes, and the
// closed forms of Narayanan et al. (SC'21, "Efficient Large-Scale Language Model Training on GPU
// Clusters Using Megatron-LM", reference.md section 4) hold only for the GPT layout (ffn = 4h,
// multi-head attention, ungated GeLU MLP, biases, LayerNorm, learned positions, tied embeddings).
// The closed forms are kept beside the exact counts so tests can tie the two together, and because
// MFU is conventionally quoted against them.
//
// Per-rank parameters follow Megatron-core's layers: ColumnParallelLinear splits the output
// features (QKV, FC1) with their biases, RowParallelLinear splits the input features (output
// projection, FC2) and keeps its bias whole on every rank, norms are replicated, and
// VocabParallelEmbedding splits the vocabulary rows; learned position embeddings are not split.
// Megatron-core divides attention heads and KV groups by TP with divide(), which asserts, so a TP
// that does not divide heads, KV heads, ffn or the vocabulary is rejected here too; Megatron pads
// the vocabulary to a multiple of 128 x TP (--make-vocab-size-divisible-by), so a spec's
// vocabulary is the padded one.
//
// Model FLOPs count the matrix multiplications only (2 per multiply-add), as Narayanan et al. do:
// QK^T and AV in full (2 b s^2 h each, no causal halving), backward twice forward, the logits GEMM,
// nothing for the embedding lookup, norms, softmax or element-wise work.
//
// Left out: mixture-of-experts, multi-token prediction, biases on Q/K/V only (Qwen), and any
// parameter outside the listed layers (e.g. RoPE has none).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "models/gpu/flops.hpp"
#include "models/gpu/gpu_spec.hpp"

namespace lockstep {

struct TransformerSpec {
  std::int64_t layers = 0, hidden = 0, heads = 0;
  std::int64_t kv_heads = 0;    // == heads: multi-head attention; fewer: grouped-query attention
  std::int64_t ffn_hidden = 0;  // MLP inner size
  bool gated_mlp = false;       // SwiGLU: FC1 produces 2 x ffn_hidden
  std::int64_t vocabulary = 0;  // as padded for TP (see above)
  std::int64_t sequence = 0;    // tokens per sample
  bool tied_embeddings = true;  // output layer shares the input embedding (GPT); false for Llama
  // Of the GEMMs; FP8 as Transformer Engine: GEMMs in FP8, the rest BF16.
  DataType type = DataType::kBf16;
  bool linear_biases = true;      // GPT: every linear layer has a bias; Llama: none
  bool rms_norm = false;          // Llama's RMSNorm (a weight) instead of LayerNorm (weight, bias)
  bool learned_positions = true;  // GPT: an s x h position table; Llama: RoPE, no parameters
  bool dropout = true;  // GPT trains with hidden dropout (its masks are stored); Llama with none
};

struct TransformerPreset {
  std::string_view name;
  TransformerSpec spec;
  std::string_view source;
};

[[nodiscard]] const std::vector<TransformerPreset>& transformer_presets();
[[nodiscard]] std::optional<TransformerSpec> transformer_preset(std::string_view name);

// Throws std::invalid_argument unless every size is at least 1, heads divide hidden and KV heads
// divide heads.
void validate_transformer(const TransformerSpec& spec);

// hidden / heads; the width of K (and of V): kv_heads x head dimension; FC1's output width.
[[nodiscard]] std::int64_t head_dimension(const TransformerSpec& spec);
[[nodiscard]] std::int64_t kv_width(const TransformerSpec& spec);
[[nodiscard]] std::int64_t fc1_width(const TransformerSpec& spec);

// One rank's share of a layer's widths under tensor parallelism: Megatron-core divides heads, KV
// heads, the MLP and the (padded) vocabulary over the TP ranks and asserts that each divides.
struct TensorParallelWidths {
  std::int64_t heads = 0, q_width = 0, kv_width = 0, fc1 = 0, ffn = 0, vocabulary = 0;
};
// Throws std::invalid_argument when `tensor_parallel` does not divide them.
[[nodiscard]] TensorParallelWidths tensor_parallel_widths(const TransformerSpec& spec,
                                                          std::int64_t tensor_parallel);
// The tokens of a sample on one context-parallel rank: CP cuts the sequence into 2 x CP equal
// chunks (two per rank, for causal load balance), and with sequence parallelism TP must divide
// those tokens too. Throws std::invalid_argument when they do not divide.
[[nodiscard]] std::int64_t context_parallel_tokens(const TransformerSpec& spec,
                                                   std::int64_t context_parallel,
                                                   std::int64_t tensor_parallel,
                                                   bool sequence_parallel);

[[nodiscard]] std::int64_t parameter_count(const TransformerSpec& spec);  // exact, from the shapes
// Parameters of one rank: of one layer under TP (norm weights and row-parallel biases replicated),
// of the embedding (vocab split over TP, Megatron's VocabParallelEmbedding), of the output layer
// when untied, of the final norm (replicated). Throw std::invalid_argument when TP does not divide
// what it splits.
[[nodiscard]] std::int64_t layer_parameters(const TransformerSpec& spec,
                                            std::int32_t tensor_parallel);
[[nodiscard]] std::int64_t embedding_parameters(const TransformerSpec& spec,
                                                std::int32_t tensor_parallel);
[[nodiscard]] std::int64_t output_layer_parameters(const TransformerSpec& spec,
                                                   std::int32_t tensor_parallel);  // 0 when tied
[[nodiscard]] std::int64_t final_norm_parameters(const TransformerSpec& spec);

// reference.md section 4 closed forms (GPT layout: ffn = 4h, MHA, ungated, tied), for tests and for
// the "model FLOPs" of MFU. The closed parameter form leaves out the final LayerNorm (2h).
[[nodiscard]] double narayanan_parameters(const TransformerSpec& spec);
// Throws std::overflow_error when the step's FLOPs exceed Flops' int64 range (9.2e18).
[[nodiscard]] Flops narayanan_step_flops(const TransformerSpec& spec, std::int64_t global_batch,
                                         bool full_recomputation);
// Model FLOPs of one sample (one sequence) forward and backward, from the shapes for any spec
// (GQA, gated, any ffn), without recomputation, attention counted as Megatron does.
[[nodiscard]] Flops model_sample_flops(const TransformerSpec& spec);
// model_sample_flops x global_batch: equals narayanan_step_flops(..., false) exactly for a
// GPT-layout spec. Throws std::overflow_error beyond int64 (Llama 3.1 405B at 16M tokens a step is
// 4e19: use the per-sample count there).
[[nodiscard]] Flops model_step_flops(const TransformerSpec& spec, std::int64_t global_batch);

}  // namespace lockstep
