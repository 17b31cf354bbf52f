// One NCCL-style collective on a Network (either backend), as the point-to-point messages NCCL's
// algorithms exchange, so that its time comes from the fabric: links shared with other traffic,
// ECMP collisions, a slow or misplaced NIC. Ranks are endpoints; the order given is the ring.
//
// Algorithms (Thakur, Rabenseifner and Gropp, IJHPCA 2005; NCCL's ring): the data is split evenly
// over channels (NCCL's channels: independent rings, one queue pair each, each with its own order
// of the ranks, so that channels can leave a node through different NICs), and a channel's share
// into n chunks.
// - all-reduce: 2(n-1) steps, reduce-scatter then all-gather; at step k rank r sends chunk
//   (r - k) mod n to the next rank, and sends step k + 1 the moment step k's chunk from the
//   previous rank has arrived (the chunk it forwards is the one it just received, reduced). So the
//   ring advances at the pace of its slowest link, and a step costs one chunk's transfer plus the
//   path's latency, as in the alpha-beta model.
// - reduce-scatter and all-gather: the same with n-1 steps.
// - all-to-all: every rank sends S/n to every other rank at once; to a GPU of another node on
//   another rail through the GPU of its own node on that rail, as NCCL's PXN does
//   (CollectiveAlgorithm::send_rail_local).
// - send/recv: every rank sends S to the next rank.
// - broadcast and reduce: a pipelined chain along each channel's ring, from the root (the lowest
//   rank, nccl-tests' root 0) for broadcast and ending at it for reduce; a channel's share is cut
//   into chunks (pipeline_chunks), and a rank passes chunk k on the moment it has arrived.
// The collective ends when the last chunk has arrived at its rank (delivery, not acknowledgement).
// Ranks join one by one (collective.hpp): a rank sends its first step when it joins, and a step
// to a rank that has not joined waits for it, so one late rank holds up the ring behind it.
//
// NCCL's protocol costs are charged as collective_algorithm.hpp says, with the ring's base latency.
//
// Which links a transfer takes is the Network's business: a ClusterNetwork carries transfers
// inside a node over NVLink. It leaves out, for now: the reduction's compute and memory traffic
// (the GPU model will add them) and NVLink SHARP. Units: Bytes, Time.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/collective/collective_algorithm.hpp"
#include "models/collective/collective_op.hpp"

namespace lockstep {

class RingCollective final : public CollectiveAlgorithm {
 public:
  // One ring per channel: each lists the same distinct endpoints of `network` (at least one) in
  // that channel's order; channel c uses queue pair first_queue_pair + c. Throws
  // std::invalid_argument otherwise, or without a ring.
  RingCollective(Simulator& sim, Network& network, std::vector<std::vector<std::int32_t>> rings,
                 CollectiveOp op, Bytes size, std::optional<ProtocolOverheads> overheads = {},
                 std::uint32_t first_queue_pair = 0);

 private:
  [[nodiscard]] std::int32_t ranks() const { return static_cast<std::int32_t>(rings_[0].size()); }
  [[nodiscard]] std::int32_t channels() const { return static_cast<std::int32_t>(rings_.size()); }
  [[nodiscard]] std::int32_t ring_steps() const;
  [[nodiscard]] bool is_chain() const {
    return op_ == CollectiveOp::kBroadcast || op_ == CollectiveOp::kReduce;
  }
  // A chain's first and last ring positions on a channel.
  [[nodiscard]] std::int32_t chain_start(std::int32_t channel) const;
  [[nodiscard]] std::int32_t chain_end(std::int32_t channel) const;
  [[nodiscard]] Bytes chain_chunk(std::int32_t channel, std::int32_t chunk) const;
  [[nodiscard]] Bytes chunk(std::int32_t channel, std::int32_t index) const;
  // How many transfers each endpoint sends or receives.
  [[nodiscard]] std::vector<std::int64_t> transfers_per_rank(std::int32_t endpoints) const;
  void launch(std::int32_t rank) override;
  void launch_together(const std::vector<std::int32_t>& ranks) override;
  // What the rank at ring position `r` of channel `c` sends when it joins.
  void launch_on_channel(std::int32_t c, std::int32_t r);
  void arrived(const Message& message, Time ready, std::uint64_t tag) override;
  void send_to(std::int32_t channel, std::int32_t sender, std::int32_t receiver, std::int32_t step,
               Bytes size);
  void send_ring_step(std::int32_t channel, std::int32_t sender, std::int32_t step);
  // A ring step, or a chain's chunk, as one event argument and one transfer's tag: channel, sender
  // (ring position) and step (or chunk) in 16, 24 and 24 bits.
  void send_packed_step(std::uint64_t packed);
  void send_step_event(std::uint64_t packed);

  std::vector<std::vector<std::int32_t>> rings_;
  std::vector<std::vector<std::int32_t>> position_;  // [channel][endpoint]: place in the ring
  CollectiveOp op_;
  Bytes size_;
  std::uint32_t first_queue_pair_;
  std::int32_t chain_chunks_ = 1;
  std::vector<std::int32_t> root_position_;  // per channel: where rank 0 sits in its ring
};

}  // namespace lockstep
