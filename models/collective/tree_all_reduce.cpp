#include "models/collective/tree_all_reduce.hpp"

#include <algorithm>
#include <stdexcept>

namespace lockstep {
namespace {

std::uint64_t pack(std::int32_t tree, std::int32_t chunk, bool up, std::int32_t rank) {
  return (static_cast<std::uint64_t>(tree) << 48) | (static_cast<std::uint64_t>(chunk) << 32) |
         (static_cast<std::uint64_t>(up ? 1 : 0) << 31) | static_cast<std::uint64_t>(rank);
}

}  // namespace

TreeAllReduce::TreeAllReduce(Simulator& sim, Network& network,
                             std::vector<std::vector<std::int32_t>> trees, Bytes size,
                             std::optional<ProtocolOverheads> overheads,
                             std::uint32_t first_queue_pair)
    : CollectiveAlgorithm(sim, network, overheads, NcclAlgorithm::kTree),
      parents_(std::move(trees)),
      size_(size),
      first_queue_pair_(first_queue_pair) {
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
  expect_transfers(ranks > 1 ? 2 * trees_count * chunks_ * static_cast<std::int64_t>(ranks - 1)
                             : 0);
  arrived_up_.assign(parents_.size(),
                     std::vector<std::int32_t>(ranks * static_cast<std::size_t>(chunks_), 0));
}

Bytes TreeAllReduce::chunk_size(std::int32_t tree, std::int32_t chunk) const {
  return even_share(even_share(size_, static_cast<std::int64_t>(parents_.size()), tree), chunks_,
                    chunk);
}

void TreeAllReduce::launch() {
  // Leaves start the reduction with every chunk; the others wait for their children.
  for (std::size_t t = 0; t < parents_.size(); ++t) {
    for (std::size_t r = 0; r < parents_[t].size(); ++r) {
      if (!children_[t][r].empty()) continue;
      for (std::int32_t k = 0; k < chunks_; ++k) {
        send_chunk(static_cast<std::int32_t>(t), k, true, static_cast<std::int32_t>(r),
                   parents_[t][r]);
      }
    }
  }
}

void TreeAllReduce::send_chunk(std::int32_t tree, std::int32_t chunk, bool up, std::int32_t from,
                               std::int32_t to) {
  const std::uint64_t id =
      send(from, to, chunk_size(tree, chunk), first_queue_pair_ + static_cast<std::uint32_t>(tree));
  in_flight_.emplace(id, Transfer{tree, chunk, up});
}

void TreeAllReduce::on_message_delivered(const Message& message, Time delivered) {
  const auto it = in_flight_.find(message.id);
  const Transfer transfer = it->second;
  in_flight_.erase(it);
  const Time ready = noticed(message, delivered);
  const std::uint64_t packed =
      pack(transfer.tree, transfer.chunk, transfer.up, message.destination);
  if (ready == delivered) {
    act(packed);
  } else {
    sim_.schedule<&TreeAllReduce::act>(ready, this, packed);
  }
}

void TreeAllReduce::act(std::uint64_t packed) {
  arrived(static_cast<std::int32_t>(packed >> 48),
          static_cast<std::int32_t>((packed >> 32) & 0xffff), ((packed >> 31) & 1) != 0,
          static_cast<std::int32_t>(packed & 0x7fffffff));
}

void TreeAllReduce::arrived(std::int32_t tree, std::int32_t chunk, bool up, std::int32_t rank) {
  const auto t = static_cast<std::size_t>(tree);
  const std::vector<std::int32_t>& children = children_[t][static_cast<std::size_t>(rank)];
  if (up) {
    std::int32_t& count =
        arrived_up_[t][static_cast<std::size_t>(rank) * static_cast<std::size_t>(chunks_) +
                       static_cast<std::size_t>(chunk)];
    if (++count < static_cast<std::int32_t>(children.size())) return;
    const std::int32_t parent = parents_[t][static_cast<std::size_t>(rank)];
    if (parent >= 0) {
      send_chunk(tree, chunk, true, rank, parent);
      return;
    }
  }
  // The root has the reduced chunk, or a rank got it from above: pass it down.
  for (const std::int32_t child : children) send_chunk(tree, chunk, false, rank, child);
}

}  // namespace lockstep
