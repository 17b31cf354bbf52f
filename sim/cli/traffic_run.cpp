#include <chrono>
#include <cstdio>

#include "models/fabric/topology_config.hpp"
#include "models/transport/traffic_driver.hpp"
#include "sim/cli/progress.hpp"
#include "sim/cli/simulation_run.hpp"
#include "sim/core/quantity.hpp"

namespace lockstep {

RunSummary run_traffic(const LoadedScenario& loaded, Hdf5Output& output, bool show_progress) {
  const Scenario& scenario = loaded.scenario;
  const Topology topology = build_topology(scenario.network->topology);
  const Routing routing(topology);
  const BitRate nic_rate = topology.cable(topology.ports(0)[0].cable).rate;
  const PacketNetworkConfig config = packet_network_config(*scenario.network, nic_rate);
  Simulator sim;
  PacketNetwork network(sim, routing, config, scenario.simulation.seed, output);
  // The run ends with the last flow: periodic sampling would otherwise keep the clock going.
  TrafficDriver driver(sim, network, loaded.flows, output,
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
  driver.start();
  RunOutcome outcome = sim.run(limit);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  progress.finish();
  // The driver stopping the run after the last flow is its normal end.
  if (outcome == RunOutcome::kStopped && driver.all_complete()) outcome = RunOutcome::kDrained;
  network.finish();
  driver.flush();

  RunSummary summary{outcome, sim.now(), sim.events_processed(), {}};
  const TrafficDriver::Summary s = driver.summary();
  const std::int64_t hops = network.packet_hops();
  char line[512];
  std::snprintf(line, sizeof line,
                "%lld of %lld flows completed in %s simulated on %d endpoints, %d switches\n"
                "packet-hops %lld (%.2f M/s), events %llu (%.2f M/s), wall %.3f s",
                static_cast<long long>(s.completed), static_cast<long long>(s.flows),
                format_rounded(sim.now().since_start()).c_str(), topology.endpoint_count(),
                topology.switch_count(), static_cast<long long>(hops),
                static_cast<double>(hops) / wall * 1e-6,
                static_cast<unsigned long long>(sim.events_processed()),
                static_cast<double>(sim.events_processed()) / wall * 1e-6, wall);
  summary.report = line;
  if (s.fct) {
    summary.report += "\nflow completion: min " + format_rounded(s.fct->min) + ", median " +
                      format_rounded(s.fct->median) + ", p99 " + format_rounded(s.fct->p99) +
                      ", max " + format_rounded(s.fct->max);
  }
  const DataAccount account = network.data_account();
  summary.report += "\npause frames " + std::to_string(network.pause_frames_sent()) +
                    ", dropped payload " + format(Bytes(account.dropped));
  if (outcome == RunOutcome::kDrained && !driver.all_complete()) {
    summary.report += "\nwarning: the network went idle with " +
                      std::to_string(s.flows - s.completed) + " flows unfinished";
  }
  return summary;
}

}  // namespace lockstep
