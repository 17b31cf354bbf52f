// The `traffic` section: flows for fabric studies, listed or generated.
#pragma once

#include "models/traffic/traffic_config.hpp"
#include "sim/scenario/schema.hpp"

namespace lockstep {

[[nodiscard]] Schema<TrafficConfig> traffic_schema();

}  // namespace lockstep
