#include "models/collective/fluid_ring.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace lockstep {
namespace {

std::vector<std::int32_t> members_of(const std::vector<std::vector<std::int32_t>>& rings) {
  if (rings.empty() || rings[0].empty()) throw std::invalid_argument("a ring needs a rank");
  std::vector<std::int32_t> members = rings[0];
  std::sort(members.begin(), members.end());
  for (const std::vector<std::int32_t>& ring : rings) {
    std::vector<std::int32_t> sorted = ring;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != members) throw std::invalid_argument("every channel's ring has the same ranks");
  }
  return rings[0];
}

}  // namespace

FluidRing::FluidRing(Simulator& sim, Network& network, std::vector<std::vector<std::int32_t>> rings,
                     CollectiveOp op, Bytes size, Duration base_latency, Duration step_latency,
                     double data_per_wire_byte, std::optional<BitRate> channel_ceiling,
                     RingConnections connections)
    : CollectiveAlgorithm(sim, network, members_of(rings), std::nullopt, NcclAlgorithm::kRing),
      rings_(std::move(rings)),
      op_(op),
      size_(size),
      base_latency_(base_latency),
      step_latency_(step_latency),
      data_per_wire_byte_(data_per_wire_byte),
      channel_ceiling_(channel_ceiling),
      connections_(connections),
      yet_to_join_(static_cast<std::int64_t>(participants().size())) {
  if (op != CollectiveOp::kAllReduce && op != CollectiveOp::kReduceScatter &&
      op != CollectiveOp::kAllGather) {
    throw std::invalid_argument("a fluid ring runs all-reduce, reduce-scatter or all-gather");
  }
  if (!(data_per_wire_byte > 0.0 && data_per_wire_byte <= 1.0)) {
    throw std::invalid_argument("a protocol carries more than no data and at most its wire bytes");
  }
  if (connections_.ranks_per_node < 1 || connections_.queue_pairs < 1) {
    throw std::invalid_argument("a node holds a rank, and a connection a queue pair");
  }
  std::vector<std::int64_t> per_rank(static_cast<std::size_t>(network.endpoint_count()), 0);
  const std::size_t n = rings_[0].size();
  if (n > 1) {
    for (const std::vector<std::int32_t>& ring : rings_) {
      for (std::size_t p = 0; p < n; ++p) {
        const std::int32_t from = ring[p];
        const std::int32_t to = ring[(p + 1) % n];
        per_rank[static_cast<std::size_t>(from)] += queue_pairs(from, to);
        per_rank[static_cast<std::size_t>(to)] += queue_pairs(from, to);
      }
    }
  }
  expect_transfers(std::move(per_rank));
}

void FluidRing::launch(std::int32_t /*rank*/) {
  if (--yet_to_join_ > 0) return;
  const auto n = static_cast<std::int64_t>(rings_[0].size());
  if (n == 1) return;
  const std::int64_t steps = op_ == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
  schedule_counted<&FluidRing::stream>(sim_.now() + base_latency_ + step_latency_ * steps, this);
}

void FluidRing::stream() {
  event_ran();
  if (!running()) return;
  const auto n = static_cast<std::int64_t>(rings_[0].size());
  const std::int64_t steps = op_ == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
  const auto channels = static_cast<std::int64_t>(rings_.size());
  for (std::int64_t c = 0; c < channels; ++c) {
    const std::vector<std::int32_t>& ring = rings_[static_cast<std::size_t>(c)];
    // Each step passes one n-th of the channel's share across every link of its ring.
    const Bytes share = even_share(size_, channels, c);
    const std::int64_t streamed = (share.count() + n - 1) / n * steps;
    const Bytes wire(
        static_cast<std::int64_t>(std::ceil(static_cast<double>(streamed) / data_per_wire_byte_)));
    for (std::int64_t p = 0; p < n; ++p) {
      const std::int32_t from = ring[static_cast<std::size_t>(p)];
      const std::int32_t to = ring[static_cast<std::size_t>((p + 1) % n)];
      const std::int32_t parts = queue_pairs(from, to);
      for (std::int32_t k = 0; k < parts; ++k) {
        const std::uint32_t queue_pair =
            parts == 1 ? static_cast<std::uint32_t>(c)
                       : connection_queue_pair(static_cast<std::uint32_t>(c), parts, k);
        const Bytes part = even_share(wire, parts, k);
        if (channel_ceiling_) {
          // The connection's queue pairs share the channel's speed.
          send_paced(from, to, part, queue_pair, 0, tx_time(Bytes(streamed), *channel_ceiling_));
        } else {
          send(from, to, part, queue_pair, 0);
        }
      }
    }
  }
}

std::int32_t FluidRing::queue_pairs(std::int32_t from, std::int32_t to) const {
  const bool across = from / connections_.ranks_per_node != to / connections_.ranks_per_node;
  return across ? connections_.queue_pairs : 1;
}

void FluidRing::arrived(const Message& /*message*/, Time /*ready*/, std::uint64_t /*tag*/) {}

}  // namespace lockstep
