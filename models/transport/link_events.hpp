// A scenario's link events (network.link_events) played on either network level through its
// FabricControl: each changes a cable's rate, fails it or restores it at its time. Units: Time,
// BitRate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/fabric/topology.hpp"
#include "models/transport/fabric_control.hpp"
#include "models/transport/network_config.hpp"
#include "sim/core/simulator.hpp"

namespace lockstep {

struct LinkEvent {
  Time at;
  CableId cable = 0;
  std::optional<BitRate> rate;  // set when the event changes the rate
  bool down = false;            // set when the cable fails
  bool up = false;              // set when a failed cable works again
};

struct LinkEventProblem {
  std::string key;  // relative to `network`, e.g. "link_events[2].b"
  std::string message;
};

// Every problem of the events on this topology at network level `model`: unknown node names, nodes
// no cable joins, neither or more than one of `rate`, `down` and `up`, a negative rate, and a rate
// of 0 at packet level (the cable would hold its packets forever while their senders resend
// without end). Empty when they can be played.
[[nodiscard]] std::vector<LinkEventProblem> link_event_problems(
    const std::vector<LinkEventConfig>& events, const Topology& topology, NetworkModel model);

// The events with their cables found; `events` must have no problems.
[[nodiscard]] std::vector<LinkEvent> resolve_link_events(const std::vector<LinkEventConfig>& events,
                                                         const Topology& topology);

class LinkEventPlayer {
 public:
  LinkEventPlayer(Simulator& sim, FabricControl& network, std::vector<LinkEvent> events);
  LinkEventPlayer(const LinkEventPlayer&) = delete;
  LinkEventPlayer& operator=(const LinkEventPlayer&) = delete;

  // Schedules every event at its time (times are absolute: from the start of the run).
  void start();
  [[nodiscard]] std::int64_t applied() const { return applied_; }

 private:
  void apply(std::uint64_t index);

  Simulator& sim_;
  FabricControl& network_;
  std::vector<LinkEvent> events_;
  std::int64_t applied_ = 0;
};

}  // namespace lockstep
