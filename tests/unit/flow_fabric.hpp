// A flow-level network on a topology of its own, for tests that derive times on small fabrics.
#pragma once

#include <utility>

#include "memory_backend.hpp"
#include "models/transport/flow_network.hpp"

namespace lockstep::testing {

struct FlowFabric {
  explicit FlowFabric(Topology t) : topology(std::move(t)) {}
  Simulator sim;
  Topology topology;
  Routing routing{topology};
  MemoryBackend output;
  FlowNetwork network{sim, routing, FlowNetworkConfig{}, 1, output};
};

}  // namespace lockstep::testing
