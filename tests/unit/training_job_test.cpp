// The training job end to end, as `lockstep run` runs it (scenario in, tables out): the checks of
// the issue "Training jobs on the cluster", each on a plan small enough to run in well under a
// second, with what it must show derived beside it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "memory_backend.hpp"
#include "models/training/training_tables.hpp"
#include "models/training/transformer.hpp"
#include "sim/run/run.hpp"
#include "sim/scenario/scenario.hpp"

namespace lockstep {
namespace {

// `servers` DGX servers of `preset` on a non-blocking rail-optimized fabric of `nic` NICs.
std::string machine(int servers, const std::string& model = "analytic",
                    const std::string& preset = "dgx-h100", const std::string& nic = "400Gbps") {
  const int spines = 8;
  return "servers: {preset: " + preset + "}\nnetwork:\n  model: " + model +
         "\n  topology:\n    kind: rail_optimized\n    link_rate: " + nic +
         "\n    link_delay: 1us\n    rail_optimized: {servers: " + std::to_string(servers) +
         ", nics_per_server: 8, spines: " + std::to_string(spines) +
         ", uplinks_per_rail_switch: " + std::to_string(std::max(servers, spines)) +
         "}\n  transport: {payload: 4KiB}\n";
}

struct Ran {
  RunSummary summary;
  std::vector<TrainingStepRow> steps;
  std::vector<TrainingRankStepRow> rank_steps;
  std::vector<TrainingOpRow> ops;
  std::vector<TrainingMemoryRow> memory;

  [[nodiscard]] std::vector<TrainingRankStepRow> of_step(std::int64_t step) const {
    std::vector<TrainingRankStepRow> out;
    for (const TrainingRankStepRow& row : rank_steps) {
      if (row.step == step) out.push_back(row);
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    return out;
  }
  [[nodiscard]] double step_seconds(std::size_t step) const {
    return static_cast<double>(steps.at(step).end_ps - steps.at(step).start_ps) * 1e-12;
  }
  // A recorded rank's ops of `kind` named `name` (any name when empty).
  [[nodiscard]] std::vector<TrainingOpRow> ops_of(std::int64_t rank, const std::string& kind,
                                                  const std::string& name = "") const {
    std::vector<TrainingOpRow> out;
    for (const TrainingOpRow& op : ops) {
      if (op.rank == rank && std::string(op.kind.view()) == kind &&
          (name.empty() || std::string(op.name.view()) == name)) {
        out.push_back(op);
      }
    }
    return out;
  }
};

Ran run(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  std::vector<Override> sets;
  for (const std::string& s : overrides) sets.push_back(set_argument(s));
  const ScenarioLoad load = load_scenario_text(yaml, "job.yaml", sets);
  for (const Diagnostic& d : load.diagnostics.all()) INFO(d.to_string());
  REQUIRE(load.loaded);
  testing::MemoryBackend output;
  Ran ran;
  ran.summary = run_scenario(*load.loaded, output, RunOptions{});
  ran.steps = output.rows<TrainingStepRow>("steps");
  ran.rank_steps = output.rows<TrainingRankStepRow>("rank_steps");
  ran.ops = output.rows<TrainingOpRow>("rank_ops");
  ran.memory = output.rows<TrainingMemoryRow>("rank_memory");
  return ran;
}

std::int64_t parts(const TrainingRankStepRow& r) {
  return r.compute_ps + r.tp_comm_ps + r.cp_comm_ps + r.pp_comm_ps + r.dp_comm_ps + r.bubble_ps +
         r.data_wait_ps + r.checkpoint_ps + r.wait_for_others_ps;
}

std::int64_t duration(const TrainingOpRow& op) { return op.end_ps - op.start_ps; }

// A pipeline of `stages` single-GPU stages in one server whose NVLink is made as good as free (the
// transfers between stages then cost NCCL's latencies, microseconds against milliseconds of
// compute), the vocabulary tiny so that the embedding and the head weigh almost nothing, and no
// data parallelism: the step is compute and bubble.
std::string pipeline(int stages, const std::string& schedule, int virtual_stages,
                     int micro_batches) {
  return "job:\n  model: {preset: llama2-7b, layers: 8, vocabulary: 1024}\n"
         "  parallelism: {tensor: 1, data: 1, pipeline: " +
         std::to_string(stages) + ", virtual_stages: " + std::to_string(virtual_stages) +
         "}\n  global_batch: " + std::to_string(micro_batches) + "\n  schedule: " + schedule +
         "\n  steps: 2\n  record_ops: {steps: 2, ranks: [0]}\n" +
         "servers: {preset: dgx-h100, nvlink_bandwidth: 1000Tbps, nvlink_latency: 0s}\n" +
         machine(1).substr(machine(1).find('\n') + 1);
}

// Test 1: with uniform stages the pipeline costs (p-1)/m of the ideal time for GPipe and 1F1B,
// (p-1)/(v m) interleaved. The ideal is the stage's own compute for the step (its forward and
// backward passes, without the optimizer step); the bubble is what the step adds to it.
double bubble_fraction(const Ran& ran) {
  const TrainingRankStepRow first_stage = ran.of_step(1).at(0);
  std::int64_t optimizer = 0;
  for (const TrainingOpRow& op : ran.ops_of(0, "kernel", "optimizer")) {
    if (op.step == 1) optimizer = duration(op);
  }
  const auto ideal = static_cast<double>(first_stage.compute_ps - optimizer);
  const auto step = static_cast<double>(first_stage.end_ps - first_stage.start_ps - optimizer);
  return (step - ideal) / ideal;
}

TEST_CASE("the pipeline bubble is (p-1)/m for GPipe and 1F1B and (p-1)/(vm) interleaved") {
  for (const std::string schedule : {"gpipe", "1f1b"}) {
    CAPTURE(schedule);
    const double expected = 3.0 / 8.0;
    CHECK(bubble_fraction(run(pipeline(4, schedule, 1, 8))) ==
          doctest::Approx(expected).epsilon(0.02));
  }
  CHECK(bubble_fraction(run(pipeline(4, "interleaved", 2, 8))) ==
        doctest::Approx(3.0 / 16.0).epsilon(0.02));
}

// Test 2: Narayanan et al.'s per-step FLOPs, 72 B s l h^2 (1 + s/6h + V/12lh) without recomputation
// and 96 B s l h^2 (1 + s/6h + V/16lh) with full recomputation (reference.md section 4).
TEST_CASE(
    "the FLOPs the kernels count per step are Narayanan's formula, with and without "
    "recomputation") {
  for (const std::string recompute : {"none", "full"}) {
    CAPTURE(recompute);
    const Ran ran =
        run("job:\n  model: {preset: megatron-18.4b, layers: 4}\n"
            "  parallelism: {tensor: 8, pipeline: 1, data: 2}\n"
            "  global_batch: 8\n  recompute: " +
            recompute + "\n  steps: 1\n" + machine(2, "analytic", "dgx-a100", "200Gbps"));
    REQUIRE(ran.steps.size() == 1);
    TransformerSpec spec = *transformer_preset("megatron-18.4b");
    spec.layers = 4;
    const auto formula =
        static_cast<double>(narayanan_step_flops(spec, 8, recompute == "full").count());
    const double counted = ran.steps[0].tflops_per_gpu * 1e12 * ran.step_seconds(0) * 16;
    CHECK(counted == doctest::Approx(formula).epsilon(0.001));
  }
}

// Test 3: two servers, DP=2 across them over one NIC each. Overlap off, the gradients' reduction
// starts after the last backward kernel, so the compute stream waits for every bucket's
// reduce-scatter and then every parameter all-gather. Overlap on, buckets leave as backward
// produces them: what stays exposed is the last bucket's tail past the end of backward, plus the
// all-gathers, which follow the optimizer either way.
TEST_CASE("overlapping the gradient reduction hides what backward can hide, and only that") {
  const std::string job =
      "job:\n  model: {preset: llama2-7b, layers: 8}\n  parallelism: {tensor: 8, pipeline: 1, "
      "data: 2}\n  global_batch: 4\n  bucket_parameters: 20000000\n  steps: 1\n"
      "  record_ops: {ranks: [0]}\n" +
      machine(2, "analytic", "dgx-h100", "100Gbps");
  std::map<bool, std::int64_t> exposed;
  for (const bool overlap : {false, true}) {
    CAPTURE(overlap);
    const Ran ran =
        run(job, {std::string("job.overlap_grad_reduce=") + (overlap ? "true" : "false")});
    const std::vector<TrainingOpRow> reduces =
        ran.ops_of(0, "collective", "gradient_reduce_scatter");
    const std::vector<TrainingOpRow> gathers = ran.ops_of(0, "collective", "parameter_all_gather");
    REQUIRE(reduces.size() > 2);
    REQUIRE(gathers.size() == reduces.size());
    std::int64_t gathering = 0;
    for (const TrainingOpRow& op : gathers) gathering += duration(op);
    // The last compute before the optimizer: the end of backward.
    std::int64_t backward_end = 0;
    std::int64_t optimizer_start = 0;
    for (const TrainingOpRow& op : ran.ops_of(0, "kernel")) {
      if (std::string(op.name.view()) == "optimizer") {
        optimizer_start = op.start_ps;
      } else {
        backward_end = std::max(backward_end, op.end_ps);
      }
    }
    const std::int64_t last_reduce_end = reduces.back().end_ps;
    CHECK(optimizer_start == last_reduce_end);
    const std::int64_t dp = ran.of_step(0).at(0).dp_comm_ps;
    CHECK(dp == (last_reduce_end - backward_end) + gathering);
    if (!overlap) {
      std::int64_t reducing = 0;
      for (const TrainingOpRow& op : reduces) reducing += duration(op);
      CHECK(last_reduce_end - backward_end == reducing);
    } else {
      // Buckets left while backward ran.
      CHECK(reduces.front().start_ps < backward_end);
    }
    exposed[overlap] = dp;
  }
  CHECK(exposed[true] < exposed[false]);
}

// Test 4: the worked example (scenarios/worked-example.yaml) made small. Scattered, each TP group
// spans 8 nodes, so its collectives cross NICs at 50 GB/s instead of NVLink at 370 GB/s.
TEST_CASE("TP scattered over nodes makes the step several times longer, and TP is the difference") {
  const std::string job =
      "job:\n  model: {preset: llama2-70b, layers: 8}\n  parallelism: {tensor: 8, pipeline: 4, "
      "data: 8}\n  global_batch: 64\n  recompute: selective\n  steps: 1\n  record_ops: {steps: "
      "0}\n" +
      machine(32);
  const Ran packed = run(job);
  const Ran scattered = run(job, {"job.placement=scattered"});
  const double ratio = scattered.step_seconds(0) / packed.step_seconds(0);
  CHECK(ratio > 2.0);
  CHECK(ratio < 5.0);
  std::int64_t tp_packed = 0;
  std::int64_t tp_scattered = 0;
  for (const TrainingRankStepRow& r : packed.rank_steps) tp_packed += r.tp_comm_ps;
  for (const TrainingRankStepRow& r : scattered.rank_steps) tp_scattered += r.tp_comm_ps;
  const double step_difference =
      static_cast<double>(scattered.steps[0].end_ps - packed.steps[0].end_ps);
  const double tp_difference = static_cast<double>(tp_scattered - tp_packed) / 256.0;
  // The rest is the pipeline bubble, which grows with the stages' time per micro-batch.
  CHECK(tp_difference > 0.7 * step_difference);
  const std::vector<TrainingRankStepRow> before = packed.of_step(0);
  const std::vector<TrainingRankStepRow> after = scattered.of_step(0);
  for (std::size_t r = 0; r < 256; ++r) CHECK(after[r].compute_ps == before[r].compute_ps);
}

// Test 5: reference.md section 4's calibration point, Narayanan et al. Table 1: 18.4B parameters
// with t=8, p=1 on 256 A100s (32 DGX A100, 8 x 200 Gb/s HDR each, non-blocking), global batch 1024,
// s=2048, full recomputation: 135 TFLOP/s per GPU, as the paper counts FLOPs (recomputation in).
// The micro-batch is 1 (the paper's Table 1 does not give it).
TEST_CASE("18.4B parameters on 256 A100s run within 10% of the published 135 TFLOP/s per GPU") {
  const Ran ran =
      run("job:\n  model: {preset: megatron-18.4b}\n  parallelism: {tensor: 8, "
          "pipeline: 1, data: 32}\n  global_batch: 1024\n  recompute: full\n"
          "  steps: 1\n  record_ops: {steps: 0}\n" +
          machine(32, "analytic", "dgx-a100", "200Gbps"));
  REQUIRE(ran.steps.size() == 1);
  CHECK(ran.steps[0].tflops_per_gpu == doctest::Approx(135.0).epsilon(0.10));
}

// Test 6: one GPU at 80% clock in a plan where every rank has the same work (TP=8 in each of two
// servers, DP=2): its kernels take 25% longer, its TP peers wait for it in every layer, and the
// other server waits for it in the gradient and parameter collectives.
TEST_CASE("one slow GPU slows every rank's step and is named the slowest rank") {
  const std::string job =
      "job:\n  model: {preset: llama2-7b, layers: 4}\n  parallelism: {tensor: 8, pipeline: 1, "
      "data: 2}\n  global_batch: 4\n  steps: 2\n  record_ops: {steps: 0}\n" +
      machine(2);
  const Ran healthy = run(job);
  const Ran throttled = run(job, {"job.slow_gpus=[{rank: 5, clock: 80%}]"});
  for (const TrainingStepRow& step : throttled.steps) CHECK(step.slowest_rank == 5);
  const std::vector<TrainingRankStepRow> before = healthy.of_step(1);
  const std::vector<TrainingRankStepRow> after = throttled.of_step(1);
  for (std::size_t r = 0; r < after.size(); ++r) {
    CAPTURE(r);
    CHECK(after[r].end_ps - after[r].start_ps > before[r].end_ps - before[r].start_ps);
    CHECK(parts(after[r]) == after[r].end_ps - after[r].start_ps);
    if (r == 5) {
      CHECK(after[r].wait_for_others_ps == 0);
    } else if (r < 8) {
      CHECK(after[r].wait_for_others_ps > 0);  // its TP peers
    } else {
      CHECK(after[r].dp_comm_ps > before[r].dp_comm_ps);  // the other server
    }
  }
  CHECK(after[5].compute_ps > before[5].compute_ps * 12 / 10);
}

// Test 7: Llama 2 70B without tensor parallelism holds 69B / 4 stages of weights per GPU: 17B x
// 18 bytes without the distributed optimizer passes 80 GB before any activation.
TEST_CASE("a plan that does not fit in HBM ends as out of memory, with the footprint per part") {
  const Ran ran =
      run("job:\n  parallelism: {tensor: 1, pipeline: 4, data: 64}\n"
          "  distributed_optimizer: false\n" +
          machine(32));
  CHECK(ran.summary.job_outcome == "out_of_memory");
  CHECK(ran.steps.empty());
  REQUIRE(ran.memory.size() == 256);
  for (const TrainingMemoryRow& m : ran.memory) {
    CHECK(m.fits == 0);
    CHECK(m.total_bytes == m.weights_bytes + m.gradients_bytes + m.optimizer_bytes +
                               m.activations_bytes + m.workspace_bytes);
    CHECK(m.weights_bytes > 30'000'000'000);
  }
  // The worked example fits on every rank; stopped at once, it has recorded its footprint.
  std::ifstream file(std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/worked-example.yaml");
  std::stringstream example;
  example << file.rdbuf();
  const Ran worked = run(example.str(), {"simulation.until=1ns"});
  CHECK(worked.summary.outcome == RunOutcome::kReachedLimit);
  REQUIRE(worked.memory.size() == 256);
  for (const TrainingMemoryRow& m : worked.memory) CHECK(m.fits == 1);
}

// Test 8: each replica's first stage reads global_batch / dp samples a step. A file system of 1
// GB/s shared by the readers makes each batch take R = samples x bytes / share, far beyond the
// step: after the first, each step waits R - T for its batch; with every byte in the local cache
// the wait is gone from the second step on.
TEST_CASE("a slow file system makes data wait appear at step start; a full cache removes it") {
  const std::string job =
      "job:\n  model: {preset: llama2-7b, layers: 4}\n  parallelism: {tensor: 8, pipeline: 1, "
      "data: 2}\n  global_batch: 4\n  steps: 4\n  record_ops: {steps: 0}\n"
      "  storage: {aggregate: 1GB/s, per_node: 1GB/s, latency: 0s}\n"
      "  data: {bytes_per_sample: 100MB, prefetch: 1}\n" +
      machine(2);
  const Ran slow = run(job);
  // Two readers share 1 GB/s: a replica's 2 x 100 MB take 400 ms.
  const std::int64_t read = 400'000'000'000;
  const std::int64_t step_without_wait = slow.of_step(3).at(0).end_ps -
                                         slow.of_step(3).at(0).start_ps -
                                         slow.of_step(3).at(0).data_wait_ps;
  for (std::int64_t step = 1; step < 4; ++step) {
    CAPTURE(step);
    const TrainingRankStepRow row = slow.of_step(step).at(0);
    CHECK(row.data_wait_ps ==
          doctest::Approx(static_cast<double>(read - step_without_wait)).epsilon(0.01));
  }
  const Ran cached = run(job, {"job.data.cache_hit=100%", "job.data.cache_rate=100GB/s"});
  for (std::int64_t step = 1; step < 4; ++step) CHECK(cached.of_step(step).at(0).data_wait_ps == 0);
}

// Test 9: 16 GPUs of Llama 2 7B (4 layers) with TP=8, DP=2 and the distributed optimizer: each rank
// writes its share of 14 bytes per parameter. Synchronous, every rank stalls for the whole
// checkpoint at the aggregate bandwidth (the per-node limits are wider); asynchronous, only for its
// own copy to host memory.
TEST_CASE(
    "a synchronous checkpoint stalls every rank for size / bandwidth, an asynchronous one "
    "for the host copy") {
  const std::string job =
      "job:\n  model: {preset: llama2-7b, layers: 4}\n  parallelism: {tensor: 8, pipeline: 1, "
      "data: 2}\n  global_batch: 4\n  steps: 2\n  record_ops: {steps: 0}\n"
      "  storage: {aggregate: 10GB/s, per_node: 100GB/s, latency: 0s}\n"
      "  checkpoint: {every: 1, host_copy: 20GB/s}\n" +
      machine(2);
  TransformerSpec spec = *transformer_preset("llama2-7b");
  spec.layers = 4;
  const std::int64_t per_rank = layer_parameters(spec, 8) * 4 + embedding_parameters(spec, 8) +
                                output_layer_parameters(spec, 8);
  const double rank_bytes = static_cast<double>((per_rank + 1) / 2 * 14);
  const Ran sync = run(job, {"job.checkpoint.mode=sync"});
  for (const TrainingRankStepRow& row : sync.of_step(0)) {
    CHECK(static_cast<double>(row.checkpoint_ps) ==
          doctest::Approx(rank_bytes * 16 / 10e9 * 1e12).epsilon(0.01));
  }
  const Ran async = run(job, {"job.checkpoint.mode=async"});
  for (const TrainingRankStepRow& row : async.of_step(0)) {
    CHECK(static_cast<double>(row.checkpoint_ps) ==
          doctest::Approx(rank_bytes / 20e9 * 1e12).epsilon(0.001));
  }
}

// Test 10: on a non-blocking fabric without other traffic the three network levels give the same
// step within 5%: the formula, max-min fair flows, and packets with PFC and DCQCN.
TEST_CASE("analytic, flow and packet levels agree on a non-blocking fabric") {
  const std::string job =
      "job:\n  model: {preset: llama2-7b, layers: 4}\n  parallelism: {tensor: 8, pipeline: 2, "
      "data: 2}\n  global_batch: 8\n  steps: 1\n  record_ops: {steps: 0}\n";
  const double analytic = run(job + machine(4, "analytic")).step_seconds(0);
  const double flow = run(job + machine(4, "flow")).step_seconds(0);
  const double packet = run(job + machine(4, "packet")).step_seconds(0);
  CHECK(flow == doctest::Approx(analytic).epsilon(0.05));
  CHECK(packet == doctest::Approx(analytic).epsilon(0.05));
}

}  // namespace
}  // namespace lockstep
