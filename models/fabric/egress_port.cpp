#include "models/fabric/egress_port.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace lockstep {
namespace {

// IEEE 802.1Qbb: one pause quantum is 512 bit times at the port's speed.
constexpr std::int64_t kBytesPerQuantum = 512 / 8;

}  // namespace

EgressPort::EgressPort(Simulator& sim, BitRate rate, Duration delay, PortOwner& owner,
                       DepartureNotice notice, std::uint16_t index)
    : link_(sim, delay),
      owner_(owner),
      index_(index),
      notice_(notice),
      ps_per_byte_(whole_ps_per_byte(rate)),
      rate_(rate) {}

void EgressPort::look_ahead_for_departures(Simulator& sim) {
  sim.look_ahead_for<&EgressPort::finish_transmission>(&EgressPort::look_ahead,
                                                       &EgressPort::last_look);
}

void EgressPort::last_look(void* port, std::uint64_t /*expected_next*/) {
  const auto* self = static_cast<const EgressPort*>(port);
  if ((self->nonempty_ & kControlBit) != 0) __builtin_prefetch(self->control_.front());
  self->owner_.prefetch_departure_through(self->index_);
}

void EgressPort::look_ahead(void* port, std::uint64_t expected_next) {
  const auto* self = static_cast<const EgressPort*>(port);
  const auto* next = reinterpret_cast<const Packet*>(expected_next);
  __builtin_prefetch(reinterpret_cast<const char*>(self) + 64);
  if (next != nullptr && !is_control(next->kind)) __builtin_prefetch(&self->data_[next->priority]);
  self->owner_.prefetch_departure(next, self->index_);
}

void EgressPort::enqueue(Packet* packet) {
  if (halted_ && lost_ != nullptr) [[unlikely]] {
    if (!is_control(packet->kind)) count_drop(packet->priority, packet->size_bytes);
    lost_->receive(packet, index_);
    return;
  }
  if (is_control(packet->kind)) {
    control_.push(packet);
    nonempty_ |= kControlBit;
  } else {
    const auto c = static_cast<std::size_t>(packet->priority);
    Queue& queue = data_[c];
    queue.fifo.push(packet);
    queue.max_bytes = std::max(queue.max_bytes, queue.fifo.bytes());
    nonempty_ = static_cast<std::uint16_t>(nonempty_ | (1U << c));
  }
  serve();
}

void EgressPort::mark_leaving_above(Bytes bytes) {
  for (Queue& queue : data_) queue.congested_above = bytes.count();
}

void EgressPort::set_rate(BitRate rate) {
  if (rate.bps() < 0) throw std::invalid_argument("a port's rate cannot be negative");
  stopped_ = rate.bps() == 0;
  halted_ = stopped_ || lost_ != nullptr;
  if (stopped_) return;
  rate_ = rate;
  ps_per_byte_ = whole_ps_per_byte(rate);
  serve();
}

Packet* EgressPort::went_down(PacketReceiver& lost) {
  lost_ = &lost;
  halted_ = true;
  Packet* chain = control_.take_all();
  Packet** tail = &chain;
  while (*tail != nullptr) tail = &(*tail)->next;
  for (std::size_t c = 0; c < data_.size(); ++c) {
    for (const Packet* p = data_[c].fifo.front(); p != nullptr; p = p->next) {
      count_drop(static_cast<int>(c), p->size_bytes);
    }
    *tail = data_[c].fifo.take_all();
    while (*tail != nullptr) tail = &(*tail)->next;
  }
  nonempty_ = 0;
  return chain;
}

void EgressPort::come_up() {
  lost_ = nullptr;
  halted_ = stopped_;
  serve();
}

void EgressPort::serve() {
  if (finish_pending_ || nonempty_ == 0 || halted_) return;
  if (busy_until_ <= sim().now()) {
    start_next();
    return;
  }
  finish_pending_ = true;
  sim().schedule<&EgressPort::finish_transmission>(busy_until_, this, nullptr);
}

Packet* EgressPort::next_packet() {
  if ((nonempty_ & kControlBit) != 0) {
    Packet* next = control_.pop();
    if (control_.empty()) nonempty_ = static_cast<std::uint16_t>(nonempty_ & ~kControlBit);
    return next;
  }
  std::uint32_t candidates = nonempty_;
  while (candidates != 0) {
    const int c = 31 - std::countl_zero(candidates);  // highest class first
    candidates &= ~(1U << c);
    Queue& queue = data_[static_cast<std::size_t>(c)];
    if (queue.paused_until > sim().now()) continue;
    Packet* next = queue.fifo.pop();
    if (queue.fifo.empty()) nonempty_ = static_cast<std::uint16_t>(nonempty_ & ~(1U << c));
    return next;
  }
  return nullptr;
}

void EgressPort::start_next() {
  Packet* packet = next_packet();
  if (packet == nullptr) return;
  const bool control = is_control(packet->kind);
  if (!control) {
    const std::int64_t behind = data_[packet->priority].fifo.bytes();
    if (behind > data_[packet->priority].congested_above) [[unlikely]] {
      owner_.on_congested_departure(*packet, index_, behind);
    }
  }
  in_transmission_ = Departure{packet->size_bytes, packet->ingress_port, packet->priority, control};
  const Duration serialization = ps_per_byte_ != 0
                                     ? Duration::ps(std::int64_t{packet->size_bytes} * ps_per_byte_)
                                     : tx_time(Bytes(packet->size_bytes), rate_);
  busy_until_ = sim().now() + serialization;
  if (packet->resent) [[unlikely]]
    count_resend(*packet);
  const Packet* expected_next = control ? control_.front() : data_[packet->priority].fifo.front();
  link_.carry(packet, serialization);
  if ((notice_ == DepartureNotice::kAtLastBit && !control) || nonempty_ != 0) {
    finish_pending_ = true;
    sim().schedule<&EgressPort::finish_transmission>(busy_until_, this, expected_next);
  }
  // Last: the owner may enqueue (a switch sends XON), which must find the port's state settled.
  if (notice_ == DepartureNotice::kAtDequeue && !control) {
    owner_.on_departure(in_transmission_, index_);
  }
}

void EgressPort::finish_transmission(const Packet* /*expected_next*/) {
  finish_pending_ = false;
  const Departure departed = in_transmission_;
  if (!halted_) start_next();
  // Last, as above (a NIC refills).
  if (notice_ == DepartureNotice::kAtLastBit && !departed.control) {
    owner_.on_departure(departed, index_);
  }
}

void EgressPort::apply_pause(int traffic_class, std::uint16_t quanta) {
  const auto c = static_cast<std::size_t>(traffic_class);
  const Time now = sim().now();
  RareCounts& counts = rare(traffic_class);
  Time& paused_until = data_[c].paused_until;
  ++counts.pauses_received;
  // Close the interval counted so far; a new one starts now if this frame pauses.
  counts.paused_before += std::max(Duration(), std::min(paused_until, now) - counts.pause_started);
  counts.pause_started = now;
  paused_until = now + tx_time(Bytes(kBytesPerQuantum * quanta), rate_);
  if (quanta == 0) {
    serve();
    return;
  }
  sim().schedule<&EgressPort::on_pause_expired>(paused_until, this,
                                                static_cast<std::uint64_t>(traffic_class));
}

void EgressPort::on_pause_expired(std::uint64_t traffic_class) {
  // A later frame may have extended or ended the pause; only a real expiry restarts the class.
  if (data_[traffic_class].paused_until != sim().now()) return;
  serve();
}

void EgressPort::send_pause(PacketPool& packets, int traffic_class, std::uint16_t quanta,
                            std::int32_t frame_bytes) {
  Packet* frame = packets.acquire();
  frame->kind = PacketKind::kPause;
  frame->priority = static_cast<std::uint8_t>(traffic_class);
  frame->pause_quanta = quanta;
  frame->size_bytes = frame_bytes;
  RareCounts& counts = rare(traffic_class);
  if (quanta == 0) {
    ++counts.xon_sent;
  } else if (counts.peer_paused) {
    ++counts.xoff_refreshed;
  } else {
    ++counts.xoff_sent;
  }
  counts.peer_paused = quanta != 0;
  enqueue(frame);
}

void EgressPort::count_resend(const Packet& packet) {
  RareCounts& counts = rare(packet.priority);
  ++counts.resent_packets;
  counts.resent_bytes += packet.size_bytes;
  counts.resent_leaving_until = busy_until_;
  counts.resent_leaving_bytes = packet.size_bytes;
}

void EgressPort::count_drop(int traffic_class, std::int64_t bytes) {
  RareCounts& counts = rare(traffic_class);
  ++counts.dropped_packets;
  counts.dropped_bytes += bytes;
}

bool EgressPort::leaving(const PacketFifo& fifo) const {
  if (!transmitting()) return false;
  if (in_transmission_.control) return &fifo == &control_;
  return &fifo == &data_[in_transmission_.traffic_class].fifo;
}

PortCounters EgressPort::counters() const {
  auto bytes_sent = [&](const PacketFifo& fifo) {
    return fifo.bytes_pushed() - fifo.bytes() - (leaving(fifo) ? in_transmission_.size_bytes : 0);
  };
  PortCounters counters;
  for (std::size_t c = 0; c < data_.size(); ++c) {
    const Queue& queue = data_[c];
    const RareCounts counts = rare_counts(c);
    ClassCounters& k = counters.classes[c];
    k.bytes_sent = bytes_sent(queue.fifo);
    k.packets_sent = queue.fifo.popped() - (leaving(queue.fifo) ? 1 : 0);
    k.max_queue_bytes = queue.max_bytes;
    k.ecn_marked = counts.ecn_marked;
    k.dropped_packets = counts.dropped_packets;
    k.dropped_bytes = counts.dropped_bytes;
    // Sent means serialized in full, as for every other count.
    const bool resend_leaving = counts.resent_leaving_until > sim().now();
    k.resent_packets = counts.resent_packets - (resend_leaving ? 1 : 0);
    k.resent_bytes = counts.resent_bytes - (resend_leaving ? counts.resent_leaving_bytes : 0);
    k.xoff_sent = counts.xoff_sent;
    k.xoff_refreshed = counts.xoff_refreshed;
    k.xon_sent = counts.xon_sent;
    k.pauses_sent = counts.xoff_sent + counts.xoff_refreshed + counts.xon_sent;
    k.pauses_received = counts.pauses_received;
  }
  counters.control_bytes_sent = bytes_sent(control_);
  return counters;
}

std::int64_t EgressPort::packets_transmitted() const {
  std::int64_t packets = control_.popped();
  for (const Queue& queue : data_) packets += queue.fifo.popped();
  return packets - (transmitting() ? 1 : 0);
}

std::int64_t EgressPort::data_payload_held() const {
  std::int64_t bytes = 0;
  for (const Queue& queue : data_) {
    for (const Packet* p = queue.fifo.front(); p != nullptr; p = p->next) bytes += p->payload_bytes;
  }
  return bytes;
}

Duration EgressPort::paused_time(int traffic_class) const {
  const auto c = static_cast<std::size_t>(traffic_class);
  const RareCounts counts = rare_counts(c);
  return counts.paused_before +
         std::max(Duration(), std::min(data_[c].paused_until, sim().now()) - counts.pause_started);
}

}  // namespace lockstep
