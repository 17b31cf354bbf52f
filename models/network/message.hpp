// A message: bytes one endpoint sends to another over one queue pair, the unit collectives and
// traffic generators hand to the network (`Network::send`).
#pragma once

#include <cstdint>

#include "sim/core/bytes.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

struct Message {
  std::uint64_t id = 0;
  std::int32_t source = 0;  // endpoint ids
  std::int32_t destination = 0;
  Bytes size;
  std::uint32_t queue_pair = 0;  // which of the (source, destination) queue pairs carries it
};

// The packets a message of `size` travels in, `payload` bytes each: an empty message still sends
// one (its header). payload > 0.
[[nodiscard]] inline std::int64_t packets_for(Bytes size, Bytes payload) {
  return size.count() == 0 ? 1 : (size.count() + payload.count() - 1) / payload.count();
}

struct MessageTimes {
  Time submitted;
  Time first_sent;
  Time delivered;     // last byte arrived at the destination
  Time acknowledged;  // the sender knows: the message is complete
};

// Told when a message has been acknowledged in full, and optionally, earlier, when its last byte
// reached the destination (what a receiver waiting for data reacts to, as a collective's next step
// does; the acknowledgement returns a propagation later). A message whose queue pair failed (its
// retries ran out: the path died) is never complete: its sender is told of the failure instead,
// at the moment the NIC gives up, as an RDMA work completion with an error status tells NCCL.
class MessageListener {
 public:
  virtual ~MessageListener() = default;
  virtual void on_message_complete(const Message& message, const MessageTimes& times) = 0;
  virtual void on_message_delivered(const Message& /*message*/, Time /*delivered*/) {}
  virtual void on_message_failed(const Message& message, Time failed) = 0;
};

}  // namespace lockstep
