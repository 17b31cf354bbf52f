// NCCL's tree layout for all-reduce over GPU servers (Sanders, Speck and Träff, "Two-tree
// algorithms for full bandwidth broadcast, reduction and scan", Parallel Computing 2009; NCCL 2.4):
// two binary trees over the nodes, the second the first shifted by one node, so that most nodes
// that are leaves in one tree are inner nodes in the other and the two trees share the work.
// Inside a node the GPUs form a chain ending at the tree's head GPU, which talks to the other
// nodes. NCCL builds one tree per channel, two channels per NIC (16 tree channels on a DGX H100,
// NVIDIA/nccl issue 1453's log), headed by the GPU beside its NIC: so on all its channels every NIC
// carries trees, and every hop between nodes stays on one rail. Its search's channels (one per NIC)
// take the first tree and their copies the second (src/graph/connect.cc, connectTrees), so a
// collective NCCL runs on fewer channels (nccl_channels) runs on the first trees of that order: on
// no more channels than a node has GPUs, on the first tree alone. Each tree carries an even share
// of the data.
//
// A tree is a parent per rank (rank = node x G + GPU), -1 at the root.
#pragma once

#include <cstdint>
#include <vector>

namespace lockstep {

// nodes >= 1, gpus >= 1: 2 x gpus trees in NCCL's channel order, the first tree headed by GPU h at
// h, the second at gpus + h.
[[nodiscard]] std::vector<std::vector<std::int32_t>> double_binary_trees(std::int32_t nodes,
                                                                         std::int32_t gpus);

// Depth of a tree: the most hops from any rank to the root.
[[nodiscard]] std::int32_t tree_depth(const std::vector<std::int32_t>& parents);

}  // namespace lockstep
