#include "models/transport/nic.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace lockstep {
namespace {

constexpr std::uint16_t kStormQuanta = 0xFFFF;

}  // namespace

Nic::Nic(Simulator& sim, std::int32_t endpoint, const TransportConfig& config, BitRate rate,
         Duration uplink_delay, PacketPool& packets, std::deque<QueuePair>& flows,
         MessageListener& listener)
    : data_class_(static_cast<std::uint8_t>(config.data_class)),
      sim_(sim),
      config_(config),
      flows_(flows),
      endpoint_(endpoint),
      rate_(rate),
      packets_(packets),
      listener_(listener),
      port_(sim, rate, uplink_delay, *this, DepartureNotice::kAtLastBit, 0) {}

void Nic::look_ahead_for_wakes(Simulator& sim) {
  sim.look_ahead_for<&Nic::wake>(
      [](void* nic, std::uint64_t /*arg*/) { static_cast<const Nic*>(nic)->prefetch_to_send(); },
      [](void* nic, std::uint64_t /*arg*/) {
        static_cast<const Nic*>(nic)->prefetch_flow_to_send();
      });
}

void Nic::prefetch_to_send() const {
  prefetch_lines(this, hot_lines());
  port_.prefetch(data_class_);
}

void Nic::prefetch_flow_to_send() const {
  if (next_up_ == nullptr) return;
  __builtin_prefetch(active_.data() + next_active_);
  prefetch_lines(next_up_, QueuePair::kSenderLines);
}

BitRate Nic::flow_rate(const QueuePair& flow) const {
  return flow.reaction_point ? std::min(flow.reaction_point->rate(), rate_) : rate_;
}

void Nic::post(QueuePair& flow) {
  if (flow.failed_at) {
    sim_.schedule<&Nic::flush_failed>(sim_.now(), this, flow.id);
    return;
  }
  if (!flow.retransmit) {
    flow.retransmit.emplace(sim_, Timer::Calling<&Nic::on_retransmit_timeout>{}, this, flow.id);
    flow.retries_left = config_.retry_count;
  }
  activate(flow);
  try_send();
}

void Nic::activate(QueuePair& flow) {
  if (flow.active || !flow.has_unsent()) return;
  flow.active = true;
  active_.push_back(flow.id);
}

void Nic::limit_host_path(HostLink& host, Bytes xoff, Bytes headroom, bool lossless) {
  host_path_ =
      std::make_unique<HostPath>(HostPath{&host, xoff.count(), headroom.count(), lossless});
}

void Nic::try_send() {
  // One data packet waits behind the one on the wire at most: pacing decisions stay current, and a
  // departure always finds the next packet ready, so the link never idles while a flow may send.
  if (port_.queue_bytes(data_class_) > 0) return;
  const Time now = sim_.now();
  Time earliest = Time::max();
  if (host_path_ && host_path_->link->send_free_at() > now && !active_.empty()) {
    earliest = host_path_->link->send_free_at();
    if (earliest < wake_at_) {
      wake_at_ = earliest;
      sim_.schedule<&Nic::wake>(earliest, this);
    }
    return;
  }
  std::size_t scanned = 0;
  while (scanned < active_.size()) {
    if (next_active_ >= active_.size()) next_active_ = 0;
    QueuePair& flow = flows_[active_[next_active_]];
    if (!flow.has_unsent()) {
      flow.active = false;
      active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(next_active_));
      continue;
    }
    if (flow.next_send_allowed <= now) {
      send_data(flow);
      ++next_active_;
      note_next_up();
      return;
    }
    earliest = std::min(earliest, flow.next_send_allowed);
    ++next_active_;
    ++scanned;
  }
  note_next_up();
  if (earliest < wake_at_) {
    wake_at_ = earliest;
    sim_.schedule<&Nic::wake>(earliest, this);
  }
}

void Nic::note_next_up() {
  if (active_.empty()) {
    next_up_ = nullptr;
    return;
  }
  if (next_active_ >= active_.size()) next_active_ = 0;
  next_up_ = &flows_[active_[next_active_]];
}

void Nic::wake() {
  if (sim_.now() < wake_at_) return;  // superseded by an earlier wake-up
  wake_at_ = Time::max();
  try_send();
}

PendingMessage& Nic::message_of(QueuePair& flow, std::uint64_t sequence) {
  for (PendingMessage& m : flow.messages) {
    if (sequence < m.end_sequence) return m;
  }
  fail_invariant(sim_.now(), "nic",
                 "packet " + std::to_string(sequence) + " of flow " + std::to_string(flow.id) +
                     " belongs to no message");
}

void Nic::send_data(QueuePair& flow) {
  const Time now = sim_.now();
  catch_up_dcqcn_timers(flow);
  const std::uint64_t sequence = flow.next_sequence++;
  std::int64_t payload = config_.payload_per_packet.count();
  if (sequence < flow.full_payload_from || sequence >= flow.full_payload_end) {
    PendingMessage& message = message_of(flow, sequence);
    if (!message.sent) {
      message.sent = true;
      message.times.first_sent = now;
    }
    if (sequence + 1 == message.end_sequence) payload = message.last_payload;
    flow.full_payload_from = message.first_sequence;
    flow.full_payload_end = message.end_sequence - 1;
  }
  Packet* packet = packets_.acquire();
  if (sequence < flow.sent_end) {
    packet->resent = true;
  } else {
    flow.sent_end = sequence + 1;
  }
  packet->kind = PacketKind::kData;
  packet->priority = flow.traffic_class;
  packet->payload_bytes = static_cast<std::int32_t>(payload);
  packet->size_bytes = packet->payload_bytes + static_cast<std::int32_t>(config_.header.count());
  packet->flow = flow.id;
  packet->sequence = sequence;
  packet->next_egress = flow.to_destination.first;
  packet->route_ahead = flow.to_destination.ahead;
  if (flow.reaction_point) flow.reaction_point->on_bytes_sent(Bytes(packet->size_bytes));
  if (packet->resent) {
    ++flow.retransmitted_packets;
    flow.retransmitted_bytes += packet->payload_bytes;
  }
  flow.next_send_allowed = now + tx_time(Bytes(packet->size_bytes), flow_rate(flow));
  // The timer runs while packets are outstanding, from the first sent into an idle flow, and is
  // restarted by progress only: a flow that keeps sending into a dead path still times out.
  if (config_.ack_timeout && !flow.retransmit->armed())
    flow.retransmit->arm_in(*config_.ack_timeout);
  data_payload_sent_ += packet->payload_bytes;
  if (host_path_) host_path_->link->feed(Bytes(packet->size_bytes));
  port_.enqueue(packet);
}

void Nic::send_control(PacketKind kind, const Packet& answered, const QueuePair& flow,
                       std::uint64_t sequence, bool carries_cnp) {
  Packet* packet = packets_.acquire();
  packet->kind = kind;
  packet->carries_cnp = carries_cnp;
  packet->priority = answered.priority;
  packet->size_bytes = static_cast<std::int32_t>(config_.control_frame.count());
  packet->flow = answered.flow;
  packet->sequence = sequence;
  packet->next_egress = flow.to_source.first;
  packet->route_ahead = flow.to_source.ahead;
  port_.enqueue(packet);
}

void Nic::prefetch_for(const Packet& packet, std::uint16_t /*ingress_port*/) const {
  if (packet.kind == PacketKind::kPause) return;
  const QueuePair& flow = flows_[packet.flow];
  if (packet.kind == PacketKind::kData) {
    prefetch_lines(&flow.expected_sequence, QueuePair::kReceiverLines);
  } else {
    prefetch_lines(&flow, QueuePair::kSenderLines);
  }
  // A NACK sends again at once.
  if (packet.kind == PacketKind::kNack) prefetch_to_send();
}

void Nic::receive(Packet* packet, std::uint16_t /*ingress_port*/) {
  if (packet->kind == PacketKind::kData && host_path_) {
    if (held_bytes_ + packet->size_bytes > host_path_->xoff + host_path_->headroom) {
      if (host_path_->lossless) ++lossless_overflows_;
      dropped_payload_ += packet->payload_bytes;
      packets_.release(packet);
      return;
    }
    host_path_->link->hold(*this, Bytes(packet->size_bytes));
    receive_buffer_.push_back(packet);
    held_bytes_ += packet->size_bytes;
    held_payload_ += packet->payload_bytes;
    if (host_path_->lossless && !receive_buffer_full_ && held_bytes_ >= host_path_->xoff) {
      receive_buffer_full_ = true;
      update_pause();
    }
    return;
  }
  switch (packet->kind) {
    case PacketKind::kData:
      on_data(packet);
      break;
    // A CNP riding on an ACK or NACK is taken first: ns-3 takes it before its NIC sends again, so
    // what a NACK resends at once goes at the cut rate.
    case PacketKind::kAck:
      if (packet->carries_cnp) on_cnp(flows_[packet->flow]);
      on_ack(flows_[packet->flow], packet->sequence);
      break;
    case PacketKind::kNack:
      if (packet->carries_cnp) on_cnp(flows_[packet->flow]);
      on_nack(flows_[packet->flow], packet->sequence);
      break;
    case PacketKind::kCnp:
      on_cnp(flows_[packet->flow]);
      break;
    case PacketKind::kPause:
      port_.apply_pause(packet->priority, packet->pause_quanta);
      break;
  }
  packets_.release(packet);
}

void Nic::take_into_host() {
  Packet* packet = receive_buffer_.front();
  receive_buffer_.pop_front();
  held_bytes_ -= packet->size_bytes;
  held_payload_ -= packet->payload_bytes;
  if (receive_buffer_full_ && held_bytes_ <= host_path_->xoff / 2) {
    receive_buffer_full_ = false;
    update_pause();
  }
  on_data(packet);
  packets_.release(packet);
}

void Nic::on_departure(const Departure& /*departure*/, std::uint16_t /*port*/) { try_send(); }

void Nic::prefetch_departure(const Packet* /*expected_next*/, std::uint16_t /*port*/) const {
  prefetch_to_send();
}

void Nic::prefetch_departure_through(std::uint16_t /*port*/) const { prefetch_flow_to_send(); }

void Nic::on_data(Packet* packet) {
  QueuePair& flow = flows_[packet->flow];
  const Time now = sim_.now();
  data_payload_received_ += packet->payload_bytes;
  // The answer decides whether a CNP can ride on it: a packet ahead of a gap whose NACK is already
  // outstanding gets none.
  PacketKind answer = PacketKind::kAck;
  bool answered = true;
  if (packet->sequence == flow.expected_sequence) {
    ++flow.expected_sequence;
    flow.nack_outstanding = false;
    if (flow.expected_sequence >= flow.delivery_due_at) deliver_completed(flow);
  } else if (packet->sequence > flow.expected_sequence) {
    answer = PacketKind::kNack;
    answered = !flow.nack_outstanding;
    flow.nack_outstanding = true;
  }
  const bool cnp_in_answer = config_.dcqcn && config_.dcqcn->cnp_carrier == CnpCarrier::kAckOrNack;
  const bool notify = packet->congestion_experienced && flow.notification_point &&
                      (answered || !cnp_in_answer) && flow.notification_point->should_send_cnp(now);
  if (notify) ++flow.cnps_sent;
  if (answered) {
    send_control(answer, *packet, flow, flow.expected_sequence, notify && cnp_in_answer);
  }
  if (notify && !cnp_in_answer)
    send_control(PacketKind::kCnp, *packet, flow, packet->sequence, false);
}

void Nic::deliver_completed(QueuePair& flow) {
  const Time now = sim_.now();
  // By index: the listener may post more messages to this flow, which grows the deque.
  for (std::size_t i = 0; i < flow.messages.size(); ++i) {
    PendingMessage& m = flow.messages[i];
    if (m.end_sequence > flow.expected_sequence) break;
    if (!m.delivered) {
      m.delivered = true;
      m.times.delivered = now;
      const Message delivered = m.message;
      listener_.on_message_delivered(delivered, now);
    }
  }
  const auto undelivered = std::find_if(flow.messages.begin(), flow.messages.end(),
                                        [](const PendingMessage& m) { return !m.delivered; });
  flow.delivery_due_at = undelivered == flow.messages.end()
                             ? std::numeric_limits<std::uint64_t>::max()
                             : undelivered->end_sequence;
}

void Nic::complete_acknowledged(QueuePair& flow) {
  while (!flow.messages.empty() && flow.messages.front().end_sequence <= flow.unacknowledged) {
    PendingMessage done = flow.messages.front();
    flow.messages.pop_front();
    done.times.acknowledged = sim_.now();
    listener_.on_message_complete(done.message, done.times);
  }
  flow.completion_due_at = flow.messages.empty() ? std::numeric_limits<std::uint64_t>::max()
                                                 : flow.messages.front().end_sequence;
}

void Nic::on_ack(QueuePair& flow, std::uint64_t sequence) {
  if (sequence <= flow.unacknowledged || flow.failed_at) return;
  flow.unacknowledged = sequence;
  flow.retries_left = config_.retry_count;
  // After a timeout went back to an older sequence, an acknowledgement of packets sent before it
  // may still arrive (held behind a pause): what it covers is not sent again.
  flow.next_sequence = std::max(flow.next_sequence, sequence);
  if (flow.unacknowledged >= flow.completion_due_at) complete_acknowledged(flow);
  if (flow.unacknowledged >= flow.sent_end) {
    flow.retransmit->cancel();
  } else if (config_.ack_timeout) {
    flow.retransmit->arm_in(*config_.ack_timeout);
  }
}

void Nic::on_nack(QueuePair& flow, std::uint64_t sequence) {
  on_ack(flow, sequence);
  if (flow.failed_at) return;
  if (sequence < flow.next_sequence) {
    flow.next_sequence = sequence;
    activate(flow);
    try_send();
  }
}

void Nic::on_retransmit_timeout(std::uint64_t flow_id) {
  QueuePair& flow = flows_[flow_id];
  if (flow.unacknowledged >= flow.sent_end || flow.failed_at) return;
  ++flow.timeouts;
  if (flow.retries_left == 0) {
    fail_queue_pair(flow);
    return;
  }
  --flow.retries_left;
  flow.next_sequence = flow.unacknowledged;
  flow.retransmit->arm_in(*config_.ack_timeout);
  activate(flow);
  try_send();
}

void Nic::fail_queue_pair(QueuePair& flow) {
  flow.failed_at = sim_.now();
  flow.retransmit->cancel();
  if (flow.active) {
    const auto listed = std::find(active_.begin(), active_.end(), flow.id);
    if (static_cast<std::size_t>(listed - active_.begin()) < next_active_) --next_active_;
    active_.erase(listed);
    flow.active = false;
  }
  flush_failed(flow.id);
}

void Nic::flush_failed(std::uint64_t flow_id) {
  QueuePair& flow = flows_[flow_id];
  // What the listener posts to the flow meanwhile fails in this loop too.
  while (!flow.messages.empty()) {
    const Message failed = flow.messages.front().message;
    flow.messages.pop_front();
    ++flow.failed_messages;
    listener_.on_message_failed(failed, sim_.now());
  }
}

void Nic::on_cnp(QueuePair& flow) {
  ++flow.cnps_received;
  if (!flow.reaction_point) return;
  catch_up_dcqcn_timers(flow);
  if (flow.reaction_point->on_cnp(sim_.now()) == CnpOutcome::kRateCut) {
    // A cut restarts the rate-increase timer (Zhu et al., SIGCOMM'15, RP state machine).
    flow.next_rate_increase = sim_.now() + config_.dcqcn->rate_increase_period;
  }
}

void Nic::catch_up_dcqcn_timers(QueuePair& flow) {
  if (!flow.reaction_point) return;
  DcqcnReactionPoint& rp = *flow.reaction_point;
  const DcqcnParams& params = *config_.dcqcn;
  const Time now = sim_.now();
  // Replays, in time order, the timer expiries and the deferred cut that fell due since the flow
  // last looked: the reaction point requires its calls in time order. Runs of alpha expiries
  // between two other events are replayed in one call.
  auto replay_alpha_until = [&](Time t) {
    if (flow.next_alpha_update > t) return;
    const std::int64_t count =
        (t - flow.next_alpha_update).ps() / params.alpha_update_period.ps() + 1;
    const Time last = flow.next_alpha_update + params.alpha_update_period * (count - 1);
    rp.on_alpha_timers(count, last);
    flow.next_alpha_update = last + params.alpha_update_period;
  };
  while (true) {
    const bool cut_due = rp.cut_pending() && rp.deferred_cut_time() <= now;
    const Time until = cut_due ? rp.deferred_cut_time() : now;
    while (flow.next_rate_increase <= until) {
      if (rp.at_line_rate()) {
        // Nothing to recover: increase events would change nothing, so skip them at once.
        const std::int64_t skipped =
            (until - flow.next_rate_increase).ps() / params.rate_increase_period.ps() + 1;
        flow.next_rate_increase += params.rate_increase_period * skipped;
        break;
      }
      replay_alpha_until(flow.next_rate_increase);
      rp.on_rate_timer(flow.next_rate_increase);
      flow.next_rate_increase += params.rate_increase_period;
    }
    replay_alpha_until(until);
    if (!cut_due) return;
    rp.on_deferred_cut(until);
    flow.next_rate_increase = until + params.rate_increase_period;
  }
}

void Nic::port_down(PacketReceiver& lost) {
  Packet* lost_queue = port_.went_down(lost);
  while (lost_queue != nullptr) {
    Packet* packet = lost_queue;
    lost_queue = packet->next;
    packet->next = nullptr;
    lost.receive(packet, 0);
  }
}

void Nic::port_up() {
  port_.come_up();
  try_send();
}

void Nic::set_rate(BitRate rate) {
  port_.set_rate(rate);
  if (rate.bps() > 0) rate_ = rate;
  try_send();
}

void Nic::start_pause_storm(int traffic_class) {
  storm_requested_ = true;
  storm_class_ = traffic_class;
  update_pause();
}

void Nic::stop_pause_storm() {
  storm_requested_ = false;
  update_pause();
}

void Nic::update_pause() {
  for (int c = 0; c < kTrafficClasses; ++c) {
    const bool wanted = (storm_requested_ && c == storm_class_) ||
                        (receive_buffer_full_ && c == config_.data_class);
    const auto i = static_cast<std::size_t>(c);
    if (wanted == pausing_[i]) continue;
    pausing_[i] = wanted;
    ++pause_generation_[i];
    if (wanted) {
      refresh_pause((pause_generation_[i] << 8) | i);
    } else {
      send_pause(c, 0);
    }
  }
}

void Nic::send_pause(int traffic_class, std::uint16_t quanta) {
  port_.send_pause(packets_, traffic_class, quanta,
                   static_cast<std::int32_t>(config_.control_frame.count()));
}

void Nic::refresh_pause(std::uint64_t class_and_generation) {
  const std::size_t c = class_and_generation & 0xFF;
  if (!pausing_[c] || (class_and_generation >> 8) != pause_generation_[c]) return;
  send_pause(static_cast<int>(c), kStormQuanta);
  const Duration half_pause = tx_time(Bytes(std::int64_t{kStormQuanta} * 64 / 2), rate_);
  sim_.schedule_in<&Nic::refresh_pause>(half_pause, this, class_and_generation);
}

}  // namespace lockstep
