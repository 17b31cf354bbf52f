#include "models/transport/link_events.hpp"

namespace lockstep {

std::vector<LinkEventProblem> link_event_problems(const std::vector<LinkEventConfig>& events,
                                                  const Topology& topology, NetworkModel model) {
  std::vector<LinkEventProblem> problems;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const LinkEventConfig& e = events[i];
    const std::string key = "link_events[" + std::to_string(i) + "]";
    const NodeId a = topology.find_node(e.a);
    const NodeId b = topology.find_node(e.b);
    if (a < 0) problems.push_back({key + ".a", "no switch or host named '" + e.a + "'"});
    if (b < 0) problems.push_back({key + ".b", "no switch or host named '" + e.b + "'"});
    if (a >= 0 && b >= 0 && topology.cable_between(a, b) < 0) {
      problems.push_back({key + ".b", "no cable joins " + e.a + " and " + e.b});
    }
    if ((e.rate.has_value() ? 1 : 0) + (e.down ? 1 : 0) + (e.up ? 1 : 0) != 1) {
      problems.push_back(
          {key, "give one of `rate` (the cable's new rate), `down: true` or `up: true`"});
    }
    if (e.rate && e.rate->bps() < 0) problems.push_back({key + ".rate", "must not be negative"});
    if (e.rate && e.rate->bps() == 0 && model == NetworkModel::kPacket) {
      problems.push_back({key + ".rate",
                          "0bps at packet level holds the cable's packets forever while their "
                          "senders resend without end: use `down: true` to fail the cable, or a "
                          "rate above 0"});
    }
  }
  return problems;
}

std::vector<LinkEvent> resolve_link_events(const std::vector<LinkEventConfig>& events,
                                           const Topology& topology) {
  std::vector<LinkEvent> resolved;
  for (const LinkEventConfig& e : events) {
    resolved.push_back(
        LinkEvent{Time::zero() + e.at,
                  topology.cable_between(topology.find_node(e.a), topology.find_node(e.b)), e.rate,
                  e.down, e.up});
  }
  return resolved;
}

LinkEventPlayer::LinkEventPlayer(Simulator& sim, FabricControl& network,
                                 std::vector<LinkEvent> events)
    : sim_(sim), network_(network), events_(std::move(events)) {}

void LinkEventPlayer::start() {
  for (std::size_t i = 0; i < events_.size(); ++i) {
    sim_.schedule<&LinkEventPlayer::apply>(events_[i].at, this, i);
  }
}

void LinkEventPlayer::apply(std::uint64_t index) {
  const LinkEvent& event = events_[index];
  if (event.down) {
    network_.fail_cable(event.cable);
  } else if (event.up) {
    network_.restore_cable(event.cable);
  } else {
    network_.set_cable_rate(event.cable, *event.rate);
  }
  ++applied_;
}

}  // namespace lockstep
