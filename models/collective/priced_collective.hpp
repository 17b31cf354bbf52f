// A collective whose time is a formula rather than the sum of its transfers: once the last
// participant has joined, every participant finishes `time` later. It is how the analytic network
// level prices every collective of a training job, and how the other levels price collectives that
// stay inside one server's NVSwitch, which is non-blocking (every GPU reaches every other at its
// full NVLink rate at once), so that nothing but the collective itself shares the links it uses and
// a formula is what a flow-by-flow simulation of it would give. Arrivals, aborts and timeouts
// behave as for every Collective (collective.hpp); nothing is sent, so nothing is in flight.
#pragma once

#include <cstdint>
#include <vector>

#include "models/collective/collective.hpp"

namespace lockstep {

class PricedCollective final : public Collective {
 public:
  // Participants are endpoints 0 .. endpoints-1 as Collective takes them.
  PricedCollective(Simulator& sim, std::int32_t endpoints, std::vector<std::int32_t> participants,
                   Duration time);

  [[nodiscard]] std::vector<RankTransferTimes> rank_transfer_times() const override;
  [[nodiscard]] std::int64_t messages_in_flight() const override { return 0; }

 private:
  void on_arrival(std::int32_t rank, Time at) override;
  void on_arrivals(const std::vector<std::int32_t>& ranks) override;
  void on_abort() override {}
  void joined(Time at);
  void end();

  std::int32_t endpoints_;
  Duration time_;
  std::int64_t yet_to_join_;
  Time last_join_;
};

}  // namespace lockstep
