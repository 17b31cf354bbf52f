#include "models/collective/collective_algorithm.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace lockstep {

Bytes even_share(Bytes total, std::int64_t parts, std::int64_t index) {
  return Bytes(total.count() / parts + (index < total.count() % parts ? 1 : 0));
}

std::int32_t pipeline_chunks(Bytes bytes) {
  constexpr std::int64_t kChunk = std::int64_t{1} << 20;
  constexpr std::int64_t kMostChunks = 64;
  return static_cast<std::int32_t>(
      std::clamp<std::int64_t>((bytes.count() + kChunk - 1) / kChunk, 1, kMostChunks));
}

CollectiveAlgorithm::CollectiveAlgorithm(Simulator& sim, Network& network,
                                         std::optional<ProtocolOverheads> overheads,
                                         NcclAlgorithm algorithm)
    : sim_(sim),
      network_(network),
      overheads_(overheads),
      cost_(overheads ? protocol_cost(overheads->protocol, algorithm) : ProtocolCost{}),
      rank_transfer_times_(static_cast<std::size_t>(network.endpoint_count())) {
  if (overheads_ && overheads_->gpus_per_node < 1) {
    throw std::invalid_argument("a node holds at least one GPU");
  }
}

void CollectiveAlgorithm::start() {
  started_at_ = sim_.now();
  finished_at_ = sim_.now();
  if (transfers_ == 0) {
    // Reported by an event, like every end: a caller starting several collectives in a loop is not
    // re-entered before its loop is done.
    sim_.schedule<&CollectiveAlgorithm::report_finished>(sim_.now(), this);
    return;
  }
  if (cost_.base_latency > Duration()) {
    sim_.schedule<&CollectiveAlgorithm::launch>(sim_.now() + cost_.base_latency, this);
  } else {
    launch();
  }
}

std::uint64_t CollectiveAlgorithm::send(std::int32_t from, std::int32_t to, Bytes data,
                                        std::uint32_t queue_pair) {
  // The protocol's flags travel with the data: LL moves twice the bytes.
  const Bytes wire =
      overheads_ ? Bytes(static_cast<std::int64_t>(
                       std::ceil(static_cast<double>(data.count()) / cost_.data_per_wire_byte)))
                 : data;
  const std::uint64_t id = network_.send(from, to, wire, queue_pair, *this);
  sent_at_.emplace(id, sim_.now());
  return id;
}

Time CollectiveAlgorithm::noticed(const Message& message, Time delivered) {
  ++delivered_;
  const auto sent_at = sent_at_.find(message.id);
  const Duration took = delivered - sent_at->second;
  sent_at_.erase(sent_at);
  rank_transfer_times_[static_cast<std::size_t>(message.source)].sent += took;
  rank_transfer_times_[static_cast<std::size_t>(message.destination)].received += took;
  Duration step;
  if (overheads_) {
    const bool same_node = message.source / overheads_->gpus_per_node ==
                           message.destination / overheads_->gpus_per_node;
    step = same_node ? cost_.nvlink_step : cost_.network_step;
  }
  finished_at_ = std::max(finished_at_, delivered + step);
  if (delivered_ == transfers_) {
    sim_.schedule<&CollectiveAlgorithm::report_finished>(finished_at_, this);
  }
  return delivered + step;
}

void CollectiveAlgorithm::report_finished() {
  if (on_finished_) on_finished_();
}

void CollectiveAlgorithm::on_message_complete(const Message& /*message*/,
                                              const MessageTimes& /*times*/) {
  // Every step waits for the data to arrive, not for the sender to hear of it.
}

}  // namespace lockstep
