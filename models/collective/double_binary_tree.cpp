#include "models/collective/double_binary_tree.hpp"

#include <algorithm>

namespace lockstep {
namespace {

// A balanced binary tree over positions [low, high): the middle is the root of the range, each
// half hangs below it. Positions map to nodes through `node_at`.
void build(std::int32_t low, std::int32_t high, std::int32_t parent,
           const std::vector<std::int32_t>& node_at, std::vector<std::int32_t>& node_parent) {
  if (low >= high) return;
  const std::int32_t middle = low + (high - low) / 2;
  const std::int32_t node = node_at[static_cast<std::size_t>(middle)];
  node_parent[static_cast<std::size_t>(node)] = parent;
  build(low, middle, node, node_at, node_parent);
  build(middle + 1, high, node, node_at, node_parent);
}

}  // namespace

std::vector<std::vector<std::int32_t>> double_binary_trees(std::int32_t nodes, std::int32_t gpus) {
  std::vector<std::vector<std::int32_t>> node_parents;
  for (std::int32_t t = 0; t < 2; ++t) {
    std::vector<std::int32_t> node_at(static_cast<std::size_t>(nodes));
    for (std::int32_t i = 0; i < nodes; ++i) node_at[static_cast<std::size_t>(i)] = (i + t) % nodes;
    build(0, nodes, -1, node_at, node_parents.emplace_back(static_cast<std::size_t>(nodes), -1));
  }
  std::vector<std::vector<std::int32_t>> trees;
  for (const std::vector<std::int32_t>& node_parent : node_parents) {
    for (std::int32_t head = 0; head < gpus; ++head) {
      std::vector<std::int32_t>& parents =
          trees.emplace_back(static_cast<std::size_t>(nodes * gpus));
      for (std::int32_t node = 0; node < nodes; ++node) {
        const std::int32_t up = node_parent[static_cast<std::size_t>(node)];
        parents[static_cast<std::size_t>(node * gpus + head)] = up < 0 ? -1 : up * gpus + head;
        // The chain: GPU head + j hands its data to head + j - 1.
        for (std::int32_t j = 1; j < gpus; ++j) {
          parents[static_cast<std::size_t>(node * gpus + (head + j) % gpus)] =
              node * gpus + (head + j - 1) % gpus;
        }
      }
    }
  }
  return trees;
}

std::int32_t tree_depth(const std::vector<std::int32_t>& parents) {
  std::int32_t deepest = 0;
  for (std::size_t r = 0; r < parents.size(); ++r) {
    std::int32_t depth = 0;
    for (std::int32_t p = parents[r]; p >= 0; p = parents[static_cast<std::size_t>(p)]) ++depth;
    deepest = std::max(deepest, depth);
  }
  return deepest;
}

}  // namespace lockstep
