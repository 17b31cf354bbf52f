#include "sim/scenario/fault_schema.hpp"

#include "models/transport/link_events.hpp"

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace lockstep {
namespace {

// Which keys each kind takes: its target keys (exactly one of them, or none for a fault of the
// whole cluster) and the parameters it needs and may have.
struct KindRule {
  FaultKind kind;
  std::vector<const char*> targets;
  std::vector<const char*> required;
  std::vector<const char*> allowed;  // besides targets, required, at, step
};

const std::vector<KindRule>& kind_rules() {
  static const std::vector<KindRule> rules = {
      {FaultKind::kThermal, {"gpu", "rank", "node"}, {"clock"}, {"onset", "duration"}},
      {FaultKind::kEcc, {"gpu", "rank", "node"}, {"slowdown"}, {"duration"}},
      {FaultKind::kXid, {"gpu", "rank"}, {}, {}},
      {FaultKind::kStragglers, {"gpu", "rank", "node"}, {"probability", "slowdown"}, {"duration"}},
      {FaultKind::kLinkDown, {"a"}, {"b"}, {"duration"}},
      {FaultKind::kLinkFlap, {"a"}, {"b", "down", "up", "flaps"}, {}},
      {FaultKind::kLinkDegraded, {"a"}, {"b", "rate"}, {"duration"}},
      {FaultKind::kPfcStorm, {"nic"}, {}, {"duration"}},
      {FaultKind::kSlowReceiver, {"nic"}, {"rate"}, {"duration"}},
      {FaultKind::kNicNuma, {"nic"}, {}, {}},
      {FaultKind::kGpuDirectOff, {"node"}, {}, {}},
      {FaultKind::kNcclSocket, {}, {}, {"rate"}},
      {FaultKind::kSlowStorage, {}, {"slowdown"}, {"duration"}},
      {FaultKind::kRandomFailures, {}, {"per_1000_node_days"}, {"duration"}},
  };
  return rules;
}

// The keys a fault has set, by name.
std::vector<std::pair<const char*, bool>> keys_given(const FaultConfig& f) {
  return {{"gpu", f.gpu.has_value()},
          {"rank", f.rank.has_value()},
          {"node", f.node.has_value()},
          {"nic", f.nic.has_value()},
          {"a", f.a.has_value()},
          {"b", f.b.has_value()},
          {"at", f.at.has_value()},
          {"step", f.step.has_value()},
          {"duration", f.duration.has_value()},
          {"clock", f.clock.has_value()},
          {"onset", f.onset.has_value()},
          {"slowdown", f.slowdown.has_value()},
          {"probability", f.probability.has_value()},
          {"rate", f.rate.has_value()},
          {"down", f.down.has_value()},
          {"up", f.up.has_value()},
          {"flaps", f.flaps.has_value()},
          {"per_1000_node_days", f.per_1000_node_days.has_value()}};
}

bool listed(const std::vector<const char*>& names, const std::string& name) {
  for (const char* n : names) {
    if (name == n) return true;
  }
  return false;
}

std::string joined(const std::vector<const char*>& names) {
  std::string text;
  for (const char* n : names) text += (text.empty() ? "" : ", ") + std::string(n);
  return text;
}

void check_kind(const FaultConfig& f, const Schema<FaultConfig>::Checker& report) {
  const KindRule* rule = nullptr;
  for (const KindRule& r : kind_rules()) {
    if (r.kind == f.kind) rule = &r;
  }
  const std::string kind(fault_kind_name(f.kind));
  int targets = 0;
  for (const auto& [name, given] : keys_given(f)) {
    if (!given) continue;
    const std::string key = name;
    if (listed(rule->targets, key)) {
      ++targets;
      continue;
    }
    if (listed(rule->required, key) || listed(rule->allowed, key) || key == "at" || key == "step") {
      continue;
    }
    report.error(key, kind + " takes no `" + key + "`");
  }
  if (!rule->targets.empty() && targets != 1) {
    report.error(rule->targets.front(),
                 kind + " needs exactly one target: " + joined(rule->targets));
  }
  for (const auto& [name, given] : keys_given(f)) {
    if (!given && listed(rule->required, name)) {
      report.error(name, kind + " needs `" + std::string(name) + "`");
    }
  }
  if (f.at && f.step) report.error("step", "give `at` or `step`, not both");
  const bool from_the_start = f.kind == FaultKind::kNicNuma || f.kind == FaultKind::kGpuDirectOff ||
                              f.kind == FaultKind::kNcclSocket;
  if (from_the_start && (f.at || f.step)) {
    report.error(f.at ? "at" : "step",
                 kind + " is a misconfiguration present from the start: it takes no time");
  }
  if (f.kind == FaultKind::kRandomFailures && f.step) {
    report.error("step", "random failures begin at a time (`at`), not a step");
  }
  // Every time the fault schedules must stay on the clock.
  constexpr double kLongestSeconds = 4.6e6;  // half of 2^63 ps: room for the run around it
  const double begins = f.at ? f.at->seconds() : 0.0;
  const double flapping = f.flaps && f.down && f.up ? static_cast<double>(*f.flaps) *
                                                          (f.down->seconds() + f.up->seconds())
                                                    : 0.0;
  for (const auto& [key, lasts] :
       {std::pair{"duration", f.duration ? f.duration->seconds() : 0.0},
        std::pair{"onset", f.onset ? f.onset->seconds() : 0.0}, std::pair{"flaps", flapping}}) {
    if (begins + lasts > kLongestSeconds) {
      report.error(key, "the fault would run past the longest simulated time (about 53 days)");
    }
  }
}

Constraint<double> share_lost() {
  return [](const double& v) -> std::optional<std::string> {
    if (!(v >= 0.0 && v < 1.0)) return "must lie in [0, 1), e.g. 10%";
    return std::nullopt;
  };
}

Schema<WatchdogConfig> watchdog_schema() {
  Schema<WatchdogConfig> s;
  s.value("enabled", &WatchdogConfig::enabled, "true",
          "PyTorch's NCCL watchdog: a collective unfinished after `timeout` aborts the job (off: "
          "it hangs)")
      .value("timeout", &WatchdogConfig::timeout, "10min",
             "from a rank entering a collective (TORCH_NCCL timeout, default 10 min)",
             above(Duration()))
      .value("poll", &WatchdogConfig::poll, "100ms", "how often the watchdog thread looks",
             above(Duration()));
  return s;
}

Schema<HealthCheckConfig> health_check_schema() {
  Schema<HealthCheckConfig> s;
  s.value("enabled", &HealthCheckConfig::enabled, "false",
          "find GPUs fallen off the bus (Xid) and drain their nodes, stopping the job")
      .value("interval", &HealthCheckConfig::interval, "1min", "how often each node is checked",
             above(Duration()))
      .value("repair", &HealthCheckConfig::repair, std::nullopt,
             "a drained node (health check or straggler detector) is idle again this long after "
             "(none: drained for good)",
             above(Duration()));
  return s;
}

Schema<StragglerDetectorConfig> straggler_detector_schema() {
  Schema<StragglerDetectorConfig> s;
  s.value("enabled", &StragglerDetectorConfig::enabled, "false",
          "drain the node of a rank whose own work stands out from its pipeline stage's")
      .value("window", &StragglerDetectorConfig::window, "5", "steps compared",
             at_least<std::int64_t>(1))
      .value("threshold", &StragglerDetectorConfig::threshold, "10%",
             "how much more work than the stage's median rank makes a straggler", above(0.0));
  return s;
}

Schema<RestartConfig> restart_schema() {
  Schema<RestartConfig> s;
  s.value("enabled", &RestartConfig::enabled, "false",
          "after a crash or a drain, restart from the last complete checkpoint onto healthy "
          "nodes (idle nodes of the cluster are the spares)")
      .value("delay", &RestartConfig::delay, "5min",
             "rescheduling, process start, NCCL init and checkpoint load", at_least(Duration()))
      .value("max_restarts", &RestartConfig::max_restarts, "100",
             "torchrun's --max-restarts: the job ends at its next stop after this many",
             at_least<std::int64_t>(0));
  return s;
}

Schema<PfcWatchdogConfig> pfc_watchdog_schema(const std::string& what) {
  Schema<PfcWatchdogConfig> s;
  s.value("enabled", &PfcWatchdogConfig::enabled, "false", what)
      .value("after", &PfcWatchdogConfig::after, "100ms", "how long stuck before it acts",
             above(Duration()));
  return s;
}

}  // namespace

Schema<FaultConfig> fault_schema() {
  using F = FaultConfig;
  std::vector<std::pair<std::string, FaultKind>> kinds;
  for (const KindRule& rule : kind_rules()) {
    kinds.emplace_back(std::string(fault_kind_name(rule.kind)), rule.kind);
  }
  Schema<F> s;
  s.choice("kind", &F::kind, kinds, "", "what breaks (scenarios/README.md, Faults)")
      .value("gpu", &F::gpu, std::nullopt, "target: the cluster's GPU (its network rank)",
             at_least<std::int32_t>(0))
      .value("rank", &F::rank, std::nullopt, "target: the job rank, on whatever GPU it runs",
             at_least<std::int32_t>(0))
      .value("node", &F::node, std::nullopt, "target: a server (all its GPUs or NICs)",
             at_least<std::int32_t>(0))
      .value("nic", &F::nic, std::nullopt, "target: the NIC of that GPU", at_least<std::int32_t>(0))
      .value("a", &F::a, std::nullopt, "target: one end of a cable (a switch name or host<i>)")
      .value("b", &F::b, std::nullopt, "the cable's other end")
      .value("at", &F::at, std::nullopt, "when it begins, from the start of the run (default 0)",
             at_least(Duration()))
      .value("step", &F::step, std::nullopt, "or: when the job's step begins",
             at_least<std::int64_t>(0))
      .value("duration", &F::duration, std::nullopt, "how long it lasts (default: to the end)",
             above(Duration()))
      .value("clock", &F::clock, std::nullopt, "thermal: the SM clock it falls to, e.g. 70%",
             fraction_above_zero())
      .value("onset", &F::onset, std::nullopt, "thermal: how long the clock takes to fall",
             above(Duration()))
      .value("slowdown", &F::slowdown, std::nullopt,
             "ecc, stragglers, slow_storage: the share of throughput lost, e.g. 10%", share_lost())
      .value("probability", &F::probability, std::nullopt, "stragglers: per step",
             between(0.0, 1.0))
      .value("rate", &F::rate, std::nullopt,
             "link_degraded: the cable's rate; slow_receiver: what the host drains; nccl_socket: "
             "one interface per node at this rate (default: sockets over every NIC)",
             above(BitRate::bps(0)))
      .value("down", &F::down, std::nullopt, "link_flap: each down interval", above(Duration()))
      .value("up", &F::up, std::nullopt, "link_flap: each up interval between them",
             above(Duration()))
      .value("flaps", &F::flaps, std::nullopt, "link_flap: how many down intervals",
             between<std::int64_t>(1, 1'000'000))
      .value("per_1000_node_days", &F::per_1000_node_days, std::nullopt,
             "random_failures: failure rate of each node (Meta's RSC: 6.5)",
             [](const double& v) -> std::optional<std::string> {
               if (!(v > 0.0 && v <= 1e6)) return "must lie in (0, 1000000]";
               return std::nullopt;
             })
      .check(check_kind);
  return s;
}

Schema<DefencesConfig> defences_schema() {
  using D = DefencesConfig;
  Schema<D> s;
  s.section("watchdog", &D::watchdog, watchdog_schema(), "the collective watchdog")
      .section("health_check", &D::health_check, health_check_schema(), "node health checks")
      .section("straggler_detector", &D::straggler_detector, straggler_detector_schema(),
               "per-rank step-time outliers")
      .section("restart", &D::restart, restart_schema(), "restart from the last checkpoint")
      .section("nic_pfc_watchdog", &D::nic_pfc_watchdog,
               pfc_watchdog_schema("a NIC whose receive pipeline is stuck stops sending pauses"),
               "the NIC's PFC storm watchdog")
      .section("switch_pfc_watchdog", &D::switch_pfc_watchdog,
               pfc_watchdog_schema("a switch port paused that long stops honouring pauses"),
               "the switch port's PFC watchdog");
  return s;
}

void check_fault_targets(const Scenario& s, const Topology& topology,
                         const Schema<Scenario>::Checker& report) {
  const std::int32_t endpoints = topology.endpoint_count();
  const std::int32_t per_node = s.servers ? server_node(*s.servers).value_or(NodePreset{}).gpus : 1;
  const std::int32_t nodes = per_node > 0 ? endpoints / per_node : 0;
  const std::int64_t world = s.job ? std::int64_t{s.job->parallelism.tensor} *
                                         s.job->parallelism.context * s.job->parallelism.data *
                                         s.job->parallelism.pipeline
                                   : 0;
  if (s.job && s.job->reuse_steady_step) {
    // Replayed steps see nothing but the job: what else would change them is refused.
    if (!s.network->link_events.empty()) {
      report.error("network.link_events",
                   "change what a step costs, which job.reuse_steady_step "
                   "prices once");
    }
    if (s.traffic) {
      report.error("traffic",
                   "shares the fabric with the job, which job.reuse_steady_step "
                   "prices once without it");
    }
    if (s.defences.straggler_detector.enabled) {
      report.error("defences.straggler_detector.enabled",
                   "replayed steps have no per-rank figures to compare (job.reuse_steady_step)");
    }
  }
  for (std::size_t i = 0; i < s.faults.size(); ++i) {
    const FaultConfig& f = s.faults[i];
    const std::string at = "faults[" + std::to_string(i) + "]";
    const std::string kind(fault_kind_name(f.kind));
    auto within = [&](const std::optional<std::int32_t>& value, const char* key, std::int64_t count,
                      const char* what) {
      if (value && *value >= count) {
        report.error(at + "." + key, "no " + std::string(what) + " " + std::to_string(*value) +
                                         " (" + std::to_string(count) + " in the cluster)");
      }
    };
    within(f.gpu, "gpu", endpoints, "GPU");
    within(f.nic, "nic", endpoints, "NIC");
    within(f.node, "node", nodes, "node");
    if (f.rank && s.job) within(f.rank, "rank", world, "job rank");
    const bool on_gpus = f.kind == FaultKind::kThermal || f.kind == FaultKind::kEcc ||
                         f.kind == FaultKind::kXid || f.kind == FaultKind::kStragglers ||
                         f.kind == FaultKind::kRandomFailures || f.kind == FaultKind::kSlowStorage;
    if ((on_gpus || f.rank || f.step) && !s.job) {
      report.error(at + ".kind", kind + " acts on a training job: add a `job`");
    }
    const bool loses_gpus = f.kind == FaultKind::kXid || f.kind == FaultKind::kRandomFailures;
    if (s.job && s.job->reuse_steady_step && !loses_gpus) {
      report.error(at + ".kind", kind +
                                     " changes what a step costs, which job.reuse_steady_step "
                                     "prices once: only xid and random_failures run with it");
    }
    if (f.kind == FaultKind::kSlowStorage && s.job && !s.job->storage) {
      report.error(at + ".kind", "slow_storage slows the job's file system: add job.storage");
    }
    const bool on_fabric = f.kind == FaultKind::kLinkDown || f.kind == FaultKind::kLinkFlap ||
                           f.kind == FaultKind::kLinkDegraded || f.kind == FaultKind::kPfcStorm ||
                           f.kind == FaultKind::kSlowReceiver;
    if (on_fabric && s.network->model == NetworkModel::kAnalytic) {
      report.error(at + ".kind", kind +
                                     " changes the fabric, which network.model analytic does "
                                     "not simulate: use flow or packet");
    }
    if (f.a && f.b) {
      LinkEventConfig event;
      event.a = *f.a;
      event.b = *f.b;
      event.down = true;
      for (const LinkEventProblem& p : link_event_problems({event}, topology, s.network->model)) {
        const std::string key = p.key.substr(p.key.find_last_of('.') + 1);
        report.error(at + "." + key, p.message);
      }
    }
  }
}

}  // namespace lockstep
