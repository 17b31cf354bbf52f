// The wiring of a cluster network as plain data, shared by the packet and the flow backends: which
// endpoints (host NICs) and switches exist, which full-duplex cables join them, and in what order
// each node sees its ports. It leaves out everything dynamic (queues, pause state, failures in
// progress: see routing.hpp for routing around failed cables) and switch internals other than the
// shared buffer size. Units: rates in bit/s (BitRate), propagation delays in ps (Duration), buffers
// in bytes. Propagation is 5 ns per metre of fibre or copper (reference.md, "Switches and links").
//
// Numbering: endpoints are nodes 0..H-1, switches H..H+S-1, so an endpoint id is also the index of
// its NIC in per-endpoint tables and the packet's source/destination field.
//
// Port order: cables are numbered in the order they were given, and each node's ports follow the
// cable order: a node's port i is its i-th cable in the cable list. A cable between a and b is a
// port at a and a port at b (twice at one node is impossible: self-loops are rejected). The
// builders list cables host cables first in endpoint order, then tier by tier upward, so a switch's
// ports are its down-links followed by its up-links (fat_tree.hpp, leaf_spine.hpp and
// rail_optimized.hpp give the exact order).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/bit_rate.hpp"
#include "sim/core/bytes.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

// Signed like the packet's endpoint fields, so a node id travels in a packet without a cast.
using NodeId = std::int32_t;
using CableId = std::int32_t;
// Ports are numbered per node; 16 bits as in the packet's ingress_port. 0xffff is kept free as
// "no port" (Routing::kNoPort), so a node has at most 65,535 ports.
using PortIndex = std::uint16_t;

inline constexpr std::int64_t kMaxPortsPerNode = 0xffff;

struct LinkSpec {
  BitRate rate;
  Duration delay;  // one-way propagation
};

// Propagation over `metres` of cable at 5 ns/m (5 ps per millimetre), rounded to the nearest
// picosecond, so whole millimetres are exact. Throws std::invalid_argument for a negative or
// non-finite length.
[[nodiscard]] Duration delay_for_cable(double metres);

// Throws std::invalid_argument("<what>: ...") unless the rate is positive and the delay not
// negative. The builders call it so that an error names the argument rather than a cable number.
void check_link_spec(const LinkSpec& spec, std::string_view what);

struct SwitchSpec {
  std::string name;  // unique, e.g. "tor3"; names the switch in output and errors
  Bytes buffer;      // shared packet buffer
};

// A full-duplex cable: each direction carries `rate` after `delay`.
struct Cable {
  NodeId a = 0;
  NodeId b = 0;
  BitRate rate;
  Duration delay;
};

// One end of a cable as seen from the node that owns the port.
struct Port {
  CableId cable = 0;
  NodeId peer = 0;
  PortIndex peer_port = 0;  // the same cable's port index at the peer
};

class Topology final {
 public:
  // Validates everything and throws std::invalid_argument naming the first problem: a cable to an
  // unknown node or to itself, a cable between two endpoints, a non-positive rate, a negative
  // delay, an endpoint without exactly one cable (endpoints are single-homed: a multi-NIC server is
  // one endpoint per NIC), an empty or repeated switch name, a negative buffer, or a node with more
  // than 65,535 ports.
  Topology(std::int32_t endpoint_count, std::vector<SwitchSpec> switches,
           std::vector<Cable> cables);

  [[nodiscard]] std::int32_t endpoint_count() const { return endpoint_count_; }
  [[nodiscard]] std::int32_t switch_count() const {
    return static_cast<std::int32_t>(switches_.size());
  }
  [[nodiscard]] std::int32_t node_count() const { return endpoint_count_ + switch_count(); }
  [[nodiscard]] std::int32_t cable_count() const {
    return static_cast<std::int32_t>(cables_.size());
  }

  [[nodiscard]] bool is_endpoint(NodeId node) const { return node >= 0 && node < endpoint_count_; }
  [[nodiscard]] bool is_switch(NodeId node) const {
    return node >= endpoint_count_ && node < node_count();
  }

  // `node` must be a switch.
  [[nodiscard]] const SwitchSpec& switch_spec(NodeId node) const;
  [[nodiscard]] const Cable& cable(CableId id) const;
  [[nodiscard]] std::span<const Cable> cables() const { return cables_; }
  [[nodiscard]] std::span<const Port> ports(NodeId node) const;
  [[nodiscard]] const Port& port(NodeId node, PortIndex index) const;
  // The port of `node` that `cable` plugs into; throws std::invalid_argument if it plugs into none.
  [[nodiscard]] PortIndex port_of_cable(NodeId node, CableId cable) const;

  // The edge switch of a (single-homed) endpoint, and the port there that faces it.
  [[nodiscard]] NodeId host_switch(NodeId endpoint) const { return ports(endpoint)[0].peer; }
  [[nodiscard]] PortIndex host_switch_port(NodeId endpoint) const {
    return ports(endpoint)[0].peer_port;
  }
  // The rate of the first endpoint's cable: the NIC rate the transport's defaults are scaled to.
  [[nodiscard]] BitRate nic_rate() const { return cable(ports(0)[0].cable).rate; }

  // The switch with this name, or -1. A linear scan: for set-up and tests, not the event loop.
  [[nodiscard]] NodeId find_switch(std::string_view name) const;
  // A switch by name, else an endpoint as host<i> (as explicit topologies resolve link ends), or
  // -1.
  [[nodiscard]] NodeId find_node(std::string_view name) const;
  // The first cable (in cable order) joining the two nodes, either way round, or -1.
  [[nodiscard]] CableId cable_between(NodeId a, NodeId b) const;

 private:
  std::int32_t endpoint_count_ = 0;
  std::vector<SwitchSpec> switches_;
  std::vector<Cable> cables_;
  // Ports of node n are ports_[port_begin_[n] .. port_begin_[n + 1]).
  std::vector<std::int32_t> port_begin_;
  std::vector<Port> ports_;
};

// i for a name "host<i>" (decimal digits only), so that scenarios can name endpoints; else empty.
[[nodiscard]] std::optional<std::int32_t> host_index(std::string_view name);

// A topology given cable by cable (the scenario's `explicit` form). Nodes 0..host_count-1 are the
// endpoints and host_count + i is switches[i]. Throws std::invalid_argument as Topology does.
[[nodiscard]] Topology build_explicit(std::int32_t host_count, std::vector<SwitchSpec> switches,
                                      std::vector<Cable> cables);

}  // namespace lockstep
