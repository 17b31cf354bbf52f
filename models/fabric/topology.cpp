#include "models/fabric/topology.hpp"

#include <cassert>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <utility>

namespace lockstep {
namespace {

[[noreturn]] void reject(const std::string& message) { throw std::invalid_argument(message); }

std::string cable_label(std::size_t index) { return "cable " + std::to_string(index); }

}  // namespace

Duration delay_for_cable(double metres) {
  if (!std::isfinite(metres) || metres < 0) {
    reject("cable length must be a finite number of metres >= 0, got " + std::to_string(metres));
  }
  constexpr double kPsPerMetre = 5'000.0;
  return Duration::ps(std::llround(metres * kPsPerMetre));
}

void check_link_spec(const LinkSpec& spec, std::string_view what) {
  if (spec.rate.bps() <= 0) {
    reject(std::string(what) + ": rate must be positive, got " + std::to_string(spec.rate.bps()) +
           " bit/s");
  }
  if (spec.delay < Duration()) {
    reject(std::string(what) + ": delay must not be negative, got " +
           std::to_string(spec.delay.ps()) + " ps");
  }
}

Topology::Topology(std::int32_t endpoint_count, std::vector<SwitchSpec> switches,
                   std::vector<Cable> cables)
    : endpoint_count_(endpoint_count), switches_(std::move(switches)), cables_(std::move(cables)) {
  if (endpoint_count_ < 1) {
    reject("a topology needs at least one endpoint, got " + std::to_string(endpoint_count_));
  }
  // Ids are int32 (the packet's endpoint fields); count in 64 bits before narrowing.
  const std::int64_t nodes =
      std::int64_t{endpoint_count_} + static_cast<std::int64_t>(switches_.size());
  if (nodes > std::int64_t{std::numeric_limits<std::int32_t>::max()} ||
      cables_.size() > std::size_t{std::numeric_limits<std::int32_t>::max()}) {
    reject("topology too large: " + std::to_string(nodes) + " nodes and " +
           std::to_string(cables_.size()) + " cables (at most 2^31 - 1 each)");
  }

  std::set<std::string_view> names;
  for (std::size_t i = 0; i < switches_.size(); ++i) {
    const SwitchSpec& s = switches_[i];
    const std::string label = "switch " + std::to_string(i);
    if (s.name.empty()) reject(label + ": name must not be empty");
    if (!names.insert(s.name).second) reject(label + ": name \"" + s.name + "\" is already used");
    if (s.buffer < Bytes(0)) {
      reject(label + " (" + s.name + "): buffer must not be negative, got " +
             std::to_string(s.buffer.count()) + " B");
    }
  }

  std::vector<std::int64_t> degree(static_cast<std::size_t>(nodes), 0);
  for (std::size_t i = 0; i < cables_.size(); ++i) {
    const Cable& c = cables_[i];
    for (const NodeId end : {c.a, c.b}) {
      if (end < 0 || end >= nodes) {
        reject(cable_label(i) + ": node " + std::to_string(end) +
               " does not exist (endpoints are 0.." + std::to_string(endpoint_count_ - 1) +
               ", switches " + std::to_string(endpoint_count_) + ".." + std::to_string(nodes - 1) +
               ")");
      }
    }
    if (c.a == c.b) reject(cable_label(i) + ": joins node " + std::to_string(c.a) + " to itself");
    if (is_endpoint(c.a) && is_endpoint(c.b)) {
      reject(cable_label(i) + ": joins two endpoints (" + std::to_string(c.a) + " and " +
             std::to_string(c.b) + "); an endpoint connects to a switch");
    }
    check_link_spec(LinkSpec{c.rate, c.delay}, cable_label(i));
    ++degree[static_cast<std::size_t>(c.a)];
    ++degree[static_cast<std::size_t>(c.b)];
  }
  for (NodeId n = 0; n < nodes; ++n) {
    const std::int64_t d = degree[static_cast<std::size_t>(n)];
    if (is_endpoint(n) && d != 1) {
      reject("endpoint " + std::to_string(n) + " has " + std::to_string(d) +
             " cables; an endpoint has exactly one (give a multi-NIC server one endpoint per NIC)");
    }
    if (d > kMaxPortsPerNode) {
      reject("node " + std::to_string(n) + " has " + std::to_string(d) + " ports, more than " +
             std::to_string(kMaxPortsPerNode));
    }
  }

  // Ports in cable order: count, prefix-sum, then fill with a cursor per node.
  port_begin_.assign(static_cast<std::size_t>(nodes) + 1, 0);
  for (NodeId n = 0; n < nodes; ++n) {
    port_begin_[static_cast<std::size_t>(n) + 1] =
        port_begin_[static_cast<std::size_t>(n)] +
        static_cast<std::int32_t>(degree[static_cast<std::size_t>(n)]);
  }
  ports_.resize(2 * cables_.size());
  std::vector<std::int32_t> next(port_begin_.begin(), port_begin_.end() - 1);
  for (std::size_t i = 0; i < cables_.size(); ++i) {
    const Cable& c = cables_[i];
    const std::int32_t at_a = next[static_cast<std::size_t>(c.a)]++;
    const std::int32_t at_b = next[static_cast<std::size_t>(c.b)]++;
    const auto index_a = static_cast<PortIndex>(at_a - port_begin_[static_cast<std::size_t>(c.a)]);
    const auto index_b = static_cast<PortIndex>(at_b - port_begin_[static_cast<std::size_t>(c.b)]);
    const auto id = static_cast<CableId>(i);
    ports_[static_cast<std::size_t>(at_a)] = Port{id, c.b, index_b};
    ports_[static_cast<std::size_t>(at_b)] = Port{id, c.a, index_a};
  }
}

const SwitchSpec& Topology::switch_spec(NodeId node) const {
  assert(is_switch(node));
  return switches_[static_cast<std::size_t>(node - endpoint_count_)];
}

const Cable& Topology::cable(CableId id) const {
  assert(id >= 0 && id < cable_count());
  return cables_[static_cast<std::size_t>(id)];
}

std::span<const Port> Topology::ports(NodeId node) const {
  assert(node >= 0 && node < node_count());
  const auto begin = static_cast<std::size_t>(port_begin_[static_cast<std::size_t>(node)]);
  const auto end = static_cast<std::size_t>(port_begin_[static_cast<std::size_t>(node) + 1]);
  return std::span<const Port>(ports_).subspan(begin, end - begin);
}

const Port& Topology::port(NodeId node, PortIndex index) const {
  const std::span<const Port> all = ports(node);
  assert(index < all.size());
  return all[index];
}

PortIndex Topology::port_of_cable(NodeId node, CableId cable) const {
  const std::span<const Port> all = ports(node);
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].cable == cable) return static_cast<PortIndex>(i);
  }
  throw std::invalid_argument("cable " + std::to_string(cable) + " does not plug into node " +
                              std::to_string(node));
}

NodeId Topology::find_switch(std::string_view name) const {
  for (std::size_t i = 0; i < switches_.size(); ++i) {
    if (switches_[i].name == name) return endpoint_count_ + static_cast<NodeId>(i);
  }
  return -1;
}

NodeId Topology::find_node(std::string_view name) const {
  if (const NodeId node = find_switch(name); node >= 0) return node;
  const std::optional<std::int32_t> host = host_index(name);
  return host && *host < endpoint_count_ ? *host : -1;
}

CableId Topology::cable_between(NodeId a, NodeId b) const {
  for (std::size_t c = 0; c < cables_.size(); ++c) {
    if ((cables_[c].a == a && cables_[c].b == b) || (cables_[c].a == b && cables_[c].b == a)) {
      return static_cast<CableId>(c);
    }
  }
  return -1;
}

std::optional<std::int32_t> host_index(std::string_view name) {
  if (!name.starts_with("host") || name.size() == 4) return {};
  std::int32_t index = 0;
  const auto [end, error] = std::from_chars(name.data() + 4, name.data() + name.size(), index);
  if (error != std::errc() || end != name.data() + name.size() || name[4] == '-') return {};
  return index;
}

Topology build_explicit(std::int32_t host_count, std::vector<SwitchSpec> switches,
                        std::vector<Cable> cables) {
  return Topology(host_count, std::move(switches), std::move(cables));
}

}  // namespace lockstep
