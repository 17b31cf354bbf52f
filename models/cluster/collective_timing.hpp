// One collective timed on a fresh cluster (cluster.hpp), as `lockstep nccl-tests` runs each size of
// its sweep: over a fabric alone (one rank per endpoint, every channel on the communicator's
// order), or over GPU servers (NVLink inside each node at flow level, one NIC per GPU on the
// fabric, NCCL's rail-aligned rings and double binary trees over the communicator's nodes). The
// ranks outside the communicator stay idle. The fabric runs at its configured level.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "models/cluster/cluster.hpp"
#include "models/cluster/nccl_collective.hpp"
#include "models/collective/collective_algorithm.hpp"
#include "models/collective/collective_op.hpp"
#include "models/collective/communicator.hpp"
#include "models/collective/nccl_protocol.hpp"
#include "models/collective/nccl_tuner.hpp"
#include "models/fabric/routing.hpp"
#include "sim/core/simulator.hpp"

namespace lockstep {

struct CollectiveSetup {
  ClusterSpec cluster;
  // Rings, or trees (at most two per GPU of a node); 0: on GPU servers NCCL's for the size
  // (nccl_channels), else one ring per GPU of a node (all-to-all and send/recv, which NCCL's model
  // does not rate), or one ring on a bare fabric and every tree.
  std::int32_t channels = 0;
  // The ranks that run the collective (communicator.hpp); empty: every rank, in order.
  std::vector<std::int32_t> communicator;
  bool pxn = true;  // NCCL's PXN for point-to-point across rails (NCCL_PXN_DISABLE=1 turns it off)
};

struct TimedCollective {
  // False when it was given up at `longest` (time_collective): then time is that bound.
  bool completed = true;
  Duration time;  // from the start to the last chunk arrived and noticed
  Time end;       // when that simulation stopped (soon after the collective's end)
  std::uint64_t events = 0;
  std::vector<std::int32_t> ranks;  // the communicator's global ranks, node-major
  std::vector<RankTransferTimes> rank_transfer_times;  // for each (CollectiveAlgorithm)
  // NCCL's channels it ran on: its rings, its trees or NVLS's channels; 1 for lockstep's
  // hierarchical all-reduce and for CollNet, whose channels are not modelled.
  std::int32_t channels = 1;
};

// The setup's communicator laid out by node (communicator.hpp), every rank in order when it names
// none. Throws std::invalid_argument as communicator_layout does.
[[nodiscard]] CommunicatorLayout communicator_of(const CollectiveSetup& setup,
                                                 std::int32_t cluster_ranks);

// `fabric` is the setup's fabric routing. Throws std::invalid_argument for Tree, NVLS or NVLSTree
// with another operation than all-reduce (as in NCCL), NVLS or NVLSTree where NCCL could not run
// it (nccl_choice.hpp), a communicator communicator_layout() refuses, when two ranks that must
// talk over the fabric have no path (a fabric without spines between rails, say, except where PXN
// relays an all-to-all), or for an unknown rank in host_staged_nics; std::logic_error if the
// collective stops short of its end with nothing left to run. Host-side limits (sockets,
// host-staged NICs, one socket interface per node) cap the NICs' host paths on either fabric
// level: at packet level a NIC whose host drains slower than the wire pauses its switch. Empty
// when `stop` turned true before the collective finished (Ctrl-C). With `longest`, a collective
// still running after that long is given up (completed false).
[[nodiscard]] std::optional<TimedCollective> time_collective(
    const CollectiveSetup& setup, const Routing& fabric, CollectiveOp op, Bytes size,
    NcclAlgorithm algorithm, NcclProtocol protocol, const std::function<bool()>& stop,
    std::optional<Duration> longest = std::nullopt);

struct FastestCollective {
  TimedCollective timed;
  NcclAlgorithm algorithm = NcclAlgorithm::kRing;
  NcclProtocol protocol = NcclProtocol::kSimple;
  std::uint64_t events = 0;  // over every pair timed
};

// What the host takes to issue one operation that runs on the given channels, under which no
// iteration of it is shorter (nccl-tests issues its iterations back to back).
using HostFloor = std::function<Duration(std::int32_t channels_run)>;

// Times the collective with each (algorithm, protocol) pair of `pairs` (nccl_choice.hpp's
// runnable_pairs) and keeps the fastest, the first listed on a tie: the choice NCCL's tuner aims
// for. A pair is ranked by the longer of its time and `host_floor` for its channels (none without
// it): a pair on fewer channels costs the host less to issue. A pair is given up once it runs
// longer than the fastest so far, which it can no longer beat. Empty when `stop` turned true
// first; throws as time_collective does.
[[nodiscard]] std::optional<FastestCollective> time_fastest(
    const CollectiveSetup& setup, const Routing& fabric, CollectiveOp op, Bytes size,
    const std::vector<std::pair<NcclAlgorithm, NcclProtocol>>& pairs,
    const std::function<bool()>& stop, const HostFloor& host_floor = {});

}  // namespace lockstep
