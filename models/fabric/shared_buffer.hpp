// A switch's packet memory, accounted per ingress port and traffic class the way shared-buffer
// switches with PFC do it (Broadcom's dynamic threshold; Guo et al., "RDMA over Commodity Ethernet
// at Scale", SIGCOMM'16, section 3): the buffer is a shared pool plus per-port headroom. An
// arriving packet of a lossless ingress class (i, c) goes to the shared pool while the class holds
// less than alpha x (free shared pool); beyond that, it sends XOFF and what is still in flight
// lands in its headroom. The class resumes (XON) once its headroom is empty and its shared use is
// xon_gap below the threshold. Departures free headroom first, so XON comes as early as it safely
// can. Headroom, unless configured: 2 x (rate x delay) for the round trip of the cable, 2 MTU (one
// frame being sent on each side when XOFF is decided) and the PFC response time of IEEE 802.3
// (463,360 bit times at 400G, 201,728 at 100G and below), the budget reference.md section 6 gives.
//
// A lossy class is admitted at the egress instead, as such switches do for lossy traffic: it drops
// when the egress queue it would join holds more than lossy alpha x (free shared pool). So a lossy
// flow that only shares an ingress with congested traffic is not dropped for it, where an ingress
// threshold would drop whichever packet came next. Left out: per-queue minimum guarantees.
#pragma once

#include <cstdint>
#include <vector>

#include "models/fabric/switch_config.hpp"
#include "sim/core/bit_rate.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

[[nodiscard]] Bytes derived_headroom(BitRate rate, Duration cable_delay, Bytes mtu);

class SharedBuffer {
 public:
  enum class Admission { kShared, kHeadroom, kDrop };

  // `headroom_per_port[i]` is reserved for each lossless class of ingress port i.
  SharedBuffer(const SwitchConfig& config, std::vector<Bytes> headroom_per_port);

  // Decides where an arriving packet goes and accounts it; kDrop accounts nothing.
  // `egress_queue_bytes`: what the queue the packet would join holds now.
  [[nodiscard]] Admission admit(std::uint16_t port, int traffic_class, std::int64_t bytes,
                                std::int64_t egress_queue_bytes);
  // An admitted packet left the switch; headroom is freed before shared buffer.
  void release(std::uint16_t port, int traffic_class, std::int64_t bytes);

  // PFC state per (port, class): whether XOFF should be in force now.
  [[nodiscard]] bool over_xoff(std::uint16_t port, int traffic_class) const;
  [[nodiscard]] bool below_xon(std::uint16_t port, int traffic_class) const;

  // Fetches what admit() and release() for (port, class) will read.
  void prefetch(std::uint16_t port, int traffic_class) const {
    __builtin_prefetch(&use(port, traffic_class));
    __builtin_prefetch(&shared_used_);
  }

  [[nodiscard]] std::int64_t headroom_size(std::uint16_t port) const;
  [[nodiscard]] std::int64_t threshold(double alpha) const;

 private:
  struct ClassUse {
    std::int64_t shared = 0;
    std::int64_t headroom = 0;
  };
  [[nodiscard]] ClassUse& use(std::uint16_t port, int traffic_class);
  [[nodiscard]] const ClassUse& use(std::uint16_t port, int traffic_class) const;

  const SwitchConfig& config_;
  std::vector<std::int64_t> headroom_size_;
  std::vector<ClassUse> use_;  // port-major, kTrafficClasses per port
  std::int64_t shared_size_ = 0;
  std::int64_t shared_used_ = 0;
};

}  // namespace lockstep
