// NCCL's CollNet Direct all-reduce, which runs where the InfiniBand switches reduce (SHARP; NCCL
// with NCCL_COLLNET_ENABLE=1 and the SHARP plugin): GPU h of every node heads slice h of the data
// (S/G for G GPUs per node);
// - scatter: every other GPU of the node sends the head its share of slice h over NVLink, and the
//   head sums them with its own;
// - across nodes: the head sends the node's sum of slice h up its NIC to the rail's switch, which
//   sums the nodes' and sends the total back down to every node's head h;
// - gather: the head sends the total to the node's other GPUs over NVLink.
// So each NIC carries S/G each way whatever the number of nodes, where a ring sends 2 (n-1)/n S/G.
// A Network has no switch that adds, so the switch's sum travels as messages from every node's
// head h to every other's, S/G / (N-1) each: each NIC sends and receives S/G as with SHARP, over
// the same rail switch (rail-optimized fabrics put NIC h of every node on one). Each slice is cut
// into chunks (pipeline_chunks) that flow through the stages pipelined. Costs as
// nccl_protocol.hpp says: Simple only, NVLink steps at NCCL's CollNet latency, the network's
// reduction at its. Units: Bytes, Time.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/collective/collective_algorithm.hpp"

namespace lockstep {

class CollNetDirectAllReduce final : public CollectiveAlgorithm {
 public:
  // `network`'s endpoints are nodes x gpus GPUs, node-major (rank = node x gpus + GPU). Throws
  // std::invalid_argument unless there are at least two nodes.
  CollNetDirectAllReduce(Simulator& sim, Network& network, std::int32_t nodes, std::int32_t gpus,
                         Bytes size, std::optional<ProtocolOverheads> overheads = {});

 private:
  enum class Stage : std::uint8_t { kScatter, kAcross, kGather };
  struct Piece {
    std::int32_t head = 0;
    std::int32_t chunk = 0;
  };

  [[nodiscard]] std::int32_t pieces() const { return gpus_ * chunks_; }
  [[nodiscard]] Piece piece_at(std::int32_t index) const {
    return Piece{index / chunks_, index % chunks_};
  }
  [[nodiscard]] std::int32_t piece_index(const Piece& piece) const {
    return piece.head * chunks_ + piece.chunk;
  }
  [[nodiscard]] Bytes piece_bytes(const Piece& piece) const;
  [[nodiscard]] std::int32_t rank(std::int32_t node, std::int32_t gpu) const {
    return node * gpus_ + gpu;
  }
  [[nodiscard]] std::int32_t& missing(std::vector<std::int32_t>& counts, std::int32_t node,
                                      const Piece& piece) const;
  void launch(std::int32_t rank) override;
  void arrived(const Message& message, Time ready, std::uint64_t tag) override;
  // Event argument and transfer tag: stage (2 bits), node (30), piece (32).
  void act(std::uint64_t packed);
  void act_event(std::uint64_t packed);
  void send_stage(Stage stage, std::int32_t from, std::int32_t to, std::int32_t node,
                  const Piece& piece, Bytes bytes);
  // A share of the node's sum of the piece has come to its head: with all of them, up to the
  // switch.
  void count_in_node(std::int32_t node, const Piece& piece);
  // A part of the switch's total has come down to the node's head (or the node's own sum is in):
  // with all of them, out to the node's GPUs.
  void count_across(std::int32_t node, const Piece& piece);

  std::int32_t nodes_;
  std::int32_t gpus_;
  Bytes size_;
  std::int32_t chunks_ = 1;
  // What each node's head still waits for, [node * pieces + piece]: shares of its sum, then the
  // other nodes' parts of the total and its own sum.
  std::vector<std::int32_t> in_node_missing_;
  std::vector<std::int32_t> across_missing_;
};

}  // namespace lockstep
