// Pipeline schedules: Megatron's orders on small cases by hand, and, through a dependency-driven
// evaluator written here, the exact step times of reference.md section 4 ((p - 1) / m bubble for
// GPipe and 1F1B, (p - 1) / (v m) interleaved) and the activations each stage holds at most.
#include "models/training/pipeline_schedule.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

#include "sim/core/time.hpp"

namespace lockstep {
namespace {

using Kind = PipelineAction::Kind;
using Actions = std::vector<PipelineAction>;

PipelineAction forward(std::int32_t micro_batch, std::int32_t chunk = 0) {
  return PipelineAction{Kind::kForward, micro_batch, chunk};
}
PipelineAction backward(std::int32_t micro_batch, std::int32_t chunk = 0) {
  return PipelineAction{Kind::kBackward, micro_batch, chunk};
}

struct Shape {
  PipelineSchedule schedule;
  std::int32_t stages;
  std::int32_t micro_batches;
  std::int32_t chunks;
};

std::vector<Actions> all_stages(const Shape& shape) {
  std::vector<Actions> lists;
  for (std::int32_t stage = 0; stage < shape.stages; ++stage) {
    lists.push_back(
        stage_actions(shape.schedule, shape.stages, stage, shape.micro_batches, shape.chunks));
  }
  return lists;
}

struct StepRun {
  Duration step;
  std::vector<std::int32_t> peak_outstanding;  // per stage: forwards run, backward not yet
};

// Runs every stage's list in order, one action at a time, each as soon as the stage is free and
// its inputs exist: virtual stage k = chunk p + stage forwards micro-batch i after virtual stage
// k - 1 has; it runs backward i after its own forward of i and after virtual stage k + 1's
// backward of i. A forward takes forward_time / v, a backward backward_time / v; communication is
// free. Null when the lists deadlock (an action waits on one that can never run).
std::optional<StepRun> run_step(const std::vector<Actions>& lists, std::int32_t micro_batches,
                                std::int32_t chunks, Duration forward_time,
                                Duration backward_time) {
  REQUIRE(forward_time.ps() % chunks == 0);
  REQUIRE(backward_time.ps() % chunks == 0);
  const auto stages = static_cast<std::int32_t>(lists.size());
  const std::int32_t virtual_stages = stages * chunks;
  const auto slot = [&](std::int32_t virtual_stage, std::int32_t micro_batch) {
    return static_cast<std::size_t>(virtual_stage * micro_batches + micro_batch);
  };
  const std::size_t slots = static_cast<std::size_t>(virtual_stages * micro_batches);
  std::vector<std::optional<Time>> forward_done(slots);
  std::vector<std::optional<Time>> backward_done(slots);

  std::vector<std::size_t> next(lists.size(), 0);
  std::vector<Time> free_at(lists.size());
  std::vector<std::int32_t> outstanding(lists.size(), 0);
  StepRun run{Duration(), std::vector<std::int32_t>(lists.size(), 0)};
  bool progressed = true;
  while (progressed) {
    progressed = false;
    for (std::size_t stage = 0; stage < lists.size(); ++stage) {
      while (next[stage] < lists[stage].size()) {
        const PipelineAction& action = lists[stage][next[stage]];
        const std::int32_t k = action.chunk * stages + static_cast<std::int32_t>(stage);
        std::vector<std::optional<Time>> inputs;
        if (action.kind == Kind::kForward) {
          if (k > 0) inputs.push_back(forward_done[slot(k - 1, action.micro_batch)]);
        } else {
          inputs.push_back(forward_done[slot(k, action.micro_batch)]);
          if (k < virtual_stages - 1) {
            inputs.push_back(backward_done[slot(k + 1, action.micro_batch)]);
          }
        }
        if (std::any_of(inputs.begin(), inputs.end(), [](auto t) { return !t.has_value(); })) {
          break;
        }
        Time start = free_at[stage];
        for (const std::optional<Time>& input : inputs) start = std::max(start, *input);
        const bool is_forward = action.kind == Kind::kForward;
        const Duration length =
            Duration::ps((is_forward ? forward_time : backward_time).ps() / chunks);
        free_at[stage] = start + length;
        (is_forward ? forward_done : backward_done)[slot(k, action.micro_batch)] = free_at[stage];
        outstanding[stage] += is_forward ? 1 : -1;
        run.peak_outstanding[stage] = std::max(run.peak_outstanding[stage], outstanding[stage]);
        ++next[stage];
        progressed = true;
      }
    }
  }
  for (std::size_t stage = 0; stage < lists.size(); ++stage) {
    if (next[stage] < lists[stage].size()) return std::nullopt;
    run.step = std::max(run.step, free_at[stage].since_start());
  }
  return run;
}

constexpr Duration kForwardTime = Duration::ns(120);
constexpr Duration kBackwardTime = Duration::ns(240);

TEST_CASE("GPipe runs every forward, then every backward") {
  CHECK(stage_actions(PipelineSchedule::kGpipe, 3, 1, 2, 1) ==
        Actions{forward(0), forward(1), backward(0), backward(1)});
}

TEST_CASE("1F1B: p - stage - 1 warm-up forwards, one forward one backward, cool-down") {
  CHECK(stage_actions(PipelineSchedule::kOneFOneB, 4, 0, 6, 1) ==
        Actions{forward(0), forward(1), forward(2), forward(3), backward(0), forward(4),
                backward(1), forward(5), backward(2), backward(3), backward(4), backward(5)});
  CHECK(stage_actions(PipelineSchedule::kOneFOneB, 4, 3, 3, 1) ==
        Actions{forward(0), backward(0), forward(1), backward(1), forward(2), backward(2)});
  // Fewer micro-batches than the warm-up wants: all forwards first.
  CHECK(stage_actions(PipelineSchedule::kOneFOneB, 4, 0, 2, 1) ==
        Actions{forward(0), forward(1), backward(0), backward(1)});
}

TEST_CASE("Interleaved 1F1B: groups of p micro-batches per chunk, Megatron's warm-up") {
  // p 2, v 2, m 4. Stage 0 warms up with (2 - 0 - 1) 2 + (2 - 1) 2 = 4 forwards.
  CHECK(stage_actions(PipelineSchedule::kInterleaved, 2, 0, 4, 2) ==
        Actions{forward(0, 0), forward(1, 0), forward(0, 1), forward(1, 1), forward(2, 0),
                backward(0, 1), forward(3, 0), backward(1, 1), forward(2, 1), backward(0, 0),
                forward(3, 1), backward(1, 0), backward(2, 1), backward(3, 1), backward(2, 0),
                backward(3, 0)});
  // Stage 1 warms up with 2.
  CHECK(stage_actions(PipelineSchedule::kInterleaved, 2, 1, 4, 2) ==
        Actions{forward(0, 0), forward(1, 0), forward(0, 1), backward(0, 1), forward(1, 1),
                backward(1, 1), forward(2, 0), backward(0, 0), forward(3, 0), backward(1, 0),
                forward(2, 1), backward(2, 1), forward(3, 1), backward(3, 1), backward(2, 0),
                backward(3, 0)});
  // m = p: every forward is warm-up.
  CHECK(stage_actions(PipelineSchedule::kInterleaved, 2, 1, 2, 2) ==
        Actions{forward(0, 0), forward(1, 0), forward(0, 1), forward(1, 1), backward(0, 1),
                backward(1, 1), backward(0, 0), backward(1, 0)});
}

std::vector<Shape> shapes_to_check() {
  std::vector<Shape> shapes;
  for (const std::int32_t p : {1, 2, 3, 4, 8}) {
    for (const std::int32_t m : {1, p, 4 * p, 2 * p + 1}) {
      shapes.push_back({PipelineSchedule::kGpipe, p, m, 1});
      shapes.push_back({PipelineSchedule::kOneFOneB, p, m, 1});
    }
    for (const std::int32_t v : {2, 3, 4}) {
      for (const std::int32_t m : {p, 2 * p, 4 * p}) {
        shapes.push_back({PipelineSchedule::kInterleaved, p, m, v});
      }
    }
  }
  return shapes;
}

TEST_CASE("Every stage runs each forward and backward once, the backward after the forward") {
  for (const Shape& shape : shapes_to_check()) {
    CAPTURE(static_cast<int>(shape.schedule));
    CAPTURE(shape.stages);
    CAPTURE(shape.micro_batches);
    CAPTURE(shape.chunks);
    for (const Actions& actions : all_stages(shape)) {
      const auto passes = static_cast<std::size_t>(shape.micro_batches * shape.chunks);
      REQUIRE(actions.size() == 2 * passes);
      std::vector<int> forwards(passes, 0);
      std::vector<int> backwards(passes, 0);
      for (const PipelineAction& action : actions) {
        REQUIRE(action.micro_batch >= 0);
        REQUIRE(action.micro_batch < shape.micro_batches);
        REQUIRE(action.chunk >= 0);
        REQUIRE(action.chunk < shape.chunks);
        const auto pass =
            static_cast<std::size_t>(action.chunk * shape.micro_batches + action.micro_batch);
        if (action.kind == Kind::kForward) {
          ++forwards[pass];
        } else {
          CHECK(forwards[pass] == 1);
          ++backwards[pass];
        }
      }
      CHECK(std::all_of(forwards.begin(), forwards.end(), [](int n) { return n == 1; }));
      CHECK(std::all_of(backwards.begin(), backwards.end(), [](int n) { return n == 1; }));
    }
  }
}

TEST_CASE("The evaluator detects an order that cannot run") {
  const std::vector<Actions> backward_first{{backward(0), forward(0)}};
  CHECK_FALSE(run_step(backward_first, 1, 1, kForwardTime, kBackwardTime).has_value());
  // Stage 0 waits for micro-batch 1's backward while stage 1 waits for its forward.
  const std::vector<Actions> crossed{{forward(0), backward(1), forward(1), backward(0)},
                                     {forward(1), forward(0), backward(0), backward(1)}};
  CHECK_FALSE(run_step(crossed, 2, 1, kForwardTime, kBackwardTime).has_value());
}

TEST_CASE("Step times: bubble (p - 1) / m for GPipe and 1F1B, (p - 1) / (v m) interleaved") {
  // B = 2F as in a transformer without recomputation, and B < F, so that a schedule relying on
  // the two being equal would show.
  for (const auto& [forward_time, backward_time] :
       {std::pair{kForwardTime, kBackwardTime}, std::pair{Duration::ns(360), Duration::ns(120)}}) {
    for (const Shape& shape : shapes_to_check()) {
      CAPTURE(static_cast<int>(shape.schedule));
      CAPTURE(shape.stages);
      CAPTURE(shape.micro_batches);
      CAPTURE(shape.chunks);
      const std::optional<StepRun> run = run_step(all_stages(shape), shape.micro_batches,
                                                  shape.chunks, forward_time, backward_time);
      REQUIRE(run.has_value());
      const Duration pass = forward_time + backward_time;
      const Duration ideal = pass * shape.micro_batches;
      const Duration bubble = run->step - ideal;
      if (shape.schedule == PipelineSchedule::kInterleaved) {
        const Duration unsplit_bubble = pass * (shape.stages - 1);
        REQUIRE(unsplit_bubble.ps() % shape.chunks == 0);
        CHECK(run->step == ideal + Duration::ps(unsplit_bubble.ps() / shape.chunks));
        CHECK((bubble * (shape.chunks * shape.micro_batches)).ps() ==
              (ideal * (shape.stages - 1)).ps());
      } else {
        CHECK(run->step == pass * (shape.micro_batches + shape.stages - 1));
        CHECK((bubble * shape.micro_batches).ps() == (ideal * (shape.stages - 1)).ps());
      }
    }
  }
}

TEST_CASE("A small case by hand: 1F1B, p 2, m 2, F 1 us, B 2 us takes 9 us") {
  // Stage 0 (one warm-up forward): F0 0-1, F1 1-2, then B0 once stage 1's B0 ends, 4-6, and B1
  // once stage 1's B1 ends, 7-9. Stage 1 (none): F0 1-2, B0 2-4, F1 4-5, B1 5-7.
  const std::optional<StepRun> run = run_step(all_stages({PipelineSchedule::kOneFOneB, 2, 2, 1}), 2,
                                              1, Duration::us(1), Duration::us(2));
  REQUIRE(run.has_value());
  CHECK(run->step == Duration::us(9));
}

TEST_CASE("peak_in_flight is the most activations a stage holds when the schedule runs") {
  for (const Shape& shape : shapes_to_check()) {
    CAPTURE(static_cast<int>(shape.schedule));
    CAPTURE(shape.stages);
    CAPTURE(shape.micro_batches);
    CAPTURE(shape.chunks);
    const std::optional<StepRun> run =
        run_step(all_stages(shape), shape.micro_batches, shape.chunks, kForwardTime, kBackwardTime);
    REQUIRE(run.has_value());
    for (std::int32_t stage = 0; stage < shape.stages; ++stage) {
      CAPTURE(stage);
      CHECK(peak_in_flight(shape.schedule, shape.stages, stage, shape.micro_batches,
                           shape.chunks) == run->peak_outstanding[static_cast<std::size_t>(stage)]);
    }
  }
  // Reference.md section 4: 1F1B keeps at most p micro-batches in flight, GPipe all m.
  CHECK(peak_in_flight(PipelineSchedule::kOneFOneB, 4, 0, 16, 1) == 4);
  CHECK(peak_in_flight(PipelineSchedule::kOneFOneB, 4, 3, 16, 1) == 1);
  CHECK(peak_in_flight(PipelineSchedule::kGpipe, 4, 3, 16, 1) == 16);
  // Interleaved p 4, v 2, m 8, stage 0: warm-up 3 x 2 + 1 x 4 = 10 chunk-passes, then one more.
  CHECK(peak_in_flight(PipelineSchedule::kInterleaved, 4, 0, 8, 2) == 11);
}

TEST_CASE("Shapes a schedule cannot run are refused") {
  CHECK_THROWS_AS(stage_actions(PipelineSchedule::kOneFOneB, 0, 0, 4, 1), std::invalid_argument);
  CHECK_THROWS_AS(stage_actions(PipelineSchedule::kOneFOneB, 4, 0, 0, 1), std::invalid_argument);
  CHECK_THROWS_AS(stage_actions(PipelineSchedule::kOneFOneB, 4, 4, 4, 1), std::invalid_argument);
  CHECK_THROWS_AS(stage_actions(PipelineSchedule::kOneFOneB, 4, -1, 4, 1), std::invalid_argument);
  CHECK_THROWS_AS(stage_actions(PipelineSchedule::kOneFOneB, 4, 0, 4, 2), std::invalid_argument);
  CHECK_THROWS_AS(stage_actions(PipelineSchedule::kGpipe, 4, 0, 4, 0), std::invalid_argument);
  CHECK_THROWS_WITH_AS(stage_actions(PipelineSchedule::kInterleaved, 4, 0, 8, 1),
                       doctest::Contains("at least 2 model chunks"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(stage_actions(PipelineSchedule::kInterleaved, 4, 0, 6, 2),
                       doctest::Contains("multiple of the pipeline stages"), std::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(peak_in_flight(PipelineSchedule::kInterleaved, 4, 0, 6, 2)),
                  std::invalid_argument);
}

}  // namespace
}  // namespace lockstep
