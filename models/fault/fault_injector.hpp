// Plays a scenario's faults (fault_config.hpp) through the models they break, at their times or
// steps, and records each in the `faults` table (analysis/hdf5_schema.md) with its target, start
// and end:
// - GPUs: a thermal clock factor (falling over its onset), ECC retries and per-step stragglers
//   compose as one clock factor per GPU (the product of what each leaves); an Xid stops the GPU.
//   Faults name the cluster's GPU, or the job rank, resolved to its GPU when the fault begins.
// - The fabric (FabricControl): cables down, flapping or degraded; a NIC storming its switch with
//   pauses; a slow receiver as a host path that drains slowly. The PFC watchdogs of `defences`
//   end a storm `after` its start, recorded in the `defences` table.
// - The file system: its rates cut by the slowdown.
// - Random failures: each node fails at the rate given, its times drawn from a seeded stream; each
//   failure's cause is drawn from the 419 unexpected interruptions of Llama 3's pre-training
//   (reference.md section 7) and acts as that cause would: a GPU cause (faulty GPU, HBM, SRAM,
//   GSP, thermal interface, silent data corruption) or a hung process (software bug, NCCL
//   watchdog) stops one GPU; a host cause (maintenance, power, CPU, memory, SSD, chassis, IO board,
//   a dependency) stops the node's GPUs; a network cause (switch or cable, NIC) takes one of the
//   node's NIC cables down for good.
// Misconfigurations present from the start (a NIC on the wrong NUMA node, GPUDirect off, NCCL on
// sockets) change the cluster before it is built (apply_to_hosts) and are recorded at time zero.
//
// Left out: ECC retries slow memory-bound kernels through their clock like compute (the GPU model
// has one clock), and a switch PFC watchdog stops the storm's effect rather than dropping what
// the stuck NIC does not take. Units: Time, Duration, BitRate.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/cluster/cluster.hpp"
#include "models/fault/defences_config.hpp"
#include "models/fault/fault_config.hpp"
#include "models/training/defence_log.hpp"
#include "models/training/training_job.hpp"
#include "sim/core/random.hpp"
#include "sim/core/simulator.hpp"
#include "sim/core/table.hpp"

namespace lockstep {

struct FaultRow {
  FixedText<16> kind;
  FixedText<48> target;  // "gpu 77", "rank 5 (gpu 13)", "cable leaf0-spine1", "nic 12"
  std::int64_t start_ps;
  std::int64_t end_ps;    // -1: to the end of the run
  FixedText<120> detail;  // the fault's figures: clock, slowdown, rate, cause
};

[[nodiscard]] TableLayout fault_layout();

// The hosts the cluster is built with, once the faults present from the start are applied.
[[nodiscard]] HostsConfig apply_to_hosts(const std::vector<FaultConfig>& faults, HostsConfig hosts,
                                         std::int32_t gpus_per_node);

class FaultInjector {
 public:
  // `job` may be null (faults of the fabric alone); faults of GPUs then have nothing to act on
  // (the scenario's checks refuse them). The cluster, job and log must outlive the injector.
  FaultInjector(Simulator& sim, std::vector<FaultConfig> faults, const DefencesConfig& defences,
                Cluster& cluster, TrainingJob* job, DefenceLog& log, RecordBackend& output,
                std::uint64_t seed);
  ~FaultInjector();
  FaultInjector(const FaultInjector&) = delete;
  FaultInjector& operator=(const FaultInjector&) = delete;

  // Schedules every fault; records those present from the start.
  void start();
  [[nodiscard]] std::int64_t faults_recorded() const;
  void flush();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep
