#include "models/transport/network_tables.hpp"

#include <string>

namespace lockstep {

TableLayout message_layout() {
  using Row = MessageRow;
  return layout<Row>(
      "messages",
      {column("message", &Row::message), column("flow", &Row::flow), column("source", &Row::source),
       column("destination", &Row::destination), column("bytes", &Row::bytes),
       column("submitted_ps", &Row::submitted_ps), column("first_sent_ps", &Row::first_sent_ps),
       column("delivered_ps", &Row::delivered_ps), column("acknowledged_ps", &Row::acknowledged_ps),
       column("hops", &Row::hops), column("path", &Row::path)});
}

TableLayout port_layout() {
  using Row = PortRow;
  return layout<Row>(
      "ports", {column("node", &Row::node), column("port", &Row::port), column("peer", &Row::peer),
                column("peer_port", &Row::peer_port), column("rate_bps", &Row::rate_bps),
                column("delay_ps", &Row::delay_ps)});
}

TableLayout port_sample_layout() {
  using Row = PortSampleRow;
  return layout<Row>(
      "port_samples",
      {column("time_ps", &Row::time_ps), column("node", &Row::node), column("port", &Row::port),
       column("traffic_class", &Row::traffic_class), column("queue_bytes", &Row::queue_bytes),
       column("bytes_sent", &Row::bytes_sent), column("ecn_marked", &Row::ecn_marked),
       column("pauses_sent", &Row::pauses_sent), column("pauses_received", &Row::pauses_received),
       column("paused_ps", &Row::paused_ps), column("dropped_packets", &Row::dropped_packets),
       column("xoff_sent", &Row::xoff_sent), column("xoff_refreshed", &Row::xoff_refreshed),
       column("xon_sent", &Row::xon_sent), column("resent_packets", &Row::resent_packets)});
}

TableLayout port_total_layout() {
  using Row = PortTotalRow;
  return layout<Row>(
      "port_totals",
      {column("node", &Row::node), column("port", &Row::port),
       column("traffic_class", &Row::traffic_class), column("bytes_sent", &Row::bytes_sent),
       column("packets_sent", &Row::packets_sent), column("max_queue_bytes", &Row::max_queue_bytes),
       column("ecn_marked", &Row::ecn_marked), column("pauses_sent", &Row::pauses_sent),
       column("pauses_received", &Row::pauses_received), column("paused_ps", &Row::paused_ps),
       column("dropped_packets", &Row::dropped_packets),
       column("dropped_bytes", &Row::dropped_bytes), column("xoff_sent", &Row::xoff_sent),
       column("xoff_refreshed", &Row::xoff_refreshed), column("xon_sent", &Row::xon_sent),
       column("resent_packets", &Row::resent_packets), column("resent_bytes", &Row::resent_bytes)});
}

TableLayout flow_sample_layout() {
  using Row = FlowSampleRow;
  return layout<Row>("flow_samples", {column("time_ps", &Row::time_ps), column("flow", &Row::flow),
                                      column("rate_bps", &Row::rate_bps),
                                      column("cnps_received", &Row::cnps_received)});
}

TableLayout queue_pair_layout() {
  using Row = QueuePairRow;
  return layout<Row>(
      "queue_pairs",
      {column("flow", &Row::flow), column("source", &Row::source),
       column("destination", &Row::destination), column("queue_pair", &Row::queue_pair),
       column("resent_packets", &Row::resent_packets),
       column("resent_payload_bytes", &Row::resent_payload_bytes),
       column("timeouts", &Row::timeouts), column("cnps_received", &Row::cnps_received),
       column("failed_ps", &Row::failed_ps), column("failed_messages", &Row::failed_messages)});
}

FixedText<96> path_text(const std::vector<Hop>& hops, NodeId destination) {
  std::string text;
  for (const Hop& hop : hops) text += std::to_string(hop.node) + ">";
  return FixedText<96>(text + std::to_string(destination));
}

void record_wiring(const Topology& topology, Table<PortRow>& ports) {
  for (NodeId n = 0; n < topology.node_count(); ++n) {
    const std::span<const Port> node_ports = topology.ports(n);
    for (std::size_t i = 0; i < node_ports.size(); ++i) {
      const Cable& cable = topology.cable(node_ports[i].cable);
      ports.append(PortRow{n, static_cast<std::int64_t>(i), node_ports[i].peer,
                           node_ports[i].peer_port, cable.rate.bps(), cable.delay.ps()});
    }
  }
}

}  // namespace lockstep
