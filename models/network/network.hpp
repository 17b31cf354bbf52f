// The seam between what generates traffic (collectives, traffic generators) and the fabric: a
// message goes in, a completion comes out. The packet-level and flow-level backends both implement
// it, so a scenario switches between them with one key.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "models/network/message.hpp"
#include "sim/core/hash.hpp"

namespace lockstep {

class Network {
 public:
  virtual ~Network() = default;
  // Starts sending `size` bytes from `source` to `destination` on their queue pair `queue_pair`
  // (one ordered stream per pair and index); `listener` is told once the destination has
  // acknowledged all of it. Returns the message id.
  virtual std::uint64_t send(std::int32_t source, std::int32_t destination, Bytes size,
                             std::uint32_t queue_pair, MessageListener& listener) = 0;
  [[nodiscard]] virtual std::int32_t endpoint_count() const = 0;
  // The least time from a message's last byte leaving `source` on the queue pair to its delivery
  // at `destination`: its path's propagation, and its last packet's store-and-forward at every hop
  // after the first; no queueing, no sharing.
  [[nodiscard]] virtual Duration latency(std::int32_t source, std::int32_t destination,
                                         std::uint32_t queue_pair) const = 0;
};

// What every backend's send() checks first: two distinct endpoints of `endpoint_count`. Throws
// std::invalid_argument naming both otherwise.
inline void check_message_endpoints(std::int32_t source, std::int32_t destination,
                                    std::int32_t endpoint_count) {
  auto is_endpoint = [endpoint_count](std::int32_t e) { return e >= 0 && e < endpoint_count; };
  if (!is_endpoint(source) || !is_endpoint(destination) || source == destination) {
    throw std::invalid_argument("message from endpoint " + std::to_string(source) + " to " +
                                std::to_string(destination) + ": not two distinct endpoints");
  }
}

// One queue pair by its ends and index, as a hash map's key.
struct QueuePairKey {
  std::int32_t source = 0;
  std::int32_t destination = 0;
  std::uint32_t index = 0;
  bool operator==(const QueuePairKey&) const = default;
};
struct QueuePairKeyHash {
  std::size_t operator()(const QueuePairKey& key) const {
    return static_cast<std::size_t>(
        hash_combine(hash_combine(static_cast<std::uint64_t>(key.source),
                                  static_cast<std::uint64_t>(key.destination)),
                     key.index));
  }
};

// The ECMP entropy of a queue pair, the same in both backends so that a scenario and seed put every
// queue pair on the same path whichever backend runs it.
[[nodiscard]] inline std::uint64_t queue_pair_entropy(std::uint64_t seed, std::int32_t source,
                                                      std::int32_t destination,
                                                      std::uint32_t queue_pair) {
  return hash_combine(hash_combine(hash_combine(seed, static_cast<std::uint64_t>(source)),
                                   static_cast<std::uint64_t>(destination)),
                      queue_pair);
}

}  // namespace lockstep
