// The control for collective_includes_fabric.cpp: the same kind of target, including only what
// lockstep_collective links, builds.
#include "models/collective/ring_collective.hpp"
#include "models/network/network.hpp"

namespace lockstep {

std::int32_t fixture_endpoints(const Network& network) { return network.endpoint_count(); }

}  // namespace lockstep
