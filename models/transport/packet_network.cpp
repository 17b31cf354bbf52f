#include "models/transport/packet_network.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>

#include "models/transport/network_tables.hpp"
#include "sim/core/quantity.hpp"

namespace lockstep {

namespace {

// A route as packets carry it: the egress port at each switch, after the source NIC's hop, then
// kRouteEnd.
std::vector<std::uint16_t> switch_ports(const std::vector<Hop>& hops) {
  std::vector<std::uint16_t> ports;
  for (std::size_t i = 1; i < hops.size(); ++i) ports.push_back(hops[i].port);
  ports.push_back(kRouteEnd);
  return ports;
}

// Above this much port and NIC state the fabric is cold in the cache wherever a packet goes, and
// the event loop fetches it in stages ahead of each event; below it the stages cost more than they
// save. Measured on this project's machines (1 MiB L2 per core, 32 MiB L3): Perm-8192 (39 MB of
// that state) gains, Perm-1024 (5 MB) loses 5-10%.
constexpr std::size_t kCacheSizedFabricState = std::size_t{16} << 20;

bool counters_moved(const ClassCounters& now, const ClassCounters& before) {
  return now.bytes_sent != before.bytes_sent || now.ecn_marked != before.ecn_marked ||
         now.pauses_sent != before.pauses_sent || now.pauses_received != before.pauses_received ||
         now.dropped_packets != before.dropped_packets ||
         now.resent_packets != before.resent_packets;
}

}  // namespace

PacketNetwork::PacketNetwork(Simulator& sim, const Routing& routing,
                             const PacketNetworkConfig& config, std::uint64_t seed,
                             RecordBackend& output)
    : sim_(sim), routing_(routing), config_(config), seed_(seed), tables_(output) {
  const Topology& topology = routing.topology();
  // The wiring, so that port numbers in the other tables can be read without the builders' rules.
  record_wiring(topology, tables_.ports);
  for (NodeId e = 0; e < topology.endpoint_count(); ++e) {
    const Port& port = topology.ports(e)[0];
    nics_.push_back(std::make_unique<Nic>(sim, e, config.transport, topology.cable(port.cable).rate,
                                          topology.cable(port.cable).delay, packets_, flows_,
                                          static_cast<MessageListener&>(*this)));
  }
  for (NodeId n = topology.endpoint_count(); n < topology.node_count(); ++n) {
    std::vector<Duration> delays;
    std::vector<BitRate> rates;
    for (const Port& port : topology.ports(n)) {
      const Cable& cable = topology.cable(port.cable);
      delays.push_back(cable.delay);
      rates.push_back(cable.rate);
    }
    std::vector<Bytes> headroom = switch_headroom(topology, n, config);
    SwitchConfig switch_config = config.switches;
    switch_config.buffer = topology.switch_spec(n).buffer;
    switches_.push_back(
        std::make_unique<Switch>(sim, n, switch_config, packets_,
                                 RandomStream(seed, "fabric.ecn", static_cast<std::uint64_t>(n)),
                                 delays, rates, std::move(headroom)));
  }
  // Now every node exists: tell each port's link which node and port it arrives at.
  auto receiver = [&](NodeId n) -> PacketReceiver& {
    if (topology.is_endpoint(n)) return *nics_[static_cast<std::size_t>(n)];
    return *switches_[static_cast<std::size_t>(n - topology.endpoint_count())];
  };
  auto connect = [&](NodeId n, EgressPort& port) {
    const Port& wire = topology.port(n, port.index());
    port.link().connect(receiver(wire.peer), wire.peer_port);
  };
  for (const auto& nic : nics_) connect(nic->endpoint(), nic->port());
  std::size_t switch_ports = 0;
  for (const auto& s : switches_) {
    for (std::size_t i = 0; i < s->port_count(); ++i) connect(s->node(), s->port(i));
    switch_ports += s->port_count();
  }
  look_ahead(sim, switch_ports * sizeof(EgressPort) + nics_.size() * sizeof(Nic));
  if (config.sample_period)
    sim.schedule_in_phase<&PacketNetwork::sample>(Time::zero() + *config.sample_period,
                                                  Phase::kObserve, this);
}

}  // namespace lockstep

namespace lockstep {

std::vector<Bytes> switch_headroom(const Topology& topology, NodeId node,
                                   const PacketNetworkConfig& config) {
  const Bytes mtu = config.transport.payload_per_packet + config.transport.header;
  std::vector<Bytes> headroom;
  for (const Port& port : topology.ports(node)) {
    const Cable& cable = topology.cable(port.cable);
    headroom.push_back(
        config.switches.pfc.headroom.value_or(derived_headroom(cable.rate, cable.delay, mtu)));
  }
  return headroom;
}

std::optional<std::string> buffer_problem(const Topology& topology,
                                          const PacketNetworkConfig& config) {
  const auto lossless = static_cast<double>(config.switches.pfc.lossless.count());
  for (NodeId n = topology.endpoint_count(); n < topology.node_count(); ++n) {
    // In doubles: absurd delays or MTUs overflow a sum of bytes.
    double reserved = 0.0;
    for (const Bytes& h : switch_headroom(topology, n, config)) {
      reserved += static_cast<double>(h.count()) * lossless;
    }
    const Bytes buffer = topology.switch_spec(n).buffer;
    if (reserved >= static_cast<double>(buffer.count())) {
      char line[320];
      std::snprintf(line, sizeof line,
                    "switch '%s': its %s buffer is no larger than the PFC headroom its %zu ports "
                    "reserve for lossless traffic (%.4g B, from the links' rate and delay and the "
                    "MTU, or pfc.headroom)",
                    topology.switch_spec(n).name.c_str(), format(buffer).c_str(),
                    topology.ports(n).size(), reserved);
      return std::string(line);
    }
  }
  return std::nullopt;
}

PacketNetwork::~PacketNetwork() = default;

void PacketNetwork::look_ahead(Simulator& sim, std::size_t fabric_state_bytes) {
  const bool cold = fabric_state_bytes > kCacheSizedFabricState;
  Link::look_ahead_for_arrivals(sim, cold);
  if (!cold) return;
  EgressPort::look_ahead_for_departures(sim);
  Nic::look_ahead_for_wakes(sim);
}

std::int32_t PacketNetwork::endpoint_count() const { return routing_.topology().endpoint_count(); }

Duration PacketNetwork::latency(std::int32_t source, std::int32_t destination,
                                std::uint32_t queue_pair) const {
  return path_latency(routing_.topology(),
                      routing().path(source, destination,
                                     queue_pair_entropy(seed_, source, destination, queue_pair)),
                      config_.transport.payload_per_packet + config_.transport.header);
}

Switch& PacketNetwork::switch_node(NodeId node) {
  return *switches_[static_cast<std::size_t>(node - routing_.topology().endpoint_count())];
}

QueuePair& PacketNetwork::flow_for(std::int32_t source, std::int32_t destination,
                                   std::uint32_t queue_pair) {
  const auto key = std::make_tuple(source, destination, queue_pair);
  if (const auto it = flow_ids_.find(key); it != flow_ids_.end()) return flows_[it->second];
  const Routing& routing = this->routing();
  if (!routing.reachable(source, destination) || !routing.reachable(destination, source)) {
    throw std::invalid_argument("no route between endpoints " + std::to_string(source) + " and " +
                                std::to_string(destination));
  }
  const auto id = static_cast<std::uint32_t>(flows_.size());
  flow_ids_.emplace(key, id);
  QueuePair& flow = flows_.emplace_back();
  flow.id = id;
  flow.source = source;
  flow.destination = destination;
  flow.index = queue_pair;
  flow.traffic_class = static_cast<std::uint8_t>(config_.transport.data_class);
  flow.entropy = queue_pair_entropy(seed_, source, destination, queue_pair);
  flow.set_routes(switch_ports(routing.path(source, destination, flow.entropy)),
                  switch_ports(routing.path(destination, source, flow.entropy)));
  if (config_.transport.dcqcn) {
    flow.reaction_point.emplace(*config_.transport.dcqcn);
    flow.notification_point.emplace(config_.transport.dcqcn->cnp_interval);
    flow.next_alpha_update = sim_.now() + config_.transport.dcqcn->alpha_update_period;
    flow.next_rate_increase = sim_.now() + config_.transport.dcqcn->rate_increase_period;
  }
  return flow;
}

std::uint64_t PacketNetwork::send(std::int32_t source, std::int32_t destination, Bytes size,
                                  std::uint32_t queue_pair, MessageListener& listener) {
  check_message_endpoints(source, destination, endpoint_count());
  QueuePair& flow = flow_for(source, destination, queue_pair);
  const std::uint64_t id = next_message_++;
  listeners_.push_back(&listener);
  const std::int64_t payload = config_.transport.payload_per_packet.count();
  const std::int64_t packets = packets_for(size, config_.transport.payload_per_packet);
  PendingMessage pending;
  pending.message = Message{id, source, destination, size, queue_pair};
  pending.times.submitted = sim_.now();
  pending.first_sequence = flow.end_sequence;
  pending.end_sequence = flow.end_sequence + static_cast<std::uint64_t>(packets);
  pending.last_payload = size.count() - (packets - 1) * payload;
  flow.end_sequence = pending.end_sequence;
  flow.messages.push_back(pending);
  flow.delivery_due_at = std::min(flow.delivery_due_at, pending.end_sequence);
  flow.completion_due_at = std::min(flow.completion_due_at, pending.end_sequence);
  nic(source).post(flow);
  return id;
}

void PacketNetwork::on_message_complete(const Message& message, const MessageTimes& times) {
  const QueuePair& flow = flows_[flow_ids_.at(
      std::make_tuple(message.source, message.destination, message.queue_pair))];
  const std::vector<Hop> hops = routing_.path(message.source, message.destination, flow.entropy);
  tables_.messages.append(
      MessageRow{static_cast<std::int64_t>(message.id), flow.id, message.source,
                 message.destination, message.size.count(), times.submitted.ps(),
                 times.first_sent.ps(), times.delivered.ps(), times.acknowledged.ps(),
                 static_cast<std::int64_t>(hops.size()), path_text(hops, message.destination)});
  listeners_[message.id]->on_message_complete(message, times);
}

void PacketNetwork::on_message_delivered(const Message& message, Time delivered) {
  listeners_[message.id]->on_message_delivered(message, delivered);
}

void PacketNetwork::on_message_failed(const Message& message, Time failed) {
  listeners_[message.id]->on_message_failed(message, failed);
}

template <class Visit>
void PacketNetwork::for_each_port(Visit&& visit) const {
  for (const auto& nic : nics_) visit(static_cast<NodeId>(nic->endpoint()), nic->port());
  for (const auto& s : switches_) {
    for (std::size_t i = 0; i < s->port_count(); ++i) visit(s->node(), s->port(i));
  }
}

void PacketNetwork::sample() {
  const Time now = sim_.now();
  std::size_t index = 0;
  if (last_sampled_.empty()) {
    for_each_port([&](NodeId, const EgressPort&) { last_sampled_.emplace_back(); });
  }
  for_each_port([&](NodeId node, const EgressPort& port) {
    SampledPort& before = last_sampled_[index++];
    const PortCounters totals = port.counters();
    for (int c = 0; c < kTrafficClasses; ++c) {
      const auto cls = static_cast<std::size_t>(c);
      const ClassCounters& counters = totals.classes[cls];
      const std::int64_t queue = port.queue_bytes(c);
      const Duration paused = port.paused_time(c);
      // A pause that began and expired between two samples moves no counter but paused time.
      if (queue == 0 && !port.paused(c) && paused == before.paused[cls] &&
          !counters_moved(counters, before.counters.classes[cls])) {
        continue;
      }
      tables_.port_samples.append(PortSampleRow{
          now.ps(), node, port.index(), c, queue, counters.bytes_sent, counters.ecn_marked,
          counters.pauses_sent, counters.pauses_received, paused.ps(), counters.dropped_packets,
          counters.xoff_sent, counters.xoff_refreshed, counters.xon_sent, counters.resent_packets});
      before.paused[cls] = paused;
    }
    before.counters = totals;
  });
  for (const QueuePair& flow : flows_) {
    if (flow.messages.empty() || !flow.reaction_point) continue;
    tables_.flow_samples.append(
        FlowSampleRow{now.ps(), flow.id, flow.reaction_point->rate().bps(), flow.cnps_received});
  }
  sim_.schedule_in_phase<&PacketNetwork::sample>(now + *config_.sample_period, Phase::kObserve,
                                                 this);
}

EgressPort& PacketNetwork::port_of(NodeId node, PortIndex port) {
  if (routing_.topology().is_endpoint(node)) return nic(node).port();
  return switch_node(node).port(port);
}

void PacketNetwork::set_cable_rate(CableId cable, BitRate rate) {
  const Cable& c = routing_.topology().cable(cable);  // throws for an unknown cable
  if (rate.bps() < 0) throw std::invalid_argument("a link rate cannot be negative");
  for (const NodeId node : {c.a, c.b}) {
    const PortIndex port = routing_.topology().port_of_cable(node, cable);
    if (routing_.topology().is_endpoint(node)) {
      nic(node).set_rate(rate);
    } else {
      switch_node(node).port(port).set_rate(rate);
    }
  }
}

void PacketNetwork::set_cable_down(CableId cable, bool down) {
  const Cable& c = routing_.topology().cable(cable);
  for (const NodeId node : {c.a, c.b}) {
    const PortIndex port = routing_.topology().port_of_cable(node, cable);
    const bool endpoint = routing_.topology().is_endpoint(node);
    if (!down) {
      if (endpoint) {
        nic(node).port_up();
      } else {
        switch_node(node).port_up(port);
      }
      continue;
    }
    // First what is on the wire, then what waits for it.
    cuts_.emplace_back(port_of(node, port).link(), lost_);
    if (endpoint) {
      nic(node).port_down(lost_);
    } else {
      switch_node(node).port_down(port, lost_);
    }
  }
}

void PacketNetwork::fail_cable(CableId cable) {
  (void)routing_.topology().cable(cable);  // throws for an unknown cable
  if (std::find(failed_cables_.begin(), failed_cables_.end(), cable) != failed_cables_.end()) {
    return;
  }
  failed_cables_.push_back(cable);
  set_cable_down(cable, true);
  rerouted_ = std::make_unique<Routing>(routing_.topology(), failed_cables_);
  const std::vector<CableId> failed{cable};
  for (QueuePair& flow : flows_) {
    if (crosses_any(flow, failed)) reroute(flow);
  }
}

void PacketNetwork::restore_cable(CableId cable) {
  (void)routing_.topology().cable(cable);  // throws for an unknown cable
  const auto it = std::find(failed_cables_.begin(), failed_cables_.end(), cable);
  if (it == failed_cables_.end()) return;
  failed_cables_.erase(it);
  set_cable_down(cable, false);
  rerouted_ = failed_cables_.empty()
                  ? nullptr
                  : std::make_unique<Routing>(routing_.topology(), failed_cables_);
  // Flows still on a failed cable had no other path: they may have one now.
  for (QueuePair& flow : flows_) {
    if (crosses_any(flow, failed_cables_)) reroute(flow);
  }
}

bool PacketNetwork::crosses_any(const QueuePair& flow, const std::vector<CableId>& cables) const {
  const Topology& topology = routing_.topology();
  auto crosses = [&](NodeId from, const std::vector<std::uint16_t>& route) {
    CableId cable = topology.ports(from)[0].cable;
    NodeId node = topology.ports(from)[0].peer;
    for (const std::uint16_t port : route) {
      if (std::find(cables.begin(), cables.end(), cable) != cables.end()) return true;
      if (port == kRouteEnd) break;
      const Port& wire = topology.port(node, port);
      cable = wire.cable;
      node = wire.peer;
    }
    return false;
  };
  return crosses(flow.source, flow.route_to_destination) ||
         crosses(flow.destination, flow.route_to_source);
}

bool PacketNetwork::reroute(QueuePair& flow) {
  const Routing& routing = this->routing();
  if (!routing.reachable(flow.source, flow.destination) ||
      !routing.reachable(flow.destination, flow.source)) {
    return false;  // stalls on its old path until a cable comes back
  }
  retired_routes_.push_back(std::move(flow.route_to_destination));
  retired_routes_.push_back(std::move(flow.route_to_source));
  flow.set_routes(switch_ports(routing.path(flow.source, flow.destination, flow.entropy)),
                  switch_ports(routing.path(flow.destination, flow.source, flow.entropy)));
  return true;
}

std::int64_t PacketNetwork::messages_in_flight() const {
  std::int64_t count = 0;
  for (const QueuePair& flow : flows_) count += static_cast<std::int64_t>(flow.messages.size());
  return count;
}

void PacketNetwork::finish() {
  for_each_port([&](NodeId node, const EgressPort& port) {
    const PortCounters totals = port.counters();
    for (int c = 0; c < kTrafficClasses; ++c) {
      const ClassCounters& k = totals.classes[static_cast<std::size_t>(c)];
      if (k.bytes_sent == 0 && k.pauses_sent == 0 && k.pauses_received == 0 &&
          k.dropped_packets == 0) {
        continue;
      }
      tables_.port_totals.append(
          PortTotalRow{node, port.index(), c, k.bytes_sent, k.packets_sent, k.max_queue_bytes,
                       k.ecn_marked, k.pauses_sent, k.pauses_received, port.paused_time(c).ps(),
                       k.dropped_packets, k.dropped_bytes, k.xoff_sent, k.xoff_refreshed,
                       k.xon_sent, k.resent_packets, k.resent_bytes});
    }
  });
  for (const QueuePair& flow : flows_) {
    tables_.queue_pairs.append(
        QueuePairRow{flow.id, flow.source, flow.destination, flow.index, flow.retransmitted_packets,
                     flow.retransmitted_bytes, flow.timeouts, flow.cnps_received,
                     flow.failed_at ? flow.failed_at->ps() : -1, flow.failed_messages});
  }
  tables_.flush();
}

void PacketNetwork::limit_endpoint(std::int32_t endpoint, BitRate rate) {
  limit_endpoints({endpoint}, rate);
}

void PacketNetwork::limit_endpoints(const std::vector<std::int32_t>& endpoints, BitRate rate) {
  const Topology& topology = routing_.topology();
  for (const std::int32_t e : endpoints) {
    if (!topology.is_endpoint(e)) {
      throw std::invalid_argument("no endpoint " + std::to_string(e) + " to limit");
    }
  }
  if (rate.bps() <= 0) throw std::invalid_argument("an endpoint's limit must be positive");
  HostLink& host = host_links_.emplace_back(sim_, rate);
  host_link_of_.resize(static_cast<std::size_t>(topology.endpoint_count()), nullptr);
  const Bytes mtu = config_.transport.payload_per_packet + config_.transport.header;
  const bool lossless =
      config_.switches.pfc.lossless.test(static_cast<std::size_t>(config_.transport.data_class));
  for (const std::int32_t e : endpoints) {
    const Cable& cable = topology.cable(topology.ports(e)[0].cable);
    const Bytes headroom =
        config_.switches.pfc.headroom.value_or(derived_headroom(cable.rate, cable.delay, mtu));
    nic(e).limit_host_path(host, headroom, headroom, lossless);
    host_link_of_[static_cast<std::size_t>(e)] = &host;
  }
}

void PacketNetwork::set_host_path_rate(std::int32_t endpoint, BitRate rate) {
  if (!routing_.topology().is_endpoint(endpoint)) {
    throw std::invalid_argument("no endpoint " + std::to_string(endpoint));
  }
  if (rate.bps() <= 0) throw std::invalid_argument("a host path's rate must be positive");
  const auto e = static_cast<std::size_t>(endpoint);
  if (e < host_link_of_.size() && host_link_of_[e] != nullptr) {
    host_link_of_[e]->set_rate(rate);
  } else {
    limit_endpoint(endpoint, rate);
  }
}

void PacketNetwork::start_pause_storm(std::int32_t endpoint) {
  if (!routing_.topology().is_endpoint(endpoint)) {
    throw std::invalid_argument("no endpoint " + std::to_string(endpoint));
  }
  nic(endpoint).start_pause_storm(config_.transport.data_class);
}

void PacketNetwork::stop_pause_storm(std::int32_t endpoint) {
  if (!routing_.topology().is_endpoint(endpoint)) {
    throw std::invalid_argument("no endpoint " + std::to_string(endpoint));
  }
  nic(endpoint).stop_pause_storm();
}

std::int64_t PacketNetwork::packet_hops() const {
  std::int64_t hops = 0;
  for_each_port([&](NodeId, const EgressPort& port) { hops += port.packets_transmitted(); });
  return hops;
}

DataAccount PacketNetwork::data_account() const {
  DataAccount account;
  for (const auto& nic : nics_) {
    account.injected += nic->data_payload_sent();
    account.delivered += nic->data_payload_received();
    account.in_fabric += nic->data_payload_held();
    account.dropped += nic->data_payload_dropped();
  }
  for (const auto& s : switches_) account.dropped += s->dropped_payload_bytes();
  account.dropped += lost_.data_payload();
  for_each_port(
      [&](NodeId, const EgressPort& port) { account.in_fabric += port.data_payload_held(); });
  for_each_port([&](NodeId, const EgressPort& port) {
    account.in_fabric += port.link().data_bytes_in_flight();
  });
  return account;
}

std::int64_t PacketNetwork::lossless_drops() const {
  std::int64_t drops = 0;
  for (const auto& s : switches_) drops += s->headroom_overflows();
  for (const auto& nic : nics_) drops += nic->lossless_overflows();
  return drops;
}

std::int64_t PacketNetwork::pause_frames_sent() const {
  std::int64_t frames = 0;
  for_each_port([&](NodeId, const EgressPort& port) {
    const PortCounters totals = port.counters();
    for (const ClassCounters& c : totals.classes) frames += c.pauses_sent;
  });
  return frames;
}

}  // namespace lockstep
