// The `servers` section (GPU servers at the fabric's endpoints) and the `hosts` section (how each
// endpoint's data reaches its NIC and crosses the fabric).
#pragma once

#include "models/node/server_config.hpp"
#include "sim/scenario/schema.hpp"

namespace lockstep {

[[nodiscard]] Schema<ServersConfig> servers_schema();
[[nodiscard]] Schema<HostsConfig> hosts_schema();

}  // namespace lockstep
