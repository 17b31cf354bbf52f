// The seam between what generates traffic (collectives, traffic generators) and the fabric: a
// message goes in, a completion comes out. The packet-level and flow-level backends both implement
// it, so a scenario switches between them with one key.
#pragma once

#include <cstdint>

#include "models/transport/message.hpp"

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
};

}  // namespace lockstep
