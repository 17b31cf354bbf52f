// The `faults` list and the `defences` section (models/fault).
#pragma once

#include "models/fault/defences_config.hpp"
#include "models/fault/fault_config.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/schema.hpp"

namespace lockstep {

[[nodiscard]] Schema<FaultConfig> fault_schema();
[[nodiscard]] Schema<DefencesConfig> defences_schema();

// Each fault against the machine it runs on: targets that exist, a job for the faults that act
// on one, a fabric level that has what a fabric fault breaks.
void check_fault_targets(const Scenario& s, const Topology& topology,
                         const Schema<Scenario>::Checker& report);

}  // namespace lockstep
