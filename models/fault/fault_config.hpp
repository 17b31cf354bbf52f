// What a scenario's `faults` list says (scenarios/README.md): each entry a kind of fault, the part
// it breaks (a GPU, a job rank, a node, a NIC, a cable, the file system) and when (a time, or the
// start of a step). One struct carries every kind's parameters; which of them a kind needs is
// checked when the scenario is read (fault_rules.hpp). Units: Duration, BitRate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/bit_rate.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

enum class FaultKind : std::uint8_t {
  kThermal,         // the SM clock drops to `clock` (over `onset`), for `duration` or for good
  kEcc,             // ECC retries: the GPU loses `slowdown` of its throughput
  kXid,             // the GPU stops: its kernels and its collectives never finish
  kStragglers,      // each step, with `probability`, the GPU runs `slowdown` slower for that step
  kLinkDown,        // the cable fails (for `duration`, or for good)
  kLinkFlap,        // the cable fails for `down`, works for `up`, `flaps` times
  kLinkDegraded,    // the cable runs at `rate`
  kPfcStorm,        // the NIC keeps pausing its switch
  kSlowReceiver,    // the NIC's host path drains at `rate`
  kNicNuma,         // the NIC sits on the other CPU socket: no GPUDirect (from the start)
  kGpuDirectOff,    // the node's NICs are reached through host memory (from the start)
  kNcclSocket,      // NCCL on sockets over one interface of the node at `rate` (from the start)
  kSlowStorage,     // the file system delivers `slowdown` less
  kRandomFailures,  // failures per 1000 node-days on every node, causes as Llama 3 saw them
};

[[nodiscard]] std::string_view fault_kind_name(FaultKind kind);

struct FaultConfig {
  FaultKind kind = FaultKind::kThermal;
  // The target: one of these, as the kind takes.
  std::optional<std::int32_t> gpu;   // the cluster's GPU (its rank on the network)
  std::optional<std::int32_t> rank;  // the job's rank, whatever GPU it was placed on
  std::optional<std::int32_t> node;
  std::optional<std::int32_t> nic;  // the NIC of that GPU (one NIC per GPU)
  std::optional<std::string> a, b;  // a cable: its two ends, as in network.link_events
  // When: from the start of the run, or when the job's step begins; neither means from the start.
  std::optional<Duration> at;
  std::optional<std::int64_t> step;
  std::optional<Duration> duration;  // none: until the end of the run
  // What.
  std::optional<double> clock;               // thermal: of the full clock, in (0, 1]
  std::optional<Duration> onset;             // thermal: how long the clock takes to fall
  std::optional<double> slowdown;            // ecc, stragglers, slow_storage: share lost, in [0, 1)
  std::optional<double> probability;         // stragglers: per step
  std::optional<BitRate> rate;               // link_degraded, slow_receiver, nccl_socket
  std::optional<Duration> down, up;          // link_flap
  std::optional<std::int64_t> flaps;         // link_flap: down intervals
  std::optional<double> per_1000_node_days;  // random_failures
};

}  // namespace lockstep
