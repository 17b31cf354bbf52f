// Configuration of the endpoints' RDMA transport (see nic.hpp).
#pragma once

#include <cstdint>
#include <optional>

#include "models/cc/dcqcn.hpp"
#include "sim/core/bytes.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

// NCCL's defaults for its InfiniBand/RoCE queue pairs (reference.md section 7).
inline constexpr std::int32_t kNcclIbTimeout = 20;
inline constexpr std::int32_t kNcclIbRetryCount = 7;

// The local ACK timeout a queue pair's `timeout` attribute (0-31) sets: 4.096 us x 2^timeout (IB
// spec, ibv_modify_qp); 0 disables it.
[[nodiscard]] constexpr std::optional<Duration> qp_ack_timeout(std::int32_t exponent) {
  if (exponent == 0) return std::nullopt;
  return Duration::ns(4'096) * (std::int64_t{1} << exponent);
}

struct TransportConfig {
  Bytes payload_per_packet = Bytes(1000);
  // RoCEv2 framing: Ethernet 14 + FCS 4, IPv4 20, UDP 8, InfiniBand BTH 12, ICRC 4.
  Bytes header = Bytes(62);
  Bytes control_frame = Bytes(64);  // ACK, NACK, CNP: minimum Ethernet frames
  int data_class = 3;
  // The reliable connection's local ACK timeout: go back to the oldest unacknowledged packet when
  // nothing was acknowledged for this long. Absent, it never fires. NCCL's NCCL_IB_TIMEOUT=20.
  std::optional<Duration> ack_timeout = qp_ack_timeout(kNcclIbTimeout);
  // Timeouts in a row, without an acknowledgement between them, that resend before the queue pair
  // fails: the retry_cnt of ibv_modify_qp, NCCL_IB_RETRY_CNT=7.
  std::int32_t retry_count = kNcclIbRetryCount;
  std::optional<DcqcnParams> dcqcn;  // absent: senders always run at line rate
};

}  // namespace lockstep
