// NCCL's ring as a fluid: each rank streams to the next, in one transfer per channel, every byte
// the ring passes across that link (2(n-1)/n of its channel's share for all-reduce, (n-1)/n for
// reduce-scatter and all-gather), the way NCCL's pipelined ring keeps every link busy in steady
// state. It is what a flow-level network needs of a ring over many ranks: n transfers instead of
// the 2(n-1) n of a step-by-step ring (ring_collective.hpp), each at its max-min fair rate, so a
// slow or shared link still paces the ring (the collective ends with its slowest transfer) while a
// data-parallel ring of 128 ranks costs 128 flows, not 32,512.
//
// Since every step of a ring needs every rank, nothing flows until the last rank has joined; then,
// as in the alpha-beta model, the latencies come first (`base_latency` once, NCCL's per-collective
// cost, and `step_latency` per step: the path's propagation and NCCL's per-step cost, which the
// caller knows) and the bytes follow. On an idle
// non-blocking fabric it takes the ring's alpha-beta time. Left out: the ring's start-up, in which
// links carry less than in steady state, and the chunk granularity that lets a late rank's
// neighbours make some progress before it joins. And a channel held below the link's rate (its
// ceiling, its steps' latencies) sends in bursts, between which other traffic has the link to
// itself; the fluid shares the link with it all along, so beside a long flow it is held back more
// than the steps are.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/collective/collective_algorithm.hpp"
#include "models/collective/collective_op.hpp"

namespace lockstep {

// Between ranks on different nodes (`ranks_per_node` to a node, node-major), a fluid ring's
// channel streams evenly over the connection's `queue_pairs` (connection_queue_pair): the fluid of
// its messages taking them in turn.
struct RingConnections {
  std::int32_t ranks_per_node = 1;
  std::int32_t queue_pairs = 1;
};

class FluidRing final : public CollectiveAlgorithm {
 public:
  // One ring per channel, each listing the same distinct endpoints of `network`; channel c uses
  // queue pair c. The protocol's flags travel with the data: each link carries the ring's bytes
  // divided by `data_per_wire_byte` (nccl_protocol.hpp: 1/2 for LL, 120/128 for LL128). With
  // `channel_ceiling`, a channel's stream ends no sooner than its data takes at that rate, however
  // fast its links (NCCL's speed for its channels, nccl_ring). Throws std::invalid_argument for an
  // op other than all-reduce, reduce-scatter or all-gather, without a ring, for rings that differ
  // in their members, for data_per_wire_byte outside (0, 1], or for fewer than one rank per node
  // or queue pair per connection.
  FluidRing(Simulator& sim, Network& network, std::vector<std::vector<std::int32_t>> rings,
            CollectiveOp op, Bytes size, Duration base_latency, Duration step_latency,
            double data_per_wire_byte = 1.0, std::optional<BitRate> channel_ceiling = std::nullopt,
            RingConnections connections = {});

 private:
  void launch(std::int32_t rank) override;
  void arrived(const Message& message, Time ready, std::uint64_t tag) override;
  void stream();
  // The queue pairs a channel's stream from `from` to `to` is split over.
  [[nodiscard]] std::int32_t queue_pairs(std::int32_t from, std::int32_t to) const;

  std::vector<std::vector<std::int32_t>> rings_;
  CollectiveOp op_;
  Bytes size_;
  Duration base_latency_;
  Duration step_latency_;
  double data_per_wire_byte_;
  std::optional<BitRate> channel_ceiling_;
  RingConnections connections_;
  std::int64_t yet_to_join_;
};

}  // namespace lockstep
