#include "models/collective/traffic_tally.hpp"

#include <algorithm>
#include <tuple>

namespace lockstep {

std::uint64_t TrafficTally::send(std::int32_t source, std::int32_t destination, Bytes size,
                                 std::uint32_t queue_pair, MessageListener& listener) {
  const std::uint64_t id = network_.send(source, destination, size, queue_pair, *this);
  listeners_.emplace(id, &listener);
  const QueuePairKey pair{source, destination, queue_pair};
  const auto [found, added] = traffic_.try_emplace(pair);
  QueuePairTraffic& traffic = found->second;
  if (added) {
    traffic.pair = pair;
    traffic.first_sent = sim_.now();
  }
  traffic.bytes += size;
  return id;
}

std::vector<QueuePairTraffic> TrafficTally::traffic() const {
  std::vector<QueuePairTraffic> traffic;
  traffic.reserve(traffic_.size());
  for (const auto& [pair, carried] : traffic_) traffic.push_back(carried);
  std::sort(traffic.begin(), traffic.end(),
            [](const QueuePairTraffic& a, const QueuePairTraffic& b) {
              return std::tie(a.pair.source, a.pair.destination, a.pair.index) <
                     std::tie(b.pair.source, b.pair.destination, b.pair.index);
            });
  return traffic;
}

void TrafficTally::on_message_delivered(const Message& message, Time delivered) {
  QueuePairTraffic& traffic =
      traffic_.at(QueuePairKey{message.source, message.destination, message.queue_pair});
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
