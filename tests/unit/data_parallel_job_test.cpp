#include <doctest/doctest.h>

#include "memory_backend.hpp"
#include "models/workload/data_parallel_job.hpp"

namespace lockstep {
namespace {

using Job = DataParallelJob;

DataParallelJobConfig four_ranks_one_slow() {
  DataParallelJobConfig c;
  c.ranks = 4;
  c.steps = 3;
  c.compute_per_step = Duration::ms(100);
  c.compute_jitter = 0.0;
  c.gradient_size = Bytes(4'000'000);
  c.all_reduce = GradientAllReduce{AllReduceAlgorithm::kRing, Duration::us(10), BitRate::gbps(100)};
  c.slow_ranks = {SlowRank{2, 0.10}};
  return c;
}

struct Run {
  testing::MemoryBackend output;
  Time end;
  std::int64_t steps = 0;
};

void run(const DataParallelJobConfig& config, std::uint64_t seed, Run& result) {
  Simulator sim;
  Job job(sim, config, seed, result.output);
  job.start();
  (void)sim.run();
  job.flush();
  result.end = sim.now();
  result.steps = job.steps_completed();
}

// Without jitter each step is the slow rank's 110 ms plus the ring all-reduce of 4 MB over 4 ranks
// at 100 Gb/s with 10 us per step (540 us, see alpha_beta_test): 110.54 ms; three steps 331.62 ms.
TEST_CASE("every step waits for the slowest rank, then for the all-reduce") {
  Run r;
  run(four_ranks_one_slow(), 1, r);
  CHECK(r.steps == 3);
  CHECK(r.end == Time::zero() + Duration::us(331'620));

  const auto steps = r.output.rows<Job::StepRow>("steps");
  REQUIRE(steps.size() == 3);
  CHECK(steps[1].start_ps == Duration::us(110'540).ps());
  CHECK(steps[1].slowest_rank == 2);
  CHECK(steps[1].all_reduce_ps == Duration::us(540).ps());

  const auto rank_steps = r.output.rows<Job::RankStepRow>("rank_steps");
  REQUIRE(rank_steps.size() == 12);
  for (const auto& row : rank_steps) {
    const bool slow = row.rank == 2;
    CHECK(row.compute_ps == Duration::ms(slow ? 110 : 100).ps());
    CHECK(row.wait_for_slowest_ps == Duration::ms(slow ? 0 : 10).ps());
    CHECK(row.exposed_comm_ps == Duration::us(540).ps());
  }
  const auto ops = r.output.rows<Job::OpRow>("rank_ops");
  CHECK(ops.size() == 24);
  std::int64_t reduced = 0;
  for (const auto& op : ops) {
    CHECK(op.end_ps >= op.start_ps);
    if (op.kind.view() == "all_reduce") reduced += op.bytes;
  }
  CHECK(reduced == 12 * 4'000'000);
}

TEST_CASE("jittered compute is reproducible for a seed and changes with it") {
  DataParallelJobConfig config = four_ranks_one_slow();
  config.compute_jitter = 0.05;
  Run a;
  Run b;
  Run c;
  run(config, 11, a);
  run(config, 11, b);
  run(config, 12, c);
  CHECK(a.end == b.end);
  CHECK(a.output.stored("rank_ops").bytes == b.output.stored("rank_ops").bytes);
  CHECK(a.end != c.end);
}

TEST_CASE("a rank's wait plus its compute is the same for all ranks in a step") {
  DataParallelJobConfig config = four_ranks_one_slow();
  config.compute_jitter = 0.03;
  config.ranks = 16;
  Run r;
  run(config, 5, r);
  const auto rank_steps = r.output.rows<Job::RankStepRow>("rank_steps");
  const auto steps = r.output.rows<Job::StepRow>("steps");
  for (const auto& row : rank_steps) {
    const auto& step = steps[static_cast<std::size_t>(row.step)];
    CHECK(row.compute_ps + row.wait_for_slowest_ps + row.exposed_comm_ps ==
          step.end_ps - step.start_ps);
    CHECK(row.wait_for_slowest_ps >= 0);
  }
}

}  // namespace
}  // namespace lockstep
