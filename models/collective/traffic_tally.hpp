// A Network that passes every message on to another and keeps, for each queue pair, the bytes it
// carried, when the first of them was sent and when the last was delivered: what a collective
// sent, pair by pair, over its whole run (fluid_replay.hpp streams it again as one flow per queue
// pair).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "models/network/network.hpp"
#include "sim/core/simulator.hpp"

namespace lockstep {

struct QueuePairTraffic {
  QueuePairKey pair;
  Bytes bytes;
  Time first_sent;
  Time last_delivered;
};

class TrafficTally final : public Network, private MessageListener {
 public:
  TrafficTally(const Simulator& sim, Network& network) : sim_(sim), network_(network) {}

  std::uint64_t send(std::int32_t source, std::int32_t destination, Bytes size,
                     std::uint32_t queue_pair, MessageListener& listener) override;
  [[nodiscard]] std::int32_t endpoint_count() const override { return network_.endpoint_count(); }
  [[nodiscard]] Duration latency(std::int32_t source, std::int32_t destination,
                                 std::uint32_t queue_pair) const override {
    return network_.latency(source, destination, queue_pair);
  }

  // Every queue pair that carried a message, by source, destination and index.
  [[nodiscard]] std::vector<QueuePairTraffic> traffic() const;

 private:
  void on_message_delivered(const Message& message, Time delivered) override;
  void on_message_complete(const Message& message, const MessageTimes& times) override;
  void on_message_failed(const Message& message, Time failed) override;

  const Simulator& sim_;
  Network& network_;
  // Looked up at every message; ordered only when traffic() lists it.
  std::unordered_map<QueuePairKey, QueuePairTraffic, QueuePairKeyHash> traffic_;
  std::unordered_map<std::uint64_t, MessageListener*> listeners_;  // by id; never iterated
};

}  // namespace lockstep
