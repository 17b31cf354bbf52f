// An endpoint's RDMA NIC (RoCEv2, reliable connection): it segments messages into packets, paces
// each queue pair at its DCQCN rate, acknowledges every data packet, answers CE marks with CNPs (at
// most one per interval per flow) and recovers losses by go-back-N, on a NACK for a sequence gap or
// on the queue pair's local ACK timeout (4.096 us x 2^timeout, restarted by every acknowledgement
// that makes progress). After `retry_count` timeouts in a row the queue pair fails: every message
// on it, and every one posted to it later, is reported failed, which is how a dead path becomes an
// NCCL error. Packets are rebuilt from their sequence number when resent, so nothing is kept per
// packet in flight. The NIC honours pause frames from its switch on its single
// port, and can be told to emit pauses without end, the way a NIC with a stuck receive pipeline
// storms its ToR (reference.md section 6). DCQCN's periodic timers are applied lazily, when a flow
// next sends or gets a CNP, in the order they would have fired: the rate only matters at send
// times, so the result is the same without an event per timer period per flow. A NIC can be given
// a host path slower than its port (limit_host_path). Left out: RDMA read, multiple outstanding
// NACKs, selective repeat.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "models/fabric/egress_port.hpp"
#include "models/transport/host_link.hpp"
#include "models/transport/queue_pair.hpp"
#include "models/transport/transport_config.hpp"

namespace lockstep {

class Nic final : public PacketReceiver, public PortOwner, private HostReceiver {
 public:
  // `flows` is the network's flow table: a NIC sends on the flows whose source it is and receives
  // on those whose destination it is. `uplink_delay` is the propagation delay of its cable.
  Nic(Simulator& sim, std::int32_t endpoint, const TransportConfig& config, BitRate rate,
      Duration uplink_delay, PacketPool& packets, std::deque<QueuePair>& flows,
      MessageListener& listener);

  // The flow's sender got a new message (already appended to flow.messages).
  void post(QueuePair& flow);

  void receive(Packet* packet, std::uint16_t ingress_port) override;
  void prefetch_for(const Packet& packet, std::uint16_t ingress_port) const override;
  [[nodiscard]] std::uint8_t hot_lines() const override { return 2; }
  void on_departure(const Departure& departure, std::uint16_t port) override;
  void prefetch_departure(const Packet* expected_next, std::uint16_t port) const override;
  void prefetch_departure_through(std::uint16_t port) const override;
  // The event loop looks ahead at a NIC's wake-ups for pacing (Simulator::look_ahead_for).
  static void look_ahead_for_wakes(Simulator& sim);

  // A NIC whose receive pipeline is stuck keeps pausing its switch: XOFF now and refreshed before
  // it expires, until stopped.
  void start_pause_storm(int traffic_class);
  void stop_pause_storm();

  // The NIC's link went down: what its port held and whatever it sends until port_up() is lost to
  // `lost`; the transport recovers it once the link is back, as after any loss.
  void port_down(PacketReceiver& lost);
  void port_up();
  // The port's rate (0 holds everything until a rate is set again): its pacing cap follows.
  void set_rate(BitRate rate);

  // Data moves between host memory and this NIC over `host` (host_link.hpp; the GPU reaches the NIC
  // through host memory, or a host TCP stack feeds it): sending waits for it, and data that arrives
  // waits in the NIC's receive buffer until the host has taken it. A backlog of `xoff` bytes pauses
  // the switch on a lossless data class until it has drained to half of that; on a lossy class,
  // data beyond xoff + headroom is dropped. Call before any traffic; `host` must outlive the NIC.
  void limit_host_path(HostLink& host, Bytes xoff, Bytes headroom, bool lossless);

  [[nodiscard]] EgressPort& port() { return port_; }
  [[nodiscard]] const EgressPort& port() const { return port_; }
  [[nodiscard]] std::int32_t endpoint() const { return endpoint_; }
  // Payload bytes of data packets put on the wire (resends included) and arrived here.
  [[nodiscard]] std::int64_t data_payload_sent() const { return data_payload_sent_; }
  [[nodiscard]] std::int64_t data_payload_received() const { return data_payload_received_; }
  // Payload bytes arrived but still in the receive buffer, and dropped there (host path only).
  [[nodiscard]] std::int64_t data_payload_held() const { return held_payload_; }
  [[nodiscard]] std::int64_t data_payload_dropped() const { return dropped_payload_; }
  // Data dropped on a lossless class because the buffer overflowed despite pausing (must stay 0).
  [[nodiscard]] std::int64_t lossless_overflows() const { return lossless_overflows_; }
  // Current sending rate of a flow this NIC sends on.
  [[nodiscard]] BitRate flow_rate(const QueuePair& flow) const;

 private:
  void try_send();
  // Fetches what try_send() reads before it reaches a flow, and then (once that has landed) the
  // flow it will likely turn to.
  void prefetch_to_send() const;
  void prefetch_flow_to_send() const;
  void note_next_up();
  void wake();
  void send_data(QueuePair& flow);
  // An answer to the data packet `answered`, on its flow and in its class.
  void send_control(PacketKind kind, const Packet& answered, const QueuePair& flow,
                    std::uint64_t sequence, bool carries_cnp);
  void on_data(Packet* packet);
  void on_ack(QueuePair& flow, std::uint64_t sequence);
  void on_nack(QueuePair& flow, std::uint64_t sequence);
  void on_cnp(QueuePair& flow);
  void on_retransmit_timeout(std::uint64_t flow_id);
  // The flow's retries ran out: it turns to the error state and fails what it holds.
  void fail_queue_pair(QueuePair& flow);
  // Reports every message the failed flow holds as failed (posts to a failed queue pair come here,
  // by an event, as ibverbs flushes them).
  void flush_failed(std::uint64_t flow_id);
  // Event argument: traffic class (8 bits) and that class's pause generation above them.
  void refresh_pause(std::uint64_t class_and_generation);
  // Pauses each class of the switch while a storm on it is asked for or (the data class) the
  // receive buffer is full, and resumes it when neither holds.
  void update_pause();
  void send_pause(int traffic_class, std::uint16_t quanta);
  void take_into_host() override;
  void catch_up_dcqcn_timers(QueuePair& flow);
  void activate(QueuePair& flow);
  // The message that packet `sequence` of the flow belongs to (the flow has not dropped it yet).
  [[nodiscard]] PendingMessage& message_of(QueuePair& flow, std::uint64_t sequence);
  // The receiver's expected sequence passed the end of one or more messages: tell their listeners.
  void deliver_completed(QueuePair& flow);
  // Its unacknowledged sequence passed the end of one or more messages: they are complete.
  void complete_acknowledged(QueuePair& flow);

  // At scale a NIC is cold whenever it next sends, so what deciding to send reads is kept in its
  // first two cache lines, which the event loop fetches ahead (prefetch_to_send), and then the flow
  // it turns to (prefetch_flow_to_send).
  // First (after the vtable pointers):
  std::vector<std::uint32_t> active_;  // flows with packets to send, served round robin
  std::uint32_t next_active_ = 0;
  std::uint8_t data_class_;  // config_.data_class, to fetch its queue without reading config_
  // The flow at next_active_ when try_send last ran, if any: where the next turn likely begins.
  const QueuePair* next_up_ = nullptr;
  // Second:
  Simulator& sim_;
  const TransportConfig& config_;
  std::deque<QueuePair>& flows_;
  Time wake_at_ = Time::max();  // a pending wake-up for pacing, if any
  struct HostPath {
    HostLink* link = nullptr;
    std::int64_t xoff = 0;
    std::int64_t headroom = 0;
    bool lossless = true;
  };
  std::unique_ptr<HostPath> host_path_;  // none: data moves at the port's pace

  std::int32_t endpoint_;
  BitRate rate_;
  PacketPool& packets_;
  MessageListener& listener_;
  EgressPort port_;
  std::int64_t data_payload_sent_ = 0;
  std::int64_t data_payload_received_ = 0;
  bool storm_requested_ = false;
  int storm_class_ = 0;
  bool receive_buffer_full_ = false;
  std::array<bool, kTrafficClasses> pausing_{};
  std::array<std::uint64_t, kTrafficClasses> pause_generation_{};
  std::deque<Packet*> receive_buffer_;  // data not taken by the host yet, in arrival order
  std::int64_t held_bytes_ = 0;         // in receive_buffer_, whole frames
  std::int64_t held_payload_ = 0;
  std::int64_t dropped_payload_ = 0;
  std::int64_t lossless_overflows_ = 0;
};

}  // namespace lockstep
