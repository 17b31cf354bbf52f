// Compiled on purpose as part of a target that links lockstep_collective alone, which must fail:
// collectives drive any Network through its header and may not see the fabric's internals.
#include "models/collective/ring_collective.hpp"
#include "models/fabric/topology.hpp"

namespace lockstep {

std::int32_t fixture_endpoints(const Topology& topology) { return topology.endpoint_count(); }

}  // namespace lockstep
