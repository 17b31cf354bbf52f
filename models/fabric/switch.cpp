#include "models/fabric/switch.hpp"

#include <cassert>

#include "models/fabric/ecn_marking.hpp"

namespace lockstep {
namespace {

std::size_t slot(std::uint16_t port, int traffic_class) {
  return static_cast<std::size_t>(port) * kTrafficClasses + static_cast<std::size_t>(traffic_class);
}

}  // namespace

Switch::Switch(Simulator& sim, std::int32_t node, const SwitchConfig& config, PacketPool& packets,
               RandomStream marking, const std::vector<Duration>& delays,
               const std::vector<BitRate>& rates, std::vector<Bytes> headroom)
    : sim_(sim),
      node_(node),
      config_(config),
      packets_(packets),
      marking_(marking),
      buffer_(config_, std::move(headroom)),
      ports_(delays.size()),
      xoff_sent_(delays.size() * kTrafficClasses, 0),
      refresh_generation_(delays.size() * kTrafficClasses, 0) {
  for (std::size_t i = 0; i < delays.size(); ++i) {
    ports_.emplace_back(sim, rates[i], delays[i], *this, DepartureNotice::kAtDequeue,
                        static_cast<std::uint16_t>(i));
    if (config_.ecn.enabled && config_.ecn.mark_at == EcnMarkPoint::kDequeue) {
      ports_[i].mark_leaving_above(config_.ecn.kmin);
    }
  }
}

void Switch::receive(Packet* packet, std::uint16_t ingress_port) {
  if (packet->kind == PacketKind::kPause) {
    ports_[ingress_port].apply_pause(packet->priority, packet->pause_quanta);
    packets_.release(packet);
    return;
  }
  const std::uint16_t egress = packet->next_egress;
  packet->next_egress = *packet->route_ahead++;
  assert(egress < ports_.size());
  EgressPort& out = ports_[egress];
  if (is_control(packet->kind) || (out.halted() && out.down())) {
    out.enqueue(packet);  // control frames bypass buffer accounting (see header); lost if down
    return;
  }
  const int c = packet->priority;
  packet->ingress_port = ingress_port;
  const SharedBuffer::Admission where =
      buffer_.admit(ingress_port, c, packet->size_bytes, out.queue_bytes(c));
  if (where == SharedBuffer::Admission::kDrop) {
    const bool lossless = config_.pfc.lossless.test(static_cast<std::size_t>(c));
    headroom_overflows_ += lossless ? 1 : 0;
    out.count_drop(c, packet->size_bytes);
    dropped_payload_bytes_ += packet->payload_bytes;
    packets_.release(packet);
    return;
  }
  if (config_.pfc.lossless.test(static_cast<std::size_t>(c)) &&
      !xoff_sent_[slot(ingress_port, c)] && buffer_.over_xoff(ingress_port, c)) {
    xoff_sent_[slot(ingress_port, c)] = 1;
    send_pause(ingress_port, c, kPauseQuanta);
    schedule_refresh(ingress_port, c);
  }
  if (config_.ecn.mark_at == EcnMarkPoint::kEnqueue) mark(*packet, out, out.queue_bytes(c));
  out.enqueue(packet);
}

void Switch::on_congested_departure(Packet& packet, std::uint16_t port, std::int64_t queue_bytes) {
  mark(packet, ports_[port], queue_bytes);
}

void Switch::mark(Packet& packet, EgressPort& port, std::int64_t queue_bytes) {
  if (!packet.ecn_capable) return;
  const double p = ecn_mark_probability(config_.ecn, queue_bytes);
  if (p > 0.0 && (p >= 1.0 || marking_.uniform() < p)) {
    packet.congestion_experienced = true;
    port.count_ecn_mark(packet.priority);
  }
}

void Switch::prefetch_for(const Packet& packet, std::uint16_t ingress_port) const {
  ports_[packet.next_egress].prefetch(packet.priority);
  // receive() reads the next switch's port from the path: at thousands of flows their paths are
  // as cold as the packets.
  __builtin_prefetch(packet.route_ahead);
  if (is_control(packet.kind)) return;
  prefetch_ingress_state(ingress_port, packet.priority);
}

void Switch::prefetch_ingress_state(std::uint16_t ingress_port, int traffic_class) const {
  buffer_.prefetch(ingress_port, traffic_class);
  __builtin_prefetch(&xoff_sent_[slot(ingress_port, traffic_class)]);
}

std::uint8_t Switch::hot_lines() const {
  // Up to the per-port PFC state; the configuration and the buffer lie before it.
  const auto* start = reinterpret_cast<const char*>(static_cast<const PacketReceiver*>(this));
  const auto* end = reinterpret_cast<const char*>(&xoff_sent_ + 1);
  const auto misalignment =
      static_cast<std::ptrdiff_t>(reinterpret_cast<std::uintptr_t>(start) % 64);
  return static_cast<std::uint8_t>((end - start + misalignment + 63) / 64);
}

void Switch::prefetch_departure(const Packet* expected_next, std::uint16_t /*port*/) const {
  // The packet expected next frees its share of the buffer as it starts (at dequeue).
  if (expected_next == nullptr || is_control(expected_next->kind)) return;
  prefetch_ingress_state(expected_next->ingress_port, expected_next->priority);
}

void Switch::on_departure(const Departure& departure, std::uint16_t /*port*/) {
  const std::uint16_t ingress = departure.ingress_port;
  const int c = departure.traffic_class;
  buffer_.release(ingress, c, departure.size_bytes);
  if (xoff_sent_[slot(ingress, c)] && buffer_.below_xon(ingress, c)) {
    xoff_sent_[slot(ingress, c)] = 0;
    ++refresh_generation_[slot(ingress, c)];
    send_pause(ingress, c, 0);
  }
}

void Switch::port_down(std::uint16_t port, PacketReceiver& lost) {
  Packet* lost_queue = ports_[port].went_down(lost);
  while (lost_queue != nullptr) {
    Packet* packet = lost_queue;
    lost_queue = packet->next;
    packet->next = nullptr;
    if (!is_control(packet->kind)) {
      on_departure(Departure{packet->size_bytes, packet->ingress_port, packet->priority, false},
                   port);
    }
    lost.receive(packet, port);
  }
}

void Switch::port_up(std::uint16_t port) { ports_[port].come_up(); }

void Switch::send_pause(std::uint16_t port, int traffic_class, std::uint16_t quanta) {
  ports_[port].send_pause(packets_, traffic_class, quanta, kPauseFrameBytes);
}

void Switch::schedule_refresh(std::uint16_t port, int traffic_class) {
  const std::size_t s = slot(port, traffic_class);
  const Duration half_pause =
      tx_time(Bytes(std::int64_t{kPauseQuanta} * 64 / 2), ports_[port].rate());
  const std::uint64_t key = (std::uint64_t{refresh_generation_[s]} << 32) | s;
  sim_.schedule_in<&Switch::refresh_pause>(half_pause, this, key);
}

void Switch::refresh_pause(std::uint64_t key) {
  const std::size_t s = static_cast<std::size_t>(key & 0xFFFFFFFFU);
  if ((key >> 32) != refresh_generation_[s] || !xoff_sent_[s]) return;
  const auto port = static_cast<std::uint16_t>(s / kTrafficClasses);
  const int traffic_class = static_cast<int>(s % kTrafficClasses);
  send_pause(port, traffic_class, kPauseQuanta);
  schedule_refresh(port, traffic_class);
}

}  // namespace lockstep
