// One of NCCL's collectives laid out and charged as NCCL runs it on a communicator, whoever runs
// it: `lockstep nccl-tests` times it alone (collective_timing.hpp), a training job runs it among
// its other traffic (job_communicators.hpp). The layout is NCCL's: the channels it runs the size on
// (nccl_channels), its rail-aligned rings and its double binary trees in NCCL's channel order over
// the communicator's nodes, NVLS's channels; the costs are the protocol's (nccl_protocol.hpp),
// each ring channel no faster than NCCL's speed for it, LL's streams no faster than its ceiling,
// a ring's steps across nodes waiting at least on NCCL's proxy, NVLS's copies through the GPU's
// memory. Units: Bytes, Time, BitRate.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "models/collective/collective.hpp"
#include "models/collective/collective_op.hpp"
#include "models/collective/nccl_protocol.hpp"
#include "models/collective/nccl_tuner.hpp"
#include "models/network/network.hpp"
#include "models/node/node_preset.hpp"
#include "sim/core/bit_rate.hpp"
#include "sim/core/simulator.hpp"

namespace lockstep {

// NCCL's MAXCHANNELS: the rings a collective is split over at most.
inline constexpr std::int32_t kMostChannels = 64;

// What NCCL's tuning sees of a communicator of `ranks_per_node` GPUs on each of `nodes` servers of
// `preset`, whose NICs run at `nic`.
[[nodiscard]] NcclSystem nccl_system(const NodePreset& preset, std::int32_t nodes,
                                     std::int32_t ranks_per_node, BitRate nic);

// The channels NCCL runs `algorithm` with `protocol` on for `size` (nccl_channels) over `nodes`
// servers of `preset` with `ranks_per_node` GPUs of the communicator on each, NICs at `nic`.
[[nodiscard]] std::int32_t nccl_channels_for(const NodePreset& preset, std::int32_t nodes,
                                             std::int32_t ranks_per_node, BitRate nic,
                                             NcclAlgorithm algorithm, NcclProtocol protocol,
                                             Bytes size);

// NCCL's ring for `op` of `size` over `nodes` servers of `preset` with `ranks_per_node` GPUs of the
// communicator on each, NICs at `nic`: the channels NCCL runs the size on, and how fast one of
// them moves data at most, NCCL's bus bandwidth for the ring and protocol spread over the
// communicator's channels. A channel is one of NCCL's thread blocks: it does not take up the
// slack of another, so its steps' latencies add to its own time, as the measured sweeps show
// (tests/data/nccl_sweeps). No ceiling where NCCL's model does not rate `op` (all-to-all,
// send/recv): then one channel per GPU of a node, as nccl-tests lays them out.
struct NcclRing {
  std::int32_t channels = 1;
  std::optional<BitRate> channel_ceiling;
};
[[nodiscard]] NcclRing nccl_ring(const NodePreset& preset, std::int32_t nodes,
                                 std::int32_t ranks_per_node, BitRate nic, CollectiveOp op,
                                 NcclProtocol protocol, Bytes size);

// Who runs the collective: `nodes` x `gpus` ranks, node-major, on GPU servers of `servers` whose
// NICs run at `nic` (no servers: a bare fabric, one rank per endpoint and node).
struct NcclCommunicator {
  std::optional<NodePreset> servers;
  std::int32_t nodes = 1;
  std::int32_t gpus = 1;
  BitRate nic;
  // Rings, or trees; 0: on GPU servers NCCL's for the size (nccl_channels), else one ring per GPU
  // of a node (all-to-all and send/recv, which NCCL's model does not rate), or one ring on a bare
  // fabric and every tree.
  std::int32_t channels = 0;
  bool pxn = true;  // NCCL's PXN for point-to-point across rails
  // Between nodes over RDMA (NCCL_IB_QPS_PER_CONNECTION, connection_queue_pair).
  std::int32_t queue_pairs_per_connection = 1;
};

struct NcclCollective {
  std::unique_ptr<Collective> collective;
  // NCCL's channels it runs on: its rings, its trees or NVLS's channels; 1 for lockstep's
  // hierarchical all-reduce and for CollNet, whose channels are not modelled.
  std::int32_t channels = 1;
};

// NCCL's own choice of algorithm and protocol for `op` of `size` on the communicator
// (nccl_tuner_choice over every pair NCCL could run it with there); the ring with Simple without
// servers or where NCCL's model rates nothing (all-to-all, send/recv; nccl-tests times every
// protocol of those and keeps the fastest, which a collective run among other traffic cannot).
[[nodiscard]] std::pair<NcclAlgorithm, NcclProtocol> nccl_default_choice(
    const NcclCommunicator& communicator, CollectiveOp op, Bytes size);

// `algorithm` with `protocol` running `op` of `size` over `network`, whose endpoints are the
// communicator's ranks. `must_reach(a, b)` hears every pair of ranks the collective will send
// between before it is made, so that a caller can refuse pairs without a path (which would wait
// forever). Throws std::invalid_argument where the algorithm cannot run as the constructors say
// (time_collective checks NCCL's own rules first).
[[nodiscard]] NcclCollective make_nccl_collective(
    Simulator& sim, Network& network, const NcclCommunicator& communicator, CollectiveOp op,
    Bytes size, NcclAlgorithm algorithm, NcclProtocol protocol,
    const std::function<void(std::int32_t, std::int32_t)>& must_reach = {});

}  // namespace lockstep
