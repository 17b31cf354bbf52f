#include "models/collective/nvls_tree_all_reduce.hpp"

#include <stdexcept>

#include "models/collective/double_binary_tree.hpp"

namespace lockstep {
namespace {

constexpr std::int32_t kTrees = 2;
// Queue pairs: each tree's chunks in order on one, and the multicast beside the reduce so that a
// head's results do not queue behind the shares it sends to the other heads.
constexpr std::uint32_t kMulticastQueuePairs = kTrees;

}  // namespace

NvlsTreeAllReduce::NvlsTreeAllReduce(Simulator& sim, Network& network, std::int32_t nodes,
                                     std::int32_t gpus, Bytes size,
                                     std::optional<ProtocolOverheads> overheads)
    : NvlsKernelCollective(sim, network, overheads, NcclAlgorithm::kNvlsTree, size,
                           nvls_loops(NvlsKernel::kNvlsTree, size, gpus, nodes)),
      nodes_(nodes),
      gpus_(gpus) {
  if (nodes_ < 2 || gpus_ < 2) {
    throw std::invalid_argument("NVLS-Tree needs at least two nodes of at least two GPUs each");
  }
  if (static_cast<std::int64_t>(nodes_) * gpus_ != network_.endpoint_count()) {
    throw std::invalid_argument("NVLS-Tree's nodes x GPUs must be the network's endpoints");
  }
  if (size_ < Bytes(0)) throw std::invalid_argument("a collective's size cannot be negative");
  for (const std::vector<std::int32_t>& parents : double_binary_trees(nodes_, 1)) {
    std::vector<std::vector<std::int32_t>>& children =
        node_children_.emplace_back(static_cast<std::size_t>(nodes_));
    for (std::int32_t node = 0; node < nodes_; ++node) {
      const std::int32_t parent = parents[static_cast<std::size_t>(node)];
      if (parent >= 0) children[static_cast<std::size_t>(parent)].push_back(node);
    }
    node_parents_.push_back(parents);
  }
  std::vector<std::int64_t> per_rank(static_cast<std::size_t>(network_.endpoint_count()), 0);
  inputs_missing_.assign(static_cast<std::size_t>(nodes_) * static_cast<std::size_t>(pieces()), 0);
  root_step_missing_.assign(inputs_missing_.size(), 0);
  if (size_ == Bytes(0)) {
    expect_transfers(std::move(per_rank));
    return;
  }
  for (std::int32_t index = 0; index < pieces(); ++index) {
    const Piece piece = piece_at(index);
    const auto t = static_cast<std::size_t>(piece.tree);
    for (std::int32_t node = 0; node < nodes_; ++node) {
      // Below the root the head sums its own share, G - 1 through the switch and one per child
      // node; the root's head waits for its own share and its children's before its step, which
      // reads the G - 1 through the switch and multicasts the whole (root_step).
      const auto children =
          static_cast<std::int32_t>(node_children_[t][static_cast<std::size_t>(node)].size());
      const bool root = node_parents_[t][static_cast<std::size_t>(node)] < 0;
      const std::size_t at = static_cast<std::size_t>(node) * static_cast<std::size_t>(pieces()) +
                             static_cast<std::size_t>(index);
      inputs_missing_[at] = (root ? 1 : gpus_) + children;
      root_step_missing_[at] = root ? 2 * (gpus_ - 1) : 0;
      // Reduce and multicast: one transfer each way between the head and every other GPU.
      for (std::int32_t gpu = 0; gpu < gpus_; ++gpu) {
        per_rank[static_cast<std::size_t>(rank(node, gpu))] +=
            gpu == piece.head ? 2 * (gpus_ - 1) : 2;
      }
      // Up and down the edge to the parent node, between the two heads.
      const std::int32_t parent = node_parents_[t][static_cast<std::size_t>(node)];
      if (parent >= 0) {
        per_rank[static_cast<std::size_t>(rank(node, piece.head))] += 2;
        per_rank[static_cast<std::size_t>(rank(parent, piece.head))] += 2;
      }
    }
  }
  expect_transfers(std::move(per_rank));
}

Bytes NvlsTreeAllReduce::node_message(Bytes slice_bytes, std::int32_t gpus) {
  const std::int64_t numerator = slice_bytes.count() * (gpus + 1);
  const std::int64_t denominator = 2 * static_cast<std::int64_t>(gpus - 1);
  return Bytes((numerator + denominator - 1) / denominator);
}

NvlsTreeAllReduce::Piece NvlsTreeAllReduce::piece_at(std::int32_t index) const {
  return Piece{index / (kTrees * steps_.count()), (index / steps_.count()) % kTrees,
               index % steps_.count()};
}

Bytes NvlsTreeAllReduce::piece_bytes(const Piece& piece) const {
  return even_share(even_share(steps_.bytes_of(piece.chunk), gpus_, piece.head), kTrees,
                    piece.tree);
}

void NvlsTreeAllReduce::reduce(std::int32_t rank) {
  const std::int32_t node = rank / gpus_;
  const std::int32_t gpu = rank % gpus_;
  for (std::int32_t chunk = 0; chunk < steps_.count(); ++chunk) {
    for (std::int32_t tree = 0; tree < kTrees; ++tree) {
      std::vector<StepTransfer> step;
      const bool root = is_root(node, tree);
      for (std::int32_t head = 0; head < gpus_; ++head) {
        const Piece piece{head, tree, chunk};
        if (head == gpu) {
          count_toward_sum(node, piece);
        } else if (!root) {
          step.push_back(transfer(Stage::kReduce, this->rank(node, head), node, piece,
                                  node_message(piece_bytes(piece), gpus_)));
        }
      }
      send_step(rank, group(Stage::kReduce, tree), step);
    }
  }
}

void NvlsTreeAllReduce::send_across(std::int32_t from, const StepTransfer& transfer) {
  send(transfer, from);
}

std::uint32_t NvlsTreeAllReduce::group(Stage stage, std::int32_t tree) {
  return static_cast<std::uint32_t>(stage) * kTrees + static_cast<std::uint32_t>(tree);
}

NvlsTreeAllReduce::StepTransfer NvlsTreeAllReduce::transfer(Stage stage, std::int32_t to,
                                                            std::int32_t node, const Piece& piece,
                                                            Bytes bytes) const {
  const std::uint64_t tag = (static_cast<std::uint64_t>(stage) << 62) |
                            (static_cast<std::uint64_t>(node) << 32) |
                            static_cast<std::uint64_t>(piece_index(piece));
  const bool multicast = stage == Stage::kMulticast;
  const auto queue_pair =
      static_cast<std::uint32_t>(piece.tree) + (multicast ? kMulticastQueuePairs : 0);
  const bool last = piece.chunk == steps_.count() - 1;
  return StepTransfer{to,
                      bytes,
                      queue_pair,
                      tag,
                      steps_.loops_in(piece.chunk),
                      -1,
                      multicast && last ? last_gather() : Duration()};
}

void NvlsTreeAllReduce::arrived(const Message& /*message*/, Time ready, std::uint64_t tag) {
  if (ready == sim_.now()) {
    act(tag);
  } else {
    schedule_counted<&NvlsTreeAllReduce::act_event>(ready, this, tag);
  }
}

void NvlsTreeAllReduce::act_event(std::uint64_t packed) {
  event_ran();
  act(packed);
}

void NvlsTreeAllReduce::act(std::uint64_t packed) {
  const auto stage = static_cast<Stage>(packed >> 62);
  const auto node = static_cast<std::int32_t>((packed >> 32) & 0x3fffffff);
  const Piece piece = piece_at(static_cast<std::int32_t>(packed & 0xffffffff));
  if (is_root(node, piece.tree) && (stage == Stage::kReduce || stage == Stage::kMulticast)) {
    std::int32_t& missing =
        root_step_missing_[static_cast<std::size_t>(node) * static_cast<std::size_t>(pieces()) +
                           static_cast<std::size_t>(piece_index(piece))];
    if (--missing == 0) send_down(node, piece);  // the root's step is done: the sum goes down
    return;
  }
  switch (stage) {
    case Stage::kReduce:
    case Stage::kUp:
      count_toward_sum(node, piece);
      break;
    case Stage::kDown:
      send_down(node, piece);
      multicast(node, piece);
      break;
    case Stage::kMulticast:
      break;  // the piece is home
  }
}

void NvlsTreeAllReduce::count_toward_sum(std::int32_t node, const Piece& piece) {
  std::int32_t& missing =
      inputs_missing_[static_cast<std::size_t>(node) * static_cast<std::size_t>(pieces()) +
                      static_cast<std::size_t>(piece_index(piece))];
  if (--missing > 0) return;
  const std::int32_t parent =
      node_parents_[static_cast<std::size_t>(piece.tree)][static_cast<std::size_t>(node)];
  if (parent < 0) {
    root_step(node, piece);
  } else {
    send_across(rank(node, piece.head),
                transfer(Stage::kUp, rank(parent, piece.head), parent, piece, piece_bytes(piece)));
  }
}

bool NvlsTreeAllReduce::is_root(std::int32_t node, std::int32_t tree) const {
  return node_parents_[static_cast<std::size_t>(tree)][static_cast<std::size_t>(node)] < 0;
}

void NvlsTreeAllReduce::root_step(std::int32_t node, const Piece& piece) {
  const std::int32_t head = rank(node, piece.head);
  const Bytes share = node_message(piece_bytes(piece), gpus_);
  std::vector<StepTransfer> step;
  for (std::int32_t gpu = 0; gpu < gpus_; ++gpu) {
    if (gpu == piece.head) continue;
    step.push_back(transfer(Stage::kReduce, head, node, piece, share));
    step.back().from = rank(node, gpu);
    step.push_back(transfer(Stage::kMulticast, rank(node, gpu), node, piece, share));
  }
  send_step(head, group(Stage::kReduce, piece.tree), step);
}

void NvlsTreeAllReduce::send_down(std::int32_t node, const Piece& piece) {
  const std::int32_t head = rank(node, piece.head);
  for (const std::int32_t child :
       node_children_[static_cast<std::size_t>(piece.tree)][static_cast<std::size_t>(node)]) {
    send_across(head,
                transfer(Stage::kDown, rank(child, piece.head), child, piece, piece_bytes(piece)));
  }
}

void NvlsTreeAllReduce::multicast(std::int32_t node, const Piece& piece) {
  const std::int32_t head = rank(node, piece.head);
  const Bytes share = node_message(piece_bytes(piece), gpus_);
  std::vector<StepTransfer> copies;
  for (std::int32_t gpu = 0; gpu < gpus_; ++gpu) {
    if (gpu != piece.head) {
      copies.push_back(transfer(Stage::kMulticast, rank(node, gpu), node, piece, share));
    }
  }
  send_step(head, group(Stage::kMulticast, piece.tree), copies);
}

}  // namespace lockstep
