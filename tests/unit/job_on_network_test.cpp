// The data-parallel job with its all-reduce on a network: ranks join the ring as their compute
// ends, and the ring shares the fabric with other traffic.
#include <doctest/doctest.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "completions.hpp"
#include "memory_backend.hpp"
#include "models/collective/ring_collective.hpp"
#include "models/transport/flow_network.hpp"
#include "models/workload/data_parallel_job.hpp"
#include "small_topologies.hpp"

namespace lockstep {
namespace {

DataParallelJobConfig four_ranks_one_slow() {
  DataParallelJobConfig c;
  c.ranks = 4;
  c.steps = 2;
  c.compute_per_step = Duration::ms(1);
  c.gradient_size = Bytes(40'000'000);
  c.slow_ranks = {SlowRank{2, 0.10}};
  return c;
}

// A switch of `hosts` hosts at flow level.
struct Star {
  explicit Star(std::int32_t hosts) : topology(testing::star(hosts)) {}
  Simulator sim;
  Topology topology;
  Routing routing{topology};
  testing::MemoryBackend output;
  FlowNetwork network{sim, routing, FlowNetworkConfig{}, 1, output};
};

// The ring all-reduce of the job's gradient alone on the star, every rank starting at once, with
// NCCL's Simple protocol as the job runs it.
Duration ring_alone(Bytes size) {
  Star star(4);
  RingCollective ring(star.sim, star.network, {{0, 1, 2, 3}}, CollectiveOp::kAllReduce, size,
                      ProtocolOverheads{NcclProtocol::kSimple, 1});
  ring.start();
  (void)star.sim.run();
  REQUIRE(ring.finished());
  return ring.finished_at() - ring.started_at();
}

// Rank 2 computes 1.1 ms, the others 1 ms: they join the ring 100 us early and send what does not
// need rank 2. As a ring whose one rank is late (collective_activity_test.cpp), it then ends one
// whole all-reduce after rank 2 joins: the step's all-reduce, counted from the last arrival, takes
// what the ring takes alone, and the step 1.1 ms plus that.
TEST_CASE("a job's all-reduce on the network starts rank by rank and ends a ring after the last") {
  const DataParallelJobConfig config = four_ranks_one_slow();
  const Duration alone = ring_alone(config.gradient_size);
  Star star(4);
  DataParallelJob job(star.sim, config, 1, star.output, &star.network, 1);
  bool done = false;
  job.when_done([&done] { done = true; });
  job.start();
  (void)star.sim.run();
  job.flush();
  REQUIRE(done);
  CHECK(job.steps_completed() == 2);
  const auto steps = star.output.rows<DataParallelJob::StepRow>("steps");
  REQUIRE(steps.size() == 2);
  for (const DataParallelJob::StepRow& step : steps) {
    CAPTURE(step.step);
    CHECK(step.slowest_rank == 2);
    // Up to the flow level's picosecond rounding of each drain.
    CHECK(std::abs(step.all_reduce_ps - alone.ps()) <= 8);
    CHECK(step.end_ps - step.start_ps == Duration::us(1100).ps() + step.all_reduce_ps);
  }
  CHECK(star.network.messages_in_flight() == 0);
}

// A bulk transfer into rank 1 shares its link with the ring's step into rank 1: every step of the
// ring waits for that slowest link, so the all-reduce takes longer than alone.
TEST_CASE("background traffic on the ring's links slows the job's all-reduce") {
  DataParallelJobConfig config = four_ranks_one_slow();
  config.steps = 1;
  const Duration alone = ring_alone(config.gradient_size);
  Star star(5);
  DataParallelJob job(star.sim, config, 1, star.output, &star.network, 1);
  testing::Completions background;
  star.network.send(4, 1, Bytes(1'000'000'000), 0, background);
  job.when_done([&star] { star.sim.stop(); });
  job.start();
  (void)star.sim.run();
  job.flush();
  REQUIRE(job.steps_completed() == 1);
  const std::int64_t took = star.output.rows<DataParallelJob::StepRow>("steps")[0].all_reduce_ps;
  // The link into rank 1 is shared half and half: the ring runs near half its speed.
  CHECK(static_cast<double>(took) / static_cast<double>(alone.ps()) > 1.6);
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// Placed on hosts 7, 6, 5 and 4 of an 8-host switch, the job's ring runs there and nowhere else,
// and, the switch being symmetric, takes exactly as long as on hosts 0 to 3.
TEST_CASE("a job placed on chosen GPUs runs its all-reduce there") {
  auto run = [](std::vector<std::int32_t> placement) {
    DataParallelJobConfig config = four_ranks_one_slow();
    config.steps = 1;
    config.placement = std::move(placement);
    Simulator sim;
    const Topology topology = testing::star(8);
    const Routing routing(topology);
    testing::MemoryBackend output;
    FlowNetwork network(sim, routing, FlowNetworkConfig{}, 1, output);
    DataParallelJob job(sim, config, 1, output, &network, 1);
    job.start();
    (void)sim.run();
    job.flush();
    REQUIRE(job.steps_completed() == 1);
    std::vector<std::int64_t> uplink_bytes;
    for (NodeId host = 0; host < 8; ++host)
      uplink_bytes.push_back(network.link_bytes_sent(host, 0));
    return std::make_pair(output.rows<DataParallelJob::StepRow>("steps")[0], uplink_bytes);
  };
  const auto [first, first_bytes] = run({});
  const auto [placed, placed_bytes] = run({7, 6, 5, 4});
  CHECK(placed.all_reduce_ps == first.all_reduce_ps);
  CHECK(placed.slowest_rank == 2);
  for (NodeId host = 0; host < 8; ++host) {
    CAPTURE(host);
    CHECK((placed_bytes[static_cast<std::size_t>(host)] > 0) == (host >= 4));
    CHECK((first_bytes[static_cast<std::size_t>(host)] > 0) == (host < 4));
  }
}

}  // namespace
}  // namespace lockstep
