#include <algorithm>
#include <chrono>
#include <cstdio>

#include "models/cluster/cluster.hpp"
#include "models/fabric/topology_config.hpp"
#include "models/traffic/traffic_driver.hpp"
#include "models/transport/link_events.hpp"
#include "sim/cli/progress.hpp"
#include "sim/cli/simulation_run.hpp"
#include "sim/core/quantity.hpp"

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

}  // namespace

RunSummary run_traffic(const LoadedScenario& loaded, Hdf5Output& output, bool show_progress) {
  const Scenario& scenario = loaded.scenario;
  const NetworkConfig& network_config = *scenario.network;
  const Topology topology = build_topology(network_config.topology);
  const Routing routing(topology);
  Simulator sim;
  ClusterSpec spec;
  spec.fabric = network_config;
  spec.seed = scenario.simulation.seed;
  if (scenario.servers) spec.servers = server_node(*scenario.servers);
  spec.hosts = scenario.hosts.value_or(HostsConfig{});
  Cluster cluster(sim, spec, routing, output);
  Network* network = &cluster.network();
  FabricControl* control = &cluster.fabric();
  PacketNetwork* packet_network = cluster.packet_fabric();
  FlowNetwork* flow_network = cluster.flow_fabric();
  LinkEventPlayer link_events(sim, *control,
                              resolve_link_events(network_config.link_events, topology));
  // The run ends with the last flow: periodic sampling would otherwise keep the clock going.
  TrafficDriver driver(sim, *network, loaded.flows, output,
                       TrafficDriverOptions{.stop_when_all_complete = true});
  const Time limit = run_limit(scenario);
  const auto flow_count = static_cast<double>(loaded.flows.size());
  ProgressReporter progress(show_progress,
                            limit == Time::max() ? std::nullopt : std::optional(limit),
                            [&driver, flow_count]() -> std::optional<double> {
                              return static_cast<double>(driver.completed()) / flow_count;
                            });
  sim.set_monitor(&progress, ProgressReporter::kPeriodEvents);
  const auto wall_start = std::chrono::steady_clock::now();
  link_events.start();
  driver.start();
  RunOutcome outcome = sim.run(limit);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  progress.finish();
  // The driver stopping the run after the last flow is its normal end.
  if (outcome == RunOutcome::kStopped && driver.all_complete()) outcome = RunOutcome::kDrained;
  cluster.finish();
  driver.flush();

  RunSummary summary{outcome, sim.now(), sim.events_processed(), {}};
  const TrafficDriver::Summary s = driver.summary();
  char line[512];
  std::snprintf(line, sizeof line,
                "%lld of %lld flows completed in %s simulated on %d endpoints, %d switches (%s "
                "level)\nevents %llu (%.2f M/s), wall %.3f s",
                static_cast<long long>(s.completed), static_cast<long long>(s.flows),
                format_rounded(sim.now().since_start()).c_str(), topology.endpoint_count(),
                topology.switch_count(), packet_network ? "packet" : "flow",
                static_cast<unsigned long long>(sim.events_processed()),
                static_cast<double>(sim.events_processed()) / wall * 1e-6, wall);
  summary.report = line;
  if (s.fct) {
    summary.report += "\nflow completion: min " + format_rounded(s.fct->min) + ", median " +
                      format_rounded(s.fct->median) + ", p99 " + format_rounded(s.fct->p99) +
                      ", max " + format_rounded(s.fct->max);
  }
  summary.report += "\n" + (packet_network ? packet_findings(*packet_network, wall, link_events)
                                           : flow_findings(*flow_network, link_events));
  if (outcome == RunOutcome::kDrained && !driver.all_complete()) {
    summary.report += "\nwarning: the network went idle with " +
                      std::to_string(s.flows - s.completed) + " flows unfinished";
  }
  return summary;
}

}  // namespace lockstep
