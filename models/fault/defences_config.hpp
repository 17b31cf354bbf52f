// What a scenario's `defences` section says (scenarios/README.md): the job's defences
// (job_defences.hpp) and the fabric's PFC watchdogs. Units: Duration.
#pragma once

#include "models/training/job_defences.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

// A PFC watchdog. On the NIC (reference.md section 6, Guo et al.): a NIC whose receive pipeline has
// been stuck for `after` stops sending pause frames. On the switch (Broadcom/Arista/Mellanox
// "PFC watchdog"): a port held paused for `after` stops honouring its peer's pauses.
struct PfcWatchdogConfig {
  bool enabled = false;
  Duration after = Duration::ms(100);
};

struct DefencesConfig {
  WatchdogConfig watchdog;
  HealthCheckConfig health_check;
  StragglerDetectorConfig straggler_detector;
  RestartConfig restart;
  PfcWatchdogConfig nic_pfc_watchdog;
  PfcWatchdogConfig switch_pfc_watchdog;

  [[nodiscard]] JobDefences job() const {
    return JobDefences{watchdog, health_check, straggler_detector, restart};
  }
};

}  // namespace lockstep
