#include "models/collective/collnet_direct_all_reduce.hpp"

#include <stdexcept>

namespace lockstep {
CollNetDirectAllReduce::CollNetDirectAllReduce(Simulator& sim, Network& network, std::int32_t nodes,
                                               std::int32_t gpus, Bytes size,
                                               std::optional<ProtocolOverheads> overheads)
    : CollectiveAlgorithm(sim, network, every_endpoint(network), overheads,
                          NcclAlgorithm::kCollNetDirect),
      nodes_(nodes),
      gpus_(gpus),
      size_(size) {
  if (nodes_ < 2 || gpus_ < 1) {
    throw std::invalid_argument("CollNet needs at least two nodes of at least one GPU each");
  }
  if (static_cast<std::int64_t>(nodes_) * gpus_ != network_.endpoint_count()) {
    throw std::invalid_argument("CollNet's nodes x GPUs must be the network's endpoints");
  }
  if (size_ < Bytes(0)) throw std::invalid_argument("a collective's size cannot be negative");
  chunks_ = pipeline_chunks(Bytes(size_.count() / gpus_));
  std::vector<std::int64_t> per_rank(static_cast<std::size_t>(network_.endpoint_count()), 0);
  const std::size_t counts = static_cast<std::size_t>(nodes_) * static_cast<std::size_t>(pieces());
  in_node_missing_.assign(counts, gpus_);
  across_missing_.assign(counts, nodes_);  // the other nodes' parts, and its own sum
  if (size_ > Bytes(0)) {
    for (std::int32_t index = 0; index < pieces(); ++index) {
      const Piece piece = piece_at(index);
      for (std::int32_t node = 0; node < nodes_; ++node) {
        for (std::int32_t gpu = 0; gpu < gpus_; ++gpu) {
          // Scatter and gather: one transfer each way between the head and every other GPU.
          per_rank[static_cast<std::size_t>(rank(node, gpu))] +=
              gpu == piece.head ? 2 * (gpus_ - 1) : 2;
        }
        // Across: a part to and from every other node's head.
        per_rank[static_cast<std::size_t>(rank(node, piece.head))] += 2 * (nodes_ - 1);
      }
    }
  }
  expect_transfers(std::move(per_rank));
}

Bytes CollNetDirectAllReduce::piece_bytes(const Piece& piece) const {
  return even_share(even_share(size_, gpus_, piece.head), chunks_, piece.chunk);
}

std::int32_t& CollNetDirectAllReduce::missing(std::vector<std::int32_t>& counts, std::int32_t node,
                                              const Piece& piece) const {
  return counts[static_cast<std::size_t>(node) * static_cast<std::size_t>(pieces()) +
                static_cast<std::size_t>(piece_index(piece))];
}

void CollNetDirectAllReduce::launch(std::int32_t rank) {
  if (size_ == Bytes(0)) return;
  const std::int32_t node = rank / gpus_;
  const std::int32_t gpu = rank % gpus_;
  for (std::int32_t index = 0; index < pieces(); ++index) {
    const Piece piece = piece_at(index);
    if (piece.head == gpu) {
      count_in_node(node, piece);
    } else {
      send_stage(Stage::kScatter, rank, this->rank(node, piece.head), node, piece,
                 piece_bytes(piece));
    }
  }
}

void CollNetDirectAllReduce::send_stage(Stage stage, std::int32_t from, std::int32_t to,
                                        std::int32_t node, const Piece& piece, Bytes bytes) {
  const std::uint64_t tag = (static_cast<std::uint64_t>(stage) << 62) |
                            (static_cast<std::uint64_t>(node) << 32) |
                            static_cast<std::uint64_t>(piece_index(piece));
  // A queue pair per stage, so that no stage's transfers queue behind another's.
  send(from, to, bytes, static_cast<std::uint32_t>(stage), tag);
}

void CollNetDirectAllReduce::arrived(const Message& /*message*/, Time ready, std::uint64_t tag) {
  if (ready == sim_.now()) {
    act(tag);
  } else {
    schedule_counted<&CollNetDirectAllReduce::act_event>(ready, this, tag);
  }
}

void CollNetDirectAllReduce::act_event(std::uint64_t packed) {
  event_ran();
  act(packed);
}

void CollNetDirectAllReduce::act(std::uint64_t packed) {
  const auto stage = static_cast<Stage>(packed >> 62);
  const auto node = static_cast<std::int32_t>((packed >> 32) & 0x3fffffff);
  const Piece piece = piece_at(static_cast<std::int32_t>(packed & 0xffffffff));
  switch (stage) {
    case Stage::kScatter:
      count_in_node(node, piece);
      break;
    case Stage::kAcross:
      count_across(node, piece);
      break;
    case Stage::kGather:
      break;  // the piece is home
  }
}

void CollNetDirectAllReduce::count_in_node(std::int32_t node, const Piece& piece) {
  if (--missing(in_node_missing_, node, piece) > 0) return;
  const Bytes sum = piece_bytes(piece);
  std::int32_t part = 0;
  for (std::int32_t other = 0; other < nodes_; ++other) {
    if (other == node) continue;
    send_stage(Stage::kAcross, rank(node, piece.head), rank(other, piece.head), other, piece,
               even_share(sum, nodes_ - 1, part++));
  }
  count_across(node, piece);
}

void CollNetDirectAllReduce::count_across(std::int32_t node, const Piece& piece) {
  if (--missing(across_missing_, node, piece) > 0) return;
  for (std::int32_t gpu = 0; gpu < gpus_; ++gpu) {
    if (gpu != piece.head) {
      send_stage(Stage::kGather, rank(node, piece.head), rank(node, gpu), node, piece,
                 piece_bytes(piece));
    }
  }
}

}  // namespace lockstep
