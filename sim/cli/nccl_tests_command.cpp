// `lockstep nccl-tests OP`: nccl-tests' sweep of one collective, printed in nccl-tests' format and
// recorded to an HDF5 table `nccl_tests`. Two ways to say where it runs:
// - over a scenario's network (`OP SCENARIO`): one rank per endpoint, in endpoint order, every
//   channel on that ring, at the scenario's network level;
// - on a cluster of GPU servers (`OP --nodes N [--gpus-per-node G] [--preset P]`): GPUs joined by
//   their node's NVLink domain, one NIC per GPU on a rail-optimized fabric with a spine per rail
//   (non-blocking), channels laid out as NCCL does (channel_rings.hpp), as many as NCCL runs the
//   size on by default, each no faster than NCCL's speed for a channel.
//   The fabric is an ordinary scenario (generated, then loaded like a file, so --set reaches it and
//   /meta/scenario holds it); NVLink always runs at flow level.
// `--ranks` narrows the run to a communicator (communicator.hpp), the rest of the cluster idle.
// Each size also records every rank's transfer time (`nccl_tests_ranks`), which names the slow
// rank. Each size runs on fresh networks, so sizes do not disturb each other, as nccl-tests' timed
// iterations follow warm-up. NCCL's algorithm and protocol come from --algo/--proto or
// NCCL_ALGO/NCCL_PROTO (NCCL's list syntax); among those allowed, each size runs with the pair
// NCCL's own cost model rates fastest (nccl_tuner.hpp), as NCCL does, or with --choice fastest
// with every pair, reporting the fastest.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include "models/cluster/collective_timing.hpp"
#include "models/cluster/nccl_collective.hpp"
#include "models/collective/communicator.hpp"
#include "models/collective/nccl_choice.hpp"
#include "models/collective/nccl_tests.hpp"
#include "models/collective/nccl_tuner.hpp"
#include "models/fabric/topology.hpp"
#include "models/node/node_preset.hpp"
#include "models/transport/network_config.hpp"
#include "sim/cli/checked_inputs.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/interrupt.hpp"
#include "sim/cli/scenario_arguments.hpp"
#include "sim/core/quantity.hpp"
#include "sim/output/hdf5_output.hpp"
#include "sim/run/run.hpp"

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
  FixedText<16> algorithm;
  FixedText<8> protocol;
  std::int64_t collective_ps;
  std::int64_t channels;
};

// Per size and rank: how long the rank's transfers took, the view that finds the rank the others
// wait for.
struct RankRow {
  std::int64_t size_index;
  std::int64_t bytes;
  std::int64_t rank;
  std::int64_t send_time_ps;
  std::int64_t receive_time_ps;
};

TableLayout rank_layout() {
  using Row = RankRow;
  return layout<Row>("nccl_tests_ranks",
                     {column("size_index", &Row::size_index), column("bytes", &Row::bytes),
                      column("rank", &Row::rank), column("send_time_ps", &Row::send_time_ps),
                      column("receive_time_ps", &Row::receive_time_ps)});
}

// "0-3,8-11" as ranks 0 1 2 3 8 9 10 11, in the order written; nullopt for a malformed list or
// a rank beyond any cluster lockstep builds (checked before a range is expanded).
std::optional<std::vector<std::int32_t>> parse_rank_list(const std::string& text) {
  std::vector<std::int32_t> ranks;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const std::size_t dash = item.find('-');
    try {
      std::size_t used = 0;
      const int first = std::stoi(item.substr(0, dash), &used);
      if (used != item.substr(0, dash).size()) return std::nullopt;
      int last = first;
      if (dash != std::string::npos) {
        last = std::stoi(item.substr(dash + 1), &used);
        if (used != item.size() - dash - 1) return std::nullopt;
      }
      constexpr int kLargestRank = 1 << 24;
      if (first < 0 || last < first || last > kLargestRank) return std::nullopt;
      for (int r = first; r <= last; ++r) ranks.push_back(r);
    } catch (const std::logic_error&) {
      return std::nullopt;
    }
    at = comma + 1;
  }
  return ranks;
}

TableLayout result_layout() {
  using Row = ResultRow;
  return layout<Row>(
      "nccl_tests",
      {column("op", &Row::op), column("ranks", &Row::ranks), column("bytes", &Row::bytes),
       column("count", &Row::count), column("time_ps", &Row::time_ps),
       column("bus_factor", &Row::bus_factor), column("algorithm", &Row::algorithm),
       column("protocol", &Row::protocol), column("collective_ps", &Row::collective_ps),
       column("channels", &Row::channels)});
}

// An option's value, else the environment variable NCCL users set, else automatic.
std::string option_or_environment(const std::string& option, const char* variable) {
  if (!option.empty()) return option;
  const char* value = std::getenv(variable);
  return value == nullptr ? "" : value;
}

// The host's time for one NCCL call, enqueue and kernel launch: nccl-tests driving 8 GPUs from one
// thread (-g 8) is flat at 32-35 us per iteration from 8 B up to where the GPUs take longer, on
// 8 x H100 (NVIDIA/nccl issue 2094, NCCL 2.29; tests/data/nccl_sweeps: 35-38 us, NCCL 2.26) and on
// DGX-A100 (NVIDIA/nccl-tests issue 123: 10, 16.9 and 33.7 us for 2, 4 and 8 GPUs, linear in the
// GPUs one thread launches on; tests/data/nccl_sweeps: 32 us), about 4.2 us per GPU; a bare
// cuLaunchKernel takes 3.0-3.3 us (meta-pytorch/tritonbench PR 1017), NCCL's enqueue the rest.
// Those small sizes run on one or two channels.
constexpr const char* kDefaultLaunchOverhead = "4.2us";
// NCCL's enqueue also does work for each channel an operation runs on (src/enqueue.cc: a work
// batch per channel in the kernel's plan). The four -g 8 sweeps on 8 x H100 in
// tests/data/nccl_sweeps show it: the iteration floor follows the channels NCCL runs the size on,
// not the size, from 35 us on one channel to 41.7-43.5 us on 24 (1 MiB), flat from there to 4 MiB:
// 45 ns a channel beyond the first on each GPU. No other published figure gives it, and no sweep
// gives it for NCCL's point-to-point path (all-to-all, send/recv), which is left without it.
constexpr Duration kEnqueuePerChannel = Duration::ns(45);
// The largest NVLink domain built (NVL576): a server of more GPUs is a typo, and would cost
// minutes a size for a ring per GPU over every GPU.
constexpr std::int32_t kMostGpusPerNode = 576;

// A rail switch of cluster_scenario's fabric has a port per server and as many uplinks.
std::int64_t rail_switch_ports(std::int64_t nodes, std::int64_t gpus) {
  return nodes + gpus * ((nodes + gpus - 1) / gpus);
}

// `nodes` servers of the preset on a rail-optimized fabric: one rail per GPU, a spine per rail and
// as many uplinks per rail switch as it has NICs (rounded up to a multiple of the spines), so that
// NICs on different rails reach each other without oversubscription. NCCL's 4096 B MTU.
std::string cluster_scenario(std::int64_t nodes, const NodePreset& preset, std::uint64_t seed,
                             const std::string& model) {
  const std::int64_t gpus = preset.gpus;
  const std::int64_t uplinks = rail_switch_ports(nodes, gpus) - nodes;
  return "simulation:\n  seed: " + std::to_string(seed) + "\nnetwork:\n  model: " + model +
         "\n  topology:\n    kind: rail_optimized\n    link_rate: " +
         std::to_string(preset.nic_rate.bps()) +
         "bps\n    link_delay: 1us\n"
         "    rail_optimized: {servers: " +
         std::to_string(nodes) + ", nics_per_server: " + std::to_string(gpus) +
         ", spines: " + std::to_string(nodes > 1 ? gpus : 0) +
         ", uplinks_per_rail_switch: " + std::to_string(nodes > 1 ? uplinks : 0) +
         "}\n  transport:\n    payload: 4096B\nservers:\n  preset: " + preset.name +
         "\n  gpus: " + std::to_string(gpus) + "\n";
}

}  // namespace

int nccl_tests_command(const std::vector<std::string>& args) {
  po::options_description options("lockstep nccl-tests OP (SCENARIO | --nodes N) [options]");
  ScenarioArguments scenario_arguments;
  std::string op_name, min_text = "32M", max_text = "32M", output_path, preset_name = "dgx-h100";
  std::string model = "flow", choice = "nccl", algo_option, proto_option, transport = "rdma",
              rank_list, socket_interface, launch_overhead_text = kDefaultLaunchOverhead;
  std::vector<std::int32_t> staged_nics;
  bool no_gpudirect = false;
  std::int64_t factor = 2;
  std::int32_t channels = 0;
  std::int32_t gpus_per_thread = 1;
  std::int64_t nodes = 0;
  std::int32_t gpus_per_node = 0;
  bool quiet = false;
  const std::string launch_overhead_help =
      "the host's time to enqueue one NCCL operation on a GPU and launch its kernel: nccl-tests "
      "issues its iterations back to back, so none is shorter than this times -g, plus " +
      format(kEnqueuePerChannel) + " for each channel beyond the first that a collective (not " +
      "alltoall or sendrecv) runs on (default " + std::string(kDefaultLaunchOverhead) +
      "; 0us as with CUDA graphs, nccl-tests -G, which leaves no host work)";
  options.add_options()("help,h", "show this help")("quiet,q", po::bool_switch(&quiet),
                                                    "no progress line")(
      "minbytes,b", po::value(&min_text), "smallest size, bytes with K, M or G (default 32M)")(
      "maxbytes,e", po::value(&max_text), "largest size (default 32M)")(
      "stepfactor,f", po::value(&factor), "multiply the size by this from one row to the next (2)")(
      "channels", po::value(&channels),
      "rings (or trees) the data is split over, one queue pair each (default: on GPU servers as "
      "many as NCCL runs the size on, one per GPU of a node for alltoall and sendrecv; else one "
      "ring, or both trees)")("nodes", po::value(&nodes),
                              "run on this many GPU servers instead of a scenario")(
      "ranks", po::value(&rank_list),
      "run on these ranks only, a communicator such as a TP group: 0-3,8-11 (default: all); "
      "NCCL lays it out by node, nodes in the order listed")(
      "gpus-per-node", po::value(&gpus_per_node), "GPUs per server (default: the preset's)")(
      "preset", po::value(&preset_name), "server: dgx-a100, dgx-h100 (default), dgx-h200")(
      "model", po::value(&model), "with --nodes, the fabric's level: flow (default) or packet")(
      "transport", po::value(&transport),
      "between nodes: rdma (default) or socket (NCCL's TCP fallback, also with NCCL_IB_DISABLE=1)")(
      "socket-interface", po::value(&socket_interface),
      "with sockets, the rate of the one interface per node NCCL picked (NCCL_SOCKET_IFNAME on a "
      "front-end port, e.g. 25Gbps), shared by the node's GPUs (default: every NIC's own)")(
      "nic-on-other-socket", po::value(&staged_nics)->composing(),
      "this rank's NIC sits on the other CPU socket: its data goes through host memory at half "
      "the NIC's rate (repeatable)")(
      "no-gpudirect", po::bool_switch(&no_gpudirect),
      "GPUDirect RDMA off: every NIC's data goes through host memory")(
      "algo", po::value(&algo_option),
      "Ring, Tree, NVLS, NVLSTree, a list, or ^list to exclude (default: $NCCL_ALGO, else all; "
      "--choice picks one for each size); also CollNetDirect (switches that reduce, InfiniBand "
      "SHARP) when named or with NCCL_COLLNET_ENABLE=1, and Hierarchical, lockstep's two-level "
      "all-reduce, when named")(
      "proto", po::value(&proto_option),
      "LL, LL128, Simple, a list, or ^list (default: $NCCL_PROTO, else all allowed)")(
      "choice", po::value(&choice),
      "among the allowed algorithms and protocols, run for each size: nccl (default), the one "
      "NCCL's own cost model rates fastest, as NCCL does (on GPU servers; all-to-all and "
      "send/recv, which NCCL does not rate, and fabric-only runs take the fastest); or fastest, "
      "each timed here and the fastest kept, no faster than the host issues it on its channels")(
      "launch-overhead", po::value(&launch_overhead_text), launch_overhead_help.c_str())(
      "ngpus,g", po::value(&gpus_per_thread),
      "GPUs each nccl-tests thread drives, launching on each in turn (nccl-tests -g; default 1, "
      "one process per GPU)")(
      "output,o", po::value(&output_path),
      "HDF5 output (default: SCENARIO's name-OP.h5, or with --nodes N the preset's "
      "name-Nnodes-OP.h5)");
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
                 "all_gather, alltoall, sendrecv, broadcast, reduce) over a scenario's network, "
                 "one rank per "
                 "endpoint,\nor over --nodes GPU servers of a preset.\n\n"
              << options
              << "\nNCCL's variables it reads: NCCL_ALGO, NCCL_PROTO, NCCL_IB_DISABLE, "
                 "NCCL_COLLNET_ENABLE,\nNCCL_PXN_DISABLE, and NCCL_IB_QPS_PER_CONNECTION (queue "
                 "pairs per connection between\nnodes, each message on the next, as with "
                 "NCCL_IB_SPLIT_DATA_ON_QPS=0, its default and the\nonly value taken; the "
                 "scenario's hosts.queue_pairs_per_connection).\n";
    return exit_code::kOk;
  }
  const bool on_servers = vm.count("nodes") != 0;
  const std::optional<CollectiveOp> op = collective_named(op_name);
  const std::optional<Bytes> min = nccl_tests::parse_size(min_text);
  const std::optional<Bytes> max = nccl_tests::parse_size(max_text);
  std::optional<NodePreset> preset = node_preset(preset_name);
  std::vector<std::string> problems;
  if (!op) problems.push_back("unknown collective '" + op_name + "'");
  if (on_servers && !scenario_arguments.scenario_paths().empty()) {
    problems.push_back("give a SCENARIO or --nodes, not both");
  }
  if (!on_servers && scenario_arguments.scenario_paths().empty()) {
    problems.push_back("give a SCENARIO to run on, or --nodes N for GPU servers");
  }
  if (scenario_arguments.until_given()) {
    problems.push_back("--until: nccl-tests runs every size to its end (each on its own clock)");
  }
  const std::string not_a_size =
      ": not a size (bytes with K, M or G as nccl-tests takes them: 8, 64K, 1G)";
  if (!min) {
    problems.push_back("-b " + min_text + not_a_size);
  } else if (*min < Bytes(1)) {
    problems.push_back("-b " + min_text + ": must be at least 1 B");
  }
  if (!max) {
    problems.push_back("-e " + max_text + not_a_size);
  } else if (min && *max < *min) {
    problems.push_back("-e " + max_text + ": must not be below -b");
  }
  if (factor < 2) problems.push_back("-f " + std::to_string(factor) + ": must be at least 2");
  if (vm.count("channels") != 0 && channels < 1)
    problems.push_back("--channels must be at least 1");
  if (!preset) problems.push_back("--preset " + preset_name + ": not a preset");
  if (on_servers && nodes < 1) problems.push_back("--nodes must be at least 1");
  if (vm.count("gpus-per-node") != 0 && (gpus_per_node < 1 || gpus_per_node > kMostGpusPerNode)) {
    problems.push_back("--gpus-per-node must be from 1 to " + std::to_string(kMostGpusPerNode) +
                       " (NVL576, the largest NVLink domain)");
  }
  if (on_servers && preset && nodes > 1) {
    const std::int64_t gpus = vm.count("gpus-per-node") != 0 ? gpus_per_node : preset->gpus;
    const std::int64_t ports = rail_switch_ports(nodes, std::max<std::int64_t>(gpus, 1));
    if (ports > kMaxPortsPerNode) {
      problems.push_back("--nodes " + std::to_string(nodes) +
                         ": too many servers for one rail-optimized fabric: each rail switch "
                         "would need " +
                         std::to_string(ports) +
                         " ports (one per server and as many uplinks), "
                         "more than " +
                         std::to_string(kMaxPortsPerNode));
    }
  }
  const std::optional<std::vector<std::int32_t>> communicator =
      rank_list.empty() ? std::vector<std::int32_t>{} : parse_rank_list(rank_list);
  if (!communicator) problems.push_back("--ranks " + rank_list + ": a list like 0-3,8-11");
  if (choice != "nccl" && choice != "fastest")
    problems.push_back("--choice " + choice + ": nccl or fastest");
  if (model != "flow" && model != "packet")
    problems.push_back("--model " + model + ": flow or packet");
  const std::string algo_text = option_or_environment(algo_option, "NCCL_ALGO");
  const std::string proto_text = option_or_environment(proto_option, "NCCL_PROTO");
  // As NCCL: CollNet joins the choice only with NCCL_COLLNET_ENABLE=1 (switches that reduce).
  const char* collnet_enable = std::getenv("NCCL_COLLNET_ENABLE");
  const std::optional<std::vector<NcclAlgorithm>> algorithms = allowed_algorithms(
      algo_text, collnet_enable != nullptr && std::string(collnet_enable) == "1");
  const std::optional<std::vector<NcclProtocol>> protocols = allowed_protocols(proto_text);
  if (!algorithms)
    problems.push_back("algorithm " + algo_text +
                       ": Ring, Tree, NVLS, NVLSTree, CollNetDirect, a list or ^list");
  if (!protocols) {
    problems.push_back("protocol " + proto_text + ": LL, LL128, Simple, a list or ^list");
  }

  if (gpus_per_thread < 1) problems.push_back("-g must be at least 1");
  const Parsed<Duration> launch_overhead = parse_duration(launch_overhead_text);
  if (!launch_overhead.value) {
    problems.push_back("--launch-overhead " + launch_overhead_text + ": " + launch_overhead.error);
  } else if (*launch_overhead.value < Duration()) {
    problems.push_back("--launch-overhead " + launch_overhead_text + ": cannot be negative");
  }
  if (channels > kMostChannels) {
    problems.push_back("--channels: at most " + std::to_string(kMostChannels) + ", as in NCCL");
  }
  if (!problems.empty()) {
    for (const std::string& p : problems) std::cerr << "lockstep nccl-tests: " << p << "\n";
    return exit_code::kBadInput;
  }
  if (vm.count("gpus-per-node") != 0) preset->gpus = gpus_per_node;

  // The flags that describe the machines are the scenario's `servers` and `hosts` keys, set as
  // overrides ahead of the user's --set: a run with them is the scenario /meta/scenario records.
  std::vector<Override> overrides;
  auto set = [&overrides](const std::string& assignment, const std::string& origin) {
    overrides.push_back(Override{assignment, origin});
  };
  const char* ib_disable = std::getenv("NCCL_IB_DISABLE");
  if (vm.count("transport") != 0) {
    set("hosts.transport=" + transport, "--transport " + transport);
  } else if (ib_disable != nullptr && std::string(ib_disable) == "1") {
    set("hosts.transport=socket", "NCCL_IB_DISABLE=1");  // how NCCL users force the fallback
  }
  if (!socket_interface.empty()) {
    set("hosts.socket_interface=" + socket_interface, "--socket-interface " + socket_interface);
  }
  if (const char* qps = std::getenv("NCCL_IB_QPS_PER_CONNECTION"); qps != nullptr) {
    set("hosts.queue_pairs_per_connection=" + std::string(qps),
        "NCCL_IB_QPS_PER_CONNECTION=" + std::string(qps));
  }
  if (const char* split = std::getenv("NCCL_IB_SPLIT_DATA_ON_QPS");
      split != nullptr && std::string(split) != "0") {
    std::cerr << "lockstep nccl-tests: NCCL_IB_SPLIT_DATA_ON_QPS=" << split
              << " is not modelled: each message goes on one queue pair of its connection, the "
                 "next in turn, as NCCL does by default (0)\n";
    return exit_code::kBadInput;
  }
  if (!staged_nics.empty()) {
    std::string list;
    for (const std::int32_t r : staged_nics) list += (list.empty() ? "" : ", ") + std::to_string(r);
    set("hosts.nics_on_other_socket=[" + list + "]", "--nic-on-other-socket " + list);
  }
  if (no_gpudirect) set("hosts.gpudirect=false", "--no-gpudirect");
  if (!on_servers && vm.count("preset") != 0) {
    set("servers.preset=" + preset_name, "--preset " + preset_name);
  }
  if (!on_servers && vm.count("gpus-per-node") != 0) {
    set("servers.gpus=" + std::to_string(gpus_per_node),
        "--gpus-per-node " + std::to_string(gpus_per_node));
  }
  for (const Override& o : scenario_arguments.overrides()) overrides.push_back(o);

  std::optional<LoadedScenario> loaded;
  std::string where;
  std::filesystem::path default_output;
  if (on_servers) {
    where = std::to_string(nodes) + " x " + preset->name + " (" + std::to_string(preset->gpus) +
            " GPUs each)";
    // The node count too: runs of different sizes must not overwrite each other's file.
    default_output = preset->name + "-" + std::to_string(nodes) + "nodes-" + op_name + ".h5";
    const ScenarioLoad load =
        load_scenario_text(cluster_scenario(nodes, *preset, 1, model), "--nodes", overrides);
    if (!load.loaded) {
      for (const Diagnostic& d : load.diagnostics.all()) std::cerr << d.to_string() << "\n";
      return exit_code::kBadInput;
    }
    loaded = *load.loaded;
  } else {
    const std::filesystem::path scenario_path = scenario_arguments.scenario_path();
    where = "scenario " + scenario_path.string();
    default_output = scenario_path.stem().string() + "-" + op_name + ".h5";
    loaded = load_or_report("nccl-tests", scenario_path, overrides);
    if (!loaded) return exit_code::kBadInput;
    if (!loaded->scenario.network) {
      std::cerr << scenario_path.string()
                << ": nccl-tests needs a `network` to run collectives on\n";
      return exit_code::kBadInput;
    }
  }
  if (!loaded->scenario.network->link_events.empty()) {
    std::cerr << "lockstep nccl-tests: the scenario's network.link_events are not played by "
                 "nccl-tests yet; remove them (--set network.link_events=[])\n";
    return exit_code::kBadInput;
  }
  const std::filesystem::path output =
      output_path.empty() ? default_output : std::filesystem::path(output_path);
  if (!output_writable("nccl-tests", output)) return exit_code::kBadInput;

  install_interrupt_handlers();
  CollectiveSetup setup;
  setup.cluster = cluster_spec(loaded->scenario);
  const HostsConfig& hosts = setup.cluster.hosts;
  const std::optional<NodePreset>& servers = setup.cluster.servers;
  setup.communicator = *communicator;
  const char* pxn_disable = std::getenv("NCCL_PXN_DISABLE");
  setup.pxn = pxn_disable == nullptr || std::string(pxn_disable) != "1";
  setup.channels = channels;
  const Routing routing(*loaded->topology);
  const std::int32_t cluster_ranks = loaded->topology->endpoint_count();
  CommunicatorLayout layout;
  try {
    layout = communicator_of(setup, cluster_ranks);
  } catch (const std::invalid_argument& e) {
    std::cerr << "lockstep nccl-tests: --ranks " << rank_list << ": " << e.what() << "\n";
    return exit_code::kBadInput;
  }
  const std::int64_t ranks = static_cast<std::int64_t>(layout.members.size());
  const std::vector<std::pair<NcclAlgorithm, NcclProtocol>> pairs =
      runnable_pairs(*op, *algorithms, *protocols, servers && servers->nvlink_sharp, layout.nodes,
                     layout.gpus_per_node);
  if (pairs.empty()) {
    std::cerr << "lockstep nccl-tests: no allowed algorithm and protocol run " << op_name
              << " here (Tree, NVLS, NVLSTree, CollNetDirect and Hierarchical run all_reduce "
                 "only; NVLS, NVLSTree and CollNetDirect need Simple; NVLS and NVLSTree two or "
                 "more GPUs per dgx-h100 or dgx-h200 node, NVLS on one node, NVLSTree and "
                 "CollNetDirect across several)\n";
    return exit_code::kBadInput;
  }
  if (gpus_per_thread > ranks) {
    std::cerr << "lockstep nccl-tests: -g " << gpus_per_thread << ": more GPUs per thread than the "
              << ranks << " ranks\n";
    return exit_code::kBadInput;
  }
  // What the host takes to issue one iteration of a size that runs on `channels_run` channels.
  const auto issue = [&](std::int32_t channels_run) {
    if (*launch_overhead.value == Duration()) return Duration();
    return (*launch_overhead.value + kEnqueuePerChannel * (channels_run - 1)) * gpus_per_thread;
  };
  // NCCL's own choice needs what its tuning reads of a server; a bare fabric has none.
  const std::optional<NcclSystem> tuner_system =
      choice == "nccl" && servers && nccl_rates(*op)
          ? std::optional<NcclSystem>(nccl_system(*servers, layout.nodes, layout.gpus_per_node,
                                                  loaded->topology->nic_rate()))
          : std::nullopt;
  const std::vector<std::int32_t> staged = host_staged_nics(hosts, cluster_ranks);
  Hdf5Output file(output);
  remove_on_second_signal(file.temporary_path());
  file.write_meta_text("scenario", loaded->resolved_yaml);
  file.write_meta_text("scenario_file",
                       on_servers ? "--nodes " + std::to_string(nodes) + " --preset " + preset_name
                                  : scenario_arguments.scenario_path().string());
  file.write_meta_integer("seed", static_cast<std::int64_t>(setup.cluster.seed));
  file.write_meta_text("version", LOCKSTEP_VERSION);
  std::cout << "# lockstep nccl-tests " << op_name << ": " << ranks << " ranks on " << where
            << ", fabric at "
            << (setup.cluster.fabric.model == NetworkModel::kPacket ? "packet" : "flow")
            << " level over "
            << (hosts.transport != FabricTransport::kSocket ? "RDMA"
                : !hosts.socket_interface
                    ? "sockets"
                    : "sockets on one " + format(*hosts.socket_interface) + " interface per node")
            << (hosts.queue_pairs_per_connection > 1
                    ? " with " + std::to_string(hosts.queue_pairs_per_connection) +
                          " queue pairs per connection"
                    : "")
            << ", "
            << (staged.empty() ? ""
                               : std::to_string(staged.size()) + " NIC(s) through host memory, ")
            << (setup.channels > 0 ? std::to_string(setup.channels) + " channel(s)"
                : servers          ? "NCCL's channels for each size"
                                   : "1 ring channel or both trees")
            << ", algorithm " << (algo_text.empty() ? "auto" : algo_text) << ", protocol "
            << (proto_text.empty() ? "auto" : proto_text) << ", chosen "
            << (tuner_system ? "by NCCL's cost model" : "fastest") << ", " << gpus_per_thread
            << " GPU(s) per thread at " << format(*launch_overhead.value) << " a launch\n#\n";
  for (const std::string& line : nccl_tests::header_lines()) std::cout << line << "\n";
  double busbw_sum = 0.0;
  std::int64_t rows = 0;
  TimedCollective last;
  std::uint64_t events = 0;
  {
    Table<ResultRow> results(file, result_layout());
    Table<RankRow> rank_results(file, rank_layout());
    const std::vector<Bytes> sizes = nccl_tests::size_sweep(*min, *max, factor);
    // A size can take minutes on a large machine: say which one is running until its row prints.
    const bool show_progress = !quiet && isatty(STDERR_FILENO) != 0;
    for (std::size_t index = 0; index < sizes.size(); ++index) {
      const nccl_tests::Shape shape = nccl_tests::shape(*op, sizes[index], ranks);
      if (show_progress) {
        std::cerr << "\rlockstep nccl-tests: timing " << format(shape.size) << ", size "
                  << index + 1 << " of " << sizes.size() << " ..." << std::flush;
      }
      std::optional<FastestCollective> fastest;
      try {
        const std::optional<NcclTunerChoice> tuned =
            tuner_system ? nccl_tuner_choice(*tuner_system, *op, shape.size, pairs) : std::nullopt;
        if (tuned) {
          std::optional<TimedCollective> timed =
              time_collective(setup, routing, *op, shape.size, tuned->algorithm, tuned->protocol,
                              interrupt_requested);
          if (timed) {
            const std::uint64_t timed_events = timed->events;
            fastest = FastestCollective{std::move(*timed), tuned->algorithm, tuned->protocol,
                                        timed_events};
          }
        } else {
          fastest = time_fastest(
              setup, routing, *op, shape.size, pairs, interrupt_requested,
              [&](std::int32_t channels_run) { return issue(nccl_rates(*op) ? channels_run : 1); });
        }
      } catch (const std::invalid_argument& e) {
        std::cerr << "lockstep nccl-tests: " << e.what() << "; no output written\n";
        return exit_code::kBadInput;
      }
      if (!fastest) {
        std::cerr << "lockstep nccl-tests: interrupted; no output written\n";
        return exit_code::kInterrupted;
      }
      events += fastest->events;
      const TimedCollective* timed = &fastest->timed;
      const std::pair<NcclAlgorithm, NcclProtocol> chosen{fastest->algorithm, fastest->protocol};
      last = *timed;
      for (std::size_t i = 0; i < timed->ranks.size(); ++i) {
        const RankTransferTimes& times = timed->rank_transfer_times[i];
        rank_results.append(RankRow{rows, shape.size.count(), timed->ranks[i], times.sent.ps(),
                                    times.received.ps()});
      }
      if (show_progress) std::cerr << "\r\033[K" << std::flush;
      const double factor_of_op = bus_bandwidth_factor(*op, ranks);
      // The host issues the next iteration while the GPUs run this one: an iteration takes the
      // longer of the two.
      const Duration iteration =
          std::max(timed->time, issue(nccl_rates(*op) ? timed->channels : 1));
      // The fabric carries the same bytes in place and out of place: one time for both halves.
      std::cout << nccl_tests::row(*op, shape, ranks, iteration, iteration) << std::endl;
      busbw_sum += nccl_tests::algbw(shape.size, iteration) * factor_of_op;
      ++rows;
      results.append(
          ResultRow{FixedText<16>(op_name), ranks, shape.size.count(), shape.count, iteration.ps(),
                    factor_of_op, FixedText<16>(algorithm_name(chosen.first)),
                    FixedText<8>(protocol_name(chosen.second)), timed->time.ps(), timed->channels});
    }
    results.flush();
    rank_results.flush();
  }
  for (const std::string& line : nccl_tests::closing_lines(busbw_sum / static_cast<double>(rows))) {
    std::cout << line << "\n";
  }
  file.write_meta_text("kind", "nccl-tests");
  file.write_meta_text("outcome", "completed");
  file.write_meta_integer("end_ps", last.end.ps());
  file.write_meta_integer("events", static_cast<std::int64_t>(events));
  file.commit();
  std::cout << "# lockstep: wrote " << std::filesystem::absolute(output).string() << "\n";
  return exit_code::kOk;
}

}  // namespace lockstep
