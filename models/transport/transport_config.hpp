// Configuration of the endpoints' RDMA transport (see nic.hpp).
#pragma once

#include <optional>

#include "models/cc/dcqcn.hpp"
#include "sim/core/bytes.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

struct TransportConfig {
  Bytes payload_per_packet = Bytes(1000);
  // RoCEv2 framing: Ethernet 14 + FCS 4, IPv4 20, UDP 8, InfiniBand BTH 12, ICRC 4.
  Bytes header = Bytes(62);
  Bytes control_frame = Bytes(64);  // ACK, NACK, CNP: minimum Ethernet frames
  int data_class = 3;
  // Go-back-N: resend from the oldest unacknowledged packet when nothing was acknowledged for this
  // long.
  Duration retransmit_timeout = Duration::ms(1);
  std::optional<DcqcnParams> dcqcn;  // absent: senders always run at line rate
};

}  // namespace lockstep
