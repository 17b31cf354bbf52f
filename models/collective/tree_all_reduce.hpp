// All-reduce over trees (NCCL's tree algorithm; layouts in double_binary_tree.hpp), as messages on
// a Network. Each tree carries an even share of the data, cut into chunks that flow through it
// pipelined: a rank sends chunk k to its parent once chunk k has arrived from every child (reduce),
// the root then sends it down to its children, and every rank forwards what comes down to its own
// (broadcast). Up and down use opposite directions of each link, so they overlap. With LL and LL128
// a rank passes a chunk's lines on as they arrive (forwards_lines), so where a stream is paced a
// chunk's pacing down the tree begins once its data began to arrive from every input. The
// all-reduce ends when the last chunk has reached the last leaf. NCCL's protocol costs are charged
// as collective_algorithm.hpp says, with the tree's base latency. Chunks: 1 MiB, at most 64 per
// tree, at least one. Ranks join one by one (collective.hpp): a leaf sends up when it joins, and a
// chunk for a rank that has not joined waits for it. It leaves out the reduction's compute. Units:
// Bytes, Time.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/collective/collective_algorithm.hpp"
#include "models/network/network.hpp"
#include "sim/core/simulator.hpp"

namespace lockstep {

class TreeAllReduce final : public CollectiveAlgorithm {
 public:
  // `trees`: a parent per endpoint for each tree (-1 at its one root), every endpoint of
  // `network` in each. Throws std::invalid_argument otherwise.
  TreeAllReduce(Simulator& sim, Network& network, std::vector<std::vector<std::int32_t>> trees,
                Bytes size, std::optional<ProtocolOverheads> overheads = {});

 private:
  void launch(std::int32_t rank) override;
  void launch_together(const std::vector<std::int32_t>& ranks) override;
  // What a rank sends on tree `tree` when it joins: a leaf, every chunk up.
  void launch_on_tree(std::int32_t tree, std::int32_t rank);
  void arrived(const Message& message, Time ready, std::uint64_t tag) override;
  // Event argument and transfer tag: tree (16 bits), chunk (16), direction (1), rank (31).
  void act(std::uint64_t packed);
  void act_event(std::uint64_t packed);
  void chunk_arrived(std::int32_t tree, std::int32_t chunk, bool up, std::int32_t rank);
  void send_chunk(std::int32_t tree, std::int32_t chunk, bool up, std::int32_t from,
                  std::int32_t to, std::optional<Time> relayed_from = std::nullopt);
  [[nodiscard]] std::size_t slot(std::int32_t rank, std::int32_t chunk) const;
  [[nodiscard]] Bytes chunk_size(std::int32_t tree, std::int32_t chunk) const;

  std::vector<std::vector<std::int32_t>> parents_;
  std::vector<std::vector<std::vector<std::int32_t>>> children_;  // [tree][rank]
  Bytes size_;
  std::int32_t chunks_ = 1;
  // Children's chunks that have arrived, [tree][slot].
  std::vector<std::vector<std::int32_t>> arrived_up_;
  // When the chunk's data began to arrive at the rank from all its inputs so far, [tree][slot]:
  // from the children going up, then from the parent coming down.
  std::vector<std::vector<Time>> inputs_began_;
};

}  // namespace lockstep
