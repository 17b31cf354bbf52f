// A rail-optimized fabric of multi-NIC GPU servers, as in NVIDIA's DGX SuperPOD reference
// architecture and Wang et al., "Rail-only: A Low-Cost High-Performance Network for Training LLMs
// with Trillion Parameters" (HOTI 2024), section 2: NIC i of every server in a rail group plugs
// into rail switch i of that group, so same-rank GPUs of different servers are one switch apart;
// rail switches are joined by a spine tier. Each NIC is its own endpoint (endpoints are
// single-homed). It leaves out the NVLink domain inside a server (models/node/), which is how real
// clusters carry cross-rail traffic when there are no spines, and multi-plane spines. Units as
// topology.hpp.
//
// Numbering: NIC i of server n is endpoint n * nics_per_server + i. Server n is in rail group
// floor(n / servers_per_rail_group); the last group may be partial. Rail switch r = g *
// nics_per_server + i (group g, rail i) is node H + r ("rail<r>"); spine s is node H + R + s
// ("spine<s>"), R being the number of rail switches.
// Cable and port order: NIC cables (endpoint order), then for each rail switch r its uplinks u = 0
// .. uplinks_per_rail_switch-1 to spine u mod spines. So a rail switch has its NICs at the first
// ports in server order and uplink u after them; a spine has its cables in rail-switch order. With
// no spines, NICs on different rails (or in different rail groups) have no network path: Routing
// reports them unreachable.
#pragma once

#include <cstdint>

#include "models/fabric/topology.hpp"
#include "sim/core/bytes.hpp"

namespace lockstep {

struct RailOptimizedSpec {
  std::int32_t servers = 0;                  // >= 1
  std::int32_t nics_per_server = 0;          // >= 1: the number of rails
  std::int32_t servers_per_rail_group = 0;   // 0: one group holding every server
  std::int32_t spines = 0;                   // >= 0
  std::int32_t uplinks_per_rail_switch = 0;  // 0 without spines, else >= spines (round robin)
  LinkSpec nic_link;                         // NIC to rail switch
  LinkSpec fabric_link;                      // rail switch to spine
  Bytes switch_buffer;
};

// Throws std::invalid_argument naming the first bad field.
[[nodiscard]] Topology build_rail_optimized(const RailOptimizedSpec& spec);

}  // namespace lockstep
