// Configuration of a switch's shared buffer, PFC and ECN marking (see shared_buffer.hpp,
// switch.hpp).
#pragma once

#include <bitset>
#include <optional>

#include "models/fabric/port_counters.hpp"
#include "sim/core/bytes.hpp"

namespace lockstep {

struct PfcConfig {
  std::bitset<kTrafficClasses> lossless;  // classes protected by PFC; the others drop when full
  // Dynamic threshold (Broadcom style): an ingress class may take shared buffer while it holds less
  // than alpha x (free shared buffer); past that the switch sends XOFF.
  double alpha = 1.0 / 8;
  // Space kept per ingress port for what is still in flight when XOFF goes out; when absent,
  // derived from the link (see shared_buffer.hpp).
  std::optional<Bytes> headroom;
  // Resume (XON) once the ingress class is this far below its threshold, and its headroom is empty.
  Bytes xon_gap = Bytes(2 * 1062);
};

// When a switch decides on a packet's ECN mark. At dequeue the mark reflects the queue the packet
// leaves behind, so the sender hears of congestion one queueing delay sooner than when the mark
// reflects the queue it joined: HPCC's ns-3 switch (SwitchNotifyDequeue) and htsim's ECN queue
// mark on dequeue. With a deep queue the later signal lets it overshoot into PFC, whose per-ingress
// shares then favour senders near the bottleneck (scenarios/fabric/incast_shares.yaml).
enum class EcnMarkPoint : std::uint8_t { kDequeue, kEnqueue };

struct EcnConfig {
  bool enabled = true;
  Bytes kmin = Bytes(400'000);
  Bytes kmax = Bytes(1'600'000);
  double pmax = 0.2;
  EcnMarkPoint mark_at = EcnMarkPoint::kDequeue;
};

struct SwitchConfig {
  Bytes buffer = Bytes(32'000'000);
  PfcConfig pfc;
  EcnConfig ecn;
  // Lossy classes use the same dynamic threshold rule, without headroom, on the egress queue.
  double lossy_alpha = 1.0 / 8;
};

}  // namespace lockstep
