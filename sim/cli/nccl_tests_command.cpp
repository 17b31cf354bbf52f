// `lockstep nccl-tests OP`: nccl-tests' sweep of one collective, printed in nccl-tests' format and
// recorded to an HDF5 table `nccl_tests`. Two ways to say where it runs:
// - over a scenario's network (`OP SCENARIO`): one rank per endpoint, in endpoint order, every
//   channel on that ring, at the scenario's network level;
// - on a cluster of GPU servers (`OP --nodes N [--gpus-per-node G] [--preset P]`): GPUs joined by
//   their node's NVLink domain, one NIC per GPU on a rail-optimized fabric with a spine per rail
//   (non-blocking), channels laid out as NCCL does (channel_rings.hpp), one channel per GPU of a
//   node by default.
//   The fabric is an ordinary scenario (generated, then loaded like a file, so --set reaches it and
//   /meta/scenario holds it); NVLink always runs at flow level.
// Each size runs on fresh networks, so sizes do not disturb each other, as nccl-tests' timed
// iterations follow warm-up.
#include <boost/program_options.hpp>
#include <iostream>
#include <memory>
#include <optional>

#include "models/collective/channel_rings.hpp"
#include "models/collective/collective_run.hpp"
#include "models/collective/nccl_tests.hpp"
#include "models/fabric/topology_config.hpp"
#include "models/node/cluster_network.hpp"
#include "models/node/node_preset.hpp"
#include "models/node/nvlink_domain.hpp"
#include "models/transport/network_config.hpp"
#include "sim/cli/checked_inputs.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/interrupt.hpp"
#include "sim/cli/progress.hpp"
#include "sim/cli/scenario_arguments.hpp"
#include "sim/core/discarding_backend.hpp"
#include "sim/output/hdf5_output.hpp"

namespace lockstep {
namespace {

namespace po = boost::program_options;

struct ResultRow {
  FixedText<16> op;
  std::int64_t ranks;
  std::int64_t bytes;
  std::int64_t count;
  std::int64_t time_ps;
  double bus_factor;
};

TableLayout result_layout() {
  using Row = ResultRow;
  return layout<Row>("nccl_tests",
                     {column("op", &Row::op), column("ranks", &Row::ranks),
                      column("bytes", &Row::bytes), column("count", &Row::count),
                      column("time_ps", &Row::time_ps), column("bus_factor", &Row::bus_factor)});
}

// Where the collective runs: the fabric, and the GPU servers when there are some.
struct Setup {
  NetworkConfig fabric;
  std::uint64_t seed = 0;
  std::optional<NodePreset> node;  // GPU servers on the fabric: NVLink inside, NICs outside
  std::int32_t channels = 1;
};

// Every channel on the endpoints' order, or on GPU servers NCCL's rail-aligned rings.
std::vector<std::vector<std::int32_t>> rings(const Setup& setup, std::int32_t ranks) {
  if (setup.node) {
    return rail_aligned_rings(ranks / setup.node->gpus, setup.node->gpus, setup.channels);
  }
  std::vector<std::int32_t> ring;
  for (std::int32_t r = 0; r < ranks; ++r) ring.push_back(r);
  return std::vector<std::vector<std::int32_t>>(static_cast<std::size_t>(setup.channels), ring);
}

struct Timed {
  Duration time;  // from the first message sent to the last chunk arrived
  Time end;       // when that simulation ended (acknowledgements included)
  std::uint64_t events = 0;
};

// One collective of `size` on fresh networks; empty if Ctrl-C stopped it.
std::optional<Timed> time_one(const Setup& setup, const Topology& topology, const Routing& routing,
                              CollectiveOp op, Bytes size) {
  Simulator sim;
  DiscardingBackend discard;
  const BitRate nic_rate = topology.cable(topology.ports(0)[0].cable).rate;
  const PacketNetworkConfig packet_config = packet_network_config(setup.fabric, nic_rate);
  const FlowNetworkConfig flow_config = flow_network_config(setup.fabric);
  std::unique_ptr<Network> fabric;
  if (setup.fabric.model == NetworkModel::kPacket) {
    fabric = std::make_unique<PacketNetwork>(sim, routing, packet_config, setup.seed, discard);
  } else {
    fabric = std::make_unique<FlowNetwork>(sim, routing, flow_config, setup.seed, discard);
  }
  Network* network = fabric.get();
  std::optional<Topology> nvlink_topology;
  std::optional<Routing> nvlink_routing;
  std::unique_ptr<FlowNetwork> nvlink;
  std::unique_ptr<ClusterNetwork> cluster;
  // NVLink moves data in 256 B flits without per-packet acknowledgements on the wire that would
  // share its links: no header or control frames in its fluid model.
  FlowNetworkConfig nvlink_config;
  nvlink_config.header = Bytes(0);
  nvlink_config.control_frame = Bytes(0);
  if (setup.node) {
    nvlink_topology.emplace(
        build_nvlink_domains(topology.endpoint_count() / setup.node->gpus, *setup.node));
    nvlink_routing.emplace(*nvlink_topology);
    nvlink =
        std::make_unique<FlowNetwork>(sim, *nvlink_routing, nvlink_config, setup.seed, discard);
    cluster = std::make_unique<ClusterNetwork>(*nvlink, *fabric, setup.node->gpus);
    network = cluster.get();
  }
  CollectiveRun collective(sim, *network, rings(setup, topology.endpoint_count()), op, size);
  ProgressReporter relay_interrupts(false, std::nullopt, [] { return std::nullopt; });
  sim.set_monitor(&relay_interrupts, ProgressReporter::kPeriodEvents);
  collective.start();
  // Periodic sampling keeps a packet network busy forever, so stop at the collective's end.
  while (!collective.finished() && !interrupt_requested()) {
    if (sim.run(sim.now() + Duration::us(100)) == RunOutcome::kDrained) break;
  }
  if (!collective.finished()) return std::nullopt;
  return Timed{collective.finished_at() - collective.started_at(), sim.now(),
               sim.events_processed()};
}

// A rail-optimized fabric for `nodes` servers of the preset: one rail per GPU, a spine per rail
// and as many uplinks per rail switch as it has NICs (rounded up to a multiple of the spines), so
// that NICs on different rails reach each other without oversubscription. NCCL's 4096 B MTU.
std::string cluster_scenario(std::int64_t nodes, const NodePreset& preset, std::uint64_t seed,
                             const std::string& model) {
  const std::int64_t gpus = preset.gpus;
  const std::int64_t uplinks = gpus * ((nodes + gpus - 1) / gpus);
  return "simulation:\n  seed: " + std::to_string(seed) + "\nnetwork:\n  model: " + model +
         "\n  topology:\n    kind: rail_optimized\n    link_rate: " +
         std::to_string(preset.nic_rate.bps()) +
         "bps\n    link_delay: 1us\n"
         "    rail_optimized: {servers: " +
         std::to_string(nodes) + ", nics_per_server: " + std::to_string(gpus) +
         ", spines: " + std::to_string(nodes > 1 ? gpus : 0) +
         ", uplinks_per_rail_switch: " + std::to_string(nodes > 1 ? uplinks : 0) +
         "}\n  transport:\n    payload: 4096B\n";
}

}  // namespace

int nccl_tests_command(const std::vector<std::string>& args) {
  po::options_description options("lockstep nccl-tests OP (SCENARIO | --nodes N) [options]");
  ScenarioArguments scenario_arguments;
  std::string op_name, min_text = "32M", max_text = "32M", output_path, preset_name = "dgx-h100";
  std::string model = "flow";
  std::int64_t factor = 2;
  std::int32_t channels = 0;
  std::int64_t nodes = 0;
  std::int32_t gpus_per_node = 0;
  options.add_options()("help,h", "show this help")(
      "minbytes,b", po::value(&min_text), "smallest size, bytes with K, M or G (default 32M)")(
      "maxbytes,e", po::value(&max_text), "largest size (default 32M)")(
      "stepfactor,f", po::value(&factor), "multiply the size by this from one row to the next (2)")(
      "channels", po::value(&channels),
      "rings the data is split over, one queue pair each (default: GPUs per node, or 1)")(
      "nodes", po::value(&nodes), "run on this many GPU servers instead of a scenario")(
      "gpus-per-node", po::value(&gpus_per_node), "GPUs per server (default: the preset's)")(
      "preset", po::value(&preset_name), "server: dgx-a100, dgx-h100 (default), dgx-h200")(
      "model", po::value(&model), "with --nodes, the fabric's level: flow (default) or packet")(
      "output,o", po::value(&output_path),
      "HDF5 output (default: SCENARIO's or the preset's name-OP.h5)");
  scenario_arguments.add_to(options);
  po::options_description hidden;
  hidden.add_options()("op", po::value(&op_name));
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("op", 1).add("scenario", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "lockstep nccl-tests: " << e.what() << "\n" << options;
    return exit_code::kBadInput;
  }
  if (vm.count("help") != 0) {
    std::cout << "Runs nccl-tests' size sweep of one collective (all_reduce, reduce_scatter,\n"
                 "all_gather, alltoall, sendrecv) over a scenario's network, one rank per "
                 "endpoint,\nor over --nodes GPU servers of a preset.\n\n"
              << options;
    return exit_code::kOk;
  }
  const bool on_servers = vm.count("nodes") != 0;
  const std::optional<CollectiveOp> op = collective_named(op_name);
  const std::optional<Bytes> min = nccl_tests::parse_size(min_text);
  const std::optional<Bytes> max = nccl_tests::parse_size(max_text);
  std::optional<NodePreset> preset = node_preset(preset_name);
  std::vector<std::string> problems;
  if (!op) problems.push_back("unknown collective '" + op_name + "'");
  if (on_servers == !scenario_arguments.scenario_paths().empty()) {
    problems.push_back("give a SCENARIO or --nodes, not both");
  }
  if (!min || *min < Bytes(1)) problems.push_back("-b " + min_text + ": not a size of 1 B or more");
  if (!max || (min && *max < *min)) problems.push_back("-e " + max_text + ": not a size >= -b");
  if (factor < 2) problems.push_back("-f " + std::to_string(factor) + ": must be at least 2");
  if (vm.count("channels") != 0 && channels < 1)
    problems.push_back("--channels must be at least 1");
  if (!preset) problems.push_back("--preset " + preset_name + ": not a preset");
  if (on_servers && nodes < 1) problems.push_back("--nodes must be at least 1");
  if (vm.count("gpus-per-node") != 0 && gpus_per_node < 1) {
    problems.push_back("--gpus-per-node must be at least 1");
  }
  if (model != "flow" && model != "packet")
    problems.push_back("--model " + model + ": flow or packet");
  if (!problems.empty()) {
    for (const std::string& p : problems) std::cerr << "lockstep nccl-tests: " << p << "\n";
    return exit_code::kBadInput;
  }
  if (vm.count("gpus-per-node") != 0) preset->gpus = gpus_per_node;

  std::optional<LoadedScenario> loaded;
  std::string where;
  std::filesystem::path default_output;
  if (on_servers) {
    where = std::to_string(nodes) + " x " + preset->name + " (" + std::to_string(preset->gpus) +
            " GPUs each)";
    default_output = preset->name + "-" + op_name + ".h5";
    const ScenarioLoad load = load_scenario_text(cluster_scenario(nodes, *preset, 1, model),
                                                 "--nodes", scenario_arguments.overrides());
    if (!load.loaded) {
      for (const Diagnostic& d : load.diagnostics.all()) std::cerr << d.to_string() << "\n";
      return exit_code::kBadInput;
    }
    loaded = *load.loaded;
  } else {
    const std::filesystem::path scenario_path = scenario_arguments.scenario_path();
    where = "scenario " + scenario_path.string();
    default_output = scenario_path.stem().string() + "-" + op_name + ".h5";
    loaded = load_or_report("nccl-tests", scenario_path, scenario_arguments.overrides());
    if (!loaded) return exit_code::kBadInput;
    if (!loaded->scenario.network) {
      std::cerr << scenario_path.string()
                << ": nccl-tests needs a `network` to run collectives on\n";
      return exit_code::kBadInput;
    }
  }
  const std::filesystem::path output =
      output_path.empty() ? default_output : std::filesystem::path(output_path);
  if (!output_writable("nccl-tests", output)) return exit_code::kBadInput;

  install_interrupt_handlers();
  Setup setup;
  setup.fabric = *loaded->scenario.network;
  setup.seed = loaded->scenario.simulation.seed;
  if (on_servers) setup.node = preset;
  setup.channels = channels > 0 ? channels : (on_servers ? preset->gpus : 1);
  const Topology topology = build_topology(setup.fabric.topology);
  const Routing routing(topology);
  const std::int64_t ranks = topology.endpoint_count();
  Hdf5Output file(output);
  file.write_meta_text("scenario", loaded->resolved_yaml);
  file.write_meta_text("scenario_file",
                       on_servers ? "--nodes " + std::to_string(nodes) + " --preset " + preset_name
                                  : scenario_arguments.scenario_path().string());
  file.write_meta_integer("seed", static_cast<std::int64_t>(setup.seed));
  file.write_meta_text("version", LOCKSTEP_VERSION);
  std::cout << "# lockstep nccl-tests " << op_name << ": " << ranks << " ranks on " << where
            << ", fabric at " << (setup.fabric.model == NetworkModel::kPacket ? "packet" : "flow")
            << " level, " << setup.channels << " channel(s)\n#\n";
  for (const std::string& line : nccl_tests::header_lines()) std::cout << line << "\n";
  double busbw_sum = 0.0;
  std::int64_t rows = 0;
  Timed last;
  std::uint64_t events = 0;
  {
    Table<ResultRow> results(file, result_layout());
    for (const Bytes requested : nccl_tests::size_sweep(*min, *max, factor)) {
      const nccl_tests::Shape shape = nccl_tests::shape(*op, requested, ranks);
      const std::optional<Timed> timed = time_one(setup, topology, routing, *op, shape.size);
      if (!timed) {
        std::cerr << "lockstep nccl-tests: interrupted; no output written\n";
        return exit_code::kInterrupted;
      }
      last = *timed;
      events += timed->events;
      const double factor_of_op = bus_bandwidth_factor(*op, ranks);
      // The fabric carries the same bytes in place and out of place: one time for both halves.
      std::cout << nccl_tests::row(*op, shape, ranks, timed->time, timed->time) << std::endl;
      busbw_sum += nccl_tests::algbw(shape.size, timed->time) * factor_of_op;
      ++rows;
      results.append(ResultRow{FixedText<16>(op_name), ranks, shape.size.count(), shape.count,
                               timed->time.ps(), factor_of_op});
    }
    results.flush();
  }
  for (const std::string& line : nccl_tests::closing_lines(busbw_sum / static_cast<double>(rows))) {
    std::cout << line << "\n";
  }
  file.write_meta_text("outcome", "completed");
  file.write_meta_integer("end_ps", last.end.ps());
  file.write_meta_integer("events", static_cast<std::int64_t>(events));
  file.commit();
  std::cout << "# lockstep: wrote " << std::filesystem::absolute(output).string() << "\n";
  return exit_code::kOk;
}

}  // namespace lockstep
