// The per-rank kernels and collectives of a layer, the embedding and the head: their FLOPs summed
// over a step against Narayanan et al.'s formula (reference.md section 4), collective sizes and
// memory traffic by hand on a tiny model, GEMM shapes under GQA, attention's cost, recomputation.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "models/training/layer_ops.hpp"
#include "small_transformers.hpp"

namespace lockstep {
namespace {

using testing::preset;
using testing::tiny_gpt;

KernelModel gpu(std::string_view name) {
  const std::optional<GpuSpec> spec = gpu_spec(name);
  REQUIRE(spec.has_value());
  return KernelModel(*spec);
}

std::int64_t counted(const std::vector<LayerOp>& ops) {
  std::int64_t sum = 0;
  for (const LayerOp& op : ops) sum += op.counted.count();
  return sum;
}

struct Parallelism {
  std::int32_t tp = 1, pp = 1, dp = 1, cp = 1;
  bool sp = false;
  std::int64_t micro_batch = 1;
};

// Every rank's counted FLOPs over one step: each of the tp x cp x dp ranks of a pipeline stage
// runs m micro-batches through its layers / pp layers, the first stage its embedding and the last
// its head.
std::int64_t step_counted(const TransformerSpec& spec, const Parallelism& p, Recompute recompute,
                          std::int64_t global_batch, const KernelModel& model) {
  const LayerProgram program(spec, LayerShard{p.micro_batch, p.tp, p.cp, p.sp}, recompute, model);
  const std::int64_t micro_batches = global_batch / (p.dp * p.micro_batch);
  REQUIRE(micro_batches * p.dp * p.micro_batch == global_batch);
  const std::int64_t layer = counted(program.layer_forward()) + counted(program.layer_backward());
  const std::int64_t ends = counted(program.embedding_forward()) +
                            counted(program.embedding_backward()) +
                            counted(program.head_forward()) + counted(program.head_backward());
  const std::int64_t pipeline = p.pp * (spec.layers / p.pp) * layer + ends;
  return std::int64_t{p.tp} * p.cp * p.dp * micro_batches * pipeline;
}

struct Collective {
  std::string_view name;
  CommGroup group;
  CollectiveOp op;
  std::int64_t size;
  bool operator==(const Collective&) const = default;
};

std::vector<Collective> collectives(const std::vector<LayerOp>& ops) {
  std::vector<Collective> found;
  for (const LayerOp& op : ops) {
    if (op.kind == LayerOp::Kind::kCollective) {
      found.push_back({op.name, op.group, op.op, op.size.count()});
    }
  }
  return found;
}

const LayerOp& named(const std::vector<LayerOp>& ops, std::string_view name) {
  for (const LayerOp& op : ops) {
    if (op.name == name && !op.recomputed) return op;
  }
  FAIL("no op named " << name);
  return ops.front();
}

TEST_CASE("a step's counted FLOPs over all ranks equal Narayanan's formula") {
  const KernelModel a100 = gpu("a100");
  struct Case {
    const char* model;
    Parallelism parallelism;
    std::int64_t global_batch;
  };
  // Table 1's 18.4B row (t 8, p 1, 256 GPUs, B 1024), GPT-3 at t 8, p 8, and with SP and CP.
  for (const Case& c : {Case{"megatron-18.4b", {.tp = 8, .pp = 1, .dp = 32}, 1024},
                        Case{"megatron-18.4b",
                             {.tp = 4, .pp = 2, .dp = 8, .cp = 2, .sp = true, .micro_batch = 2},
                             1024},
                        Case{"gpt3-175b", {.tp = 8, .pp = 8, .dp = 24}, 1536},
                        Case{"gpt3-175b", {.tp = 8, .pp = 16, .dp = 12, .sp = true}, 1536}}) {
    const TransformerSpec spec = preset(c.model);
    CAPTURE(std::string_view(c.model));
    CAPTURE(c.parallelism.tp);
    for (const bool full : {false, true}) {
      CAPTURE(full);
      const std::int64_t total = step_counted(
          spec, c.parallelism, full ? Recompute::kFull : Recompute::kNone, c.global_batch, a100);
      const std::int64_t reference = narayanan_step_flops(spec, c.global_batch, full).count();
      CHECK(std::abs(static_cast<double>(total - reference)) / static_cast<double>(reference) <
            1e-3);
      CHECK(total == reference);  // the ops count exactly the formula's terms
    }
  }
}

TEST_CASE("for GQA and SwiGLU the ops count the model FLOPs of the shapes") {
  const KernelModel h100 = gpu("h100");
  const TransformerSpec spec = preset("llama2-70b");
  const std::int64_t b = 2;
  const LayerProgram program(spec, LayerShard{b, 8, 2, true}, Recompute::kNone, h100);
  const std::int64_t per_rank =
      spec.layers * (counted(program.layer_forward()) + counted(program.layer_backward())) +
      counted(program.head_forward()) + counted(program.head_backward());
  CHECK(8 * 2 * per_rank == b * model_sample_flops(spec).count());
  // QKV on a TP-8 rank: 8 query heads and 1 KV head of 128; FC1 2 x 28672 / 8 wide.
  const std::int64_t tokens = b * 4096 / 2;
  CHECK(named(program.layer_forward(), "qkv").cost.flops ==
        Flops(2 * tokens * 8192 * (1024 + 2 * 128)));
  CHECK(named(program.layer_forward(), "fc1").cost.flops == Flops(2 * tokens * 8192 * 7168));
  CHECK(named(program.layer_forward(), "fc2").cost.flops == Flops(2 * tokens * 3584 * 8192));
}

TEST_CASE("TP collectives of a tiny layer with SP and CP, sizes by hand") {
  const KernelModel a100 = gpu("a100");
  // b 2, s 16, CP 2: 16 tokens a rank; a hidden tensor is 16 x 8 x 2 bytes = 256; K and V of one
  // KV head of 4 over the whole 2 x 16 tokens: 2 x 32 x 4 x 2 bytes = 512.
  const LayerProgram program(tiny_gpt(), LayerShard{2, 2, 2, true}, Recompute::kNone, a100);
  const auto tp = CommGroup::kTensor;
  const auto cp = CommGroup::kContext;
  const auto ag = CollectiveOp::kAllGather;
  const auto rs = CollectiveOp::kReduceScatter;
  CHECK(collectives(program.layer_forward()) ==
        std::vector<Collective>{{"tp_all_gather", tp, ag, 256},
                                {"cp_all_gather", cp, ag, 512},
                                {"tp_reduce_scatter", tp, rs, 256},
                                {"tp_all_gather", tp, ag, 256},
                                {"tp_reduce_scatter", tp, rs, 256}});
  // FC2's output gradient gathered; FC1's input re-gathered and its input gradient scattered;
  // the output projection's output gradient gathered; dK, dV scattered over CP; QKV as FC1.
  CHECK(collectives(program.layer_backward()) ==
        std::vector<Collective>{{"tp_all_gather", tp, ag, 256},
                                {"tp_all_gather", tp, ag, 256},
                                {"tp_reduce_scatter", tp, rs, 256},
                                {"tp_all_gather", tp, ag, 256},
                                {"cp_reduce_scatter", cp, rs, 512},
                                {"tp_all_gather", tp, ag, 256},
                                {"tp_reduce_scatter", tp, rs, 256}});
  CHECK(collectives(program.embedding_forward()) ==
        std::vector<Collective>{{"tp_reduce_scatter", tp, rs, 256}});
  CHECK(collectives(program.embedding_backward()) ==
        std::vector<Collective>{{"tp_all_gather", tp, ag, 256}});
}

TEST_CASE("without SP: two all-reduces of b s h elements forward and two backward") {
  const KernelModel a100 = gpu("a100");
  // reference.md section 4: b 2, s 16, h 8, BF16: 512 bytes each.
  const LayerProgram program(tiny_gpt(), LayerShard{2, 2, 1, false}, Recompute::kNone, a100);
  const Collective all_reduce{"tp_all_reduce", CommGroup::kTensor, CollectiveOp::kAllReduce, 512};
  CHECK(collectives(program.layer_forward()) == std::vector<Collective>{all_reduce, all_reduce});
  CHECK(collectives(program.layer_backward()) == std::vector<Collective>{all_reduce, all_reduce});
  CHECK(collectives(program.embedding_backward()).empty());
  // Cross-entropy reduces three fp32 values per token (32 tokens), then the logits' input
  // gradient.
  const Collective per_token{"cross_entropy_all_reduce", CommGroup::kTensor,
                             CollectiveOp::kAllReduce, 32 * 4};
  CHECK(collectives(program.head_forward()) ==
        std::vector<Collective>{per_token, per_token, per_token});
  CHECK(collectives(program.head_backward()) == std::vector<Collective>{all_reduce});

  const LayerProgram alone(tiny_gpt(), LayerShard{2, 1, 1, true}, Recompute::kFull, a100);
  CHECK(collectives(alone.layer_forward()).empty());
  CHECK(collectives(alone.layer_backward()).empty());
  CHECK(collectives(alone.head_forward()).empty());
}

TEST_CASE("memory-bound ops move the bytes they read and write") {
  const KernelModel a100 = gpu("a100");
  // TP 2 with SP, CP 2, b 2: 16 tokens a rank, 8 in the norm region; h 8, 2-byte elements.
  const LayerProgram program(tiny_gpt(), LayerShard{2, 2, 2, true}, Recompute::kNone, a100);
  const std::vector<LayerOp>& forward = program.layer_forward();
  CHECK(named(forward, "input_norm").cost.bytes == Bytes(2 * 8 * 8 * 2));
  CHECK(named(forward, "bias_dropout_add").cost.bytes == Bytes(3 * 8 * 8 * 2 + 8 * 8));
  // GeLU on this rank's 16 of 32 FC1 columns, read and written.
  CHECK(named(forward, "activation").cost.bytes == Bytes(16 * (16 + 16) * 2));
  CHECK(named(forward, "input_norm").cost.memory == a100.memory_bound(Bytes(256)).memory);
  // Logits of this rank's 32 of 64 words: BF16 read, FP32 softmax written.
  CHECK(named(program.head_forward(), "cross_entropy").cost.bytes == Bytes(16 * 32 * (2 + 4)));
}

TEST_CASE("attention does half of what Megatron counts, slower than a GEMM") {
  const KernelModel h100 = gpu("h100");
  const TransformerSpec spec = preset("llama3-8b");
  const LayerProgram program(spec, LayerShard{1, 2, 1, true}, Recompute::kNone, h100);
  const LayerOp& forward = named(program.layer_forward(), "attention");
  const LayerOp& backward = named(program.layer_backward(), "attention_backward");
  // 16 heads of 128 a rank: 4 b s^2 x 2048 counted, causal work half; backward counts twice and
  // does 2.5 times the forward's work.
  const std::int64_t s = 8192;
  CHECK(forward.counted == Flops(4 * s * s * 2048));
  CHECK(forward.cost.flops == Flops(2 * s * s * 2048));
  CHECK(backward.counted == Flops(8 * s * s * 2048));
  CHECK(backward.cost.flops == Flops(5 * s * s * 2048));
  const FlopRate gemm_rate = h100.sustained_rate(DataType::kBf16);
  const double forward_slowdown =
      forward.cost.compute.seconds() / compute_time(forward.cost.flops, gemm_rate).seconds();
  const double backward_slowdown =
      backward.cost.compute.seconds() / compute_time(backward.cost.flops, gemm_rate).seconds();
  CHECK(forward_slowdown == doctest::Approx(100.0 / 86.0).epsilon(1e-6));
  CHECK(backward_slowdown == doctest::Approx(100.0 / 74.0).epsilon(1e-6));
}

TEST_CASE("recomputation replays the forward, or only attention when selective") {
  const KernelModel a100 = gpu("a100");
  const TransformerSpec spec = tiny_gpt();
  const LayerShard shard{2, 2, 2, true};
  const LayerProgram none(spec, shard, Recompute::kNone, a100);
  const LayerProgram full(spec, shard, Recompute::kFull, a100);
  const LayerProgram selective(spec, shard, Recompute::kSelective, a100);
  const std::vector<LayerOp>& forward = none.layer_forward();

  REQUIRE(full.layer_backward().size() == forward.size() + none.layer_backward().size());
  for (std::size_t i = 0; i < forward.size(); ++i) {
    CHECK(full.layer_backward()[i].name == forward[i].name);
    CHECK(full.layer_backward()[i].recomputed);
  }
  CHECK(counted(full.layer_backward()) == counted(forward) + counted(none.layer_backward()));

  // Selective: the CP gather and the attention kernel run again just before attention's backward.
  const std::vector<LayerOp>& ops = selective.layer_backward();
  REQUIRE(ops.size() == none.layer_backward().size() + 2);
  std::size_t at = 0;
  while (ops[at].name != "attention_backward") ++at;
  REQUIRE(at >= 2);
  CHECK(ops[at - 2].name == "cp_all_gather");
  CHECK(ops[at - 2].recomputed);
  CHECK(ops[at - 1].name == "attention");
  CHECK(ops[at - 1].recomputed);
  CHECK(counted(ops) ==
        counted(none.layer_backward()) + named(forward, "attention").counted.count());
  for (const LayerOp& op : none.layer_backward()) CHECK_FALSE(op.recomputed);
}

TEST_CASE("FP8 GEMMs at the FP8 rate, attention and the rest in BF16") {
  const KernelModel h100 = gpu("h100");
  TransformerSpec spec = preset("llama3-8b");
  spec.type = DataType::kFp8;
  const LayerProgram program(spec, LayerShard{1, 1, 1, false}, Recompute::kNone, h100);
  const LayerOp& qkv = named(program.layer_forward(), "qkv");
  CHECK(qkv.cost.compute == h100.gemm(Gemm{8192, 6144, 4096, DataType::kFp8}).compute);
  CHECK(qkv.cost.bytes == Bytes((8192 * 4096 + 4096 * 6144 + 8192 * 6144) * 1));
  // Attention reads Q and the gathered K, V and writes O in BF16 (and the fp32 log-sum-exp).
  CHECK(named(program.layer_forward(), "attention").cost.bytes ==
        Bytes(2 * 8192 * 4096 * 2 + 2 * 8192 * 1024 * 2 + 8192 * 32 * 4));
  CHECK_THROWS_AS(LayerProgram(spec, LayerShard{}, Recompute::kNone, gpu("a100")),
                  std::invalid_argument);  // no FP8 tensor cores
}

TEST_CASE("shards Megatron cannot run are refused") {
  const KernelModel a100 = gpu("a100");
  const auto build = [&](const TransformerSpec& spec, LayerShard shard) {
    return LayerProgram(spec, shard, Recompute::kNone, a100);
  };
  CHECK_THROWS_AS(build(preset("llama2-70b"), {1, 16, 1, false}), std::invalid_argument);
  CHECK_THROWS_AS(build(tiny_gpt(), {1, 1, 3, false}), std::invalid_argument);
  CHECK_THROWS_AS(build(tiny_gpt(), {1, 1, 16, false}), std::invalid_argument);  // 32 chunks
  CHECK_NOTHROW(build(tiny_gpt(), {1, 1, 8, false}));
  TransformerSpec four_heads = tiny_gpt();
  four_heads.heads = 4;
  four_heads.kv_heads = 4;
  four_heads.sequence = 6;
  CHECK_NOTHROW(build(four_heads, {1, 4, 1, false}));
  CHECK_THROWS_AS(build(four_heads, {1, 4, 1, true}), std::invalid_argument);  // 6 tokens, TP 4
  CHECK_THROWS_AS(build(tiny_gpt(), {0, 1, 1, false}), std::invalid_argument);
}

TEST_CASE("the optimizer step moves 30 bytes a parameter") {
  const KernelModel h100 = gpu("h100");
  const KernelCost step = optimizer_step(h100, 1'000'000);
  CHECK(step.bytes == Bytes(30'000'000));
  CHECK(step.flops == Flops());
  CHECK(step.memory == h100.memory_bound(Bytes(30'000'000)).memory);
  CHECK_THROWS_AS((void)optimizer_step(h100, -1), std::invalid_argument);
}

}  // namespace
}  // namespace lockstep
