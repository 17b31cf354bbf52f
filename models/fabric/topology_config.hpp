// The topology a scenario asks for, as plain data, and the one function that builds it. Link rate,
// delay and switch buffer are given once and apply everywhere unless a builder-specific key
// overrides them (leaf-spine and rail-optimized uplinks, explicit links and switches).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/fabric/topology.hpp"

namespace lockstep {

enum class TopologyKind { kFatTree, kLeafSpine, kRailOptimized, kExplicit };

struct FatTreeConfig {
  std::int64_t k = 8;
};

struct LeafSpineConfig {
  std::int64_t leaves = 2;
  std::int64_t spines = 2;
  std::int64_t hosts_per_leaf = 4;
  std::int64_t uplinks_per_leaf = 2;
  std::optional<BitRate> uplink_rate;  // absent: the topology's link rate
};

struct RailOptimizedConfig {
  std::int64_t servers = 2;
  std::int64_t nics_per_server = 8;
  std::int64_t servers_per_rail_group = 0;
  std::int64_t spines = 0;
  std::int64_t uplinks_per_rail_switch = 0;
  std::optional<BitRate> uplink_rate;
};

struct ExplicitSwitchConfig {
  std::string name;
  std::optional<Bytes> buffer;  // absent: the topology's switch buffer
};

// Ends are switch names or host<i> for endpoint i.
struct ExplicitLinkConfig {
  std::string a;
  std::string b;
  std::optional<BitRate> rate;
  std::optional<Duration> delay;
};

struct ExplicitTopologyConfig {
  std::int64_t hosts = 2;
  std::vector<ExplicitSwitchConfig> switches;
  std::vector<ExplicitLinkConfig> links;
};

struct TopologyConfig {
  TopologyKind kind = TopologyKind::kFatTree;
  BitRate link_rate;
  Duration link_delay;
  Bytes switch_buffer;
  FatTreeConfig fat_tree;
  LeafSpineConfig leaf_spine;
  RailOptimizedConfig rail_optimized;
  ExplicitTopologyConfig explicit_topology;
};

// Throws std::invalid_argument naming the problem (a builder's own message, or an unknown node
// name).
[[nodiscard]] Topology build_topology(const TopologyConfig& config);

}  // namespace lockstep
