#include "models/collective/ring_collective.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace lockstep {
namespace {

std::int32_t modulo(std::int32_t value, std::int32_t n) { return ((value % n) + n) % n; }

constexpr std::uint64_t kMask24 = (std::uint64_t{1} << 24) - 1;

std::uint64_t pack_step(std::int32_t channel, std::int32_t sender, std::int32_t step) {
  return (static_cast<std::uint64_t>(channel) << 48) | (static_cast<std::uint64_t>(sender) << 24) |
         static_cast<std::uint64_t>(step);
}
std::int32_t packed_channel(std::uint64_t packed) {
  return static_cast<std::int32_t>(packed >> 48);
}
std::int32_t packed_sender(std::uint64_t packed) {
  return static_cast<std::int32_t>((packed >> 24) & kMask24);
}
std::int32_t packed_step(std::uint64_t packed) {
  return static_cast<std::int32_t>(packed & kMask24);
}

}  // namespace

RingCollective::RingCollective(Simulator& sim, Network& network,
                               std::vector<std::vector<std::int32_t>> rings, CollectiveOp op,
                               Bytes size, std::optional<ProtocolOverheads> overheads,
                               std::uint32_t first_queue_pair)
    : CollectiveAlgorithm(sim, network, rings.empty() ? std::vector<std::int32_t>{} : rings[0],
                          overheads, NcclAlgorithm::kRing),
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
  for (const std::vector<std::int32_t>& ring : rings_) {
    std::vector<std::int32_t> sorted = ring;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != members) {
      throw std::invalid_argument("every channel's ring must hold the same ranks");
    }
    std::vector<std::int32_t>& position =
        position_.emplace_back(static_cast<std::size_t>(network_.endpoint_count()), -1);
    for (std::size_t i = 0; i < ring.size(); ++i) {
      position[static_cast<std::size_t>(ring[i])] = static_cast<std::int32_t>(i);
    }
  }
  for (const std::vector<std::int32_t>& ring : rings_) {
    root_position_.push_back(
        static_cast<std::int32_t>(std::min_element(ring.begin(), ring.end()) - ring.begin()));
  }
  chain_chunks_ = pipeline_chunks(even_share(size_, channels(), 0));
  expect_transfers(transfers_per_rank(network_.endpoint_count()));
}

std::vector<std::int64_t> RingCollective::transfers_per_rank(std::int32_t endpoints) const {
  std::vector<std::int64_t> per_rank(static_cast<std::size_t>(endpoints), 0);
  const std::int64_t n = ranks();
  if (n == 1) return per_rank;
  for (std::int32_t c = 0; c < channels(); ++c) {
    const std::vector<std::int32_t>& ring = rings_[static_cast<std::size_t>(c)];
    for (std::int32_t position = 0; position < n; ++position) {
      const std::int32_t rank = ring[static_cast<std::size_t>(position)];
      std::int64_t& count = per_rank[static_cast<std::size_t>(rank)];
      if (op_ == CollectiveOp::kAllToAll) {
        // Sent (and received) by every other rank, through a third where PXN relays it.
        for (const std::int32_t other : ring) {
          if (other == rank) continue;
          count += 1;
          per_rank[static_cast<std::size_t>(other)] += 1;
          if (const std::optional<std::int32_t> via = pxn_relay(rank, other)) {
            per_rank[static_cast<std::size_t>(*via)] += 2;
          }
        }
      } else if (is_chain()) {
        // Every chain rank but the first receives each chunk, every one but the last sends it.
        count += chain_chunks_ *
                 ((position != chain_start(c) ? 1 : 0) + (position != chain_end(c) ? 1 : 0));
      } else if (op_ == CollectiveOp::kSendRecv) {
        count += 2;
      } else {
        count += 2 * static_cast<std::int64_t>(ring_steps());
      }
    }
  }
  return per_rank;
}

Bytes RingCollective::chain_chunk(std::int32_t channel, std::int32_t chunk) const {
  return even_share(even_share(size_, channels(), channel), chain_chunks_, chunk);
}

std::int32_t RingCollective::chain_start(std::int32_t channel) const {
  const std::int32_t root = root_position_[static_cast<std::size_t>(channel)];
  return op_ == CollectiveOp::kBroadcast ? root : (root + 1) % ranks();
}

std::int32_t RingCollective::chain_end(std::int32_t channel) const {
  const std::int32_t root = root_position_[static_cast<std::size_t>(channel)];
  return op_ == CollectiveOp::kBroadcast ? (root + ranks() - 1) % ranks() : root;
}

std::int32_t RingCollective::ring_steps() const {
  return op_ == CollectiveOp::kAllReduce ? 2 * (ranks() - 1) : ranks() - 1;
}

Bytes RingCollective::chunk(std::int32_t channel, std::int32_t index) const {
  return even_share(even_share(size_, channels(), channel), ranks(), index);
}

void RingCollective::launch(std::int32_t rank) {
  for (std::int32_t c = 0; c < channels(); ++c) {
    launch_on_channel(c, position_[static_cast<std::size_t>(c)][static_cast<std::size_t>(rank)]);
  }
}

void RingCollective::launch_together(const std::vector<std::int32_t>& joining) {
  // Channel by channel, in ring order, as NCCL's channels start side by side.
  std::vector<char> starting(static_cast<std::size_t>(network_.endpoint_count()), 0);
  for (const std::int32_t rank : joining) starting[static_cast<std::size_t>(rank)] = 1;
  for (std::int32_t c = 0; c < channels(); ++c) {
    const std::vector<std::int32_t>& ring = rings_[static_cast<std::size_t>(c)];
    for (std::int32_t r = 0; r < ranks(); ++r) {
      if (starting[static_cast<std::size_t>(ring[static_cast<std::size_t>(r)])] != 0) {
        launch_on_channel(c, r);
      }
    }
  }
}

void RingCollective::launch_on_channel(std::int32_t c, std::int32_t r) {
  const std::int32_t n = ranks();
  if (n == 1) return;
  switch (op_) {
    case CollectiveOp::kAllReduce:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
      send_ring_step(c, r, 0);
      break;
    case CollectiveOp::kAllToAll: {
      const std::vector<std::int32_t>& ring = rings_[static_cast<std::size_t>(c)];
      for (std::int32_t q = 0; q < n; ++q) {
        if (q == r) continue;
        send_rail_local(ring[static_cast<std::size_t>(r)], ring[static_cast<std::size_t>(q)],
                        chunk(c, q), first_queue_pair_ + static_cast<std::uint32_t>(c),
                        pack_step(c, r, 0));
      }
      break;
    }
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

void RingCollective::send_to(std::int32_t channel, std::int32_t sender, std::int32_t receiver,
                             std::int32_t step, Bytes size) {
  const std::vector<std::int32_t>& ring = rings_[static_cast<std::size_t>(channel)];
  send(ring[static_cast<std::size_t>(sender)], ring[static_cast<std::size_t>(receiver)], size,
       first_queue_pair_ + static_cast<std::uint32_t>(channel), pack_step(channel, sender, step));
}

void RingCollective::send_ring_step(std::int32_t channel, std::int32_t sender, std::int32_t step) {
  const std::int32_t n = ranks();
  send_to(channel, sender, (sender + 1) % n, step, chunk(channel, modulo(sender - step, n)));
}

void RingCollective::arrived(const Message& /*message*/, Time ready, std::uint64_t tag) {
  const std::int32_t channel = packed_channel(tag);
  const std::int32_t at = (packed_sender(tag) + 1) % ranks();
  const std::int32_t step = packed_step(tag);
  std::int32_t next_step = 0;
  if (is_chain()) {
    // A chain rank passes on the chunk that just arrived (reduced, for reduce).
    if (at == chain_end(channel)) return;
    next_step = step;
  } else {
    const bool ring = op_ == CollectiveOp::kAllReduce || op_ == CollectiveOp::kReduceScatter ||
                      op_ == CollectiveOp::kAllGather;
    if (!ring || step + 1 >= ring_steps()) return;
    next_step = step + 1;
  }
  const std::uint64_t next = pack_step(channel, at, next_step);
  if (ready == sim_.now()) {
    send_packed_step(next);
  } else {
    schedule_counted<&RingCollective::send_step_event>(ready, this, next);
  }
}

void RingCollective::send_step_event(std::uint64_t packed) {
  event_ran();
  send_packed_step(packed);
}

void RingCollective::send_packed_step(std::uint64_t packed) {
  const std::int32_t channel = packed_channel(packed);
  const std::int32_t sender = packed_sender(packed);
  const std::int32_t step = packed_step(packed);
  if (is_chain()) {
    send_to(channel, sender, (sender + 1) % ranks(), step, chain_chunk(channel, step));
  } else {
    send_ring_step(channel, sender, step);
  }
}

}  // namespace lockstep
