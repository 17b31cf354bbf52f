#include "models/fault/fault_injector.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "models/transport/link_events.hpp"
#include "sim/core/quantity.hpp"

namespace lockstep {
namespace {

// A thermal onset falls in this many equal steps of clock.
constexpr int kOnsetSteps = 10;

enum class Effect : std::uint8_t { kOneGpu, kWholeNode, kNicCable };

struct Cause {
  const char* name;
  int count;  // of Llama 3's 419 unexpected interruptions
  Effect effect;
};

// Reference.md section 7, in its order.
constexpr std::array<Cause, 18> kLlama3Causes = {{
    {"faulty GPU", 148, Effect::kOneGpu},
    {"GPU HBM3", 72, Effect::kOneGpu},
    {"software bug", 54, Effect::kOneGpu},
    {"network switch/cable", 35, Effect::kNicCable},
    {"host maintenance", 32, Effect::kWholeNode},
    {"GPU SRAM", 19, Effect::kOneGpu},
    {"GPU system processor", 17, Effect::kOneGpu},
    {"NIC", 7, Effect::kNicCable},
    {"NCCL watchdog timeout", 7, Effect::kOneGpu},
    {"silent data corruption", 6, Effect::kOneGpu},
    {"GPU thermal interface/sensor", 6, Effect::kOneGpu},
    {"SSD", 3, Effect::kWholeNode},
    {"power supply", 3, Effect::kWholeNode},
    {"server chassis", 2, Effect::kWholeNode},
    {"IO expansion board", 2, Effect::kWholeNode},
    {"dependency", 2, Effect::kWholeNode},
    {"CPU", 2, Effect::kWholeNode},
    {"system memory", 2, Effect::kWholeNode},
}};

constexpr Duration kDay = Duration::s(86'400);

std::string percent(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g%%", 100 * share);
  return text;
}

}  // namespace

TableLayout fault_layout() {
  using Row = FaultRow;
  return layout<Row>("faults", {column("kind", &Row::kind), column("target", &Row::target),
                                column("start_ps", &Row::start_ps), column("end_ps", &Row::end_ps),
                                column("detail", &Row::detail)});
}

HostsConfig apply_to_hosts(const std::vector<FaultConfig>& faults, HostsConfig hosts,
                           std::int32_t gpus_per_node) {
  for (const FaultConfig& f : faults) {
    switch (f.kind) {
      case FaultKind::kNicNuma:
        hosts.nics_on_other_socket.push_back(*f.nic);
        break;
      case FaultKind::kGpuDirectOff:
        for (std::int32_t g = 0; g < gpus_per_node; ++g) {
          hosts.nics_on_other_socket.push_back(*f.node * gpus_per_node + g);
        }
        break;
      case FaultKind::kNcclSocket:
        hosts.transport = FabricTransport::kSocket;
        hosts.socket_interface = f.rate;
        hosts.queue_pairs_per_connection = 1;  // a TCP socket is no RDMA queue pair
        break;
      default:
        break;
    }
  }
  return hosts;
}

class FaultInjector::Impl {
 public:
  Impl(Simulator& sim, std::vector<FaultConfig> faults, const DefencesConfig& defences,
       Cluster& cluster, TrainingJob* job, DefenceLog& log, RecordBackend& output,
       std::uint64_t seed)
      : sim_(sim),
        faults_(std::move(faults)),
        defences_(defences),
        cluster_(cluster),
        job_(job),
        log_(log),
        seed_(seed),
        begun_(faults_.size(), 0),
        rows_(output, fault_layout()) {}

  void start();
  void flush() { rows_.flush(); }
  [[nodiscard]] std::int64_t recorded() const { return static_cast<std::int64_t>(rows_.rows()); }

 private:
  struct Action {
    enum class Kind : std::uint8_t {
      kBegin,
      kEnd,
      kThermalStep,
      kCableDown,
      kCableUp,
      kStormEnd,
      kNodeFailure,
    };
    Kind kind = Kind::kBegin;
    std::size_t fault = 0;
    std::int64_t value = 0;  // thermal step, cable, node
  };

  // The factors a GPU's clock is the product of.
  struct GpuFactors {
    double thermal = 1.0;
    double ecc = 1.0;
    double straggler = 1.0;
  };

  void schedule(Time at, Action action) {
    actions_.push_back(action);
    sim_.schedule<&Impl::run>(at, this, static_cast<std::uint64_t>(actions_.size() - 1));
  }
  void run(std::uint64_t index);
  void begin(std::size_t fault);
  void end(std::size_t fault);
  void step_begins(std::int64_t step);
  // Whether each GPU of the stragglers fault runs slow in this step.
  void draw_stragglers(std::size_t fault);
  void node_failure(std::size_t fault, std::int32_t node);
  void schedule_next_failure(std::size_t fault, std::int32_t node);

  // The GPUs a fault of a GPU names, resolved now.
  [[nodiscard]] std::vector<std::int32_t> gpus_of(const FaultConfig& f) const;
  [[nodiscard]] std::string target_of(const FaultConfig& f) const;
  [[nodiscard]] CableId cable_of(const FaultConfig& f) const;
  void set_factor(std::int32_t gpu, double GpuFactors::*factor, double value);
  void record(const FaultConfig& f, const std::string& target, Time start, std::optional<Time> end,
              const std::string& detail) {
    rows_.append(FaultRow{fault_kind_name(f.kind), std::string_view(target), start.ps(),
                          end ? end->ps() : -1, std::string_view(detail)});
  }
  [[nodiscard]] std::optional<Time> end_of(const FaultConfig& f) const {
    if (!f.duration) return std::nullopt;
    return sim_.now() + *f.duration;
  }

  Simulator& sim_;
  std::vector<FaultConfig> faults_;
  DefencesConfig defences_;
  Cluster& cluster_;
  TrainingJob* job_;
  DefenceLog& log_;
  std::uint64_t seed_;
  std::vector<char> begun_;                     // by fault
  std::vector<std::vector<std::int32_t>> hit_;  // by fault: the GPUs it acts on
  std::map<std::int32_t, GpuFactors> factors_;  // by GPU
  std::vector<Action> actions_;
  std::vector<RandomStream> streams_;  // by fault, for stragglers and random failures
  std::vector<char> active_;           // by fault: begun and not ended
  // By node: the NIC cables random failures took down, restored when the node is repaired.
  std::map<std::int32_t, std::vector<CableId>> cables_to_repair_;
  // Faults in force per target, so that overlapping ones restore the target when the last ends,
  // to what it was before the first.
  std::map<CableId, int> cables_down_;
  std::map<CableId, int> cables_degraded_;
  std::map<std::int32_t, int> slow_receivers_;
  int storage_slowed_ = 0;
  StorageSpec storage_before_{};
  Table<FaultRow> rows_;
};

void FaultInjector::Impl::start() {
  hit_.resize(faults_.size());
  active_.assign(faults_.size(), 0);
  for (std::size_t i = 0; i < faults_.size(); ++i) {
    streams_.emplace_back(seed_, "fault", i);
  }
  bool by_step = false;
  for (std::size_t i = 0; i < faults_.size(); ++i) {
    const FaultConfig& f = faults_[i];
    switch (f.kind) {
      case FaultKind::kNicNuma:
        record(f, "nic " + std::to_string(*f.nic), Time::zero(), std::nullopt,
               "NIC on the other CPU socket: data staged through host memory");
        continue;
      case FaultKind::kGpuDirectOff:
        record(f, "node " + std::to_string(*f.node), Time::zero(), std::nullopt,
               "GPUDirect RDMA off: every NIC of the node staged through host memory");
        continue;
      case FaultKind::kNcclSocket:
        record(f, "cluster", Time::zero(), std::nullopt,
               f.rate ? "NCCL over sockets on one interface per node at " + format(*f.rate)
                      : std::string("NCCL over sockets on each NIC's interface"));
        continue;
      default:
        break;
    }
    by_step = by_step || f.step || f.kind == FaultKind::kStragglers;
    if (!f.step) schedule(Time::zero() + f.at.value_or(Duration()), Action{.fault = i});
  }
  if (by_step && job_ != nullptr) {
    job_->when_step_begins([this](std::int64_t step) { step_begins(step); });
  }
  if (job_ != nullptr) {
    job_->when_node_repaired([this](std::int32_t node) {
      for (const CableId cable : cables_to_repair_[node]) cluster_.fabric().restore_cable(cable);
      cables_to_repair_.erase(node);
    });
  }
}

void FaultInjector::Impl::step_begins(std::int64_t step) {
  for (std::size_t i = 0; i < faults_.size(); ++i) {
    const FaultConfig& f = faults_[i];
    if (f.step && *f.step == step && begun_[i] == 0) begin(i);
    if (f.kind == FaultKind::kStragglers && active_[i] != 0) draw_stragglers(i);
  }
}

void FaultInjector::Impl::draw_stragglers(std::size_t fault) {
  const FaultConfig& f = faults_[fault];
  for (const std::int32_t gpu : hit_[fault]) {
    const bool slow = streams_[fault].uniform() < *f.probability;
    set_factor(gpu, &GpuFactors::straggler, slow ? 1.0 - *f.slowdown : 1.0);
  }
}

void FaultInjector::Impl::run(std::uint64_t index) {
  const Action action = actions_[index];
  const FaultConfig& f = faults_[action.fault];
  switch (action.kind) {
    case Action::Kind::kBegin:
      begin(action.fault);
      break;
    case Action::Kind::kEnd:
      end(action.fault);
      break;
    case Action::Kind::kThermalStep: {
      if (active_[action.fault] == 0) break;  // over before its onset was
      const double clock = 1.0 - (1.0 - *f.clock) * static_cast<double>(action.value) / kOnsetSteps;
      for (const std::int32_t gpu : hit_[action.fault]) {
        set_factor(gpu, &GpuFactors::thermal, clock);
      }
      break;
    }
    case Action::Kind::kCableDown:
      cluster_.fabric().fail_cable(static_cast<CableId>(action.value));
      break;
    case Action::Kind::kCableUp:
      cluster_.fabric().restore_cable(static_cast<CableId>(action.value));
      break;
    case Action::Kind::kStormEnd: {
      cluster_.fabric().stop_pause_storm(*f.nic);
      const bool nic = action.value == 0;
      const PfcWatchdogConfig& w = nic ? defences_.nic_pfc_watchdog : defences_.switch_pfc_watchdog;
      log_.record(nic ? "nic_pfc_watchdog" : "switch_pfc_watchdog", sim_.now(),
                  "nic " + std::to_string(*f.nic),
                  std::string(nic ? "receive pipeline stuck " : "port held paused ") +
                      format_rounded(w.after) + ": pauses " +
                      (nic ? "no longer sent" : "no longer honoured"));
      break;
    }
    case Action::Kind::kNodeFailure:
      node_failure(action.fault, static_cast<std::int32_t>(action.value));
      break;
  }
}

std::vector<std::int32_t> FaultInjector::Impl::gpus_of(const FaultConfig& f) const {
  if (f.gpu) return {*f.gpu};
  if (f.rank) return {job_->gpus_in_use()[static_cast<std::size_t>(*f.rank)]};
  std::vector<std::int32_t> gpus;
  const std::int32_t per_node = cluster_.gpus_per_node();
  for (std::int32_t g = 0; g < per_node; ++g) gpus.push_back(*f.node * per_node + g);
  return gpus;
}

std::string FaultInjector::Impl::target_of(const FaultConfig& f) const {
  if (f.gpu) return "gpu " + std::to_string(*f.gpu);
  if (f.rank) {
    return "rank " + std::to_string(*f.rank) + " (gpu " +
           std::to_string(job_->gpus_in_use()[static_cast<std::size_t>(*f.rank)]) + ")";
  }
  if (f.node) return "node " + std::to_string(*f.node);
  if (f.nic) return "nic " + std::to_string(*f.nic);
  if (f.a) return "cable " + *f.a + "-" + *f.b;
  return "cluster";
}

CableId FaultInjector::Impl::cable_of(const FaultConfig& f) const {
  LinkEventConfig event;
  event.a = *f.a;
  event.b = *f.b;
  event.down = true;
  return resolve_link_events({event}, cluster_.routing().topology()).front().cable;
}

void FaultInjector::Impl::set_factor(std::int32_t gpu, double GpuFactors::*factor, double value) {
  GpuFactors& factors = factors_[gpu];
  factors.*factor = value;
  const double product = factors.thermal * factors.ecc * factors.straggler;
  job_->set_gpu_clock(gpu,
                      ClockFactor::ppm(std::max<std::int64_t>(
                          1, std::llround(product * static_cast<double>(ClockFactor::kFull)))));
}

void FaultInjector::Impl::begin(std::size_t fault) {
  begun_[fault] = 1;
  active_[fault] = 1;
  const FaultConfig& f = faults_[fault];
  const Time now = sim_.now();
  const std::optional<Time> until = end_of(f);
  // A storm may end earlier, by a watchdog (below).
  if (until && f.kind != FaultKind::kPfcStorm) {
    schedule(*until, Action{.kind = Action::Kind::kEnd, .fault = fault});
  }
  switch (f.kind) {
    case FaultKind::kThermal:
      hit_[fault] = gpus_of(f);
      if (f.onset) {
        for (int j = 1; j <= kOnsetSteps; ++j) {
          // The first fall at once, the last at the end of the onset.
          schedule(now + Duration::ps(f.onset->ps() / (kOnsetSteps - 1) * (j - 1)),
                   Action{.kind = Action::Kind::kThermalStep, .fault = fault, .value = j});
        }
      } else {
        for (const std::int32_t gpu : hit_[fault]) set_factor(gpu, &GpuFactors::thermal, *f.clock);
      }
      record(f, target_of(f), now, until,
             "SM clock to " + percent(*f.clock) +
                 (f.onset ? " over " + format_rounded(*f.onset) : std::string()));
      break;
    case FaultKind::kEcc:
      hit_[fault] = gpus_of(f);
      for (const std::int32_t gpu : hit_[fault]) {
        set_factor(gpu, &GpuFactors::ecc, 1.0 - *f.slowdown);
      }
      record(f, target_of(f), now, until, "ECC retries: " + percent(*f.slowdown) + " slower");
      break;
    case FaultKind::kXid:
      record(f, target_of(f), now, std::nullopt, "GPU fell off the bus");
      for (const std::int32_t gpu : gpus_of(f)) job_->fail_gpu(gpu, "Xid: fell off the bus");
      break;
    case FaultKind::kStragglers:
      hit_[fault] = gpus_of(f);
      record(f, target_of(f), now, until,
             percent(*f.slowdown) + " slower in " + percent(*f.probability) + " of steps");
      draw_stragglers(fault);  // for the step under way; each later step draws as it begins
      break;
    case FaultKind::kLinkDown:
      if (cables_down_[cable_of(f)]++ == 0) cluster_.fabric().fail_cable(cable_of(f));
      record(f, target_of(f), now, until, "cable down");
      break;
    case FaultKind::kLinkFlap: {
      const CableId cable = cable_of(f);
      const Duration period = *f.down + *f.up;
      for (std::int64_t j = 0; j < *f.flaps; ++j) {
        const Time down = now + period * j;
        schedule(down, Action{.kind = Action::Kind::kCableDown,
                              .fault = fault,
                              .value = static_cast<std::int64_t>(cable)});
        schedule(down + *f.down, Action{.kind = Action::Kind::kCableUp,
                                        .fault = fault,
                                        .value = static_cast<std::int64_t>(cable)});
        record(f, target_of(f), down, down + *f.down,
               "down " + std::to_string(j + 1) + " of " + std::to_string(*f.flaps));
      }
      break;
    }
    case FaultKind::kLinkDegraded:
      ++cables_degraded_[cable_of(f)];
      cluster_.fabric().set_cable_rate(cable_of(f), *f.rate);
      record(f, target_of(f), now, until, "cable at " + format(*f.rate));
      break;
    case FaultKind::kPfcStorm: {
      cluster_.fabric().start_pause_storm(*f.nic);
      // The first to act ends it: the fault's own end, or a watchdog (value 0 the NIC's, 1 the
      // switch's).
      std::optional<Time> stop = until;
      Action ending{.kind = Action::Kind::kEnd, .fault = fault};
      for (const std::int64_t which : {0, 1}) {
        const PfcWatchdogConfig& w =
            which == 0 ? defences_.nic_pfc_watchdog : defences_.switch_pfc_watchdog;
        if (!w.enabled || (stop && *stop <= now + w.after)) continue;
        stop = now + w.after;
        ending = Action{.kind = Action::Kind::kStormEnd, .fault = fault, .value = which};
      }
      if (stop) schedule(*stop, ending);
      record(f, target_of(f), now, stop, "NIC receive pipeline stuck: pauses its switch");
      break;
    }
    case FaultKind::kSlowReceiver:
      ++slow_receivers_[*f.nic];
      cluster_.fabric().set_host_path_rate(*f.nic, *f.rate);
      record(f, target_of(f), now, until, "host drains " + format(*f.rate));
      break;
    case FaultKind::kSlowStorage: {
      SharedStorage& storage = *job_->storage();
      if (storage_slowed_++ == 0) storage_before_ = storage.spec();
      // Of the rates it has now: slowdowns that overlap compound.
      const StorageSpec& spec = storage.spec();
      const double keep = 1.0 - *f.slowdown;
      auto cut = [keep](BitRate rate) {
        return BitRate::bps(
            std::max<std::int64_t>(1, std::llround(static_cast<double>(rate.bps()) * keep)));
      };
      storage.set_rates(cut(spec.aggregate), cut(spec.per_node));
      record(f, target_of(f), now, until, "file system " + percent(*f.slowdown) + " slower");
      break;
    }
    case FaultKind::kRandomFailures: {
      const std::int32_t nodes = cluster_.ranks() / cluster_.gpus_per_node();
      for (std::int32_t node = 0; node < nodes; ++node) schedule_next_failure(fault, node);
      break;
    }
    case FaultKind::kNicNuma:
    case FaultKind::kGpuDirectOff:
    case FaultKind::kNcclSocket:
      break;
  }
}

void FaultInjector::Impl::end(std::size_t fault) {
  active_[fault] = 0;
  const FaultConfig& f = faults_[fault];
  switch (f.kind) {
    case FaultKind::kThermal:
      for (const std::int32_t gpu : hit_[fault]) set_factor(gpu, &GpuFactors::thermal, 1.0);
      break;
    case FaultKind::kEcc:
      for (const std::int32_t gpu : hit_[fault]) set_factor(gpu, &GpuFactors::ecc, 1.0);
      break;
    case FaultKind::kStragglers:
      for (const std::int32_t gpu : hit_[fault]) set_factor(gpu, &GpuFactors::straggler, 1.0);
      break;
    case FaultKind::kLinkDown:
      if (--cables_down_[cable_of(f)] == 0) cluster_.fabric().restore_cable(cable_of(f));
      break;
    case FaultKind::kLinkDegraded: {
      const CableId cable = cable_of(f);
      if (--cables_degraded_[cable] > 0) break;
      cluster_.fabric().set_cable_rate(cable, cluster_.routing().topology().cable(cable).rate);
      break;
    }
    case FaultKind::kPfcStorm:
      cluster_.fabric().stop_pause_storm(*f.nic);
      break;
    case FaultKind::kSlowReceiver:
      if (--slow_receivers_[*f.nic] > 0) break;
      cluster_.fabric().set_host_path_rate(*f.nic, cluster_.host_path_rate(*f.nic));
      break;
    case FaultKind::kSlowStorage:
      if (--storage_slowed_ > 0) break;
      job_->storage()->set_rates(storage_before_.aggregate, storage_before_.per_node);
      break;
    default:
      break;
  }
}

void FaultInjector::Impl::schedule_next_failure(std::size_t fault, std::int32_t node) {
  const FaultConfig& f = faults_[fault];
  const double mean_days = 1000.0 / *f.per_1000_node_days;
  const double days = streams_[fault].exponential(mean_days);
  const Duration wait = Duration::ps(
      static_cast<std::int64_t>(std::min(days * static_cast<double>(kDay.ps()), 9.0e18)));
  // Compared before adding: a failure drawn past the end of time never comes.
  if (wait >= Time::max() - sim_.now()) return;
  if (f.duration && wait >= (Time::zero() + f.at.value_or(Duration()) + *f.duration) - sim_.now()) {
    return;
  }
  schedule(sim_.now() + wait,
           Action{.kind = Action::Kind::kNodeFailure, .fault = fault, .value = node});
}

void FaultInjector::Impl::node_failure(std::size_t fault, std::int32_t node) {
  const FaultConfig& f = faults_[fault];
  RandomStream& stream = streams_[fault];
  int total = 0;
  for (const Cause& c : kLlama3Causes) total += c.count;
  auto draw = static_cast<int>(stream.below(static_cast<std::uint64_t>(total)));
  const Cause* cause = kLlama3Causes.data();
  for (const Cause& c : kLlama3Causes) {
    if (draw < c.count) {
      cause = &c;
      break;
    }
    draw -= c.count;
  }
  const std::int32_t per_node = cluster_.gpus_per_node();
  const std::int32_t gpu =
      node * per_node +
      static_cast<std::int32_t>(stream.below(static_cast<std::uint64_t>(per_node)));
  switch (cause->effect) {
    case Effect::kOneGpu:
      record(f, "gpu " + std::to_string(gpu), sim_.now(), std::nullopt, cause->name);
      job_->fail_gpu(gpu, cause->name);
      break;
    case Effect::kWholeNode:
      record(f, "node " + std::to_string(node), sim_.now(), std::nullopt, cause->name);
      for (std::int32_t g = 0; g < per_node; ++g) job_->fail_gpu(node * per_node + g, cause->name);
      break;
    case Effect::kNicCable: {
      // The queue pairs over the cable exhaust their retries and NCCL aborts the rank's
      // communicators: to the job the rank is as lost as after an Xid.
      record(f, "nic " + std::to_string(gpu), sim_.now(), std::nullopt, cause->name);
      const Topology& topology = cluster_.routing().topology();
      const CableId cable = topology.ports(gpu)[0].cable;
      cluster_.fabric().fail_cable(cable);
      cables_to_repair_[node].push_back(cable);
      job_->fail_gpu(gpu, std::string(cause->name) + ": NIC link down");
      break;
    }
  }
  schedule_next_failure(fault, node);
}

FaultInjector::FaultInjector(Simulator& sim, std::vector<FaultConfig> faults,
                             const DefencesConfig& defences, Cluster& cluster, TrainingJob* job,
                             DefenceLog& log, RecordBackend& output, std::uint64_t seed)
    : impl_(std::make_unique<Impl>(sim, std::move(faults), defences, cluster, job, log, output,
                                   seed)) {}
FaultInjector::~FaultInjector() = default;
void FaultInjector::start() { impl_->start(); }
std::int64_t FaultInjector::faults_recorded() const { return impl_->recorded(); }
void FaultInjector::flush() { impl_->flush(); }

}  // namespace lockstep
