// A training job's collectives cost what `lockstep nccl-tests` times for the same group: NCCL's
// choice of algorithm and protocol for the size, inside one server as across servers.
#include "models/training/job_communicators.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "completions.hpp"
#include "memory_backend.hpp"
#include "models/cluster/collective_timing.hpp"
#include "models/cluster/nccl_collective.hpp"
#include "models/cluster/node_collective_times.hpp"
#include "models/collective/communicator.hpp"
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

// A job's all-reduce over `gpus` on a cluster of its own.
struct JobAllReduce {
  JobAllReduce(const ClusterSpec& spec, std::vector<std::int32_t> gpus, Bytes size)
      : topology(build_topology(spec.fabric.topology)),
        routing(topology),
        cluster(sim, spec, routing, output),
        communicators(sim, cluster, spec, spec.fabric.model),
        all_reduce(communicators.collective(communicators.add_group(std::move(gpus)),
                                            CollectiveOp::kAllReduce, size,
                                            [](std::int32_t, Time) {})) {}

  Simulator sim;
  Topology topology;
  Routing routing;
  testing::MemoryBackend output;
  Cluster cluster;
  JobCommunicators communicators;
  std::unique_ptr<Collective> all_reduce;
};

// How long `collective` takes from its start, alone on `sim`.
Duration run_alone(Simulator& sim, Collective& collective) {
  collective.when_finished([&sim] { sim.stop(); });
  collective.start();
  (void)sim.run();
  REQUIRE(collective.finished());
  return collective.finished_at() - collective.started_at();
}

// How long the job's all-reduce over `gpus` takes, alone on the cluster.
Duration job_all_reduce(const ClusterSpec& spec, std::vector<std::int32_t> gpus, Bytes size) {
  JobAllReduce job(spec, std::move(gpus), size);
  return run_alone(job.sim, *job.all_reduce);
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

// nccl-tests' time for the same collective alone: NCCL's choice for the size, laid out as NCCL
// does.
Duration nccl_tests_time(const ClusterSpec& spec, Bytes size, NcclAlgorithm algorithm,
                         NcclProtocol protocol) {
  CollectiveSetup setup;
  setup.cluster = spec;
  const Topology topology = build_topology(spec.fabric.topology);
  const Routing routing(topology);
  const std::optional<TimedCollective> timed = time_collective(
      setup, routing, CollectiveOp::kAllReduce, size, algorithm, protocol, [] { return false; });
  REQUIRE(timed.has_value());
  return timed->time;
}

std::vector<std::int32_t> first_gpus(std::int32_t count) {
  std::vector<std::int32_t> gpus;
  for (std::int32_t gpu = 0; gpu < count; ++gpu) gpus.push_back(gpu);
  return gpus;
}

// Across two DGX A100s NCCL's model picks its tree with LL128 for 4 MiB, not the ring.
TEST_CASE("a job's all-reduce across servers at packet level is nccl-tests' run of NCCL's choice") {
  const ClusterSpec spec = servers("dgx-a100", 2, NetworkModel::kPacket);
  const Bytes size(std::int64_t{4} << 20);
  const NcclCommunicator communicator{spec.servers, 2, 8, spec.fabric.topology.link_rate};
  const auto [algorithm, protocol] =
      nccl_default_choice(communicator, CollectiveOp::kAllReduce, size);
  CHECK(algorithm == NcclAlgorithm::kTree);
  CHECK(protocol == NcclProtocol::kLL128);
  CHECK(static_cast<double>(job_all_reduce(spec, first_gpus(16), size).ps()) ==
        doctest::Approx(static_cast<double>(nccl_tests_time(spec, size, algorithm, protocol).ps()))
            .epsilon(0.001));
}

// Across two DGX H100s NCCL runs NVLS-Tree for 64 MiB: the job's all-reduce takes what nccl-tests
// times for it, at flow level as at packet level, well below the ring's time there.
TEST_CASE(
    "a job's all-reduce across H100 servers runs NCCL's NVLS-Tree, at flow and packet level") {
  const Bytes size(std::int64_t{64} << 20);
  for (const NetworkModel level : {NetworkModel::kFlow, NetworkModel::kPacket}) {
    CAPTURE(static_cast<int>(level));
    const ClusterSpec spec = servers("dgx-h100", 2, level);
    const NcclCommunicator communicator{spec.servers, 2, 8, spec.fabric.topology.link_rate};
    CHECK(nccl_default_choice(communicator, CollectiveOp::kAllReduce, size) ==
          std::pair{NcclAlgorithm::kNvlsTree, NcclProtocol::kSimple});
    const Duration job = job_all_reduce(spec, first_gpus(16), size);
    CHECK(
        static_cast<double>(job.ps()) ==
        doctest::Approx(
            static_cast<double>(
                nccl_tests_time(spec, size, NcclAlgorithm::kNvlsTree, NcclProtocol::kSimple).ps()))
            .epsilon(0.001));
    CHECK(job < nccl_tests_time(spec, size, NcclAlgorithm::kRing, NcclProtocol::kSimple));
  }
}

// On the analytic level a group across servers pays what the flow level takes for it alone on the
// same fabric, in whatever order the group lists its members: across two DGX H100s, NCCL's
// NVLS-Tree as nccl-tests times it, well under the ring's time.
TEST_CASE("a job's all-reduce across servers on the analytic level costs NCCL's choice alone") {
  const Bytes size(std::int64_t{64} << 20);
  const ClusterSpec analytic = servers("dgx-h100", 2, NetworkModel::kAnalytic);
  const ClusterSpec flow = servers("dgx-h100", 2, NetworkModel::kFlow);
  const Duration at_flow = job_all_reduce(flow, first_gpus(16), size);
  CHECK(job_all_reduce(analytic, first_gpus(16), size) == at_flow);
  std::vector<std::int32_t> reversed = first_gpus(16);
  std::reverse(reversed.begin(), reversed.end());
  CHECK(job_all_reduce(analytic, reversed, size) == at_flow);
  const Duration nvls_tree =
      nccl_tests_time(flow, size, NcclAlgorithm::kNvlsTree, NcclProtocol::kSimple);
  CHECK(static_cast<double>(at_flow.ps()) ==
        doctest::Approx(static_cast<double>(nvls_tree.ps())).epsilon(0.001));
  CHECK(nvls_tree < nccl_tests_time(flow, size, NcclAlgorithm::kRing, NcclProtocol::kSimple));
}

// GPU 0 of each of eight DGX A100s: NCCL runs 256 KiB on its ring with LL and 4 MiB with LL128,
// whose channels carry less than the NICs (LL's ceiling across nodes, LL128's speed per channel).
// The flow level's fluid ring is held to NCCL's speed as the packet level's channels are: the two
// levels agree.
TEST_CASE("a job's ring across servers at flow level keeps NCCL's speed for its channels") {
  std::vector<std::int32_t> first_of_each;
  for (std::int32_t node = 0; node < 8; ++node) first_of_each.push_back(node * 8);
  const ClusterSpec flow = servers("dgx-a100", 8, NetworkModel::kFlow);
  const ClusterSpec packet = servers("dgx-a100", 8, NetworkModel::kPacket);
  const NcclCommunicator communicator{flow.servers, 8, 1, flow.fabric.topology.link_rate};
  for (const auto& [size, protocol] : {std::pair{Bytes(256 << 10), NcclProtocol::kLL},
                                       std::pair{Bytes(4 << 20), NcclProtocol::kLL128}}) {
    CAPTURE(size.count());
    CHECK(nccl_default_choice(communicator, CollectiveOp::kAllReduce, size) ==
          std::pair{NcclAlgorithm::kRing, protocol});
    const Duration at_flow = job_all_reduce(flow, first_of_each, size);
    const Duration at_packet = job_all_reduce(packet, first_of_each, size);
    MESSAGE("flow ", at_flow.ps(), " packet ", at_packet.ps());
    CHECK(static_cast<double>(at_flow.ps()) ==
          doctest::Approx(static_cast<double>(at_packet.ps())).epsilon(0.05));
  }
}

// A job's collectives are aborted when a watchdog fires: NCCL's NVLS-Tree across two DGX H100s,
// stopped in mid-flight at packet level, sends nothing more, drains and can be destroyed.
TEST_CASE("a job's NVLS-Tree all-reduce aborted mid-way sends nothing more and settles") {
  JobAllReduce job(servers("dgx-h100", 2, NetworkModel::kPacket), first_gpus(16),
                   Bytes(std::int64_t{64} << 20));
  Simulator& sim = job.sim;
  const std::unique_ptr<Collective>& all_reduce = job.all_reduce;
  all_reduce->start();
  (void)sim.run(Time::zero() + Duration::us(100));
  REQUIRE(all_reduce->running());
  REQUIRE(all_reduce->messages_in_flight() > 0);
  all_reduce->abort();
  (void)sim.run(Time::zero() + Duration::ms(10));
  CHECK_FALSE(all_reduce->finished());
  CHECK(all_reduce->settled());
}

// A rail-only fabric (no spines) has no path between GPU 0 of one server and GPU 1 of another:
// their flow-level ring cannot run, so on the analytic level the pair pays the ring's alpha-beta
// formula, which knows no paths: Simple's base latency, then two steps of Simple's network
// latency and the 400 Gb/s NIC's rate.
TEST_CASE("a group the fabric cannot connect pays the ring's formula on the analytic level") {
  ClusterSpec spec = servers("dgx-h100", 2, NetworkModel::kAnalytic);
  spec.fabric.topology.rail_optimized.spines = 0;
  spec.fabric.topology.rail_optimized.uplinks_per_rail_switch = 0;
  const Bytes size(1 << 20);
  const ProtocolCost simple = protocol_cost(NcclProtocol::kSimple, NcclAlgorithm::kRing);
  CHECK(job_all_reduce(spec, {0, 9}, size) ==
        simple.base_latency +
            ring_collective_time(CollectiveOp::kAllReduce, 2, size,
                                 AlphaBeta{simple.network_step, spec.servers->nic_rate}));
}

// The fabric of cluster_test's queue-pair case at flow level: four DGX H100s in two rail groups
// joined by two spines, a job's ring over the servers 0, 2, 1, 3 crossing the spines at every hop
// between servers. NCCL runs 1 GiB on its ring, which the job streams as a fluid: with eight queue
// pairs per connection each channel's stream between servers splits over eight flows, which ECMP
// spreads where one collided: 11.0 ms becomes 7.3 ms. On the analytic level the job pays the same
// fluid alone.
TEST_CASE("a job's ring over collided spines speeds up with more queue pairs per connection") {
  auto time = [](std::int32_t queue_pairs, NetworkModel level) {
    ClusterSpec spec = servers("dgx-h100", 4, level);
    spec.fabric.topology.rail_optimized = RailOptimizedConfig{4, 8, 2, 2, 2, {}};
    spec.hosts.queue_pairs_per_connection = queue_pairs;
    std::vector<std::int32_t> gpus;
    for (const std::int32_t server : {0, 2, 1, 3}) {
      for (std::int32_t gpu = 0; gpu < 8; ++gpu) gpus.push_back(server * 8 + gpu);
    }
    return job_all_reduce(spec, gpus, Bytes(std::int64_t{1} << 30));
  };
  const Duration one = time(1, NetworkModel::kFlow);
  const Duration eight = time(8, NetworkModel::kFlow);
  MESSAGE(one.ps() << " " << eight.ps() << " " << time(1, NetworkModel::kAnalytic).ps() << " "
                   << time(8, NetworkModel::kAnalytic).ps());
  CHECK(static_cast<double>(eight.ps()) < 0.8 * static_cast<double>(one.ps()));
  CHECK(time(8, NetworkModel::kAnalytic) == eight);
}

// How long an all-reduce of `size` over every GPU of `nodes` servers of `preset` at flow level
// takes while GPU 0 sends `beside` to GPU 0 of the next server, over the same rail, from the
// start: the job's (`job`), or NCCL's choice run step by step as nccl-tests runs it, on the job's
// queue pairs (so that ECMP puts both on the same paths).
Duration all_reduce_beside(const char* preset, std::int32_t nodes, Bytes size, Bytes beside,
                           bool job) {
  const ClusterSpec spec = servers(preset, nodes, NetworkModel::kFlow);
  const std::int32_t gpus = spec.servers->gpus;
  JobAllReduce fixture(spec, first_gpus(nodes * gpus), size);
  Simulator& sim = fixture.sim;
  CommunicatorNetwork members(fixture.cluster.network(), first_gpus(nodes * gpus),
                              JobCommunicators::kFirstQueuePair);
  const NcclCommunicator communicator{spec.servers, nodes, gpus, spec.fabric.topology.link_rate};
  const auto [algorithm, protocol] =
      nccl_default_choice(communicator, CollectiveOp::kAllReduce, size);
  const std::unique_ptr<Collective> stepped =
      make_nccl_collective(sim, members, communicator, CollectiveOp::kAllReduce, size, algorithm,
                           protocol)
          .collective;
  Collective& all_reduce = job ? *fixture.all_reduce : *stepped;
  testing::Completions background;
  if (beside > Bytes(0)) (void)fixture.cluster.network().send(0, gpus, beside, 7, background);
  return run_alone(sim, all_reduce);
}

struct Shape {
  const char* preset;
  std::int32_t nodes;
  Bytes size;
  NcclAlgorithm algorithm;
  NcclProtocol protocol;
};

void check_choice(const Shape& shape) {
  const ClusterSpec spec = servers(shape.preset, shape.nodes, NetworkModel::kFlow);
  const NcclCommunicator communicator{spec.servers, shape.nodes, spec.servers->gpus,
                                      spec.fabric.topology.link_rate};
  REQUIRE(nccl_default_choice(communicator, CollectiveOp::kAllReduce, shape.size) ==
          std::pair{shape.algorithm, shape.protocol});
}

// At flow level a job's NVLS-Tree or tree streams as the fluid of its own step-by-step run
// (fluid_replay.hpp): alone it takes that run's time to the picosecond; beside a flow on one of
// the rails that outlasts it, it is held back about as that run is by the rail the two share. The
// step-by-step runs take 5% to 26% longer there; the fluids are within 10% of them (+10%, +0.4%
// and -8.5%).
TEST_CASE("a job's tree at flow level is held back by other traffic as NCCL's steps are") {
  for (const Shape& shape : {Shape{"dgx-h100", 2, Bytes(std::int64_t{64} << 20),
                                   NcclAlgorithm::kNvlsTree, NcclProtocol::kSimple},
                             Shape{"dgx-h100", 4, Bytes(std::int64_t{8} << 20),
                                   NcclAlgorithm::kNvlsTree, NcclProtocol::kSimple},
                             Shape{"dgx-a100", 2, Bytes(std::int64_t{4} << 20),
                                   NcclAlgorithm::kTree, NcclProtocol::kLL128}}) {
    CAPTURE(shape.preset);
    CAPTURE(shape.nodes);
    check_choice(shape);
    const Duration alone = all_reduce_beside(shape.preset, shape.nodes, shape.size, Bytes(0), true);
    CHECK(alone == all_reduce_beside(shape.preset, shape.nodes, shape.size, Bytes(0), false));
    const Bytes beside = shape.size * 16;
    const Duration job = all_reduce_beside(shape.preset, shape.nodes, shape.size, beside, true);
    const Duration stepped =
        all_reduce_beside(shape.preset, shape.nodes, shape.size, beside, false);
    CHECK(static_cast<double>(stepped.ps()) > 1.04 * static_cast<double>(alone.ps()));
    CHECK(static_cast<double>(job.ps()) ==
          doctest::Approx(static_cast<double>(stepped.ps())).epsilon(0.10));
  }
}

// A ring across servers of eight GPUs at flow level streams as a fluid (fluid_ring.hpp), one flow
// per NCCL channel and link. Seven of a ring's eight hops in a server cross NVLink and wait on
// NCCL's proxy there, the eighth crosses the fabric: its latencies are those of its hops, as the
// step-by-step ring takes them. Alone it takes that ring's time within 5% (+0.9% and +4.5%);
// charging every step the fabric's latency, as it did, made it 40% and 55% slower. Beside a flow
// on one rail that outlasts it, it is held back more than the step-by-step ring (+14% and +21%
// here): a channel's flow shares the rail with the other flow all along, where the step-by-step
// ring's transfers come in bursts held below the rail's rate, between which the other flow has
// the rail to itself.
TEST_CASE("a job's ring over servers of eight GPUs at flow level takes the step-by-step time") {
  for (const Shape& shape : {Shape{"dgx-h100", 4, Bytes(std::int64_t{256} << 20),
                                   NcclAlgorithm::kRing, NcclProtocol::kSimple},
                             Shape{"dgx-a100", 4, Bytes(std::int64_t{16} << 20),
                                   NcclAlgorithm::kRing, NcclProtocol::kLL128}}) {
    CAPTURE(shape.preset);
    check_choice(shape);
    const Duration job = all_reduce_beside(shape.preset, shape.nodes, shape.size, Bytes(0), true);
    const Duration stepped =
        all_reduce_beside(shape.preset, shape.nodes, shape.size, Bytes(0), false);
    CHECK(static_cast<double>(job.ps()) ==
          doctest::Approx(static_cast<double>(stepped.ps())).epsilon(0.05));
    const Bytes beside = shape.size * 16;
    const Duration job_beside =
        all_reduce_beside(shape.preset, shape.nodes, shape.size, beside, true);
    const Duration stepped_beside =
        all_reduce_beside(shape.preset, shape.nodes, shape.size, beside, false);
    CHECK(job_beside > stepped_beside);
    CHECK(static_cast<double>(job_beside.ps()) < 1.25 * static_cast<double>(stepped_beside.ps()));
  }
}

// How long the job's send of `size` from GPU `from` to GPU `to` takes, alone on the cluster.
Duration job_send(const ClusterSpec& spec, std::int32_t from, std::int32_t to, Bytes size) {
  Simulator sim;
  const Topology topology = build_topology(spec.fabric.topology);
  const Routing routing(topology);
  testing::MemoryBackend output;
  Cluster cluster(sim, spec, routing, output);
  JobCommunicators communicators(sim, cluster, spec, spec.fabric.model);
  const std::unique_ptr<Collective> send = communicators.send(
      communicators.add_group({from, to}), 0, 1, size, [](std::int32_t, Time) {});
  return run_alone(sim, *send);
}

// A pipeline transfer across servers on the analytic level takes what the flow level's send takes
// alone on the same fabric: its packets' headers and the path's store-and-forward included, which
// the alpha-beta formula it used to pay (Simple's latencies, the rail's two 1 us cables, the NIC's
// rate) leaves out: 1,384.3 us against 1,363.9 us for 64 MiB at 4 KiB packets.
TEST_CASE("a send across servers on the analytic level takes what the flow level's takes alone") {
  const Bytes size(std::int64_t{64} << 20);
  const Duration at_flow = job_send(servers("dgx-h100", 2, NetworkModel::kFlow), 3, 11, size);
  const ClusterSpec analytic = servers("dgx-h100", 2, NetworkModel::kAnalytic);
  CHECK(job_send(analytic, 3, 11, size) == at_flow);
  const ProtocolCost simple = protocol_cost(NcclProtocol::kSimple, NcclAlgorithm::kRing);
  const Duration formula =
      simple.base_latency + ring_collective_time(CollectiveOp::kSendRecv, 2, size,
                                                 AlphaBeta{Duration::us(2) + simple.network_step,
                                                           analytic.servers->nic_rate});
  CHECK(at_flow > formula);
  CHECK(static_cast<double>(at_flow.ps()) ==
        doctest::Approx(static_cast<double>(formula.ps())).epsilon(0.02));
  // Inside a server it is still the formula over NVLink.
  CHECK(job_send(analytic, 3, 5, size) ==
        job_send(servers("dgx-h100", 2, NetworkModel::kFlow), 3, 5, size));
}

}  // namespace
}  // namespace lockstep
