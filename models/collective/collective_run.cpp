#include "models/collective/collective_run.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace lockstep {
namespace {

std::int32_t modulo(std::int32_t value, std::int32_t n) { return ((value % n) + n) % n; }

}  // namespace

CollectiveRun::CollectiveRun(Simulator& sim, Network& network,
                             std::vector<std::vector<std::int32_t>> rings, CollectiveOp op,
                             Bytes size, std::optional<ProtocolOverheads> overheads,
                             std::uint32_t first_queue_pair)
    : CollectiveAlgorithm(sim, network, overheads, NcclAlgorithm::kRing),
      rings_(std::move(rings)),
      op_(op),
      size_(size),
      first_queue_pair_(first_queue_pair) {
  if (rings_.empty()) throw std::invalid_argument("a collective needs at least one channel");
  // Events carry the channel in 16 bits and ranks and steps in 24.
  if (rings_.size() > 0xffff || rings_[0].size() >= (std::size_t{1} << 23)) {
    throw std::invalid_argument("too many channels or ranks for one collective");
  }
  if (rings_[0].empty()) throw std::invalid_argument("a collective needs at least one rank");
  if (size_ < Bytes(0)) throw std::invalid_argument("a collective's size cannot be negative");
  std::vector<std::int32_t> members = rings_[0];
  std::sort(members.begin(), members.end());
  if (std::adjacent_find(members.begin(), members.end()) != members.end()) {
    throw std::invalid_argument("a rank appears twice in the collective's ring");
  }
  for (const std::vector<std::int32_t>& ring : rings_) {
    std::vector<std::int32_t> sorted = ring;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != members) {
      throw std::invalid_argument("every channel's ring must hold the same ranks");
    }
  }
  for (const std::int32_t endpoint : members) {
    if (endpoint < 0 || endpoint >= network_.endpoint_count()) {
      throw std::invalid_argument("rank on endpoint " + std::to_string(endpoint) +
                                  ", which the network does not have");
    }
  }
  const std::int64_t n = ranks();
  for (const std::vector<std::int32_t>& ring : rings_) {
    root_position_.push_back(
        static_cast<std::int32_t>(std::min_element(ring.begin(), ring.end()) - ring.begin()));
  }
  chain_chunks_ = pipeline_chunks(even_share(size_, channels(), 0));
  if (n > 1 && is_chain()) {
    expect_transfers((n - 1) * chain_chunks_ * channels());
  } else if (n > 1) {
    const std::int64_t per_channel = op_ == CollectiveOp::kAllToAll
                                         ? n * (n - 1)
                                         : n * (op_ == CollectiveOp::kSendRecv ? 1 : ring_steps());
    expect_transfers(per_channel * channels());
  }
}

Bytes CollectiveRun::chain_chunk(std::int32_t channel, std::int32_t chunk) const {
  return even_share(even_share(size_, channels(), channel), chain_chunks_, chunk);
}

std::int32_t CollectiveRun::chain_start(std::int32_t channel) const {
  const std::int32_t root = root_position_[static_cast<std::size_t>(channel)];
  return op_ == CollectiveOp::kBroadcast ? root : (root + 1) % ranks();
}

std::int32_t CollectiveRun::chain_end(std::int32_t channel) const {
  const std::int32_t root = root_position_[static_cast<std::size_t>(channel)];
  return op_ == CollectiveOp::kBroadcast ? (root + ranks() - 1) % ranks() : root;
}

std::int32_t CollectiveRun::ring_steps() const {
  return op_ == CollectiveOp::kAllReduce ? 2 * (ranks() - 1) : ranks() - 1;
}

Bytes CollectiveRun::chunk(std::int32_t channel, std::int32_t index) const {
  return even_share(even_share(size_, channels(), channel), ranks(), index);
}

void CollectiveRun::launch() {
  const std::int32_t n = ranks();
  for (std::int32_t c = 0; c < channels(); ++c) {
    for (std::int32_t r = 0; r < n; ++r) {
      switch (op_) {
        case CollectiveOp::kAllReduce:
        case CollectiveOp::kReduceScatter:
        case CollectiveOp::kAllGather:
          send_ring_step(c, r, 0);
          break;
        case CollectiveOp::kAllToAll:
          for (std::int32_t q = 0; q < n; ++q) {
            if (q != r) send_to(c, r, q, 0, chunk(c, q));
          }
          break;
        case CollectiveOp::kSendRecv:
          send_to(c, r, (r + 1) % n, 0, even_share(size_, channels(), c));
          break;
        case CollectiveOp::kBroadcast:
        case CollectiveOp::kReduce:
          if (r != chain_start(c)) break;
          for (std::int32_t k = 0; k < chain_chunks_; ++k) {
            send_to(c, r, (r + 1) % n, k, chain_chunk(c, k));
          }
          break;
      }
    }
  }
}

void CollectiveRun::send_to(std::int32_t channel, std::int32_t sender, std::int32_t receiver,
                            std::int32_t step, Bytes size) {
  const std::vector<std::int32_t>& ring = rings_[static_cast<std::size_t>(channel)];
  const std::uint64_t id =
      send(ring[static_cast<std::size_t>(sender)], ring[static_cast<std::size_t>(receiver)], size,
           first_queue_pair_ + static_cast<std::uint32_t>(channel));
  in_flight_.emplace(id, Transfer{channel, sender, step});
}

void CollectiveRun::send_ring_step(std::int32_t channel, std::int32_t sender, std::int32_t step) {
  const std::int32_t n = ranks();
  send_to(channel, sender, (sender + 1) % n, step, chunk(channel, modulo(sender - step, n)));
}

void CollectiveRun::on_message_delivered(const Message& message, Time delivered) {
  const auto it = in_flight_.find(message.id);
  const Transfer transfer = it->second;
  in_flight_.erase(it);
  const Time ready = noticed(message, delivered);
  const std::int32_t at = (transfer.sender + 1) % ranks();
  std::int32_t next_step = 0;
  if (is_chain()) {
    // A chain rank passes on the chunk that just arrived (reduced, for reduce).
    if (at == chain_end(transfer.channel)) return;
    next_step = transfer.step;
  } else {
    const bool ring = op_ == CollectiveOp::kAllReduce || op_ == CollectiveOp::kReduceScatter ||
                      op_ == CollectiveOp::kAllGather;
    if (!ring || transfer.step + 1 >= ring_steps()) return;
    next_step = transfer.step + 1;
  }
  const std::uint64_t next = (static_cast<std::uint64_t>(transfer.channel) << 48) |
                             (static_cast<std::uint64_t>(at) << 24) |
                             static_cast<std::uint64_t>(next_step);
  if (ready == delivered) {
    send_packed_step(next);
  } else {
    sim_.schedule<&CollectiveRun::send_packed_step>(ready, this, next);
  }
}

void CollectiveRun::send_packed_step(std::uint64_t packed) {
  constexpr std::uint64_t kMask24 = (std::uint64_t{1} << 24) - 1;
  const auto channel = static_cast<std::int32_t>(packed >> 48);
  const auto sender = static_cast<std::int32_t>((packed >> 24) & kMask24);
  const auto step = static_cast<std::int32_t>(packed & kMask24);
  if (is_chain()) {
    send_to(channel, sender, (sender + 1) % ranks(), step, chain_chunk(channel, step));
  } else {
    send_ring_step(channel, sender, step);
  }
}

}  // namespace lockstep
