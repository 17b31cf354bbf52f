// `lockstep nccl-tests OP SCENARIO`: nccl-tests' sweep of one collective over a scenario's network,
// one rank per endpoint in endpoint order (the order of the ring), at the scenario's network level.
// Each size runs on a fresh network, so sizes do not disturb each other, as nccl-tests' timed
// iterations follow warm-up. The table goes to stdout in nccl-tests' format, and the results to an
// HDF5 table `nccl_tests`.
#include <boost/program_options.hpp>
#include <iostream>
#include <memory>
#include <optional>

#include "models/collective/collective_run.hpp"
#include "models/collective/nccl_tests.hpp"
#include "models/fabric/topology_config.hpp"
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

struct Timed {
  Duration time;  // from the first message sent to the last chunk arrived
  Time end;       // when that simulation ended (acknowledgements included)
  std::uint64_t events = 0;
};

// One collective of `size` on a fresh network; empty if Ctrl-C stopped it.
std::optional<Timed> time_one(const NetworkConfig& config, const Topology& topology,
                              const Routing& routing, std::uint64_t seed, CollectiveOp op,
                              Bytes size, std::int32_t channels) {
  Simulator sim;
  DiscardingBackend discard;
  const BitRate nic_rate = topology.cable(topology.ports(0)[0].cable).rate;
  const PacketNetworkConfig packet_config = packet_network_config(config, nic_rate);
  std::unique_ptr<Network> network;
  if (config.model == NetworkModel::kPacket) {
    network = std::make_unique<PacketNetwork>(sim, routing, packet_config, seed, discard);
  } else {
    network =
        std::make_unique<FlowNetwork>(sim, routing, flow_network_config(config), seed, discard);
  }
  std::vector<std::int32_t> ring;
  for (std::int32_t e = 0; e < topology.endpoint_count(); ++e) ring.push_back(e);
  CollectiveRun collective(sim, *network, ring, op, size, CollectiveOptions{channels, 0});
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

}  // namespace

int nccl_tests_command(const std::vector<std::string>& args) {
  po::options_description options("lockstep nccl-tests OP SCENARIO [options]");
  ScenarioArguments scenario_arguments;
  std::string op_name, min_text = "32M", max_text = "32M", output_path;
  std::int64_t factor = 2;
  std::int32_t channels = 1;
  options.add_options()("help,h", "show this help")(
      "minbytes,b", po::value(&min_text), "smallest size, bytes with K, M or G (default 32M)")(
      "maxbytes,e", po::value(&max_text), "largest size (default 32M)")(
      "stepfactor,f", po::value(&factor), "multiply the size by this from one row to the next (2)")(
      "channels", po::value(&channels), "rings the data is split over, one queue pair each (1)")(
      "output,o", po::value(&output_path), "HDF5 output (default: SCENARIO's name-OP.h5)");
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
                 "endpoint.\n\n"
              << options;
    return exit_code::kOk;
  }
  const std::optional<CollectiveOp> op = collective_named(op_name);
  const std::optional<Bytes> min = nccl_tests::parse_size(min_text);
  const std::optional<Bytes> max = nccl_tests::parse_size(max_text);
  std::vector<std::string> problems;
  if (!op) problems.push_back("unknown collective '" + op_name + "'");
  if (scenario_arguments.scenario_paths().empty()) problems.push_back("give a SCENARIO");
  if (!min || *min < Bytes(1)) problems.push_back("-b " + min_text + ": not a size of 1 B or more");
  if (!max || (min && *max < *min)) problems.push_back("-e " + max_text + ": not a size >= -b");
  if (factor < 2) problems.push_back("-f " + std::to_string(factor) + ": must be at least 2");
  if (channels < 1) problems.push_back("--channels must be at least 1");
  if (!problems.empty()) {
    for (const std::string& p : problems) std::cerr << "lockstep nccl-tests: " << p << "\n";
    return exit_code::kBadInput;
  }
  const std::filesystem::path scenario_path = scenario_arguments.scenario_path();
  const std::optional<LoadedScenario> loaded =
      load_or_report("nccl-tests", scenario_path, scenario_arguments.overrides());
  if (!loaded) return exit_code::kBadInput;
  if (!loaded->scenario.network) {
    std::cerr << scenario_path.string() << ": nccl-tests needs a `network` to run collectives on\n";
    return exit_code::kBadInput;
  }
  const std::filesystem::path output =
      output_path.empty()
          ? std::filesystem::path(scenario_path.stem().string() + "-" + op_name + ".h5")
          : std::filesystem::path(output_path);
  if (!output_writable("nccl-tests", output)) return exit_code::kBadInput;

  install_interrupt_handlers();
  const NetworkConfig& network = *loaded->scenario.network;
  const Topology topology = build_topology(network.topology);
  const Routing routing(topology);
  const std::int64_t ranks = topology.endpoint_count();
  Hdf5Output file(output);
  file.write_meta_text("scenario", loaded->resolved_yaml);
  file.write_meta_text("scenario_file", scenario_path.string());
  file.write_meta_integer("seed", static_cast<std::int64_t>(loaded->scenario.simulation.seed));
  file.write_meta_text("version", LOCKSTEP_VERSION);
  std::cout << "# lockstep nccl-tests " << op_name << ": " << ranks << " ranks (one per endpoint), "
            << (network.model == NetworkModel::kPacket ? "packet" : "flow") << " level, "
            << channels << " channel(s), scenario " << scenario_path.string() << "\n#\n";
  for (const std::string& line : nccl_tests::header_lines()) std::cout << line << "\n";
  double busbw_sum = 0.0;
  std::int64_t rows = 0;
  Timed last;
  std::uint64_t events = 0;
  {
    Table<ResultRow> results(file, result_layout());
    for (const Bytes requested : nccl_tests::size_sweep(*min, *max, factor)) {
      const nccl_tests::Shape shape = nccl_tests::shape(*op, requested, ranks);
      const std::optional<Timed> timed = time_one(
          network, topology, routing, loaded->scenario.simulation.seed, *op, shape.size, channels);
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
