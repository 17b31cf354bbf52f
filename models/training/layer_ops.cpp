#include "models/training/layer_ops.hpp"

#include <stdexcept>

namespace lockstep {
namespace {

__extension__ using Wide = __int128;

// Flash attention's speed as a percentage of the dense GEMM rate (see the header).
constexpr std::int64_t kAttentionForwardPercentOfGemm = 86;
constexpr std::int64_t kAttentionBackwardPercentOfGemm = 74;
// Backward does five products of the forward's two.
constexpr std::int64_t kAttentionBackwardWorkTimesTwo = 5;
constexpr std::int64_t kDropoutMaskBytes = 1;
constexpr std::int64_t kFp32Bytes = 4;
// Vocab-parallel cross-entropy all-reduces the logits' maximum, the target's logit and the sum of
// exponentials, one fp32 a token each.
constexpr int kCrossEntropyReductions = 3;
// Adam with fp32 master weights: read grad, master, m, v (4 x 4); write master, m, v (3 x 4) and
// the bf16 weight (2).
constexpr std::int64_t kAdamBytesPerParameter = 30;

LayerOp kernel(std::string_view name, const KernelCost& cost, Flops counted = Flops()) {
  LayerOp op;
  op.kind = LayerOp::Kind::kKernel;
  op.name = name;
  op.cost = cost;
  op.counted = counted;
  return op;
}

LayerOp collective(std::string_view name, CommGroup group, CollectiveOp collective_op, Bytes size) {
  LayerOp op;
  op.kind = LayerOp::Kind::kCollective;
  op.name = name;
  op.group = group;
  op.op = collective_op;
  op.size = size;
  return op;
}

// The per-rank sizes of one micro-batch and the ops built from them.
class Builder {
 public:
  Builder(const TransformerSpec& spec, const LayerShard& shard, const KernelModel& model)
      : spec_(spec), model_(model) {
    validate_transformer(spec);
    if (shard.micro_batch < 1 || shard.tensor_parallel < 1 || shard.context_parallel < 1) {
      throw std::invalid_argument("micro-batch, TP and CP are at least 1");
    }
    tp_ = shard.tensor_parallel;
    cp_ = shard.context_parallel;
    sp_ = shard.sequence_parallel && tp_ > 1;
    w_ = tensor_parallel_widths(spec, tp_);
    const std::int64_t rank_sequence = context_parallel_tokens(spec, cp_, tp_, sp_);
    batch_ = shard.micro_batch;
    tokens_ = batch_ * rank_sequence;
    norm_tokens_ = sp_ ? tokens_ / tp_ : tokens_;
    // FP8 as Transformer Engine: GEMMs in FP8, the rest (attention included) in BF16.
    activation_type_ = spec.type == DataType::kFp8 ? DataType::kBf16 : spec.type;
    e_ = element_bytes(activation_type_);
  }

  // One rank's share of the layer input, b s h / CP elements, as it travels in TP collectives.
  Bytes hidden_activation() const { return Bytes(tokens_ * spec_.hidden * e_); }
  // The norm region's tokens x h, one tensor.
  std::int64_t norm_elements() const { return norm_tokens_ * spec_.hidden; }
  std::int64_t mask_bytes(std::int64_t elements) const {
    return spec_.dropout ? elements * kDropoutMaskBytes : 0;
  }

  LayerOp gemm(std::string_view name, std::int64_t m, std::int64_t n, std::int64_t k) const {
    const KernelCost cost = model_.gemm(Gemm{m, n, k, spec_.type});
    return kernel(name, cost, cost.flops);
  }

  // Column-parallel linear layers gather their input under SP.
  void gather_for_column(std::vector<LayerOp>& ops) const {
    if (sp_) {
      ops.push_back(collective("tp_all_gather", CommGroup::kTensor, CollectiveOp::kAllGather,
                               hidden_activation()));
    }
  }
  // Row-parallel layers' outputs (forward) and column-parallel layers' input gradients (backward).
  void tp_reduction(std::vector<LayerOp>& ops) const {
    if (tp_ == 1) return;
    if (sp_) {
      ops.push_back(collective("tp_reduce_scatter", CommGroup::kTensor,
                               CollectiveOp::kReduceScatter, hidden_activation()));
    } else {
      ops.push_back(collective("tp_all_reduce", CommGroup::kTensor, CollectiveOp::kAllReduce,
                               hidden_activation()));
    }
  }

  LayerOp norm(std::string_view name) const {
    return kernel(name, model_.memory_bound(Bytes(2 * norm_elements() * e_)));
  }
  LayerOp norm_backward(std::string_view name) const {
    return kernel(name, model_.memory_bound(Bytes(4 * norm_elements() * e_)));
  }
  LayerOp bias_dropout_add() const {
    return kernel("bias_dropout_add", model_.memory_bound(Bytes(3 * norm_elements() * e_ +
                                                                mask_bytes(norm_elements()))));
  }
  LayerOp bias_dropout_add_backward() const {
    return kernel(
        "bias_dropout_add_backward",
        model_.memory_bound(Bytes(2 * norm_elements() * e_ + mask_bytes(norm_elements()))));
  }

  // K and V of the whole sequence, every CP rank's share: the size of CP's all-gather.
  Bytes gathered_kv() const { return Bytes(2 * batch_ * spec_.sequence * w_.kv_width * e_); }
  void gather_kv(std::vector<LayerOp>& ops, bool recomputed) const {
    if (cp_ == 1) return;
    LayerOp op =
        collective("cp_all_gather", CommGroup::kContext, CollectiveOp::kAllGather, gathered_kv());
    op.recomputed = recomputed;
    ops.push_back(op);
  }

  // Megatron's count for this rank: QK^T and AV in full over its queries and all keys.
  Flops attention_counted() const {
    return Flops(4 * batch_ * spec_.sequence * spec_.sequence * w_.q_width / cp_);
  }
  // What the causal kernel does: half of that.
  std::int64_t attention_work() const { return attention_counted().count() / 2; }
  Bytes query_tensor() const { return Bytes(tokens_ * w_.q_width * e_); }
  Bytes log_sum_exp() const { return Bytes(tokens_ * w_.heads * kFp32Bytes); }

  // `work` at `percent` of the GEMM rate: priced as more work at that rate, reported as `work`.
  KernelCost slowed(std::int64_t work, std::int64_t percent, Bytes moved) const {
    const Wide inflated = (static_cast<Wide>(work) * 100 + percent - 1) / percent;
    KernelCost cost =
        model_.generic(Flops(static_cast<std::int64_t>(inflated)), moved, activation_type_);
    cost.flops = Flops(work);
    return cost;
  }
  LayerOp attention() const {
    // Read Q, K, V (gathered), write O and the log-sum-exp the backward needs.
    const Bytes moved = query_tensor() * 2 + gathered_kv() + log_sum_exp();
    return kernel("attention", slowed(attention_work(), kAttentionForwardPercentOfGemm, moved),
                  attention_counted());
  }
  LayerOp attention_backward() const {
    // Read Q, O, dO, K, V, log-sum-exp; write dQ, dK, dV.
    const Bytes moved = query_tensor() * 4 + gathered_kv() * 2 + log_sum_exp();
    const std::int64_t work = attention_work() * kAttentionBackwardWorkTimesTwo / 2;
    return kernel("attention_backward", slowed(work, kAttentionBackwardPercentOfGemm, moved),
                  Flops(2 * attention_counted().count()));
  }

  LayerOp activation() const {
    return kernel("activation", model_.memory_bound(Bytes(tokens_ * (w_.fc1 + w_.ffn) * e_)));
  }
  LayerOp activation_backward() const {
    return kernel("activation_backward",
                  model_.memory_bound(Bytes(tokens_ * (2 * w_.fc1 + w_.ffn) * e_)));
  }

  std::vector<LayerOp> layer_forward() const {
    const std::int64_t h = spec_.hidden;
    std::vector<LayerOp> ops;
    ops.push_back(norm("input_norm"));
    gather_for_column(ops);
    ops.push_back(gemm("qkv", tokens_, w_.q_width + 2 * w_.kv_width, h));
    gather_kv(ops, false);
    ops.push_back(attention());
    ops.push_back(gemm("out_proj", tokens_, h, w_.q_width));
    tp_reduction(ops);
    ops.push_back(bias_dropout_add());
    ops.push_back(norm("post_attention_norm"));
    gather_for_column(ops);
    ops.push_back(gemm("fc1", tokens_, w_.fc1, h));
    ops.push_back(activation());
    ops.push_back(gemm("fc2", tokens_, h, w_.ffn));
    tp_reduction(ops);
    ops.push_back(bias_dropout_add());
    return ops;
  }

  // Backward of Y = X W (X tokens x in, W in x out): row parallel gathers dY under SP; column
  // parallel re-gathers X under SP for dW and reduces dX over TP.
  void linear_backward(std::vector<LayerOp>& ops, std::string_view dgrad, std::string_view wgrad,
                       std::int64_t in, std::int64_t out, bool column_parallel) const {
    if (sp_) {
      ops.push_back(collective("tp_all_gather", CommGroup::kTensor, CollectiveOp::kAllGather,
                               hidden_activation()));
    }
    ops.push_back(gemm(dgrad, tokens_, in, out));
    if (column_parallel) tp_reduction(ops);
    ops.push_back(gemm(wgrad, in, out, tokens_));
  }

  std::vector<LayerOp> layer_backward(Recompute recompute) const {
    const std::int64_t h = spec_.hidden;
    std::vector<LayerOp> ops;
    if (recompute == Recompute::kFull) {
      for (LayerOp op : layer_forward()) {
        op.recomputed = true;
        ops.push_back(op);
      }
    }
    ops.push_back(bias_dropout_add_backward());
    linear_backward(ops, "fc2_dgrad", "fc2_wgrad", w_.ffn, h, false);
    ops.push_back(activation_backward());
    linear_backward(ops, "fc1_dgrad", "fc1_wgrad", h, w_.fc1, true);
    ops.push_back(norm_backward("post_attention_norm_backward"));
    ops.push_back(bias_dropout_add_backward());
    linear_backward(ops, "out_proj_dgrad", "out_proj_wgrad", w_.q_width, h, false);
    if (recompute == Recompute::kSelective) {
      gather_kv(ops, true);
      LayerOp replay = attention();
      replay.recomputed = true;
      ops.push_back(replay);
    }
    ops.push_back(attention_backward());
    if (cp_ > 1) {
      ops.push_back(collective("cp_reduce_scatter", CommGroup::kContext,
                               CollectiveOp::kReduceScatter, gathered_kv()));
    }
    linear_backward(ops, "qkv_dgrad", "qkv_wgrad", h, w_.q_width + 2 * w_.kv_width, true);
    ops.push_back(norm_backward("input_norm_backward"));
    return ops;
  }

  // The position add and dropout of the embedding's output, on the norm region's tokens.
  std::int64_t embedding_epilogue_bytes() const {
    const std::int64_t tensors = spec_.learned_positions ? 3 : 2;
    return tensors * norm_elements() * e_ + mask_bytes(norm_elements());
  }

  std::vector<LayerOp> embedding_forward() const {
    const std::int64_t rows = tokens_ * spec_.hidden;
    std::vector<LayerOp> ops;
    ops.push_back(kernel("embedding", model_.memory_bound(Bytes(2 * rows * e_))));
    // VocabParallelEmbedding: each rank fills the rows of its vocabulary slice, zeros elsewhere.
    tp_reduction(ops);
    if (spec_.learned_positions || spec_.dropout) {
      ops.push_back(kernel("embedding_position_dropout",
                           model_.memory_bound(Bytes(embedding_epilogue_bytes()))));
    }
    return ops;
  }

  std::vector<LayerOp> embedding_backward() const {
    const std::int64_t rows = tokens_ * spec_.hidden;
    std::vector<LayerOp> ops;
    if (spec_.learned_positions || spec_.dropout) {
      ops.push_back(kernel("embedding_position_dropout_backward",
                           model_.memory_bound(Bytes(embedding_epilogue_bytes()))));
    }
    // The all-reduce's backward is the identity; a reduce-scatter's is an all-gather.
    if (sp_) {
      ops.push_back(collective("tp_all_gather", CommGroup::kTensor, CollectiveOp::kAllGather,
                               hidden_activation()));
    }
    // Read dy, read and write the fp32 gradient rows.
    ops.push_back(
        kernel("embedding_backward", model_.memory_bound(Bytes(rows * (e_ + 2 * kFp32Bytes)))));
    return ops;
  }

  Bytes logits_bytes(std::int64_t element) const {
    return Bytes(tokens_ * w_.vocabulary * element);
  }

  std::vector<LayerOp> head_forward() const {
    std::vector<LayerOp> ops;
    ops.push_back(norm("final_norm"));
    gather_for_column(ops);
    ops.push_back(gemm("logits", tokens_, w_.vocabulary, spec_.hidden));
    ops.push_back(
        kernel("cross_entropy", model_.memory_bound(logits_bytes(e_) + logits_bytes(kFp32Bytes))));
    if (tp_ > 1) {
      for (int i = 0; i < kCrossEntropyReductions; ++i) {
        ops.push_back(collective("cross_entropy_all_reduce", CommGroup::kTensor,
                                 CollectiveOp::kAllReduce, Bytes(tokens_ * kFp32Bytes)));
      }
    }
    return ops;
  }

  std::vector<LayerOp> head_backward() const {
    std::vector<LayerOp> ops;
    ops.push_back(kernel("cross_entropy_backward",
                         model_.memory_bound(logits_bytes(kFp32Bytes) + logits_bytes(e_))));
    linear_backward(ops, "logits_dgrad", "logits_wgrad", spec_.hidden, w_.vocabulary, true);
    ops.push_back(norm_backward("final_norm_backward"));
    return ops;
  }

 private:
  const TransformerSpec& spec_;
  const KernelModel& model_;
  std::int64_t tp_ = 1;
  std::int64_t cp_ = 1;
  bool sp_ = false;
  TensorParallelWidths w_;  // this rank's heads, their widths, its MLP columns and vocabulary
  std::int64_t batch_ = 1;
  std::int64_t tokens_ = 0;       // b s / CP
  std::int64_t norm_tokens_ = 0;  // tokens_ / TP under SP
  DataType activation_type_ = DataType::kBf16;
  std::int64_t e_ = 2;
};

}  // namespace

LayerProgram::LayerProgram(const TransformerSpec& spec, const LayerShard& shard,
                           Recompute recompute, const KernelModel& model) {
  const Builder builder(spec, shard, model);
  layer_forward_ = builder.layer_forward();
  layer_backward_ = builder.layer_backward(recompute);
  embedding_forward_ = builder.embedding_forward();
  embedding_backward_ = builder.embedding_backward();
  head_forward_ = builder.head_forward();
  head_backward_ = builder.head_backward();
}

KernelCost optimizer_step(const KernelModel& model, std::int64_t parameters) {
  if (parameters < 0) throw std::invalid_argument("a rank's parameters are not negative");
  return model.memory_bound(Bytes(parameters * kAdamBytesPerParameter));
}

}  // namespace lockstep
