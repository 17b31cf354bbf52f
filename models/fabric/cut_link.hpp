// A cable pulled with packets on it: those packets are lost, as on a real cable cut. The link's far
// end is diverted to this object until every packet that was on the link at the cut has come off
// it, each handed to `lost` instead of the receiver, and then the far end is connected again.
// Packets put on the link later (after the cable came back) arrive behind them and reach the
// receiver. Diverting the far end keeps the link's arrival path free of any check for cuts.
#pragma once

#include <cstdint>

#include "models/fabric/link.hpp"

namespace lockstep {

class CutLink final : public PacketReceiver {
 public:
  // Takes effect at once; `link` and `lost` must outlive the packets on the link.
  CutLink(Link& link, PacketReceiver& lost)
      : link_(link),
        receiver_(link.receiver()),
        receiver_port_(link.receiver_port()),
        lost_(lost),
        losing_(link.packets_in_flight()) {
    if (losing_ > 0) link_.connect(*this, receiver_port_);
  }
  CutLink(const CutLink&) = delete;
  CutLink& operator=(const CutLink&) = delete;

  void receive(Packet* packet, std::uint16_t ingress_port) override {
    if (--losing_ == 0) link_.connect(*receiver_, receiver_port_);
    lost_.receive(packet, ingress_port);
  }

 private:
  Link& link_;
  PacketReceiver* receiver_;
  std::uint16_t receiver_port_;
  PacketReceiver& lost_;
  std::int64_t losing_;
};

}  // namespace lockstep
