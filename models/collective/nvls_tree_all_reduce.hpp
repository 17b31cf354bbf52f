// NCCL's NVLS-Tree all-reduce across GPU servers whose NVSwitches reduce (NVLink SHARP), NCCL's
// choice for large all-reduces across H100 and H200 nodes (NCCL 2.18 on): the switch sums each
// node's data, trees across the nodes sum the nodes' sums, and the switch multicasts the result.
// GPU h of every node heads slice h of the data (S/G for G GPUs per node):
// - reduce: the node's NVSwitch sums slice h of all its GPUs into GPU h;
// - across nodes: GPU h all-reduces its node's sum of slice h with GPU h of every other node over
//   its own NIC, along NCCL's two binary trees over the nodes (double_binary_tree.hpp), each with
//   half the slice: up to the root, then back down; one rail per slice, so every NIC carries an
//   eighth of the data where a ring sends all of it through each;
// - multicast: GPU h writes the summed slice to the switch's multicast address, which copies it to
//   the node's other GPUs.
// Each slice is cut into NCCL's loops (nvls_loops.hpp), which flow through the stages pipelined.
// The kernel's scatter and gather warps copy the first loop in before the reduce and the last one
// out after the multicast (nvls_kernel.hpp).
// Below the root of a tree the reduce and the multicast are warp groups of their own; at the root
// the same warps read the shares, add the children's sums and multicast, as NVLS's do in one node
// (NCCL 2.26.2, src/device/all_reduce.h), so the root's step for a loop starts once its children's
// sums are in and carries both stages' traffic at once.
//
// On NVLink, each GPU's link carries S (G+1)/G each way over the whole, as NvlsAllReduce explains;
// the switch's reduce loads a GPU's send direction with its whole data and its receive direction
// with its slice, the multicast the other way round. A Network has no switch that adds or copies,
// so each stage's chunk of b bytes travels as a message of b (G+1) / (2 (G-1)) from every other
// GPU to the head (reduce) and from the head to every other GPU (multicast): each direction of
// every GPU's link carries the whole's S (G+1)/G, split evenly between the stages. Costs as
// nccl_protocol.hpp says: Simple only, NCCL's NVLS latency first, its NVLS efficiency on NVLink,
// and its NVLS-Tree latency after each step between nodes. Units: Bytes, Time.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/collective/nvls_kernel.hpp"

namespace lockstep {

class NvlsTreeAllReduce final : public NvlsKernelCollective {
 public:
  // `network`'s endpoints are nodes x gpus GPUs, node-major (rank = node x gpus + GPU). Throws
  // std::invalid_argument unless there are at least two nodes of at least two GPUs each.
  NvlsTreeAllReduce(Simulator& sim, Network& network, std::int32_t nodes, std::int32_t gpus,
                    Bytes size, std::optional<ProtocolOverheads> overheads = {});

  // What each stage inside a node moves between the head and each other GPU for b bytes of a
  // slice: b (G+1) / (2 (G-1)), rounded up.
  [[nodiscard]] static Bytes node_message(Bytes slice_bytes, std::int32_t gpus);

 private:
  enum class Stage : std::uint8_t { kReduce, kUp, kDown, kMulticast };
  // A piece of work: chunk `chunk` of tree `tree` of slice `head`.
  struct Piece {
    std::int32_t head = 0;
    std::int32_t tree = 0;
    std::int32_t chunk = 0;
  };

  [[nodiscard]] std::int32_t pieces() const { return gpus_ * 2 * steps_.count(); }
  [[nodiscard]] std::int32_t piece_index(const Piece& piece) const {
    return (piece.head * 2 + piece.tree) * steps_.count() + piece.chunk;
  }
  [[nodiscard]] Piece piece_at(std::int32_t index) const;
  [[nodiscard]] Bytes piece_bytes(const Piece& piece) const;
  [[nodiscard]] std::int32_t rank(std::int32_t node, std::int32_t gpu) const {
    return node * gpus_ + gpu;
  }
  // The rank's reduce warps send their shares of every piece, a loop a step.
  void reduce(std::int32_t rank) override;
  void arrived(const Message& message, Time ready, std::uint64_t tag) override;
  // Event argument and transfer tag: stage (2 bits), node (30), piece (32).
  void act(std::uint64_t packed);
  void act_event(std::uint64_t packed);
  // One of the pieces a node's head waits for has come in: a GPU's share through the switch, or a
  // child node's sum. With all of them it sends the sum up, or at the root turns it down.
  void count_toward_sum(std::int32_t node, const Piece& piece);
  [[nodiscard]] bool is_root(std::int32_t node, std::int32_t tree) const;
  // The root's head has its own share and its children's: one step of its reduce warps reads the
  // other GPUs' shares through the switch, adds, and multicasts the sum (NCCL's NVLS-Tree kernel,
  // src/device/all_reduce.h: at the root the same warps reduce and multicast).
  void root_step(std::int32_t node, const Piece& piece);
  // The node's head holds the piece summed over every node: down the tree, and out to its GPUs.
  void send_down(std::int32_t node, const Piece& piece);
  void multicast(std::int32_t node, const Piece& piece);
  // The stages inside a node, the reduce and the multicast of each tree, are warp groups of their
  // own on every GPU, a loop a step (send_step). Between nodes NCCL's proxy keeps up to
  // NCCL_STEPS sends in flight for the warp group that fills them, so there a loop's transfer
  // leaves without waiting for the one before (send_across), though each still takes its step
  // latency. A transfer carries the loops of its piece (SimulatedSteps) and their latencies.
  [[nodiscard]] static std::uint32_t group(Stage stage, std::int32_t tree);
  void send_across(std::int32_t from, const StepTransfer& transfer);
  [[nodiscard]] StepTransfer transfer(Stage stage, std::int32_t to, std::int32_t node,
                                      const Piece& piece, Bytes bytes) const;

  std::int32_t nodes_;
  std::int32_t gpus_;
  std::vector<std::vector<std::int32_t>> node_parents_;                // [tree][node]
  std::vector<std::vector<std::vector<std::int32_t>>> node_children_;  // [tree][node]
  // How many transfers of its step the root's head still waits for, [node * pieces + piece].
  std::vector<std::int32_t> root_step_missing_;
  // How many of the inputs to its sum each node's head still waits for, [node * pieces + piece].
  std::vector<std::int32_t> inputs_missing_;
};

}  // namespace lockstep
