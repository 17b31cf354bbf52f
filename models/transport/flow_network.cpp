#include "models/transport/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/core/ring_queue.hpp"

namespace lockstep {
namespace {

constexpr double kPsPerSecond = 1e12;

double bits(Bytes bytes) { return static_cast<double>(bytes.count()) * 8.0; }

}  // namespace

struct FlowNetwork::QueuePair {
  struct Pending {
    Message message;
    MessageListener* listener = nullptr;
    Time submitted;
    Time first_sent;
    Bytes wire;              // payload plus a header per packet
    Bytes tail_packet_wire;  // what each hop after the first serializes once the source is done
    std::int64_t packets = 0;
  };

  std::uint32_t id = 0;
  std::int32_t source = 0;
  std::int32_t destination = 0;
  std::uint32_t index = 0;
  std::uint64_t entropy = 0;
  std::vector<Hop> hops;          // data, source to destination
  std::vector<Hop> reverse_hops;  // acknowledgements
  FixedText<96> path;             // the hops as the messages table writes them
  std::vector<std::int32_t> links;
  std::vector<std::int32_t> reverse_links;
  RingQueue<Pending> backlog;   // not yet drained, head first
  double remaining_bits = 0.0;  // of the head message, as of updated_at
  double rate_bps = 0.0;
  Time updated_at;
  MaxMinSolver::FlowId flow = -1;  // in the solver while it has something to send and a path
  double cap_bps = MaxMinSolver::kUncapped;
  std::unique_ptr<Timer> drain;

  [[nodiscard]] bool routed() const { return !links.empty() && !reverse_links.empty(); }
};

struct FlowNetwork::InFlight {
  Message message;
  MessageTimes times;
  MessageListener* listener = nullptr;
  std::uint32_t queue_pair = 0;
  std::int64_t hops = 0;
  FixedText<96> path;
};

struct FlowNetwork::LinkState {
  NodeId node = 0;  // the transmitting end
  PortIndex port = 0;
  BitRate rate;  // now (0 when stopped)
  Duration delay;
  double data_bps = 0.0;  // sum of the rates of the data flows on it
  Time since;             // data_bits counts up to here
  double data_bits = 0.0;
  std::int64_t bytes_sent = 0;  // wire bytes of the drained messages that crossed it
  std::int64_t packets_sent = 0;
  std::int64_t last_sampled_bytes = 0;
};

FlowNetwork::FlowNetwork(Simulator& sim, const Routing& routing, const FlowNetworkConfig& config,
                         std::uint64_t seed, RecordBackend& output)
    : sim_(sim), routing_(routing), config_(config), seed_(seed), tables_(output) {
  const Topology& topology = routing.topology();
  record_wiring(topology, tables_.ports);
  links_.resize(static_cast<std::size_t>(topology.cable_count()) * 2);
  for (NodeId n = 0; n < topology.node_count(); ++n) {
    const std::span<const Port> ports = topology.ports(n);
    for (std::size_t i = 0; i < ports.size(); ++i) {
      const Cable& cable = topology.cable(ports[i].cable);
      LinkState& link = links_[static_cast<std::size_t>(link_of(n, ports[i].cable))];
      link.node = n;
      link.port = static_cast<PortIndex>(i);
      link.rate = cable.rate;
      link.delay = cable.delay;
    }
  }
  // Solver resource i is link i.
  for (const LinkState& link : links_) {
    (void)solver_.add_resource(static_cast<double>(link.rate.bps()));
  }
  endpoint_limit_.assign(static_cast<std::size_t>(topology.endpoint_count()), EndpointLimit{});
  if (config_.sample_period) {
    sim.schedule_in_phase<&FlowNetwork::sample>(Time::zero() + *config_.sample_period,
                                                Phase::kObserve, this);
  }
}

FlowNetwork::~FlowNetwork() = default;

std::int32_t FlowNetwork::endpoint_count() const { return routing_.topology().endpoint_count(); }

std::int32_t FlowNetwork::link_of(NodeId node, CableId cable) const {
  return cable * 2 + (routing_.topology().cable(cable).a == node ? 0 : 1);
}

FlowNetwork::QueuePair& FlowNetwork::queue_pair_for(std::int32_t source, std::int32_t destination,
                                                    std::uint32_t index) {
  const QueuePairKey key{source, destination, index};
  const auto id = static_cast<std::uint32_t>(queue_pairs_.size());
  if (const auto [found, added] = queue_pair_ids_.insert(key, id); !added) {
    return queue_pairs_[*found];
  }
  QueuePair& qp = queue_pairs_.emplace_back();
  qp.id = id;
  qp.source = source;
  qp.destination = destination;
  qp.index = index;
  qp.entropy = queue_pair_entropy(seed_, source, destination, index);
  qp.drain =
      std::unique_ptr<Timer>(new Timer(Timer::calling<&FlowNetwork::on_drained>(sim_, this, id)));
  route(qp);
  return qp;
}

const FlowNetwork::QueuePair* FlowNetwork::find_queue_pair(std::int32_t source,
                                                           std::int32_t destination,
                                                           std::uint32_t index) const {
  const std::uint32_t* id = queue_pair_ids_.find(QueuePairKey{source, destination, index});
  return id == nullptr ? nullptr : &queue_pairs_[*id];
}

void FlowNetwork::route(QueuePair& qp) {
  const Routing& routing = rerouted_ ? *rerouted_ : routing_;
  qp.hops = routing.path(qp.source, qp.destination, qp.entropy);
  qp.reverse_hops = routing.path(qp.destination, qp.source, qp.entropy);
  qp.path = path_text(qp.hops, qp.destination);
  qp.links.clear();
  qp.reverse_links.clear();
  for (const Hop& hop : qp.hops) qp.links.push_back(link_of(hop.node, hop.cable));
  for (const Hop& hop : qp.reverse_hops) qp.reverse_links.push_back(link_of(hop.node, hop.cable));
}

std::uint64_t FlowNetwork::send(std::int32_t source, std::int32_t destination, Bytes size,
                                std::uint32_t queue_pair, MessageListener& listener) {
  check_message_endpoints(source, destination, endpoint_count());
  QueuePair& qp = queue_pair_for(source, destination, queue_pair);
  const std::int64_t packets = packets_for(size, config_.payload_per_packet);
  QueuePair::Pending pending;
  pending.message = Message{next_message_++, source, destination, size, queue_pair};
  pending.listener = &listener;
  pending.submitted = sim_.now();
  pending.packets = packets;
  pending.wire = size + config_.header * packets;
  // Behind a full packet, a short last packet waits at every hop for the full one to be
  // serialized, so the full size sets the pace of the tail.
  pending.tail_packet_wire =
      packets > 1 ? config_.payload_per_packet + config_.header : size + config_.header;
  qp.backlog.push_back(pending);
  if (qp.backlog.size() == 1) {
    qp.backlog.front().first_sent = sim_.now();
    qp.remaining_bits = bits(pending.wire);
    qp.updated_at = sim_.now();
    start_sending(qp);
  }
  return pending.message.id;
}

void FlowNetwork::start_sending(QueuePair& qp) {
  if (qp.flow >= 0 || qp.backlog.empty() || !qp.routed()) return;
  // An acknowledgement per data packet: the reverse path carries control_frame bytes for every
  // full data packet's wire bytes.
  const double ack_weight =
      bits(config_.control_frame) / bits(config_.payload_per_packet + config_.header);
  std::vector<MaxMinSolver::Use> uses;
  uses.reserve(qp.links.size() + qp.reverse_links.size());
  for (const std::int32_t link : qp.links) uses.push_back({link, 1.0});
  const EndpointLimit& sender = endpoint_limit_[static_cast<std::size_t>(qp.source)];
  const EndpointLimit& receiver = endpoint_limit_[static_cast<std::size_t>(qp.destination)];
  if (sender.send >= 0) uses.push_back({sender.send, 1.0});
  if (receiver.receive >= 0) uses.push_back({receiver.receive, 1.0});
  // Without acknowledgement frames (NVLink), the reverse path carries nothing.
  if (ack_weight > 0.0) {
    for (const std::int32_t link : qp.reverse_links) uses.push_back({link, ack_weight});
  }
  qp.flow = solver_.add_flow(uses, qp.cap_bps);
  const auto slot = static_cast<std::size_t>(qp.flow);
  if (queue_pair_of_flow_.size() <= slot) queue_pair_of_flow_.resize(slot + 1);
  queue_pair_of_flow_[slot] = static_cast<std::int32_t>(qp.id);
  qp.updated_at = sim_.now();
  request_recompute();
}

void FlowNetwork::stop_sending(QueuePair& qp) {
  if (qp.flow < 0) return;
  settle(qp);
  set_rate(qp, 0.0);
  solver_.remove_flow(qp.flow);
  qp.flow = -1;
  qp.drain->cancel();
  request_recompute();
}

void FlowNetwork::request_recompute() {
  if (recompute_pending_) return;
  recompute_pending_ = true;
  // After everything else at this instant, so that flows starting and ending together cost one
  // recomputation.
  sim_.schedule_in_phase<&FlowNetwork::recompute>(sim_.now(), Phase::kSettle, this);
}

void FlowNetwork::recompute() {
  recompute_pending_ = false;
  const auto wall_start = std::chrono::steady_clock::now();
  for (const MaxMinSolver::FlowId flow : solver_.solve()) {
    QueuePair& qp =
        queue_pairs_[static_cast<std::size_t>(queue_pair_of_flow_[static_cast<std::size_t>(flow)])];
    settle(qp);
    set_rate(qp, solver_.rate(flow));
    arm_drain(qp);
  }
  ++recomputations_.count;
  recomputations_.flows_refilled += solver_.last_flows_refilled();
  recomputations_.expansions += solver_.last_expansions();
  recomputations_.wall_ns.add(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now() - wall_start)
                                  .count());
}

void FlowNetwork::settle(QueuePair& qp) {
  const Time now = sim_.now();
  qp.remaining_bits -= qp.rate_bps * static_cast<double>((now - qp.updated_at).ps()) / kPsPerSecond;
  qp.updated_at = now;
}

void FlowNetwork::settle_link(LinkState& link) {
  const Time now = sim_.now();
  link.data_bits +=
      std::max(0.0, link.data_bps) * static_cast<double>((now - link.since).ps()) / kPsPerSecond;
  link.since = now;
}

void FlowNetwork::set_rate(QueuePair& qp, double rate_bps) {
  for (const std::int32_t id : qp.links) {
    LinkState& link = links_[static_cast<std::size_t>(id)];
    settle_link(link);
    link.data_bps += rate_bps - qp.rate_bps;
  }
  qp.rate_bps = rate_bps;
}

void FlowNetwork::arm_drain(QueuePair& qp) {
  if (qp.rate_bps <= 0.0) {
    qp.drain->cancel();
    return;
  }
  // Rounded up: a message never drains before its fluid time.
  const double ps = std::ceil(std::max(0.0, qp.remaining_bits) * kPsPerSecond / qp.rate_bps);
  // Beyond the end of time (a link slowed to a trickle) the message simply never drains.
  const double left = static_cast<double>((Time::max() - sim_.now()).ps());
  if (ps >= left) {
    qp.drain->cancel();
    return;
  }
  qp.drain->arm_at(sim_.now() + Duration::ps_from_wide(ps));
}

void FlowNetwork::on_drained(std::uint64_t queue_pair) {
  QueuePair& qp = queue_pairs_[static_cast<std::size_t>(queue_pair)];
  settle(qp);
  // Less than a picosecond's worth left is rounding, not data.
  if (qp.remaining_bits * kPsPerSecond > qp.rate_bps) {
    arm_drain(qp);
    return;
  }
  const Time now = sim_.now();
  const QueuePair::Pending head = qp.backlog.front();
  qp.backlog.pop_front();
  // The last packet is forwarded store-and-forward after it has left the source; then one control
  // frame comes back.
  Duration forward;
  for (std::size_t i = 0; i < qp.links.size(); ++i) {
    LinkState& link = links_[static_cast<std::size_t>(qp.links[i])];
    forward += link.delay;
    if (i > 0 && link.rate.bps() > 0) forward += tx_time(head.tail_packet_wire, link.rate);
    link.bytes_sent += head.wire.count();
    link.packets_sent += head.packets;
  }
  Duration back;
  for (const std::int32_t id : qp.reverse_links) {
    const LinkState& link = links_[static_cast<std::size_t>(id)];
    back += link.delay;
    if (link.rate.bps() > 0) back += tx_time(config_.control_frame, link.rate);
  }
  InFlight record;
  record.message = head.message;
  record.times = MessageTimes{head.submitted, head.first_sent, now + forward, now + forward + back};
  record.listener = head.listener;
  record.queue_pair = qp.id;
  record.hops = static_cast<std::int64_t>(qp.hops.size());
  record.path = qp.path;
  std::uint64_t slot = in_flight_.size();
  if (free_in_flight_.empty()) {
    in_flight_.push_back(record);
  } else {
    slot = free_in_flight_.back();
    free_in_flight_.pop_back();
    in_flight_[slot] = record;
  }
  sim_.schedule<&FlowNetwork::on_delivered>(record.times.delivered, this, slot);
  sim_.schedule<&FlowNetwork::on_acknowledged>(record.times.acknowledged, this, slot);

  if (qp.backlog.empty()) {
    qp.remaining_bits = 0.0;
    stop_sending(qp);
    return;
  }
  qp.backlog.front().first_sent = now;
  // Carries the overshoot of rounding the drain up to the picosecond.
  qp.remaining_bits += bits(qp.backlog.front().wire);
  arm_drain(qp);
}

void FlowNetwork::on_delivered(std::uint64_t slot) {
  // Copies: the listener may send, which may grow in_flight_.
  const Message message = in_flight_[slot].message;
  const Time delivered = in_flight_[slot].times.delivered;
  in_flight_[slot].listener->on_message_delivered(message, delivered);
}

void FlowNetwork::on_acknowledged(std::uint64_t slot) {
  // A copy: the listener may send, which may grow in_flight_.
  const InFlight done = in_flight_[slot];
  free_in_flight_.push_back(slot);
  tables_.messages.append(MessageRow{static_cast<std::int64_t>(done.message.id), done.queue_pair,
                                     done.message.source, done.message.destination,
                                     done.message.size.count(), done.times.submitted.ps(),
                                     done.times.first_sent.ps(), done.times.delivered.ps(),
                                     done.times.acknowledged.ps(), done.hops, done.path});
  done.listener->on_message_complete(done.message, done.times);
}

void FlowNetwork::set_link_rate(NodeId node, PortIndex port, BitRate rate) {
  const Topology& topology = routing_.topology();
  if (node < 0 || node >= topology.node_count() || port >= topology.ports(node).size()) {
    throw std::invalid_argument("node " + std::to_string(node) + " has no port " +
                                std::to_string(port));
  }
  change_link_rate(link_of(node, topology.port(node, port).cable), rate);
}

void FlowNetwork::set_cable_rate(CableId cable, BitRate rate) {
  (void)routing_.topology().cable(cable);  // throws for an unknown cable
  change_link_rate(cable * 2, rate);
  change_link_rate(cable * 2 + 1, rate);
}

void FlowNetwork::change_link_rate(std::int32_t link, BitRate rate) {
  if (rate.bps() < 0) throw std::invalid_argument("a link rate cannot be negative");
  links_[static_cast<std::size_t>(link)].rate = rate;
  solver_.set_capacity(link, static_cast<double>(rate.bps()));
  request_recompute();
}

void FlowNetwork::fail_cable(CableId cable) {
  const Topology& topology = routing_.topology();
  (void)topology.cable(cable);  // throws for an unknown cable
  if (std::find(failed_cables_.begin(), failed_cables_.end(), cable) != failed_cables_.end()) {
    return;
  }
  failed_cables_.push_back(cable);
  rate_before_failure_.emplace_back(links_[static_cast<std::size_t>(cable) * 2].rate,
                                    links_[static_cast<std::size_t>(cable) * 2 + 1].rate);
  change_link_rate(cable * 2, BitRate::bps(0));
  change_link_rate(cable * 2 + 1, BitRate::bps(0));
  rerouted_ = std::make_unique<Routing>(topology, failed_cables_);
  auto crosses = [cable](const std::vector<std::int32_t>& links) {
    return std::any_of(links.begin(), links.end(),
                       [cable](std::int32_t link) { return link / 2 == cable; });
  };
  for (QueuePair& qp : queue_pairs_) {
    if (!crosses(qp.links) && !crosses(qp.reverse_links)) continue;
    stop_sending(qp);
    route(qp);
    start_sending(qp);
  }
}

void FlowNetwork::restore_cable(CableId cable) {
  const Topology& topology = routing_.topology();
  (void)topology.cable(cable);  // throws for an unknown cable
  const auto it = std::find(failed_cables_.begin(), failed_cables_.end(), cable);
  if (it == failed_cables_.end()) return;
  const auto index = static_cast<std::size_t>(it - failed_cables_.begin());
  const auto [forward, backward] = rate_before_failure_[index];
  failed_cables_.erase(it);
  rate_before_failure_.erase(rate_before_failure_.begin() + static_cast<std::ptrdiff_t>(index));
  change_link_rate(cable * 2, forward);
  change_link_rate(cable * 2 + 1, backward);
  rerouted_ =
      failed_cables_.empty() ? nullptr : std::make_unique<Routing>(topology, failed_cables_);
  // Queue pairs with no path, or still on a failed cable, may have one now; the others stay.
  for (QueuePair& qp : queue_pairs_) {
    const bool stalled =
        qp.links.empty() || std::any_of(qp.links.begin(), qp.links.end(), [&](std::int32_t l) {
          return std::find(failed_cables_.begin(), failed_cables_.end(), l / 2) !=
                 failed_cables_.end();
        });
    if (!stalled) continue;
    stop_sending(qp);
    route(qp);
    start_sending(qp);
  }
}

void FlowNetwork::limit_queue_pair(std::int32_t source, std::int32_t destination,
                                   std::uint32_t queue_pair, BitRate cap) {
  if (cap.bps() <= 0) throw std::invalid_argument("a queue pair's cap must be positive");
  QueuePair& qp = queue_pair_for(source, destination, queue_pair);
  qp.cap_bps = static_cast<double>(cap.bps());
  if (qp.flow >= 0) {
    solver_.set_cap(qp.flow, qp.cap_bps);
    request_recompute();
  }
}

void FlowNetwork::limit_endpoint(std::int32_t endpoint, BitRate cap) {
  limit_endpoints({endpoint}, cap);
}

void FlowNetwork::limit_endpoints(const std::vector<std::int32_t>& endpoints, BitRate cap) {
  for (const std::int32_t e : endpoints) {
    if (!routing_.topology().is_endpoint(e)) {
      throw std::invalid_argument("no endpoint " + std::to_string(e) + " to limit");
    }
  }
  if (cap.bps() <= 0) throw std::invalid_argument("an endpoint's limit must be positive");
  const auto capacity = static_cast<double>(cap.bps());
  const EndpointLimit shared{solver_.add_resource(capacity), solver_.add_resource(capacity)};
  std::vector<bool> limited(endpoint_limit_.size(), false);
  for (const std::int32_t e : endpoints) {
    endpoint_limit_[static_cast<std::size_t>(e)] = shared;
    limited[static_cast<std::size_t>(e)] = true;
  }
  // Queue pairs already sending take the new limit on.
  for (QueuePair& qp : queue_pairs_) {
    if (qp.flow < 0 || (!limited[static_cast<std::size_t>(qp.source)] &&
                        !limited[static_cast<std::size_t>(qp.destination)])) {
      continue;
    }
    stop_sending(qp);
    start_sending(qp);
  }
}

void FlowNetwork::set_host_path_rate(std::int32_t endpoint, BitRate rate) {
  if (!routing_.topology().is_endpoint(endpoint)) {
    throw std::invalid_argument("no endpoint " + std::to_string(endpoint));
  }
  if (rate.bps() <= 0) throw std::invalid_argument("a host path's rate must be positive");
  const EndpointLimit limit = endpoint_limit_[static_cast<std::size_t>(endpoint)];
  if (limit.send < 0) {
    limit_endpoint(endpoint, rate);
    return;
  }
  solver_.set_capacity(limit.send, static_cast<double>(rate.bps()));
  solver_.set_capacity(limit.receive, static_cast<double>(rate.bps()));
  request_recompute();
}

void FlowNetwork::start_pause_storm(std::int32_t endpoint) {
  const Topology& topology = routing_.topology();
  if (!topology.is_endpoint(endpoint)) {
    throw std::invalid_argument("no endpoint " + std::to_string(endpoint));
  }
  if (storming_.count(endpoint) != 0) return;
  const NodeId tor = topology.host_switch(endpoint);
  const PortIndex port = topology.host_switch_port(endpoint);
  const std::int32_t link = link_of(tor, topology.port(tor, port).cable);
  storming_.emplace(endpoint, links_[static_cast<std::size_t>(link)].rate);
  change_link_rate(link, BitRate::bps(0));
}

void FlowNetwork::stop_pause_storm(std::int32_t endpoint) {
  const auto storm = storming_.find(endpoint);
  if (storm == storming_.end()) return;
  const Topology& topology = routing_.topology();
  const NodeId tor = topology.host_switch(endpoint);
  const PortIndex port = topology.host_switch_port(endpoint);
  change_link_rate(link_of(tor, topology.port(tor, port).cable), storm->second);
  storming_.erase(storm);
}

double FlowNetwork::rate_bps(std::int32_t source, std::int32_t destination,
                             std::uint32_t queue_pair) const {
  const QueuePair* qp = find_queue_pair(source, destination, queue_pair);
  return qp == nullptr ? 0.0 : qp->rate_bps;
}

Duration FlowNetwork::latency(std::int32_t source, std::int32_t destination,
                              std::uint32_t queue_pair) const {
  const QueuePair* qp = find_queue_pair(source, destination, queue_pair);
  return path_latency(
      routing_.topology(),
      qp != nullptr ? qp->hops
                    : routing_.path(source, destination,
                                    queue_pair_entropy(seed_, source, destination, queue_pair)),
      config_.payload_per_packet + config_.header);
}

std::vector<Hop> FlowNetwork::path(std::int32_t source, std::int32_t destination,
                                   std::uint32_t queue_pair) const {
  const QueuePair* qp = find_queue_pair(source, destination, queue_pair);
  return qp == nullptr ? std::vector<Hop>{} : qp->hops;
}

std::int64_t FlowNetwork::link_bytes_sent(NodeId node, PortIndex port) const {
  const Topology& topology = routing_.topology();
  return links_[static_cast<std::size_t>(link_of(node, topology.port(node, port).cable))]
      .bytes_sent;
}

void FlowNetwork::sample() {
  const Time now = sim_.now();
  for (LinkState& link : links_) {
    settle_link(link);
    const auto sent = static_cast<std::int64_t>(link.data_bits / 8.0);
    if (sent == link.last_sampled_bytes && link.data_bps <= 0.0) continue;
    link.last_sampled_bytes = sent;
    tables_.port_samples.append(PortSampleRow{now.ps(), link.node, link.port, config_.data_class, 0,
                                              sent, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  }
  for (const QueuePair& qp : queue_pairs_) {
    if (qp.flow < 0) continue;
    tables_.flow_samples.append(
        FlowSampleRow{now.ps(), qp.id, static_cast<std::int64_t>(qp.rate_bps), 0});
  }
  sim_.schedule_in_phase<&FlowNetwork::sample>(now + *config_.sample_period, Phase::kObserve, this);
}

std::int64_t FlowNetwork::messages_in_flight() const {
  auto count = static_cast<std::int64_t>(in_flight_.size() - free_in_flight_.size());
  for (const QueuePair& qp : queue_pairs_) count += static_cast<std::int64_t>(qp.backlog.size());
  return count;
}

void FlowNetwork::finish() {
  for (const LinkState& link : links_) {
    if (link.bytes_sent == 0) continue;
    tables_.port_totals.append(PortTotalRow{link.node, link.port, config_.data_class,
                                            link.bytes_sent, link.packets_sent, 0, 0, 0, 0, 0, 0, 0,
                                            0, 0, 0, 0, 0});
  }
  for (const QueuePair& qp : queue_pairs_) {
    tables_.queue_pairs.append(
        QueuePairRow{qp.id, qp.source, qp.destination, qp.index, 0, 0, 0, 0, -1, 0});
  }
  tables_.flush();
}

}  // namespace lockstep
