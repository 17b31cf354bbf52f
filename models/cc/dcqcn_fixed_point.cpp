#include "models/cc/dcqcn_fixed_point.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace lockstep {

double dcqcn_equilibrium_marking_probability(int flows, BitRate capacity, const DcqcnParams& params,
                                             Bytes packet_size) {
  if (flows < 1) throw std::invalid_argument("DCQCN fixed point needs at least one flow");
  if (capacity.bps() <= 0)
    throw std::invalid_argument("DCQCN fixed point needs a positive capacity");
  if (packet_size <= Bytes(0)) {
    throw std::invalid_argument("DCQCN fixed point needs a positive packet size");
  }
  const double packet_bits = static_cast<double>(packet_size.bits());
  const double rate = static_cast<double>(capacity.bps()) / flows / packet_bits;  // packets/s
  const double additive = static_cast<double>(params.additive_increase.bps()) / packet_bits;
  const double alpha_period = params.alpha_update_period.seconds();
  const double timer_packets = params.rate_increase_period.seconds() * rate;
  const double byte_counter_packets = static_cast<double>(params.rate_increase_bytes.count()) /
                                      static_cast<double>(packet_size.count());
  // Increase events per packet sent, from the byte counter and from the timer.
  const double increases_per_packet =
      (byte_counter_packets > 0.0 ? 1.0 / byte_counter_packets : 0.0) + 1.0 / timer_packets;
  return std::cbrt(additive / (alpha_period * rate * rate) * increases_per_packet *
                   increases_per_packet);
}

Bytes dcqcn_equilibrium_queue(int flows, BitRate capacity, const DcqcnParams& params,
                              Bytes packet_size, Bytes kmin, Bytes kmax, double pmax) {
  if (!(pmax > 0.0 && pmax <= 1.0)) throw std::invalid_argument("RED Pmax must be in (0, 1]");
  if (kmin < Bytes(0) || kmax < kmin) {
    throw std::invalid_argument("RED thresholds need 0 <= Kmin <= Kmax");
  }
  const double p = dcqcn_equilibrium_marking_probability(flows, capacity, params, packet_size);
  if (p >= pmax) return kmax;
  const double span = static_cast<double>((kmax - kmin).count());
  return kmin + Bytes(static_cast<std::int64_t>(std::llround(p / pmax * span)));
}

}  // namespace lockstep
