#include "models/fabric/topology_config.hpp"

#include <stdexcept>

#include "models/fabric/fat_tree.hpp"
#include "models/fabric/leaf_spine.hpp"
#include "models/fabric/rail_optimized.hpp"

namespace lockstep {
namespace {

std::int32_t narrow(std::int64_t value, const char* what) {
  if (value < 0 || value > 1'000'000) {
    throw std::invalid_argument(std::string(what) + " " + std::to_string(value) +
                                " is out of range");
  }
  return static_cast<std::int32_t>(value);
}

Topology build_explicit_topology(const TopologyConfig& config) {
  const ExplicitTopologyConfig& e = config.explicit_topology;
  const std::int32_t hosts = narrow(e.hosts, "hosts");
  std::vector<SwitchSpec> switches;
  for (const ExplicitSwitchConfig& s : e.switches) {
    switches.push_back(SwitchSpec{s.name, s.buffer.value_or(config.switch_buffer)});
  }
  auto node_of = [&](const std::string& name) -> NodeId {
    for (std::size_t i = 0; i < switches.size(); ++i) {
      if (switches[i].name == name) return hosts + static_cast<NodeId>(i);
    }
    const std::int32_t index = host_index(name).value_or(-1);
    if (index < 0 || index >= hosts) {
      throw std::invalid_argument("link end '" + name + "' is neither a switch nor host0..host" +
                                  std::to_string(hosts - 1));
    }
    return index;
  };
  std::vector<Cable> cables;
  for (const ExplicitLinkConfig& l : e.links) {
    cables.push_back(Cable{node_of(l.a), node_of(l.b), l.rate.value_or(config.link_rate),
                           l.delay.value_or(config.link_delay)});
  }
  return build_explicit(hosts, std::move(switches), std::move(cables));
}

}  // namespace

Topology build_topology(const TopologyConfig& config) {
  const LinkSpec link{config.link_rate, config.link_delay};
  switch (config.kind) {
    case TopologyKind::kFatTree:
      return build_fat_tree(narrow(config.fat_tree.k, "k"), link, config.switch_buffer);
    case TopologyKind::kLeafSpine: {
      const LeafSpineConfig& c = config.leaf_spine;
      LeafSpineSpec spec;
      spec.leaves = narrow(c.leaves, "leaves");
      spec.spines = narrow(c.spines, "spines");
      spec.hosts_per_leaf = narrow(c.hosts_per_leaf, "hosts_per_leaf");
      spec.uplinks_per_leaf = narrow(c.uplinks_per_leaf, "uplinks_per_leaf");
      spec.host_link = link;
      spec.fabric_link = LinkSpec{c.uplink_rate.value_or(config.link_rate), config.link_delay};
      spec.switch_buffer = config.switch_buffer;
      return build_leaf_spine(spec);
    }
    case TopologyKind::kRailOptimized: {
      const RailOptimizedConfig& c = config.rail_optimized;
      RailOptimizedSpec spec;
      spec.servers = narrow(c.servers, "servers");
      spec.nics_per_server = narrow(c.nics_per_server, "nics_per_server");
      spec.servers_per_rail_group = narrow(c.servers_per_rail_group, "servers_per_rail_group");
      spec.spines = narrow(c.spines, "spines");
      spec.uplinks_per_rail_switch = narrow(c.uplinks_per_rail_switch, "uplinks_per_rail_switch");
      spec.nic_link = link;
      spec.fabric_link = LinkSpec{c.uplink_rate.value_or(config.link_rate), config.link_delay};
      spec.switch_buffer = config.switch_buffer;
      return build_rail_optimized(spec);
    }
    case TopologyKind::kExplicit:
      return build_explicit_topology(config);
  }
  throw std::logic_error("unknown topology kind");
}

}  // namespace lockstep
