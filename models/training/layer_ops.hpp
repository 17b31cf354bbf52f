// The kernels and in-layer collectives one rank runs for one micro-batch of a transformer layer, of
// the embedding and of the output head, as Megatron-LM issues them (Megatron-core TransformerLayer,
// ColumnParallelLinear / RowParallelLinear, VocabParallelEmbedding, vocab-parallel cross-entropy),
// each priced by the KernelModel and with the FLOPs Megatron's formula counts for it.
//
// Why a list of ops: the executor runs them in order on a GPU stream and hands the collectives to
// the network, so step time comes out of the same sequence the real job runs; the order is the
// issue order (Megatron overlaps some collectives with the next GEMM, e.g. the backward all-reduce
// of the input gradient with the weight-gradient GEMM; the list marks no overlap, the executor
// decides).
//
// Forward of a layer: input norm, [SP: all-gather], QKV GEMM (column parallel; with GQA the K and
// V parts are narrower), [CP: all-gather of K and V], flash attention, output projection (row
// parallel), TP reduction (all-reduce, or reduce-scatter with SP), bias-dropout-add, post-attention
// norm, [SP: all-gather], FC1 (column parallel, 2 x ffn when gated), activation (GeLU or SwiGLU),
// FC2 (row parallel), TP reduction, bias-dropout-add. Backward runs it in reverse with two GEMMs
// per linear layer (input gradient "dgrad", weight gradient "wgrad"). TP collectives of backward
// (Korthikanti et al. 2022, section 4.2.2): without SP, an all-reduce of the input gradient of each
// column-parallel layer; with SP, an all-gather of the output gradient before each row-parallel
// layer and, for each column-parallel layer, an all-gather of its input again (only the sharded
// input is stored) for the weight gradient and a reduce-scatter of its input gradient. With TP = 1
// there are no TP collectives, and Megatron turns SP off.
//
// Context parallelism is Llama 3's all-gather based form (Llama 3 paper, section 3.3.2): K and V
// are all-gathered over the CP group before attention and dK, dV reduce-scattered after its
// backward; the sequence is cut in 2 x CP chunks, rank i holding chunks i and 2 CP - 1 - i, so
// causal work is balanced and every rank does 1/CP of it. The gathered K and V are kept for the
// backward.
//
// Attention is one fused flash-attention kernel. The work it really does is causal: half of the
// full QK^T and AV, 2 b s^2 h / CP forward on a rank (h its heads' width), and 2.5 times that
// backward (FlashAttention-2, Dao 2023: the backward recomputes the scores and does five matrix
// products against the forward's two, and its benchmarks count it as 2.5 forwards). It runs
// slower than a dense GEMM: FlashAttention-2 reaches 50-73% of A100 peak forward (the top for
// long sequences and head dimension 128, where training runs; we take 70%) and less in its
// backward benchmarks (we take 60%), against 81.5% for the 8192^3 GEMM the kernel model is
// calibrated on (reference.md section 1: 253.7 of 312); so attention runs at 86% (forward) and
// 74% (backward) of the model's GEMM rate, on any GPU. Its `counted` FLOPs are Megatron's:
// 4 b s^2 h / CP forward, twice that backward, no causal halving.
//
// Recomputation: kFull replays the layer's whole forward (its collectives too) before its
// backward. kSelective is Megatron's checkpointing of the core attention: flash attention never
// stores the s^2 scores, and its backward kernel recomputes them itself, but Megatron-core still
// wraps the attention (CP gather included) in a checkpoint, so the forward attention kernel (and
// the CP all-gather) run again just before the attention backward; they add time and counted
// FLOPs, and save only the attention output's small log-sum-exp. Replayed ops are marked.
//
// Memory-bound ops move bytes as follows (e = 2, BF16 activations; N tokens of the norm region,
// N = b s / (CP TP) with SP, else b s / CP): norm, read x and write y (2 N h e), backward read x
// and dy, the residual branch's gradient, write dx (4 N h e); bias-dropout-add, read two and
// write one tensor and the 1-byte dropout mask when the spec has dropout, backward read dy and
// the mask and write dx; activation, read FC1's output and write FC2's input, backward read FC1's
// output and the incoming gradient and write FC1's output gradient. Embedding: a row gather (read
// and write b s h e / CP), then on the N tokens the position add and dropout when the spec has
// them; backward scatters the gradient into the fp32 main-grad rows (read dy, read and write 4
// bytes). Head: final norm, logits GEMM (column parallel, SP gathers its input), vocab-parallel
// cross-entropy (reads the BF16 logits, writes FP32 softmax; three TP all-reduces of one fp32
// per token: max, target logit, sum of exponentials), backward reads the softmax and writes the
// BF16 logits gradient.
//
// Left out: FP8 casts and amax reductions (FP8 GEMMs are priced at the FP8 rate, the rest in
// BF16), GEMM epilogues (bias, fp32 gradient accumulation into main_grad), RoPE's element-wise
// kernel, the causal diagonal's partial tiles, fused kernels that Transformer Engine merges
// (LayerNorm + QKV GEMM), and p2p-ring context parallelism.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "models/collective/collective_op.hpp"
#include "models/gpu/flops.hpp"
#include "models/gpu/kernel_time.hpp"
#include "models/training/transformer.hpp"
#include "sim/core/bytes.hpp"

namespace lockstep {

enum class Recompute { kNone, kSelective, kFull };

struct LayerShard {
  std::int64_t micro_batch = 1;
  std::int32_t tensor_parallel = 1;
  std::int32_t context_parallel = 1;
  bool sequence_parallel = false;
};

enum class CommGroup { kTensor, kContext };

struct LayerOp {
  enum class Kind : std::uint8_t { kKernel, kCollective } kind = Kind::kKernel;
  std::string_view name;  // a static string: "qkv", "attention", "tp_all_reduce", ...
  KernelCost cost;        // kernels: from the KernelModel (time)
  Flops counted;  // kernels: the FLOPs Megatron's formula counts for this op (may differ from the
                  // work the kernel does, e.g. causal attention does half)
  CommGroup group = CommGroup::kTensor;        // collectives: which communicator
  CollectiveOp op = CollectiveOp::kAllReduce;  // collectives; size as collective_op.hpp defines it
  Bytes size;
  bool recomputed = false;  // a forward op replayed in backward by activation recomputation
};

class LayerProgram {
 public:
  // Throws std::invalid_argument when TP does not divide heads, KV heads (Megatron-core divides
  // both and asserts), ffn or the vocabulary, when CP > 1 does not divide the sequence into 2 x CP
  // chunks, when SP's TP does not divide a CP rank's tokens, or for a micro-batch, TP or CP below
  // 1.
  LayerProgram(const TransformerSpec& spec, const LayerShard& shard, Recompute recompute,
               const KernelModel& model);

  const std::vector<LayerOp>& layer_forward() const { return layer_forward_; }
  // Recomputation included: kFull's replay first, kSelective's before the attention backward.
  const std::vector<LayerOp>& layer_backward() const { return layer_backward_; }
  const std::vector<LayerOp>& embedding_forward() const { return embedding_forward_; }
  const std::vector<LayerOp>& embedding_backward() const { return embedding_backward_; }
  // Last stage: final norm, logits GEMM, cross-entropy.
  const std::vector<LayerOp>& head_forward() const { return head_forward_; }
  const std::vector<LayerOp>& head_backward() const { return head_backward_; }

 private:
  std::vector<LayerOp> layer_forward_;
  std::vector<LayerOp> layer_backward_;
  std::vector<LayerOp> embedding_forward_;
  std::vector<LayerOp> embedding_backward_;
  std::vector<LayerOp> head_forward_;
  std::vector<LayerOp> head_backward_;
};

// The optimizer step of one rank over `parameters` (the rank's own shard under the distributed
// optimizer): a memory-bound Adam kernel that reads the fp32 gradient, master weight and two
// moments and writes the master weight, the moments and the bf16 weight: 30 bytes a parameter.
// Throws std::invalid_argument for negative parameters.
KernelCost optimizer_step(const KernelModel& model, std::int64_t parameters);

}  // namespace lockstep
