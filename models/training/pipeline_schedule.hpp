// The order in which each pipeline stage runs the forward and backward passes of one training
// step's micro-batches. The executor runs these lists as they are; the timing (bubbles, stalls on
// a slow neighbour) comes from running them, so that a slow stage or link delays the others as
// the dependencies dictate rather than by a formula.
//
// Schedules, with p stages, m micro-batches and v model chunks per stage:
// - GPipe (Huang et al., NeurIPS'19): every forward, then every backward, micro-batches in
//   increasing order (as torch.distributed.pipelining's ScheduleGPipe). Holds all m micro-batches'
//   activations.
// - 1F1B (PipeDream-Flush; Narayanan et al., SC'21 section 2.2.1), as megatron-core's
//   forward_backward_pipelining_without_interleaving (megatron/core/pipeline_parallel/
//   schedules.py): stage s runs min(p - s - 1, m) warm-up forwards, then alternates one forward
//   and one backward, then runs the remaining backwards. Same bubble as GPipe, (p - 1) / m of the
//   ideal time, but at most p - s micro-batches in flight.
// - Interleaved 1F1B (SC'21 section 2.2.2), as forward_backward_pipelining_with_interleaving:
//   chunk c on stage s holds virtual stage c p + s. Forwards go in groups of p micro-batches per
//   chunk (the k-th forward is chunk (k mod p v) / p, micro-batch (k / (p v)) p + k mod p); the
//   k-th backward likewise with the chunks reversed. Warm-up is (p - s - 1) 2 + (v - 1) p forwards
//   (all m v when m = p), then one forward and one backward alternate. The bubble shrinks to
//   (p - 1) / (v m); m must be a multiple of p, Megatron's requirement.
// With communication free, forwards F / v and backwards B / v per chunk, these give exactly
// (m + p - 1)(F + B) for GPipe and 1F1B and m (F + B) + (p - 1)(F + B) / v for interleaved
// (reference.md section 4; checked by the tests).
//
// Left out: Megatron's later relaxations (m not a multiple of p through
// microbatch_group_size_per_vp_stage), zero-bubble and DualPipe schedules that split the backward
// into input and weight gradients, forward-only (inference) steps, and activation recomputation,
// which the cost of a backward carries rather than the order.
#pragma once

#include <cstdint>
#include <vector>

namespace lockstep {

enum class PipelineSchedule : std::uint8_t { kGpipe, kOneFOneB, kInterleaved };

struct PipelineAction {
  enum class Kind : std::uint8_t { kForward, kBackward } kind;
  std::int32_t micro_batch;  // 0 .. m-1
  std::int32_t chunk;        // model chunk on this stage, 0 .. v-1 (always 0 unless interleaved)

  friend bool operator==(const PipelineAction&, const PipelineAction&) = default;
};

// The actions stage `stage` (0 .. p-1) runs in one step, in order. Throws std::invalid_argument
// for p < 1, m < 1, a stage out of range, interleaved with v < 2 or m not a multiple of p, or
// v != 1 for the others.
[[nodiscard]] std::vector<PipelineAction> stage_actions(PipelineSchedule schedule,
                                                        std::int32_t stages, std::int32_t stage,
                                                        std::int32_t micro_batches,
                                                        std::int32_t chunks);

// The most micro-batches whose activations stage `stage` holds at once (forward run, backward not
// yet), each chunk's counted separately for interleaved: GPipe m, 1F1B min(p - stage, m),
// interleaved min(warm-up + 1, m v). For the memory footprint. Throws as stage_actions does.
[[nodiscard]] std::int32_t peak_in_flight(PipelineSchedule schedule, std::int32_t stages,
                                          std::int32_t stage, std::int32_t micro_batches,
                                          std::int32_t chunks);

}  // namespace lockstep
