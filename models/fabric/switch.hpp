// An output-queued shared-buffer switch: packets arriving on an ingress port leave by the port
// their route names (their flow's per-flow ECMP path, routing.hpp), are admitted into the shared
// buffer (shared_buffer.hpp), queued at the egress port and ECN-marked by RED on the egress class
// queue as they leave it (or as they join it: EcnConfig::mark_at). Pause frames from a neighbour
// pause the egress port they arrive on; the switch's own XOFF/XON go out of the ingress port that
// filled up, as real frames on the reverse link, and XOFF is refreshed at half its pause time while
// the class stays above XON. A packet's buffer is freed when its transmission starts
// (egress_port.hpp). Zero switching latency (store and forward only, as in the benchmark
// configuration). Left out: cut-through, control frames' buffer use, and egress limits on lossless
// classes (lossy ones are admitted by their egress queue).
#pragma once

#include <cstdint>
#include <vector>

#include "models/fabric/egress_port.hpp"
#include "models/fabric/shared_buffer.hpp"
#include "models/fabric/switch_config.hpp"
#include "sim/core/fixed_array.hpp"
#include "sim/core/random.hpp"

namespace lockstep {

class Switch final : public PacketReceiver, public PortOwner {
 public:
  // `delays[i]` is the propagation delay of the link port i transmits on; `rates[i]` is its speed;
  // `headroom[i]` its PFC headroom.
  Switch(Simulator& sim, std::int32_t node, const SwitchConfig& config, PacketPool& packets,
         RandomStream marking, const std::vector<Duration>& delays,
         const std::vector<BitRate>& rates, std::vector<Bytes> headroom);

  void receive(Packet* packet, std::uint16_t ingress_port) override;
  void prefetch_for(const Packet& packet, std::uint16_t ingress_port) const override;
  [[nodiscard]] std::uint8_t hot_lines() const override;
  void on_departure(const Departure& departure, std::uint16_t port) override;
  void prefetch_departure(const Packet* expected_next, std::uint16_t port) const override;
  void on_congested_departure(Packet& packet, std::uint16_t port,
                              std::int64_t queue_bytes) override;

  // The link of port `port` went down: what the port held is lost (its buffer freed, as if sent),
  // and so is every packet routed to it until port_up(); both go to `lost`.
  void port_down(std::uint16_t port, PacketReceiver& lost);
  void port_up(std::uint16_t port);

  [[nodiscard]] std::size_t port_count() const { return ports_.size(); }
  [[nodiscard]] EgressPort& port(std::size_t i) { return ports_[i]; }
  [[nodiscard]] const EgressPort& port(std::size_t i) const { return ports_[i]; }
  [[nodiscard]] std::int32_t node() const { return node_; }
  // Packets of lossless classes dropped because their PFC headroom was full: a sizing error, since
  // an ingress that stays within XOFF threshold plus headroom never drops.
  [[nodiscard]] std::int64_t headroom_overflows() const { return headroom_overflows_; }
  [[nodiscard]] std::int64_t dropped_payload_bytes() const { return dropped_payload_bytes_; }

  static constexpr std::uint16_t kPauseQuanta = 0xFFFF;
  static constexpr std::int32_t kPauseFrameBytes = 64;

 private:
  void send_pause(std::uint16_t port, int traffic_class, std::uint16_t quanta);
  // Fetches the buffer share and PFC state of (ingress port, class) that admitting or freeing a
  // packet reads.
  void prefetch_ingress_state(std::uint16_t ingress_port, int traffic_class) const;
  void refresh_pause(std::uint64_t key);
  void schedule_refresh(std::uint16_t port, int traffic_class);
  // RED on `queue_bytes`: marks the packet congestion-experienced with its probability.
  void mark(Packet& packet, EgressPort& port, std::int64_t queue_bytes);

  Simulator& sim_;
  std::int32_t node_;
  // A copy: read per packet, so it sits with the switch's other state rather than elsewhere.
  const SwitchConfig config_;
  PacketPool& packets_;
  RandomStream marking_;
  SharedBuffer buffer_;
  FixedArray<EgressPort> ports_;
  std::vector<std::uint8_t> xoff_sent_;            // per (port, class)
  std::vector<std::uint32_t> refresh_generation_;  // per (port, class): invalidates stale refreshes
  std::int64_t headroom_overflows_ = 0;
  std::int64_t dropped_payload_bytes_ = 0;
};

}  // namespace lockstep
