// The path between host memory and the NICs it feeds: what a NIC's data crosses when the GPU
// reaches the NIC through host memory, or when a host TCP stack moves it. It carries `rate` each
// way, whoever uses it: one NIC's own path, or the one interface a node's NICs share (NCCL's
// sockets over one front-end port). Sending: a NIC feeds a packet only once the path is free, and
// the packet holds it for its serialization at the path's rate. Receiving: packets the NICs hold
// are taken into host memory one after another, in the order they arrived at any of the NICs.
#pragma once

#include <algorithm>
#include <deque>

#include "sim/core/bit_rate.hpp"
#include "sim/core/bytes.hpp"
#include "sim/core/simulator.hpp"

namespace lockstep {

// A NIC whose received data waits for the host.
class HostReceiver {
 public:
  virtual ~HostReceiver() = default;
  // The host has taken the oldest packet this receiver holds.
  virtual void take_into_host() = 0;
};

class HostLink {
 public:
  HostLink(Simulator& sim, BitRate rate) : sim_(sim), rate_(rate) {}
  HostLink(const HostLink&) = delete;
  HostLink& operator=(const HostLink&) = delete;

  // From the next packet on (one being carried finishes at the old rate). rate > 0.
  void set_rate(BitRate rate) { rate_ = rate; }

  // When the path can feed the next packet out; a NIC sends only when this is not later than now.
  [[nodiscard]] Time send_free_at() const { return send_free_at_; }
  // A packet of `size` is fed now.
  void feed(Bytes size) {
    send_free_at_ = std::max(send_free_at_, sim_.now()) + tx_time(size, rate_);
  }

  // `receiver` holds one more packet of `size` for the host.
  void hold(HostReceiver& receiver, Bytes size) {
    waiting_.push_back(Waiting{&receiver, size});
    if (waiting_.size() == 1) sim_.schedule_in<&HostLink::take>(tx_time(size, rate_), this);
  }

 private:
  struct Waiting {
    HostReceiver* receiver = nullptr;
    Bytes size;
  };

  void take() {
    HostReceiver* receiver = waiting_.front().receiver;
    waiting_.pop_front();
    if (!waiting_.empty()) {
      sim_.schedule_in<&HostLink::take>(tx_time(waiting_.front().size, rate_), this);
    }
    receiver->take_into_host();
  }

  Simulator& sim_;
  BitRate rate_;
  Time send_free_at_;
  std::deque<Waiting> waiting_;  // one per packet held, in arrival order
};

}  // namespace lockstep
