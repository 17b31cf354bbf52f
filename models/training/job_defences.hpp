// The defences a cluster runs around a training job (scenario key `defences`, scenarios/README.md):
// the collective watchdog, health checks, the straggler detector, and restarting from the last
// checkpoint onto healthy or spare nodes. Defaults are PyTorch's and the published practice cited
// at each. Units: Duration.
#pragma once

#include <cstdint>
#include <optional>

#include "sim/core/time.hpp"

namespace lockstep {

// PyTorch's ProcessGroupNCCL watchdog: a collective not finished `timeout` after a rank entered it
// aborts the communicator and the process; its thread polls every `poll` (reference.md section 7).
// Off, a collective that cannot finish hangs the job.
struct WatchdogConfig {
  bool enabled = true;
  Duration timeout = Duration::s(600);
  Duration poll = Duration::ms(100);
};

// A node health check (DCGM-style) every `interval` that finds a GPU fallen off the bus (an Xid)
// and drains its node: the job is stopped at once rather than at the watchdog's timeout, and
// restarts without that node. A drained node (by this check or the straggler detector) returns to
// the idle pool `repair` later (its GPUs swapped or reset), or never.
struct HealthCheckConfig {
  bool enabled = false;
  Duration interval = Duration::s(60);
  std::optional<Duration> repair;
};

// Per-rank step-time outliers (MegaScale, ByteDance's straggler study, reference.md section 7):
// over the last `window` steps, a rank whose own work (its kernels and its share of the
// transfers, not its waits for others) exceeds its pipeline stage's median rank's by more than
// `threshold` is a straggler, and its node is drained (the job restarts without it).
struct StragglerDetectorConfig {
  bool enabled = false;
  std::int64_t window = 5;
  double threshold = 0.10;
};

// After a crash or a drain the job restarts from its last complete checkpoint, `delay` later
// (rescheduling, process start, NCCL init, checkpoint load), onto its nodes less the drained ones,
// each replaced by an idle node of the cluster (its hot spares).
struct RestartConfig {
  bool enabled = false;
  Duration delay = Duration::s(300);
  // torchrun's --max-restarts: a job restarted this often ends at its next stop (a job restarted
  // onto a lost GPU that no health check drains would otherwise crash and restart for ever).
  std::int64_t max_restarts = 100;
};

struct JobDefences {
  WatchdogConfig watchdog;
  HealthCheckConfig health_check;
  StragglerDetectorConfig straggler_detector;
  RestartConfig restart;
};

}  // namespace lockstep
