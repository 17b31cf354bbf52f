// NCCL's own choice (nccl_tuner.hpp) held against what NCCL printed: the model times its tuner
// logged (NVIDIA/nccl#1595, #1453) to the digits shown, the graphs its search finds on DGX-class
// servers, and the choices it reported (nccl-tests#309, nccl#1752).
#include "models/collective/nccl_tuner.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace lockstep {
namespace {

// NCCL's figures: 18 NVLinks of 20.6 GB/s (SM90), 12 of 20.0 (SM80); PCIe Gen5 and Gen4 x16.
const BitRate kH100Nvlink = BitRate::bps(18 * 164'800'000'000LL);
const BitRate kA100Nvlink = BitRate::bps(12 * 160'000'000'000LL);
const BitRate kGen5 = BitRate::bps(384'000'000'000LL);
const BitRate kGen4 = BitRate::bps(192'000'000'000LL);

NcclSystem h100(std::int32_t nodes, BitRate nic = BitRate::gbps(400)) {
  return NcclSystem{90, false, nodes, 8, kH100Nvlink, kGen5, nic, true};
}
NcclSystem a100(std::int32_t nodes) {
  return NcclSystem{80, true, nodes, 8, kA100Nvlink, kGen4, BitRate::gbps(200), false};
}

std::vector<std::pair<NcclAlgorithm, NcclProtocol>> every_pair() {
  std::vector<std::pair<NcclAlgorithm, NcclProtocol>> pairs;
  for (const NcclAlgorithm a : {NcclAlgorithm::kTree, NcclAlgorithm::kRing, NcclAlgorithm::kNvls,
                                NcclAlgorithm::kNvlsTree}) {
    for (const NcclProtocol p : {NcclProtocol::kLL, NcclProtocol::kLL128, NcclProtocol::kSimple}) {
      pairs.emplace_back(a, p);
    }
  }
  return pairs;
}

// NCCL prints its float microseconds with six decimals.
void check_logged(std::optional<Duration> modelled, double logged_us) {
  REQUIRE(modelled.has_value());
  CHECK(std::abs(modelled->seconds() * 1e6 - logged_us) < 1e-6 * logged_us + 1e-6);
}

TEST_CASE("NCCL's search on DGX-class servers: channels and GB/s per channel") {
  const NcclGraphs one_h100 = nccl_graphs(h100(1));
  CHECK(one_h100.ring.channels == 12);  // 6 x 60 found, then doubled at half the speed
  CHECK(one_h100.ring.bw_intra == 30.0F);
  CHECK(one_h100.tree.channels == 12);
  CHECK(one_h100.tree.bw_intra == 30.0F);
  CHECK(one_h100.nvls.channels == 8);  // 9 x 40 <= 370.8 on the head's link
  CHECK(one_h100.nvls.bw_intra == 40.0F);
  CHECK(one_h100.channels == 24);
  CHECK(one_h100.nvls_channels == 16);

  const NcclGraphs h100s = nccl_graphs(h100(4));
  CHECK(h100s.ring.channels == 8);  // one channel per 400 Gb/s NIC at 48 GB/s
  CHECK(h100s.ring.bw_inter == 48.0F);
  CHECK(h100s.tree.bw_intra == 48.0F);
  CHECK_FALSE(h100s.tree.tree_pattern);
  CHECK(h100s.nvls.channels == 8);
  CHECK(h100s.nvls.bw_intra == 40.0F);
  CHECK(h100s.nvls.bw_inter == 48.0F);
  CHECK(h100s.channels == 16);

  const NcclGraphs one_a100 = nccl_graphs(a100(1));
  CHECK(one_a100.ring.channels == 12);  // 6 x 40, doubled
  CHECK(one_a100.ring.bw_intra == 20.0F);
  CHECK(one_a100.tree.bw_intra == 20.0F);
  CHECK(one_a100.nvls.channels == 0);
  CHECK(one_a100.channels == 24);

  const NcclGraphs a100s = nccl_graphs(a100(2));
  CHECK(a100s.ring.channels == 8);  // 200 Gb/s NICs behind PCIe Gen4: 24 GB/s
  CHECK(a100s.ring.bw_inter == 24.0F);
  CHECK(a100s.tree.bw_inter == 24.0F);
  CHECK(a100s.tree.bw_intra == 30.0F);  // raised while the NVLink carries it, below 2 x 24
  CHECK(a100s.tree.tree_pattern);       // the NICs, not the NVLink, are full
  CHECK(a100s.channels == 16);
}

TEST_CASE("NCCL's logged model time of a ring all-reduce on 8 x H100 (nccl#1595)") {
  // "805306368 Bytes -> Algo 1 proto 2 time 3970.683594", NCCL_PROTO=Simple on one node.
  const NcclSystem system = h100(1);
  check_logged(nccl_model_time(system, nccl_graphs(system), CollectiveOp::kAllReduce,
                               NcclAlgorithm::kRing, NcclProtocol::kSimple, Bytes(805306368)),
               3970.683594);
}

TEST_CASE("NCCL's logged model times and choices of tree all-reduces on 3 x 8 H100 (nccl#1453)") {
  // 200 Gb/s NICs; the tree comes out in NCCL's plain tree pattern (0.85 of the balanced one).
  const NcclSystem system = h100(3, BitRate::gbps(200));
  const NcclGraphs graphs = nccl_graphs(system);
  CHECK(graphs.tree.channels == 8);
  CHECK(graphs.tree.bw_inter == 24.0F);
  CHECK(graphs.tree.tree_pattern);
  CHECK(graphs.channels == 16);  // "Channel 00/16"
  struct Logged {
    std::int64_t bytes;
    NcclProtocol protocol;
    double time_us;
  };
  for (const Logged& logged :
       {Logged{4, NcclProtocol::kLL, 25.200462}, Logged{256, NcclProtocol::kLL, 25.229528},
        Logged{512, NcclProtocol::kLL, 25.259054}, Logged{1024, NcclProtocol::kLL, 25.331232},
        Logged{131072, NcclProtocol::kLL128, 51.603912},
        Logged{262144, NcclProtocol::kLL128, 54.707825}}) {
    CAPTURE(logged.bytes);
    check_logged(nccl_model_time(system, graphs, CollectiveOp::kAllReduce, NcclAlgorithm::kTree,
                                 logged.protocol, Bytes(logged.bytes)),
                 logged.time_us);
    const std::optional<NcclTunerChoice> choice =
        nccl_tuner_choice(system, CollectiveOp::kAllReduce, Bytes(logged.bytes), every_pair());
    REQUIRE(choice.has_value());
    CHECK(choice->algorithm == NcclAlgorithm::kTree);
    CHECK(choice->protocol == logged.protocol);
  }
}

TEST_CASE("NCCL's choice on 8 x H100: Ring/LL to 1 MB, NVLS from 2 MB (nccl-tests#309)") {
  const NcclSystem system = h100(1);
  for (std::int64_t bytes = 8; bytes <= (16LL << 30); bytes *= 2) {
    CAPTURE(bytes);
    const std::optional<NcclTunerChoice> choice =
        nccl_tuner_choice(system, CollectiveOp::kAllReduce, Bytes(bytes), every_pair());
    REQUIRE(choice.has_value());
    if (bytes <= (1 << 20)) {
      CHECK(choice->algorithm == NcclAlgorithm::kRing);
      CHECK(choice->protocol == NcclProtocol::kLL);
    } else {
      CHECK(choice->algorithm == NcclAlgorithm::kNvls);
      CHECK(choice->channels == 16);
    }
  }
  // Fewer channels while each thread would have under its share: the ring's LL needs 8 bytes a
  // thread per rank, 512 threads a channel, so 32 KiB a channel on 8 ranks.
  const std::vector<std::pair<NcclAlgorithm, NcclProtocol>> ring_ll{
      {NcclAlgorithm::kRing, NcclProtocol::kLL}};
  CHECK(nccl_tuner_choice(system, CollectiveOp::kAllReduce, Bytes(1 << 20), ring_ll)->channels ==
        24);
  CHECK(nccl_tuner_choice(system, CollectiveOp::kAllReduce, Bytes(256 << 10), ring_ll)->channels ==
        8);
  CHECK(nccl_tuner_choice(system, CollectiveOp::kAllReduce, Bytes(64 << 10), ring_ll)->channels ==
        2);
}

TEST_CASE("NCCL's choice on 64 x 8 H200: Tree/LL128 at 16 MiB, NVLS-Tree at 32 MiB (nccl#1752)") {
  const NcclSystem system = h100(64);
  const std::optional<NcclTunerChoice> at_16 =
      nccl_tuner_choice(system, CollectiveOp::kAllReduce, Bytes(16 << 20), every_pair());
  REQUIRE(at_16.has_value());
  CHECK(at_16->algorithm == NcclAlgorithm::kTree);
  CHECK(at_16->protocol == NcclProtocol::kLL128);
  CHECK(at_16->channels == 16);  // "channel{Lo..Hi}={0..15}"
  const std::optional<NcclTunerChoice> at_32 =
      nccl_tuner_choice(system, CollectiveOp::kAllReduce, Bytes(32 << 20), every_pair());
  REQUIRE(at_32.has_value());
  CHECK(at_32->algorithm == NcclAlgorithm::kNvlsTree);
  CHECK(at_32->channels == 16);
}

TEST_CASE("NCCL's model rates only what its tuner chooses among") {
  const NcclSystem system = h100(2);
  // Point-to-point operations are not tuned; nor are algorithms it has no graph for here.
  CHECK_FALSE(nccl_tuner_choice(system, CollectiveOp::kAllToAll, Bytes(1 << 20), every_pair()));
  CHECK_FALSE(nccl_tuner_choice(system, CollectiveOp::kAllReduce, Bytes(1 << 20),
                                {{NcclAlgorithm::kCollNetDirect, NcclProtocol::kSimple}}));
  // The ring alone runs all-gather; NVLS needs one node, NVLS-Tree several.
  const std::optional<NcclTunerChoice> gather =
      nccl_tuner_choice(system, CollectiveOp::kAllGather, Bytes(1 << 30), every_pair());
  REQUIRE(gather.has_value());
  CHECK(gather->algorithm == NcclAlgorithm::kRing);
  const NcclGraphs graphs = nccl_graphs(system);
  CHECK_FALSE(nccl_model_time(system, graphs, CollectiveOp::kAllReduce, NcclAlgorithm::kNvls,
                              NcclProtocol::kSimple, Bytes(1 << 30)));
  CHECK_FALSE(nccl_model_time(system, graphs, CollectiveOp::kAllReduce, NcclAlgorithm::kNvlsTree,
                              NcclProtocol::kLL, Bytes(1 << 30)));
}

}  // namespace
}  // namespace lockstep
