// A training job's collectives cost what `lockstep nccl-tests` times for the same group: inside one
// server NCCL's choice of algorithm and protocol, across servers at packet level the ring with
// NCCL's proxy overhead on every step.
#include "models/training/job_communicators.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "memory_backend.hpp"
#include "models/cluster/collective_timing.hpp"
#include "models/cluster/node_collective_times.hpp"
#include "models/fabric/topology_config.hpp"
#include "models/node/node_preset.hpp"

namespace lockstep {
namespace {

ClusterSpec servers(const char* preset, std::int32_t nodes, NetworkModel level) {
  ClusterSpec spec;
  spec.servers = *node_preset(preset);
  spec.fabric.model = level;
  spec.fabric.topology.kind = TopologyKind::kRailOptimized;
  spec.fabric.topology.link_rate = spec.servers->nic_rate;
  spec.fabric.topology.link_delay = Duration::us(1);
  spec.fabric.topology.switch_buffer = Bytes(32'000'000);
  spec.fabric.topology.rail_optimized =
      RailOptimizedConfig{nodes, spec.servers->gpus, 0, nodes > 1 ? 8 : 0, nodes > 1 ? 8 : 0, {}};
  spec.fabric.transport.payload_per_packet = Bytes(4096);
  return spec;
}

// How long the job's all-reduce over `gpus` takes, alone on the cluster.
Duration job_all_reduce(const ClusterSpec& spec, std::vector<std::int32_t> gpus, Bytes size) {
  Simulator sim;
  const Topology topology = build_topology(spec.fabric.topology);
  const Routing routing(topology);
  testing::MemoryBackend output;
  Cluster cluster(sim, spec, routing, output);
  JobCommunicators communicators(sim, cluster, spec, spec.fabric.model);
  const std::int32_t group = communicators.add_group(std::move(gpus));
  const std::unique_ptr<Collective> all_reduce =
      communicators.collective(group, CollectiveOp::kAllReduce, size, [](std::int32_t, Time) {});
  all_reduce->when_finished([&sim] { sim.stop(); });
  all_reduce->start();
  (void)sim.run();
  REQUIRE(all_reduce->finished());
  return all_reduce->finished_at() - all_reduce->started_at();
}

TEST_CASE("a job's all-reduce inside a server costs NCCL's choice there, at every level") {
  const Bytes size(std::int64_t{64} << 20);
  for (const NetworkModel level :
       {NetworkModel::kAnalytic, NetworkModel::kFlow, NetworkModel::kPacket}) {
    const ClusterSpec spec = servers("dgx-h100", 2, level);
    CHECK(job_all_reduce(spec, {8, 9, 10, 11, 12, 13, 14, 15}, size) ==
          NodeCollectiveTimes(spec).time(CollectiveOp::kAllReduce, size, 8));
  }
}

// On DGX A100s (AMD CPUs) NCCL's proxy overhead, 3 x 2 us a step, exceeds Simple's NVLink step.
TEST_CASE("a job's ring across servers at packet level is nccl-tests' ring with Simple") {
  const ClusterSpec spec = servers("dgx-a100", 2, NetworkModel::kPacket);
  const Bytes size(std::int64_t{4} << 20);
  std::vector<std::int32_t> everyone;
  for (std::int32_t gpu = 0; gpu < 16; ++gpu) everyone.push_back(gpu);
  CollectiveSetup setup;
  setup.cluster = spec;
  setup.channels = 0;  // NCCL's for the size, as the job's ring runs
  const Topology topology = build_topology(spec.fabric.topology);
  const Routing routing(topology);
  const std::optional<TimedCollective> ring =
      time_collective(setup, routing, CollectiveOp::kAllReduce, size, NcclAlgorithm::kRing,
                      NcclProtocol::kSimple, [] { return false; });
  REQUIRE(ring.has_value());
  CHECK(static_cast<double>(job_all_reduce(spec, everyone, size).ps()) ==
        doctest::Approx(static_cast<double>(ring->time.ps())).epsilon(0.001));
}

}  // namespace
}  // namespace lockstep
