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
    : link_(sim, delay), index_(index), sim_(sim), rate_(rate), owner_(owner) {}

void EgressPort::enqueue_into(Queue& queue, Packet* packet) {
  queue.fifo.push(packet);
  queue.max_bytes = std::max(queue.max_bytes, queue.fifo.bytes());
}

void EgressPort::enqueue(Packet* packet) {
  if (is_control(packet->kind)) {
    enqueue_into(control_, packet);
  } else {
    const auto c = static_cast<std::size_t>(packet->priority);
    enqueue_into(data_[c], packet);
    nonempty_classes_ |= 1U << c;
  }
  if (in_transmission_ == nullptr) start_next();
}

Packet* EgressPort::next_packet() {
  if (!control_.fifo.empty()) {
    in_transmission_queue_ = kControlQueue;
    return control_.fifo.pop();
  }
  std::uint32_t candidates = nonempty_classes_;
  while (candidates != 0) {
    const int c = 31 - std::countl_zero(candidates);  // highest class first
    candidates &= ~(1U << c);
    Queue& queue = data_[static_cast<std::size_t>(c)];
    if (queue.paused_until > sim_.now()) continue;
    Packet* next = queue.fifo.pop();
    if (queue.fifo.empty()) nonempty_classes_ &= ~(1U << c);
    in_transmission_queue_ = static_cast<std::uint8_t>(c);
    return next;
  }
  return nullptr;
}

void EgressPort::start_next() {
  in_transmission_ = next_packet();
  if (in_transmission_ == nullptr) return;
  in_transmission_bytes_ = in_transmission_->size_bytes;
  // The packet rides as the event's argument, so the event loop prefetches it with the port.
  sim_.schedule_in<&EgressPort::finish_transmission>(tx_time(Bytes(in_transmission_bytes_), rate_),
                                                     this, in_transmission_);
}

void EgressPort::finish_transmission(Packet* packet) {
  in_transmission_ = nullptr;
  ++packets_transmitted_;
  link_.carry(packet);
  start_next();
  // Last: the owner may enqueue (a NIC refills, a switch sends XON), which must find the port's
  // state settled.
  owner_.on_departure(packet, index_);
}

void EgressPort::apply_pause(int traffic_class, std::uint16_t quanta) {
  const auto c = static_cast<std::size_t>(traffic_class);
  const Time now = sim_.now();
  RareCounts& rare = rare_[c];
  Time& paused_until = data_[c].paused_until;
  ++rare.pauses_received;
  // Close the interval counted so far; a new one starts now if this frame pauses.
  rare.paused_before += std::max(Duration(), std::min(paused_until, now) - rare.pause_started);
  rare.pause_started = now;
  paused_until = now + tx_time(Bytes(kBytesPerQuantum * quanta), rate_);
  if (quanta == 0) {
    if (in_transmission_ == nullptr) start_next();
    return;
  }
  sim_.schedule<&EgressPort::on_pause_expired>(paused_until, this,
                                               static_cast<std::uint64_t>(traffic_class));
}

void EgressPort::on_pause_expired(std::uint64_t traffic_class) {
  // A later frame may have extended or ended the pause; only a real expiry restarts the class.
  if (data_[traffic_class].paused_until != sim_.now()) return;
  if (in_transmission_ == nullptr) start_next();
}

void EgressPort::count_drop(int traffic_class, std::int64_t bytes) {
  RareCounts& rare = rare_[static_cast<std::size_t>(traffic_class)];
  ++rare.dropped_packets;
  rare.dropped_bytes += bytes;
}

PortCounters EgressPort::counters() const {
  // What a queue took in, less what it still holds and what is on its way out.
  auto in_transmission = [&](std::uint8_t queue) -> std::pair<std::int64_t, std::int64_t> {
    if (in_transmission_ == nullptr || in_transmission_queue_ != queue) return {0, 0};
    return {in_transmission_bytes_, 1};
  };
  PortCounters counters;
  for (std::size_t c = 0; c < data_.size(); ++c) {
    const Queue& queue = data_[c];
    const RareCounts& rare = rare_[c];
    const auto [bytes_leaving, packets_leaving] = in_transmission(static_cast<std::uint8_t>(c));
    ClassCounters& k = counters.classes[c];
    k.bytes_sent = queue.fifo.bytes_pushed() - queue.fifo.bytes() - bytes_leaving;
    k.packets_sent = queue.fifo.popped() - packets_leaving;
    k.max_queue_bytes = queue.max_bytes;
    k.ecn_marked = rare.ecn_marked;
    k.dropped_packets = rare.dropped_packets;
    k.dropped_bytes = rare.dropped_bytes;
    k.pauses_sent = rare.pauses_sent;
    k.pauses_received = rare.pauses_received;
  }
  const auto [control_leaving, unused] = in_transmission(kControlQueue);
  counters.control_bytes_sent =
      control_.fifo.bytes_pushed() - control_.fifo.bytes() - control_leaving;
  return counters;
}

std::int64_t EgressPort::data_payload_held() const {
  std::int64_t bytes = 0;
  for (const Queue& queue : data_) {
    for (const Packet* p = queue.fifo.front(); p != nullptr; p = p->next) bytes += p->payload_bytes;
  }
  if (in_transmission_ != nullptr && in_transmission_->kind == PacketKind::kData) {
    bytes += in_transmission_->payload_bytes;
  }
  return bytes;
}

Duration EgressPort::paused_time(int traffic_class) const {
  const auto c = static_cast<std::size_t>(traffic_class);
  const RareCounts& rare = rare_[c];
  return rare.paused_before +
         std::max(Duration(), std::min(data_[c].paused_until, sim_.now()) - rare.pause_started);
}

}  // namespace lockstep
