// The `network` section: topology, switches (buffer, PFC, ECN) and the RDMA transport.
#pragma once

#include "models/transport/network_config.hpp"
#include "sim/scenario/schema.hpp"

namespace lockstep {

[[nodiscard]] Schema<NetworkConfig> network_schema();

}  // namespace lockstep
