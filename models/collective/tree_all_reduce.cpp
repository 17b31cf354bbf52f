#include "models/collective/tree_all_reduce.hpp"

#include <algorithm>
#include <stdexcept>

namespace lockstep {
namespace {

std::uint64_t pack(std::int32_t tree, std::int32_t chunk, bool up, std::int32_t rank) {
  return (static_cast<std::uint64_t>(tree) << 48) | (static_cast<std::uint64_t>(chunk) << 32) |
         (static_cast<std::uint64_t>(up ? 1 : 0) << 31) | static_cast<std::uint64_t>(rank);
}

// What pack() packed: the chunk of a tree a transfer carries, its direction and its receiver.
struct Addressed {
  std::int32_t tree = 0;
  std::int32_t chunk = 0;
  bool up = false;
  std::int32_t rank = 0;
};

Addressed unpack(std::uint64_t packed) {
  return {static_cast<std::int32_t>(packed >> 48),
          static_cast<std::int32_t>((packed >> 32) & 0xffff), ((packed >> 31) & 1) != 0,
          static_cast<std::int32_t>(packed & 0x7fffffff)};
}

}  // namespace

TreeAllReduce::TreeAllReduce(Simulator& sim, Network& network,
                             std::vector<std::vector<std::int32_t>> trees, Bytes size,
                             std::optional<ProtocolOverheads> overheads)
    : CollectiveAlgorithm(sim, network, every_endpoint(network), overheads, NcclAlgorithm::kTree),
      parents_(std::move(trees)),
      size_(size) {
  const auto ranks = static_cast<std::size_t>(network_.endpoint_count());
  if (parents_.empty()) throw std::invalid_argument("a tree all-reduce needs a tree");
  for (const std::vector<std::int32_t>& parents : parents_) {
    if (parents.size() != ranks || std::count(parents.begin(), parents.end(), -1) != 1) {
      throw std::invalid_argument("a tree needs a parent for every rank and exactly one root");
    }
    std::vector<std::vector<std::int32_t>>& children = children_.emplace_back(ranks);
    for (std::size_t r = 0; r < ranks; ++r) {
      const std::int32_t p = parents[r];
      if (p >= static_cast<std::int32_t>(ranks) || p == static_cast<std::int32_t>(r)) {
        throw std::invalid_argument("a tree's parent must be another rank");
      }
      if (p >= 0) children[static_cast<std::size_t>(p)].push_back(static_cast<std::int32_t>(r));
    }
    // Every rank must reach the root: no more hops than ranks, else there is a cycle.
    for (std::size_t r = 0; r < ranks; ++r) {
      std::size_t hops = 0;
      for (std::int32_t p = parents[r]; p >= 0; p = parents[static_cast<std::size_t>(p)]) {
        if (++hops > ranks) throw std::invalid_argument("a tree's parents form a cycle");
      }
    }
  }
  const auto trees_count = static_cast<std::int64_t>(parents_.size());
  const std::int64_t per_tree = size_.count() / trees_count;
  chunks_ = pipeline_chunks(Bytes(per_tree));
  // Every chunk goes up and comes down every edge of every tree: two transfers per edge and chunk,
  // each touching both of the edge's ranks.
  std::vector<std::int64_t> per_rank(ranks, 0);
  for (const std::vector<std::int32_t>& parents : parents_) {
    for (std::size_t r = 0; r < ranks; ++r) {
      if (parents[r] < 0) continue;
      per_rank[r] += 2 * chunks_;
      per_rank[static_cast<std::size_t>(parents[r])] += 2 * chunks_;
    }
  }
  expect_transfers(std::move(per_rank));
  arrived_up_.assign(parents_.size(),
                     std::vector<std::int32_t>(ranks * static_cast<std::size_t>(chunks_), 0));
  if (forwards_lines()) {
    inputs_began_.assign(parents_.size(),
                         std::vector<Time>(ranks * static_cast<std::size_t>(chunks_)));
  }
}

std::size_t TreeAllReduce::slot(std::int32_t rank, std::int32_t chunk) const {
  return static_cast<std::size_t>(rank) * static_cast<std::size_t>(chunks_) +
         static_cast<std::size_t>(chunk);
}

Bytes TreeAllReduce::chunk_size(std::int32_t tree, std::int32_t chunk) const {
  return even_share(even_share(size_, static_cast<std::int64_t>(parents_.size()), tree), chunks_,
                    chunk);
}

void TreeAllReduce::launch(std::int32_t rank) {
  for (std::size_t t = 0; t < parents_.size(); ++t)
    launch_on_tree(static_cast<std::int32_t>(t), rank);
}

void TreeAllReduce::launch_together(const std::vector<std::int32_t>& joining) {
  // Tree by tree, as NCCL's tree channels start side by side.
  std::vector<char> starting(static_cast<std::size_t>(network_.endpoint_count()), 0);
  for (const std::int32_t rank : joining) starting[static_cast<std::size_t>(rank)] = 1;
  for (std::size_t t = 0; t < parents_.size(); ++t) {
    for (std::size_t r = 0; r < starting.size(); ++r) {
      if (starting[r] != 0)
        launch_on_tree(static_cast<std::int32_t>(t), static_cast<std::int32_t>(r));
    }
  }
}

void TreeAllReduce::launch_on_tree(std::int32_t tree, std::int32_t rank) {
  // Leaves start the reduction with every chunk; the others wait for their children.
  const auto t = static_cast<std::size_t>(tree);
  const auto r = static_cast<std::size_t>(rank);
  if (!children_[t][r].empty() || parents_[t][r] < 0) return;
  for (std::int32_t k = 0; k < chunks_; ++k) send_chunk(tree, k, true, rank, parents_[t][r]);
}

void TreeAllReduce::send_chunk(std::int32_t tree, std::int32_t chunk, bool up, std::int32_t from,
                               std::int32_t to, std::optional<Time> relayed_from) {
  send(from, to, chunk_size(tree, chunk), static_cast<std::uint32_t>(tree),
       pack(tree, chunk, up, to), relayed_from);
}

void TreeAllReduce::arrived(const Message& /*message*/, Time ready, std::uint64_t tag) {
  if (!inputs_began_.empty()) {
    // A chunk's inputs all arrive before the rank acts on the last of them, and what comes down
    // comes after all that went up.
    const Addressed to = unpack(tag);
    Time& began = inputs_began_[static_cast<std::size_t>(to.tree)][slot(to.rank, to.chunk)];
    began = to.up ? std::max(began, arrival_began()) : arrival_began();
  }
  if (ready == sim_.now()) {
    act(tag);
  } else {
    schedule_counted<&TreeAllReduce::act_event>(ready, this, tag);
  }
}

void TreeAllReduce::act_event(std::uint64_t packed) {
  event_ran();
  act(packed);
}

void TreeAllReduce::act(std::uint64_t packed) {
  const Addressed to = unpack(packed);
  chunk_arrived(to.tree, to.chunk, to.up, to.rank);
}

void TreeAllReduce::chunk_arrived(std::int32_t tree, std::int32_t chunk, bool up,
                                  std::int32_t rank) {
  const auto t = static_cast<std::size_t>(tree);
  const std::vector<std::int32_t>& children = children_[t][static_cast<std::size_t>(rank)];
  const std::optional<Time> relayed_from =
      inputs_began_.empty() ? std::nullopt
                            : std::optional<Time>(inputs_began_[t][slot(rank, chunk)]);
  if (up) {
    std::int32_t& count = arrived_up_[t][slot(rank, chunk)];
    if (++count < static_cast<std::int32_t>(children.size())) return;
    const std::int32_t parent = parents_[t][static_cast<std::size_t>(rank)];
    if (parent >= 0) {
      send_chunk(tree, chunk, true, rank, parent, relayed_from);
      return;
    }
  }
  // The root has the reduced chunk, or a rank got it from above: pass it down.
  for (const std::int32_t child : children) {
    send_chunk(tree, chunk, false, rank, child, relayed_from);
  }
}

}  // namespace lockstep
