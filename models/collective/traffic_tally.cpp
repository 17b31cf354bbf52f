#include "models/collective/traffic_tally.hpp"

#include <algorithm>

namespace lockstep {

std::uint64_t TrafficTally::send(std::int32_t source, std::int32_t destination, Bytes size,
                                 std::uint32_t queue_pair, MessageListener& listener) {
  const std::uint64_t id = network_.send(source, destination, size, queue_pair, *this);
  listeners_.emplace(id, &listener);
  const auto [found, added] =
      traffic_.try_emplace(std::make_tuple(source, destination, queue_pair));
  QueuePairTraffic& traffic = found->second;
  if (added) {
    traffic.pair = QueuePairKey{source, destination, queue_pair};
    traffic.first_sent = sim_.now();
  }
  traffic.bytes += size;
  return id;
}

std::vector<QueuePairTraffic> TrafficTally::traffic() const {
  std::vector<QueuePairTraffic> traffic;
  traffic.reserve(traffic_.size());
  for (const auto& [pair, carried] : traffic_) traffic.push_back(carried);
  return traffic;
}

void TrafficTally::on_message_delivered(const Message& message, Time delivered) {
  QueuePairTraffic& traffic =
      traffic_[std::make_tuple(message.source, message.destination, message.queue_pair)];
  traffic.last_delivered = std::max(traffic.last_delivered, delivered);
  listeners_.at(message.id)->on_message_delivered(message, delivered);
}

void TrafficTally::on_message_complete(const Message& message, const MessageTimes& times) {
  const auto found = listeners_.find(message.id);
  MessageListener* listener = found->second;
  listeners_.erase(found);
  listener->on_message_complete(message, times);
}

void TrafficTally::on_message_failed(const Message& message, Time failed) {
  const auto found = listeners_.find(message.id);
  MessageListener* listener = found->second;
  listeners_.erase(found);
  listener->on_message_failed(message, failed);
}

}  // namespace lockstep
