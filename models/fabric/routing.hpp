// Shortest-path ECMP routing over a Topology, computed once at set-up and read per packet per hop.
// For every switch and every destination endpoint it holds the egress ports that lie on a
// minimum-hop path (the ECMP set); a flow picks one by hashing its entropy with the switch id, so
// one flow keeps one path (per-flow ECMP, as in the shared benchmarks) and consecutive switches
// choose independently (no hash polarization). It leaves out weighted ECMP, adaptive routing,
// packet spraying and flowlet switching, and paths longer than the minimum. Failed cables are
// handled by building a new Routing with them excluded, which new flows then use; nothing is
// repaired in place. Units: none (node ids, port indices, hop counts). Sources: hop-count BFS per
// destination (Boost.Graph, only in routing.cpp); ECMP per-flow hashing as in RFC 2992.
//
// Layout and cost: endpoints behind one edge switch share next hops at every other switch, so the
// table has one row per switch and one column per edge switch (a switch with endpoints attached),
// and the edge switch itself reaches an endpoint by its direct port. Each cell is (offset, size)
// into one pool of port indices in which identical sets are stored once: on a fat tree every ToR's
// "up" set for remote destinations is one pool entry. A lookup is two array reads, a hash and a
// multiply, with no allocation.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "models/fabric/topology.hpp"
#include "sim/core/hash.hpp"

namespace lockstep {

// One step of a path: the flow leaves `node` through its port `port`, onto cable `cable`.
struct Hop {
  NodeId node = 0;
  PortIndex port = 0;
  CableId cable = 0;
};

// The least time a packet of `packet` wire bytes takes along `hops` once it has left the first:
// every cable's delay, and its serialization again at every hop after the first.
[[nodiscard]] Duration path_latency(const Topology& topology, const std::vector<Hop>& hops,
                                    Bytes packet);

class Routing final {
 public:
  static constexpr PortIndex kNoPort = 0xffff;

  // `failed_cables` are left out of every path (a link failure as new flows see it). Throws
  // std::invalid_argument for a cable id that does not exist. Keeps a reference to `topology`,
  // which must outlive the Routing.
  explicit Routing(const Topology& topology, std::span<const CableId> failed_cables = {});
  explicit Routing(Topology&& topology, std::span<const CableId> failed_cables = {}) = delete;

  [[nodiscard]] const Topology& topology() const { return *topology_; }
  [[nodiscard]] bool cable_up(CableId cable) const {
    return cable_up_[static_cast<std::size_t>(cable)] != 0;
  }

  // The ports of `node` (an endpoint or a switch) that lie on a shortest path to the endpoint
  // `destination`, in port order. Empty when the destination is unreachable from there over
  // working cables, or is `node` itself. An endpoint's only candidate is its port 0.
  [[nodiscard]] std::span<const PortIndex> next_ports(NodeId node, NodeId destination) const;

  // One port of next_ports, the same for every packet of a flow: chosen by a hash of
  // (flow_entropy, node). `flow_entropy` is opaque (the transport's per-flow value, e.g. from
  // source, destination and queue pair) and is mixed again here, so it needs no pre-hashing.
  // kNoPort when next_ports is empty.
  [[nodiscard]] PortIndex choose_port(NodeId node, NodeId destination,
                                      std::uint64_t flow_entropy) const;

  // The hops a flow takes from endpoint `source` to endpoint `destination`, first hop at the source
  // NIC; the destination is the peer of the last hop. Empty when unreachable or source ==
  // destination. Allocates: for set-up, recording and the flow backend, not per packet.
  [[nodiscard]] std::vector<Hop> path(NodeId source, NodeId destination,
                                      std::uint64_t flow_entropy) const;

  [[nodiscard]] bool reachable(NodeId source, NodeId destination) const {
    return !next_ports(source, destination).empty();
  }

  // Bytes held by the run-time tables (what a simulation keeps after set-up).
  [[nodiscard]] std::size_t table_bytes() const;

 private:
  struct EcmpSet {
    std::uint32_t offset = 0;  // into pool_
    std::uint16_t size = 0;
  };
  struct EndpointRoute {
    std::int32_t switch_row = 0;  // its edge switch, as node id - endpoint count
    std::int32_t column = 0;      // its edge switch's column in sets_
    PortIndex switch_port = 0;    // the edge switch's port facing it
    bool up = false;              // its cable works
  };

  [[nodiscard]] std::span<const PortIndex> set_at(std::int32_t row, std::int32_t column) const {
    const EcmpSet s = sets_[static_cast<std::size_t>(row) * static_cast<std::size_t>(columns_) +
                            static_cast<std::size_t>(column)];
    return {pool_.data() + s.offset, s.size};
  }

  const Topology* topology_;
  std::int32_t endpoint_count_ = 0;
  std::int32_t node_count_ = 0;
  std::int32_t columns_ = 0;  // edge switches
  std::vector<EndpointRoute> endpoints_;
  std::vector<EcmpSet> sets_;  // row (switch) major
  // pool_[0] is port 0, the single choice of every endpoint.
  std::vector<PortIndex> pool_;
  std::vector<std::uint8_t> cable_up_;
};

inline std::span<const PortIndex> Routing::next_ports(NodeId node, NodeId destination) const {
  assert(node >= 0 && node < node_count_);
  assert(destination >= 0 && destination < endpoint_count_);
  const EndpointRoute& to = endpoints_[static_cast<std::size_t>(destination)];
  if (!to.up || node == destination) return {};
  if (node < endpoint_count_) {
    const EndpointRoute& from = endpoints_[static_cast<std::size_t>(node)];
    const bool onward =
        from.switch_row == to.switch_row || !set_at(from.switch_row, to.column).empty();
    if (!from.up || !onward) return {};
    return {pool_.data(), 1};
  }
  const std::int32_t row = node - endpoint_count_;
  if (row == to.switch_row) return {&to.switch_port, 1};
  return set_at(row, to.column);
}

inline PortIndex Routing::choose_port(NodeId node, NodeId destination,
                                      std::uint64_t flow_entropy) const {
  const std::span<const PortIndex> ports = next_ports(node, destination);
  if (ports.empty()) return kNoPort;
  if (ports.size() == 1) return ports[0];
  // Seeding with the node makes each switch's choice an independent function of the flow.
  // Lemire's multiply-shift maps the hash onto [0, size) without a division.
  const std::uint64_t h = hash_combine(flow_entropy, static_cast<std::uint64_t>(node));
  __extension__ using Wide = unsigned __int128;
  return ports[static_cast<std::size_t>((Wide{h} * ports.size()) >> 64)];
}

}  // namespace lockstep
