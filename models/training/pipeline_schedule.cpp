// The per-stage order of forward and backward passes under GPipe, 1F1B and interleaved 1F1B; the
// model, its sources and what it leaves out are in pipeline_schedule.hpp.
#include "models/training/pipeline_schedule.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace lockstep {
namespace {

void check_schedule(PipelineSchedule schedule, std::int32_t stages, std::int32_t stage,
                    std::int32_t micro_batches, std::int32_t chunks) {
  if (stages < 1) {
    throw std::invalid_argument("a pipeline of " + std::to_string(stages) + " stages");
  }
  if (micro_batches < 1) {
    throw std::invalid_argument(std::to_string(micro_batches) + " micro-batches per step");
  }
  if (stage < 0 || stage >= stages) {
    throw std::invalid_argument("stage " + std::to_string(stage) + " of a pipeline of " +
                                std::to_string(stages) + " stages");
  }
  if (schedule == PipelineSchedule::kInterleaved) {
    if (chunks < 2) {
      throw std::invalid_argument(
          "the interleaved schedule needs at least 2 model chunks per "
          "stage, not " +
          std::to_string(chunks));
    }
    if (micro_batches % stages != 0) {
      throw std::invalid_argument(
          "the interleaved schedule needs micro-batches (" + std::to_string(micro_batches) +
          ") to be a multiple of the pipeline stages (" + std::to_string(stages) + ")");
    }
  } else if (chunks != 1) {
    throw std::invalid_argument(
        "only the interleaved schedule splits a stage into model chunks; "
        "this one has " +
        std::to_string(chunks));
  }
}

// All three schedules are the same shape: warm-up forwards, then one forward and one backward in
// turn, then the backwards left. They differ in how many forwards the warm-up runs (GPipe all of
// them) and, for interleaved, in which chunk the k-th pass belongs to.
std::int32_t warmup_forwards(PipelineSchedule schedule, std::int32_t stages, std::int32_t stage,
                             std::int32_t micro_batches, std::int32_t chunks) {
  const std::int32_t passes = micro_batches * chunks;
  switch (schedule) {
    case PipelineSchedule::kGpipe:
      return passes;
    case PipelineSchedule::kOneFOneB:
      return std::min(stages - stage - 1, passes);
    case PipelineSchedule::kInterleaved:
      // Stage s runs its first p micro-batches through chunks 0 .. v-2, (v - 1) p forwards, then
      // keeps forwarding while micro-batch 0 crosses the later stages in the last chunk and its
      // backward comes back: two passes' time per later stage. Megatron runs every forward as
      // warm-up when m = p.
      if (micro_batches == stages) return passes;
      return std::min((stages - stage - 1) * 2 + (chunks - 1) * stages, passes);
  }
  return passes;
}

// The micro-batch and chunk of a stage's k-th forward (or backward): groups of p micro-batches go
// through chunk 0, 1, ... v-1 in turn (backwards through v-1 down to 0). With v = 1 this is
// micro-batch k.
PipelineAction nth_pass(PipelineAction::Kind kind, std::int32_t k, std::int32_t stages,
                        std::int32_t chunks) {
  const std::int32_t group = stages * chunks;
  const std::int32_t chunk_in_order = k % group / stages;
  const std::int32_t chunk =
      kind == PipelineAction::Kind::kForward ? chunk_in_order : chunks - 1 - chunk_in_order;
  return PipelineAction{kind, k / group * stages + k % stages, chunk};
}

}  // namespace

std::vector<PipelineAction> stage_actions(PipelineSchedule schedule, std::int32_t stages,
                                          std::int32_t stage, std::int32_t micro_batches,
                                          std::int32_t chunks) {
  check_schedule(schedule, stages, stage, micro_batches, chunks);
  const std::int32_t passes = micro_batches * chunks;
  const std::int32_t warmup = warmup_forwards(schedule, stages, stage, micro_batches, chunks);
  constexpr auto kForward = PipelineAction::Kind::kForward;
  constexpr auto kBackward = PipelineAction::Kind::kBackward;

  std::vector<PipelineAction> actions;
  actions.reserve(2 * static_cast<std::size_t>(passes));
  for (std::int32_t k = 0; k < warmup; ++k)
    actions.push_back(nth_pass(kForward, k, stages, chunks));
  for (std::int32_t k = 0; k < passes - warmup; ++k) {
    actions.push_back(nth_pass(kForward, warmup + k, stages, chunks));
    actions.push_back(nth_pass(kBackward, k, stages, chunks));
  }
  for (std::int32_t k = passes - warmup; k < passes; ++k) {
    actions.push_back(nth_pass(kBackward, k, stages, chunks));
  }
  return actions;
}

// Warm-up forwards, plus the steady state's first forward, which runs before the first backward.
std::int32_t peak_in_flight(PipelineSchedule schedule, std::int32_t stages, std::int32_t stage,
                            std::int32_t micro_batches, std::int32_t chunks) {
  check_schedule(schedule, stages, stage, micro_batches, chunks);
  return std::min(warmup_forwards(schedule, stages, stage, micro_batches, chunks) + 1,
                  micro_batches * chunks);
}

}  // namespace lockstep
