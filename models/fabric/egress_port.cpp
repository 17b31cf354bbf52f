#include "models/fabric/egress_port.hpp"

#include <algorithm>
#include <bit>

namespace lockstep {
namespace {

// IEEE 802.1Qbb: one pause quantum is 512 bit times at the port's speed.
constexpr std::int64_t kBytesPerQuantum = 512 / 8;

}  // namespace

EgressPort::EgressPort(Simulator& sim, BitRate rate, Duration delay, PortOwner& owner,
                       std::uint16_t index)
    : link_(sim, delay), sim_(sim), rate_(rate), owner_(owner), index_(index) {}

void EgressPort::enqueue(Packet* packet) {
  if (is_control(packet->kind)) {
    control_.push(packet);
  } else {
    const auto c = static_cast<std::size_t>(packet->priority);
    data_[c].push(packet);
    nonempty_classes_ |= 1U << c;
    ClassCounters& counters = counters_.classes[c];
    counters.max_queue_bytes = std::max(counters.max_queue_bytes, data_[c].bytes());
  }
  if (in_transmission_ == nullptr) start_next();
}

Packet* EgressPort::next_packet() {
  if (!control_.empty()) return control_.pop();
  std::uint32_t candidates = nonempty_classes_;
  while (candidates != 0) {
    const int c = 31 - std::countl_zero(candidates);  // highest class first
    candidates &= ~(1U << c);
    const auto i = static_cast<std::size_t>(c);
    if (paused_until_[i] > sim_.now()) continue;
    Packet* packet = data_[i].pop();
    if (data_[i].empty()) nonempty_classes_ &= ~(1U << c);
    return packet;
  }
  return nullptr;
}

void EgressPort::start_next() {
  in_transmission_ = next_packet();
  if (in_transmission_ == nullptr) return;
  sim_.schedule_in<&EgressPort::finish_transmission>(
      tx_time(Bytes(in_transmission_->size_bytes), rate_), this);
}

void EgressPort::finish_transmission() {
  Packet* packet = in_transmission_;
  in_transmission_ = nullptr;
  ++packets_transmitted_;
  if (is_control(packet->kind)) {
    counters_.control_bytes_sent += packet->size_bytes;
  } else {
    ClassCounters& counters = counters_.classes[packet->priority];
    counters.bytes_sent += packet->size_bytes;
    ++counters.packets_sent;
  }
  link_.carry(packet);
  start_next();
  // Last: the owner may enqueue (a NIC refills, a switch sends XON), which must find the port's
  // state settled.
  owner_.on_departure(packet, index_);
}

void EgressPort::apply_pause(int traffic_class, std::uint16_t quanta) {
  const auto c = static_cast<std::size_t>(traffic_class);
  const Time now = sim_.now();
  ++counters_.classes[c].pauses_received;
  // Close the interval counted so far; a new one starts now if this frame pauses.
  paused_before_[c] += std::max(Duration(), std::min(paused_until_[c], now) - pause_started_[c]);
  pause_started_[c] = now;
  paused_until_[c] = now + tx_time(Bytes(kBytesPerQuantum * quanta), rate_);
  if (quanta == 0) {
    if (in_transmission_ == nullptr) start_next();
    return;
  }
  sim_.schedule<&EgressPort::on_pause_expired>(paused_until_[c], this,
                                               static_cast<std::uint64_t>(traffic_class));
}

void EgressPort::on_pause_expired(std::uint64_t traffic_class) {
  // A later frame may have extended or ended the pause; only a real expiry restarts the class.
  if (paused_until_[traffic_class] != sim_.now()) return;
  if (in_transmission_ == nullptr) start_next();
}

std::int64_t EgressPort::data_payload_held() const {
  std::int64_t bytes = 0;
  for (const PacketFifo& fifo : data_) {
    for (const Packet* p = fifo.front(); p != nullptr; p = p->next) bytes += p->payload_bytes;
  }
  if (in_transmission_ != nullptr && in_transmission_->kind == PacketKind::kData) {
    bytes += in_transmission_->payload_bytes;
  }
  return bytes;
}

Duration EgressPort::paused_time(int traffic_class) const {
  const auto c = static_cast<std::size_t>(traffic_class);
  return paused_before_[c] +
         std::max(Duration(), std::min(paused_until_[c], sim_.now()) - pause_started_[c]);
}

}  // namespace lockstep
