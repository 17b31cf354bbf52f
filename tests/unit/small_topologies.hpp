// The small fabrics the end-to-end tests derive times on by hand: every link 100 Gb/s and 1 us,
// every switch with a 32 MB buffer.
#pragma once

#include <cstdint>
#include <vector>

#include "models/fabric/topology.hpp"

namespace lockstep::testing {

inline constexpr BitRate kRate = BitRate::gbps(100);
inline constexpr Duration kDelay = Duration::us(1);

// Every endpoint on one switch, named "sw" (node `hosts`): a non-blocking fabric.
inline Topology star(std::int32_t hosts) {
  std::vector<Cable> cables;
  for (NodeId h = 0; h < hosts; ++h) cables.push_back({h, hosts, kRate, kDelay});
  return build_explicit(hosts, {{"sw", Bytes(32'000'000)}}, cables);
}

// host0 - sw0 - sw1 - host1.
inline Topology chain() {
  return build_explicit(2, {{"sw0", Bytes(32'000'000)}, {"sw1", Bytes(32'000'000)}},
                        {{0, 2, kRate, kDelay}, {2, 3, kRate, kDelay}, {3, 1, kRate, kDelay}});
}

}  // namespace lockstep::testing
