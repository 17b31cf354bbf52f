#include "sim/run/run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "models/fault/fault_injector.hpp"
#include "models/traffic/traffic_driver.hpp"
#include "models/training/training_job.hpp"
#include "models/transport/link_events.hpp"
#include "sim/core/quantity.hpp"
#include "sim/run/progress.hpp"

namespace lockstep {
namespace {

std::string applied_events(const LinkEventPlayer& link_events) {
  return link_events.applied() == 0
             ? std::string()
             : "\nlink events applied " + std::to_string(link_events.applied());
}

// What a backend adds to the report after the flows are played.
std::string packet_findings(const PacketNetwork& network, double wall_seconds,
                            const LinkEventPlayer& link_events) {
  const std::int64_t hops = network.packet_hops();
  const DataAccount account = network.data_account();
  char line[256];
  std::snprintf(line, sizeof line, "packet-hops %lld (%.2f M/s)", static_cast<long long>(hops),
                static_cast<double>(hops) / wall_seconds * 1e-6);
  const std::string lost = network.packets_lost_to_failures() == 0
                               ? std::string()
                               : ", lost to failed cables " +
                                     std::to_string(network.packets_lost_to_failures()) +
                                     " data packets";
  return std::string(line) + "\npause frames " + std::to_string(network.pause_frames_sent()) +
         ", dropped payload " + format(Bytes(account.dropped)) + lost + applied_events(link_events);
}

std::string flow_findings(const FlowNetwork& network, const LinkEventPlayer& link_events) {
  const FlowNetwork::Recomputations& r = network.recomputations();
  const std::string events = applied_events(link_events);
  if (r.count == 0) return "rate recomputations 0" + events;
  auto at = [&r](double fraction) { return r.wall_ns.quantile(fraction) * 1e-3; };
  char line[256];
  std::snprintf(line, sizeof line,
                "rate recomputations %lld: wall median %.1f us, p99 %.1f us, max %.1f us; "
                "flows re-filled %.1f on average, %lld set growths",
                static_cast<long long>(r.count), at(0.5), at(0.99), at(1.0),
                static_cast<double>(r.flows_refilled) / static_cast<double>(r.count),
                static_cast<long long>(r.expansions));
  return line + events;
}

std::string traffic_findings(const TrafficDriver& driver, const Topology& topology,
                             Cluster& cluster, const LinkEventPlayer& link_events, Time end,
                             std::uint64_t events, double wall, RunOutcome outcome) {
  const TrafficDriver::Summary s = driver.summary();
  char line[512];
  std::snprintf(line, sizeof line,
                "%lld of %lld flows completed in %s simulated on %d endpoints, %d switches (%s "
                "level)\nevents %llu (%.2f M/s), wall %.3f s",
                static_cast<long long>(s.completed), static_cast<long long>(s.flows),
                format_rounded(end.since_start()).c_str(), topology.endpoint_count(),
                topology.switch_count(), cluster.packet_fabric() ? "packet" : "flow",
                static_cast<unsigned long long>(events), static_cast<double>(events) / wall * 1e-6,
                wall);
  std::string report = line;
  if (s.fct) {
    report += "\nflow completion: min " + format_rounded(s.fct->min) + ", median " +
              format_rounded(s.fct->median) + ", p99 " + format_rounded(s.fct->p99) + ", max " +
              format_rounded(s.fct->max);
  }
  report +=
      "\n" + (cluster.packet_fabric() ? packet_findings(*cluster.packet_fabric(), wall, link_events)
                                      : flow_findings(*cluster.flow_fabric(), link_events));
  if (s.failed > 0) {
    report += "\n" + std::to_string(s.failed) +
              " flows failed: their queue pair ran out of retries (failed_flows, queue_pairs)";
    if (s.abandoned > 0) {
      report += "; " + std::to_string(s.abandoned) + " flows waiting on them never started";
    }
  }
  if (outcome == RunOutcome::kDrained && !driver.all_settled()) {
    report += "\nwarning: the network went idle with " +
              std::to_string(s.flows - s.completed - s.failed - s.abandoned) + " flows unfinished";
  }
  return report;
}

}  // namespace

ClusterSpec cluster_spec(const Scenario& scenario) {
  ClusterSpec spec;
  spec.fabric = *scenario.network;
  spec.seed = scenario.simulation.seed;
  if (scenario.servers) spec.servers = server_node(*scenario.servers);
  spec.hosts = apply_to_hosts(scenario.faults, scenario.hosts.value_or(HostsConfig{}),
                              spec.servers ? spec.servers->gpus : 1);
  return spec;
}

Time run_limit(const Scenario& scenario) {
  return scenario.simulation.until ? Time::zero() + *scenario.simulation.until : Time::max();
}

RunSummary run_scenario(const LoadedScenario& loaded, RecordBackend& output,
                        const RunOptions& options) {
  const Scenario& scenario = loaded.scenario;
  Simulator sim;
  // The machine: built once, when the scenario has a network, and shared by all that runs.
  const Topology* topology = loaded.topology.get();
  std::optional<Routing> routing;
  std::unique_ptr<Cluster> cluster;
  std::optional<LinkEventPlayer> link_events;
  if (scenario.network) {
    routing.emplace(*topology);
    cluster = std::make_unique<Cluster>(sim, cluster_spec(scenario), *routing, output);
    link_events.emplace(sim, cluster->fabric(),
                        resolve_link_events(scenario.network->link_events, *topology));
  }
  // Where defences record their actions: any run with a job or faults.
  std::optional<DefenceLog> defences;
  if (scenario.job || !scenario.faults.empty()) defences.emplace(output);
  std::unique_ptr<TrainingJob> job;
  if (scenario.job) {
    job = std::make_unique<TrainingJob>(sim, *scenario.job, *cluster, cluster_spec(scenario),
                                        scenario.network->model, output, scenario.defences.job(),
                                        *defences);
    // Background traffic and periodic sampling would keep the clock going: the job's end is the
    // run's.
    job->when_done([&sim] { sim.stop(); });
  }
  std::unique_ptr<FaultInjector> faults;
  if (!scenario.faults.empty()) {
    faults =
        std::make_unique<FaultInjector>(sim, scenario.faults, scenario.defences, *cluster,
                                        job.get(), *defences, output, scenario.simulation.seed);
  }
  std::unique_ptr<TrafficDriver> driver;
  if (scenario.traffic) {
    driver = std::make_unique<TrafficDriver>(sim, cluster->network(), loaded.flows, output,
                                             TrafficDriverOptions{.stop_when_settled = !job});
  }
  const Time limit = run_limit(scenario);
  const auto flow_count = static_cast<double>(loaded.flows.size());
  ProgressReporter progress(
      options.show_progress, limit == Time::max() ? std::nullopt : std::optional(limit),
      [&job, &driver, flow_count]() -> std::optional<double> {
        if (job) return job->progress();
        return static_cast<double>(driver->completed()) / flow_count;
      },
      options.stop);
  sim.set_monitor(&progress, ProgressReporter::kPeriodEvents);
  const auto wall_start = std::chrono::steady_clock::now();
  if (link_events) link_events->start();
  if (faults) faults->start();
  if (job) job->start();
  if (driver) driver->start();
  RunOutcome outcome = sim.run(limit);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  progress.finish();
  // The job's end, or the traffic's, stopping the run is its normal end.
  // Nothing left to do with the job unfinished: every rank waits for something that cannot come.
  if (job && outcome == RunOutcome::kDrained && job->outcome() == JobOutcome::kRunning) {
    job->declare_hung();
  }
  // The job's end, whichever it was (its last step, out of memory, a hang, a crash), stopping
  // the run is its normal end.
  const bool done = job ? job->outcome() != JobOutcome::kRunning : driver->all_settled();
  if (outcome == RunOutcome::kStopped && done) outcome = RunOutcome::kDrained;
  if (cluster) cluster->finish();
  if (job) job->flush();
  if (driver) driver->flush();
  if (faults) faults->flush();
  if (defences) defences->flush();

  RunSummary summary{outcome,   outcome == RunOutcome::kDrained && !done,
                     false,     job ? job_outcome_name(job->outcome()) : std::string(),
                     sim.now(), sim.events_processed(),
                     {},        {}};
  summary.kind = job && driver ? "job with traffic" : job ? "job" : "traffic";
  summary.flows_failed = driver && driver->failed() > 0;
  if (job) {
    char line[128];
    std::snprintf(line, sizeof line, "\nsimulated %s in %.3f s of wall time, %llu events",
                  format_rounded(sim.now().since_start()).c_str(), wall,
                  static_cast<unsigned long long>(sim.events_processed()));
    summary.report = job->report() + line;
  }
  if (driver) {
    if (!summary.report.empty()) summary.report += "\n";
    summary.report += traffic_findings(*driver, *topology, *cluster, *link_events, sim.now(),
                                       sim.events_processed(), wall, outcome);
  }
  return summary;
}

}  // namespace lockstep
