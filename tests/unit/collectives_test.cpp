// Collectives on the fabric: the ring all-reduce against the alpha-beta model on both backends, the
// step and message structure of each operation, and a slow link pacing the whole ring.
#include "models/collective/collnet_direct_all_reduce.hpp"
#include "models/collective/nvls_all_reduce.hpp"
#include "models/collective/nvls_loops.hpp"
#include "models/collective/nvls_tree_all_reduce.hpp"
#include "models/collective/ring_collective.hpp"
#include "models/collective/tree_all_reduce.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "memory_backend.hpp"
#include "models/collective/alpha_beta.hpp"
#include "models/transport/flow_network.hpp"
#include "models/transport/packet_network.hpp"
#include "small_topologies.hpp"

namespace lockstep {
namespace {

using testing::kDelay;
using testing::star;

// `channels` rings of endpoints 0..n-1 in order.
std::vector<std::vector<std::int32_t>> first_ranks(std::int32_t n, std::int32_t channels = 1) {
  std::vector<std::int32_t> ring;
  for (std::int32_t r = 0; r < n; ++r) ring.push_back(r);
  return std::vector<std::vector<std::int32_t>>(static_cast<std::size_t>(channels), ring);
}

enum class Backend { kPacket, kFlow };

struct Fabric {
  Fabric(Topology t, Backend backend) : topology(std::move(t)) {
    packet_config.switches.pfc.lossless.set(3);
    packet_config.switches.ecn.enabled = false;
    if (backend == Backend::kPacket) {
      packets = std::make_unique<PacketNetwork>(sim, routing, packet_config, 1, output);
      network = packets.get();
    } else {
      flows = std::make_unique<FlowNetwork>(sim, routing, FlowNetworkConfig{}, 1, output);
      network = flows.get();
    }
  }
  // Runs one collective to the end and returns how long it took.
  Duration run(CollectiveOp op, Bytes size, std::int32_t ranks) {
    RingCollective collective(sim, *network, first_ranks(ranks), op, size);
    collective.start();
    (void)sim.run();
    REQUIRE(collective.finished());
    return collective.finished_at() - collective.started_at();
  }

  Simulator sim;
  Topology topology;
  Routing routing{topology};
  testing::MemoryBackend output;
  PacketNetworkConfig packet_config;  // the packet backend keeps a reference
  std::unique_ptr<PacketNetwork> packets;
  std::unique_ptr<FlowNetwork> flows;
  Network* network = nullptr;
};

TEST_CASE("bus bandwidth factors are nccl-tests' and the names round-trip") {
  CHECK(bus_bandwidth_factor(CollectiveOp::kAllReduce, 8) == 1.75);
  CHECK(bus_bandwidth_factor(CollectiveOp::kReduceScatter, 8) == 0.875);
  CHECK(bus_bandwidth_factor(CollectiveOp::kAllGather, 4) == 0.75);
  CHECK(bus_bandwidth_factor(CollectiveOp::kAllToAll, 2) == 0.5);
  CHECK(bus_bandwidth_factor(CollectiveOp::kSendRecv, 16) == 1.0);
  for (const CollectiveOp op :
       {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather,
        CollectiveOp::kAllToAll, CollectiveOp::kSendRecv}) {
    CHECK(collective_named(collective_name(op)) == op);
  }
  CHECK_FALSE(collective_named("allreduce"));
}

// The alpha-beta model with the fabric's own figures: per step, alpha is the store-and-forward
// latency of the last packet over two hops (one 1,062 B serialization and two 1 us propagations),
// and the bandwidth is the goodput of a host link that also carries the acknowledgements of the
// flow coming the other way: 100 Gb/s x 1000 / (1062 + 64). Measured: flow level equal to the
// picosecond rounding, packet level 0.13% faster (its packets interleave with acknowledgements
// rather than sharing in fixed proportion).
TEST_CASE("a ring all-reduce on a non-blocking fabric takes the alpha-beta time on both backends") {
  const AlphaBeta cost{Duration::ps(84'960) + kDelay * 2,
                       BitRate::bps(100'000'000'000 * 1000 / 1126)};
  const Bytes size(8'000'000);
  const double expected =
      static_cast<double>(ring_collective_time(CollectiveOp::kAllReduce, 8, size, cost).ps());
  for (const Backend backend : {Backend::kFlow, Backend::kPacket}) {
    CAPTURE(static_cast<int>(backend));
    Fabric fabric(star(8), backend);
    const Duration took = fabric.run(CollectiveOp::kAllReduce, size, 8);
    CHECK(static_cast<double>(took.ps()) == doctest::Approx(expected).epsilon(0.02));
  }
}

TEST_CASE("each operation sends the messages its algorithm needs") {
  Fabric fabric(star(4), Backend::kFlow);
  auto transfers = [&](CollectiveOp op, std::int32_t channels) {
    RingCollective run(fabric.sim, *fabric.network, first_ranks(4, channels), op, Bytes(4'000));
    run.start();
    (void)fabric.sim.run();
    CHECK(run.finished());
    return run.transfers();
  };
  CHECK(transfers(CollectiveOp::kAllReduce, 1) == 4 * 6);
  CHECK(transfers(CollectiveOp::kAllReduce, 2) == 2 * 4 * 6);
  CHECK(transfers(CollectiveOp::kReduceScatter, 1) == 4 * 3);
  CHECK(transfers(CollectiveOp::kAllGather, 1) == 4 * 3);
  CHECK(transfers(CollectiveOp::kAllToAll, 1) == 4 * 3);
  CHECK(transfers(CollectiveOp::kSendRecv, 1) == 4);
  CHECK(transfers(CollectiveOp::kBroadcast, 1) == 3);
  CHECK(transfers(CollectiveOp::kReduce, 2) == 2 * 3);
  RingCollective alone(fabric.sim, *fabric.network, {{2}}, CollectiveOp::kAllReduce, Bytes(4'000));
  alone.start();
  (void)fabric.sim.run();
  CHECK(alone.finished());
  CHECK(alone.transfers() == 0);
  using Rings = std::vector<std::vector<std::int32_t>>;
  CHECK_THROWS(RingCollective(fabric.sim, *fabric.network, Rings{{0, 0}}, CollectiveOp::kAllReduce,
                              Bytes(1)));
  CHECK_THROWS(RingCollective(fabric.sim, *fabric.network, Rings{{0, 9}}, CollectiveOp::kAllReduce,
                              Bytes(1)));
  CHECK_THROWS(RingCollective(fabric.sim, *fabric.network, Rings{{0, 1}, {0, 2}},
                              CollectiveOp::kAllReduce, Bytes(1)));
  CHECK_THROWS(
      RingCollective(fabric.sim, *fabric.network, Rings{}, CollectiveOp::kAllReduce, Bytes(1)));
}

// One tree: host 0 the root, hosts 1 and 2 its leaves, 1,000 B in one chunk. Up: the two leaves'
// chunks share the switch's port to host 0 (50 Gb/s each: 1,062 B drain in 169,920 ps), then one
// more serialization (84,960 ps) and two 1 us hops: noticed at 2,254,880 ps. Down: the root's two
// copies share its own link the same way, so everything has arrived at twice that.
TEST_CASE("a tree all-reduce sends each chunk up to the root and back down") {
  Fabric fabric(star(3), Backend::kFlow);
  TreeAllReduce tree(fabric.sim, *fabric.network, {{-1, 0, 0}}, Bytes(1'000));
  CHECK(tree.transfers() == 4);
  tree.start();
  (void)fabric.sim.run();
  REQUIRE(tree.finished());
  CHECK((tree.finished_at() - tree.started_at()).ps() == 2 * 2'254'880);
  CHECK_THROWS(TreeAllReduce(fabric.sim, *fabric.network, {{-1, 0, -1}}, Bytes(1)));
  CHECK_THROWS(TreeAllReduce(fabric.sim, *fabric.network, {{-1, 0}}, Bytes(1)));
  CHECK_THROWS(TreeAllReduce(fabric.sim, *fabric.network, {{-1, 2, 1}}, Bytes(1)));
}

// NVLS-Tree over 2 nodes of 2 GPUs, 4,000 B in one chunk per tree: 4 pieces (2 slices, 2 trees),
// and for each a reduce and a multicast between the head and the other GPU of each node, and one
// trip up and one down between the heads: 24 transfers. A piece of 1,000 B moves
// 1,000 x 3 / 2 = 1,500 B through the switch each way (S (G+1)/G over the whole).
TEST_CASE("an NVLS-Tree all-reduce sums in the node, across the heads and multicasts back") {
  Fabric fabric(star(4), Backend::kFlow);
  NvlsTreeAllReduce all_reduce(fabric.sim, *fabric.network, 2, 2, Bytes(4'000));
  CHECK(all_reduce.transfers() == 24);
  CHECK(NvlsTreeAllReduce::node_message(Bytes(1'000), 2) == Bytes(1'500));
  CHECK(NvlsTreeAllReduce::node_message(Bytes(7), 8) == Bytes(5));  // 7 x 9 / 14, rounded up
  all_reduce.start();
  (void)fabric.sim.run();
  REQUIRE(all_reduce.finished());
  CHECK(fabric.flows->messages_in_flight() == 0);
  CHECK_THROWS(NvlsTreeAllReduce(fabric.sim, *fabric.network, 1, 4, Bytes(1)));
  CHECK_THROWS(NvlsTreeAllReduce(fabric.sim, *fabric.network, 4, 1, Bytes(1)));
  CHECK_THROWS(NvlsTreeAllReduce(fabric.sim, *fabric.network, 2, 3, Bytes(1)));
}

// NCCL 2.26.2's chunk per channel and head (calcCollChunking), on 16 channels: for NVLS on 8 x
// H100, 16 KiB below 8 MiB, 32 KiB to 64 MiB, 64 KiB to 1 GiB, 128 KiB from there; for NVLS-Tree on
// 2 x 8, 32 KiB below 8 MiB, 64 KiB to 64 MiB, 128 KiB from there, and never above 64 KiB from 4
// nodes on.
TEST_CASE("NVLS loops are NCCL's: 16 channels x heads x a chunk that grows with the size") {
  constexpr std::int64_t kKiB = 1024;
  constexpr std::int64_t kMiB = 1024 * kKiB;
  auto nvls = [](std::int64_t bytes) {
    return nvls_chunk(NvlsKernel::kNvls, Bytes(bytes), 8, 1).count() / kKiB;
  };
  CHECK(nvls(8 * kMiB - 16) == 16);
  CHECK(nvls(8 * kMiB) == 32);
  CHECK(nvls(64 * kMiB - 16) == 32);
  CHECK(nvls(64 * kMiB) == 64);
  CHECK(nvls(1024 * kMiB - 16) == 64);
  CHECK(nvls(1024 * kMiB) == 128);
  auto tree = [](std::int64_t bytes, std::int32_t nodes) {
    return nvls_chunk(NvlsKernel::kNvlsTree, Bytes(bytes), 8, nodes).count() / kKiB;
  };
  CHECK(tree(8 * kMiB - 16, 2) == 32);
  CHECK(tree(8 * kMiB, 2) == 64);
  CHECK(tree(64 * kMiB - 16, 2) == 64);
  CHECK(tree(64 * kMiB, 2) == 128);
  CHECK(tree(std::int64_t{16} << 30, 4) == 64);
  CHECK(tree(4 * kMiB, 4) == 32);
  CHECK(nvls_loop(NvlsKernel::kNvls, Bytes(1024 * kMiB), 8, 1) == Bytes(16 * kMiB));
  CHECK(nvls_loops(NvlsKernel::kNvls, Bytes(1024 * kMiB), 8, 1) == 64);
  CHECK(nvls_loops(NvlsKernel::kNvls, Bytes(2 * kMiB + 1), 8, 1) == 2);
  CHECK(nvls_loops(NvlsKernel::kNvls, Bytes(0), 8, 1) == 1);
  // Simulated one by one up to 64, then a few loops a step; the steps hold every byte.
  const SimulatedSteps each(Bytes(1000), 64);
  CHECK(each.count() == 64);
  CHECK(each.loops_in(63) == 1);
  const SimulatedSteps grouped(Bytes(1'000'003), 130);
  CHECK(grouped.count() == 44);
  CHECK(grouped.loops_in(0) == 3);
  CHECK(grouped.loops_in(43) == 1);
  std::int64_t held = 0;
  for (std::int32_t step = 0; step < grouped.count(); ++step)
    held += grouped.bytes_of(step).count();
  CHECK(held == 1'000'003);
  CHECK(grouped.bytes_of(43) == Bytes(7'693));  // 1,000,003 / 130, the rest spread over the loops
}

// Each loop is a step of the kernel's warp groups, which take a step's handshake before the next:
// on 4 GPUs a loop is 16 x 4 x 16 KiB = 1 MiB, and 2 MiB take exactly twice what 1 MiB takes after
// NCCL's NVLS latency (25 us), each loop a bare transfer plus Simple's NVLink step (2.8 us).
TEST_CASE("an NVLS all-reduce moves its loops one after the other, a step each") {
  auto took = [](Bytes size) {
    Fabric fabric(star(4), Backend::kFlow);
    NvlsAllReduce all_reduce(fabric.sim, *fabric.network, size,
                             ProtocolOverheads{NcclProtocol::kSimple, 4, {}, {}});
    all_reduce.start();
    (void)fabric.sim.run();
    REQUIRE(all_reduce.finished());
    CHECK(all_reduce.transfers() == 12 * nvls_loops(NvlsKernel::kNvls, size, 4, 1));
    return (all_reduce.finished_at() - all_reduce.started_at()).ps();
  };
  const std::int64_t one = took(Bytes(1 << 20)) - 25'000'000;
  CHECK(took(Bytes(2 << 20)) - 25'000'000 == 2 * one);
  // A loop: 1 MiB x 5/4 out of each GPU at 0.85 of 100 Gb/s, in 1,062 B frames of 1,000 B that
  // share the link with a 64 B acknowledgement each for what the GPU receives; two 1 us hops, and
  // the step.
  const double loop_ps = 1310720.0 / 0.85 * 1.126 * 8.0 / 100e9 * 1e12 + 2e6 + 2.8e6;
  CHECK(static_cast<double>(one) == doctest::Approx(loop_ps).epsilon(1e-3));
}

// NVLS's scatter warps copy the first loop into NCCL's buffer before the reduce can read it, and
// its gather warps copy the last one out after it: each 1 MiB read and written through the GPU's
// memory (2 MiB at 1 TB/s, 2.097152 us) and Simple's 2.8 us handshake. The loops between are
// copied while others are reduced, the memory being faster than the links, so one loop and two
// take the same extra time.
TEST_CASE("NVLS's scatter and gather copy the first loop in and the last one out") {
  auto took = [](Bytes size, std::optional<BitRate> memory) {
    Fabric fabric(star(4), Backend::kFlow);
    ProtocolOverheads overheads{NcclProtocol::kSimple, 4, {}, {}};
    overheads.gpu_memory = memory;
    NvlsAllReduce all_reduce(fabric.sim, *fabric.network, size, overheads);
    all_reduce.start();
    (void)fabric.sim.run();
    REQUIRE(all_reduce.finished());
    return (all_reduce.finished_at() - all_reduce.started_at()).ps();
  };
  for (const std::int64_t loops : {1, 2}) {
    const Bytes size(loops << 20);  // on 4 GPUs a loop is 1 MiB
    CHECK(took(size, BitRate::gbps(8'000)) - took(size, std::nullopt) ==
          2 * (2'097'152 + 2'800'000));
  }
  // NVLS-Tree's kernel has the same warps at either end: 2 nodes of 2 GPUs, a loop of 16 x 2 x
  // 32 KiB.
  auto tree_took = [](std::optional<BitRate> memory) {
    Fabric fabric(star(4), Backend::kFlow);
    ProtocolOverheads overheads{NcclProtocol::kSimple, 2, {}, {}};
    overheads.gpu_memory = memory;
    NvlsTreeAllReduce all_reduce(fabric.sim, *fabric.network, 2, 2, Bytes(1 << 20), overheads);
    all_reduce.start();
    (void)fabric.sim.run();
    REQUIRE(all_reduce.finished());
    return (all_reduce.finished_at() - all_reduce.started_at()).ps();
  };
  CHECK(tree_took(BitRate::gbps(8'000)) - tree_took(std::nullopt) == 2 * (2'097'152 + 2'800'000));
}

// A sender held to a stream ceiling below the wire's rate lets its last byte go when its pacing
// ends, and that byte still crosses the path: 1,000 B at 1 Gb/s take 8 us to leave, then two 1 us
// cables and the 1,062 B packet's store-and-forward at the switch (84.96 ns) before the receiver
// has it; then Simple's base latency (8.4 us) and its step between nodes (11.3 us).
TEST_CASE("a paced transfer arrives when its pacing ends plus the path's latency") {
  for (const Backend backend : {Backend::kFlow, Backend::kPacket}) {
    Fabric fabric(star(2), backend);
    const std::int64_t latency = 2'000'000 + 84'960;
    CHECK(fabric.network->latency(0, 1, 0).ps() == latency);
    ProtocolOverheads overheads{NcclProtocol::kSimple, 1, BitRate::gbps(1), {}};
    RingCollective send_recv(fabric.sim, *fabric.network, first_ranks(2), CollectiveOp::kSendRecv,
                             Bytes(1'000), overheads);
    send_recv.start();
    (void)fabric.sim.run();
    REQUIRE(send_recv.finished());
    CHECK((send_recv.finished_at() - send_recv.started_at()).ps() ==
          8'400'000 + 8'000'000 + latency + 11'300'000);
  }
}

// CollNet Direct over 2 nodes of 2 GPUs, 4,000 B in one chunk per slice: for each of the 2 slices
// and each node, a share to the head, a part across to the other node's head (the switch's sum)
// and the total back out: 12 transfers, all of them arriving.
TEST_CASE("a CollNet all-reduce sums in the node, across the switch and sends the total back") {
  Fabric fabric(star(4), Backend::kFlow);
  CollNetDirectAllReduce all_reduce(fabric.sim, *fabric.network, 2, 2, Bytes(4'000));
  CHECK(all_reduce.transfers() == 12);
  all_reduce.start();
  (void)fabric.sim.run();
  REQUIRE(all_reduce.finished());
  CHECK(fabric.flows->messages_in_flight() == 0);
  CHECK_THROWS(CollNetDirectAllReduce(fabric.sim, *fabric.network, 1, 4, Bytes(1)));
  CHECK_THROWS(CollNetDirectAllReduce(fabric.sim, *fabric.network, 2, 3, Bytes(1)));
}

// NCCL's PXN: with 2 GPUs per node on 4 ranks, an all-to-all's transfer from a GPU to the other
// node's GPU of the other index is relayed by the sender's neighbour, the GPU on the receiver's
// rail: 4 of the 12 transfers go in two legs, 16 in all, and every one arrives.
TEST_CASE("an all-to-all across rails is relayed on the receiver's rail, as NCCL's PXN does") {
  for (const bool pxn : {true, false}) {
    Fabric fabric(star(4), Backend::kFlow);
    RingCollective all_to_all(fabric.sim, *fabric.network, first_ranks(4), CollectiveOp::kAllToAll,
                              Bytes(40'000),
                              ProtocolOverheads{NcclProtocol::kSimple, 2, {}, {}, pxn});
    CHECK(all_to_all.transfers() == (pxn ? 16 : 12));
    all_to_all.start();
    (void)fabric.sim.run();
    REQUIRE(all_to_all.finished());
    CHECK(fabric.flows->messages_in_flight() == 0);
  }
}

// The tree's LL costs NCCL's tree figures: its base latency (6.8 us) and 5.0 us per step between
// nodes, 2.3 us beyond the ring's 2.7 that the wire carries. With one GPU per node every hop
// crosses the network: 1,000 B up and back down take the bare time of LL's 2,000 wire bytes plus
// 6.8 + 2 x 2.3 us.
TEST_CASE("a tree's LL steps between nodes cost NCCL's tree latency") {
  auto took = [](Bytes size, std::optional<ProtocolOverheads> overheads) {
    Fabric fabric(star(3), Backend::kFlow);
    TreeAllReduce tree(fabric.sim, *fabric.network, {{-1, 0, 0}}, size, overheads);
    tree.start();
    (void)fabric.sim.run();
    return (tree.finished_at() - tree.started_at()).ps();
  };
  CHECK(took(Bytes(1'000), ProtocolOverheads{NcclProtocol::kLL, 1, {}, {}}) -
            took(Bytes(2'000), std::nullopt) ==
        6'800'000 + 2 * 2'300'000);
}

// LL passes each line on as it arrives, so a stream held to a ceiling pays it once however many
// ranks relay it. With one GPU per node every hop crosses the network; 1,000 B paced at 1 Gb/s
// take 8 us to leave the first sender, against 169.92 ns unpaced: LL's 2,000 wire bytes in two
// 1,000 B packets with 62 B of headers each, at 100 Gb/s. Each relay's pacing begins when its data
// began to arrive, and ends before the relay's own transfer (which leaves once its input is all in)
// has crossed the wire, so only the first hop is late: by
// 8 us - 169.92 ns, on a chain of 2 ranks (up and down one hop) and of 3 (two hops each way) alike.
// Paced hop by hop, the chain of 3 would be late by four times that.
TEST_CASE("an LL tree pays its stream's ceiling once along a chain, not at every hop") {
  auto took = [](const std::vector<std::int32_t>& parents, std::optional<BitRate> ceiling) {
    Fabric fabric(star(static_cast<std::int32_t>(parents.size())), Backend::kFlow);
    TreeAllReduce tree(fabric.sim, *fabric.network, {parents}, Bytes(1'000),
                       ProtocolOverheads{NcclProtocol::kLL, 1, ceiling, {}});
    tree.start();
    (void)fabric.sim.run();
    REQUIRE(tree.finished());
    return (tree.finished_at() - tree.started_at()).ps();
  };
  const std::int64_t late = 8'000'000 - 169'920;
  CHECK(took({-1, 0}, BitRate::gbps(1)) - took({-1, 0}, std::nullopt) == late);
  CHECK(took({-1, 0, 1}, BitRate::gbps(1)) - took({-1, 0, 1}, std::nullopt) == late);
}

// A relay's data flows to a rank only once it has joined. On the chain 2 -> 1 -> 0, ranks 1 and 2
// join at 6.8 us (LL's base latency) and rank 2's 1,000 B reach rank 1 from 8.885 us (its path:
// two 1 us cables and a packet's 84.96 ns); rank 1 passes them on at 19.185 us, once they are all
// in (8 us of pacing, the path and LL's 2.3 us step). A root that joins at 12.8 or 14.8 us, between
// the two, takes the relay from its own join, not from 8.885 us, so its 8 us of pacing outlast the
// wire and everything after moves with the join: the root 2 us later ends the all-reduce 2 us
// later.
TEST_CASE("a relayed LL stream reaches a rank that joined late no sooner than its join") {
  auto finished = [](Duration root_arrives) {
    Fabric fabric(star(3), Backend::kFlow);
    TreeAllReduce tree(fabric.sim, *fabric.network, {{-1, 0, 1}}, Bytes(1'000),
                       ProtocolOverheads{NcclProtocol::kLL, 1, BitRate::gbps(1), {}});
    tree.arrive(1, Time::zero());
    tree.arrive(2, Time::zero());
    tree.arrive(0, Time::zero() + root_arrives);
    (void)fabric.sim.run();
    REQUIRE(tree.finished());
    return tree.finished_at();
  };
  CHECK(finished(Duration::us(8)) - finished(Duration::us(6)) == Duration::us(2));
}

// A ring across nodes waits on NCCL's proxy at every step, even inside a node: with 2 GPUs per node
// on a ring of 4, the all-reduce's last chunk comes through 6 hops, 3 of them inside a node, each
// raised from Simple's 2.8 us to a floor of 5 us: 3 x 2.2 us later. NCCL's figures: 3 x 1 us with
// Intel hosts, 3 x 2 us with AMD's, less the 0.6 us of the NVLink path.
TEST_CASE("a ring across nodes pays the proxy's step overhead inside a node too") {
  auto took = [](Duration floor) {
    Fabric fabric(star(4), Backend::kFlow);
    RingCollective run(fabric.sim, *fabric.network, first_ranks(4), CollectiveOp::kAllReduce,
                       Bytes(1'000), ProtocolOverheads{NcclProtocol::kSimple, 2, {}, floor});
    run.start();
    (void)fabric.sim.run();
    return (run.finished_at() - run.started_at()).ps();
  };
  CHECK(took(Duration::us(5)) - took(Duration()) == 3 * 2'200'000);
  CHECK(ring_step_overhead(NcclProtocol::kSimple, 2, false) == Duration::ns(2'400));
  CHECK(ring_step_overhead(NcclProtocol::kSimple, 2, true) == Duration::ns(5'400));
  CHECK(ring_step_overhead(NcclProtocol::kLL, 4, true) == Duration::ns(1'400));
  CHECK(ring_step_overhead(NcclProtocol::kLL, 1, true) == Duration());
}

// LL moves twice the bytes and Simple adds its base latency (8.4 us) and 11.3 us per network step
// (6 for 4 ranks): a bandwidth-bound ring takes about twice as long with LL, and Simple adds
// 8.4 + 6 x 11.3 = 76.2 us to the bare transfers.
TEST_CASE("NCCL's protocols cost wire bytes and latency on top of the transfers") {
  auto took = [](std::optional<ProtocolOverheads> overheads) {
    Fabric fabric(star(4), Backend::kFlow);
    RingCollective run(fabric.sim, *fabric.network, first_ranks(4), CollectiveOp::kAllReduce,
                       Bytes(40'000'000), overheads);
    run.start();
    (void)fabric.sim.run();
    return static_cast<double>((run.finished_at() - run.started_at()).ps());
  };
  const double bare = took(std::nullopt);
  CHECK(took(ProtocolOverheads{NcclProtocol::kLL, 1, {}, {}}) / bare ==
        doctest::Approx(2.0).epsilon(0.01));
  CHECK(took(ProtocolOverheads{NcclProtocol::kSimple, 1, {}, {}}) - bare ==
        doctest::Approx(76.2e6).epsilon(1e-6));
}

// 64 MiB broadcast down a chain of 4 hosts, in 64 chunks of 1 MiB: bandwidth-bound, it takes the
// data's time at a host link's goodput (its acknowledgements share the link: 1000 / 1126 of
// 100 Gb/s) plus the pipeline's fill, two more chunks, and latencies: within 3.5% of
// 66/64 of the data's time. A reduce is the same chain ending at the root.
TEST_CASE("broadcast and reduce pipeline chunks down a chain at a link's rate") {
  const double data_ps = 67'108'864.0 * 8 / (100e9 * 1000 / 1126) * 1e12;
  for (const CollectiveOp op : {CollectiveOp::kBroadcast, CollectiveOp::kReduce}) {
    Fabric fabric(star(4), Backend::kFlow);
    const Duration took = fabric.run(op, Bytes(67'108'864), 4);
    CHECK(static_cast<double>(took.ps()) == doctest::Approx(data_ps * 66 / 64).epsilon(0.035));
  }
}

// One host link at a quarter of the rate: every step waits for the chunk that crosses it, so the
// whole ring runs at that link's pace, close to 4 times slower when bandwidth-bound (measured
// 3.99: the latencies do not slow down).
TEST_CASE("one slow link slows every step of the ring") {
  Fabric healthy(star(8), Backend::kFlow);
  const Duration fast = healthy.run(CollectiveOp::kAllReduce, Bytes(64'000'000), 8);
  Fabric degraded(star(8), Backend::kFlow);
  degraded.flows->set_cable_rate(3, BitRate::gbps(25));
  const Duration slow = degraded.run(CollectiveOp::kAllReduce, Bytes(64'000'000), 8);
  const double ratio = static_cast<double>(slow.ps()) / static_cast<double>(fast.ps());
  CHECK(ratio > 3.8);
  CHECK(ratio < 4.0);
}

}  // namespace
}  // namespace lockstep
