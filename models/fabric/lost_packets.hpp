// Where packets that the fabric loses go: those on a cable when it was cut, those queued at a port
// whose link went down, and those sent to a port that is down. It counts the data payload lost
// (for the network's byte account) and returns every packet to the pool.
#pragma once

#include <cstdint>

#include "models/fabric/link.hpp"

namespace lockstep {

class LostPackets final : public PacketReceiver {
 public:
  explicit LostPackets(PacketPool& packets) : packets_(packets) {}

  void receive(Packet* packet, std::uint16_t /*ingress_port*/) override {
    if (packet->kind == PacketKind::kData) {
      ++data_packets_;
      data_payload_ += packet->payload_bytes;
    }
    packets_.release(packet);
  }

  [[nodiscard]] std::int64_t data_packets() const { return data_packets_; }
  [[nodiscard]] std::int64_t data_payload() const { return data_payload_; }

 private:
  PacketPool& packets_;
  std::int64_t data_packets_ = 0;
  std::int64_t data_payload_ = 0;
};

}  // namespace lockstep
