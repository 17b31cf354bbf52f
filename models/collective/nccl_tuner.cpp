#include "models/collective/nccl_tuner.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <span>

#include "models/collective/nvls_loops.hpp"

namespace lockstep {
namespace {

// NCCL's indices: algorithms Tree, Ring, NVLS, NVLS-Tree (of those rated here); protocols LL,
// LL128, Simple.
enum Algo : std::uint8_t { kTree, kRing, kNvls, kNvlsTree, kAlgos };
constexpr int kProtos = 3;
using PerProto = std::array<float, kProtos>;

// tuning.cc, 2.26.2: the base latency per algorithm and protocol, and the hardware latency per
// step over NVLink and over the network (us).
constexpr std::array<PerProto, kAlgos> kBaseLat{
    {{6.8F, 14.0F, 8.4F}, {6.6F, 14.0F, 8.4F}, {0.0F, 0.0F, 0.0F}, {0.0F, 0.0F, 0.0F}}};
constexpr std::array<PerProto, kAlgos> kNvlinkLat{
    {{.6F, 1.25F, 4.0F}, {.6F, 1.9F, 3.4F}, {0.0F, 0.0F, 25.0F}, {0.0F, 0.0F, 25.0F}}};
constexpr std::array<PerProto, kAlgos> kNetLat{
    {{5.0F, 8.5F, 14.0F}, {2.7F, 4.0F, 14.0F}, {0.0F, 0.0F, 18.0F}, {0.0F, 0.0F, 14.0F}}};

// llMaxBws[index1][index2]: index1 the compute capability on one node (Volta, Ampere, Hopper) and
// the CPU maker across nodes (0 Intel, 1 AMD); index2 one node, two, more.
constexpr std::array<std::array<float, 3>, 3> kLlMaxBw{
    {{39.0F, 39.0F, 20.4F}, {87.7F, 22.5F, 19.0F}, {141.0F, 45.0F, 35.0F}}};
// Per-channel ceilings [compute capability index][index2].
constexpr std::array<std::array<float, 3>, 3> kPerChMaxRingLL128{
    {{20.0F, 20.0F, 20.0F}, {20.0F, 20.0F, 20.0F}, {36.7F, 36.7F, 36.7F}}};
constexpr std::array<std::array<float, 3>, 3> kPerChMaxTreeLL128{
    {{20.0F, 20.0F, 20.0F}, {20.0F, 20.0F, 20.0F}, {36.7F, 36.7F, 29.0F}}};
constexpr std::array<std::array<float, 3>, 3> kPerChMaxTree{
    {{26.5F, 18.5F, 10.0F}, {24.0F, 23.6F, 17.8F}, {38.7F, 41.4F, 36.0F}}};

// treeCorrectionFactor[protocol][log2(bytes / 64)], 64 B to 256 MiB.
constexpr std::array<std::array<float, 23>, kProtos> kTreeCorrection{{
    {1.0F, 1.0F, 1.0F, 1.0F, .9F, .8F, .7F, .7F,  .7F,  .7F,  .6F, .5F,
     .4F,  .4F,  .5F,  .6F,  .7F, .8F, .9F, 1.0F, 1.0F, 1.0F, 1.0F},
    {1.0F, 1.0F, 1.0F, 1.0F, 1.0F, .9F, .8F, .8F, .8F, .7F,  .6F, .6F,
     .6F,  .6F,  .6F,  .6F,  .8F,  .9F, .9F, .9F, .9F, 1.0F, 1.0F},
    {.9F, .9F, .9F, .9F, .9F, .9F, .9F, .8F, .7F, .6F, .6F, .5F,
     .5F, .5F, .5F, .6F, .7F, .8F, .7F, .7F, .8F, .9F, .9F},
}};

// enqueue.cc / comm.h: threads per channel and the bytes each thread needs before another
// channel is used (LL and LL128 8, Simple 64; the ring's LL times the ranks).
constexpr std::array<std::int64_t, kProtos> kMaxThreads{512, 640, 512};
constexpr std::array<std::int64_t, kProtos> kThreadThreshold{8, 8, 64};

// search.cc: the speeds (GB/s per channel) the search tries, fastest first.
constexpr std::array<float, 11> kSm90SpeedsIntra{60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
constexpr std::array<float, 17> kSm90SpeedsInter{48, 45, 42, 40, 30,   24,   22,   20,  17.5F,
                                                 15, 12, 6,  3,  2.4F, 1.2F, .24F, .12F};
constexpr std::array<float, 13> kSpeedsIntra{40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
constexpr std::array<float, 19> kSpeedsInter{48, 30, 28, 24, 20, 18,   15,   12,   10,  9,
                                             7,  6,  5,  4,  3,  2.4F, 1.2F, .24F, .12F};
constexpr std::int32_t kRingMaxChannels = 32;
// A lower speed is tried only while it is more than this share of the best found.
constexpr float kSlowestTried = .49F;

float gigabytes_per_second(BitRate rate) { return static_cast<float>(rate.bps()) / 8e9F; }

std::span<const float> intra_speeds(std::int32_t cc) {
  return cc >= 90 ? std::span<const float>(kSm90SpeedsIntra) : std::span<const float>(kSpeedsIntra);
}
std::span<const float> inter_speeds(std::int32_t cc) {
  return cc >= 90 ? std::span<const float>(kSm90SpeedsInter) : std::span<const float>(kSpeedsInter);
}

// The search's pass 1: from the fastest speed no faster than `fastest`, the speed whose channels
// (`channels_at(speed)`, 0 when none fit) carry the most, a slower one only on a strict gain; it
// stops at `max_channels` channels or once they carry `enough`, and tries no speed at or below
// kSlowestTried of the best.
template <class ChannelsAt>
NcclGraph best_speed(std::span<const float> speeds, float fastest, std::int32_t max_channels,
                     float enough, ChannelsAt channels_at) {
  NcclGraph best;
  for (const float speed : speeds) {
    if (speed > fastest) continue;
    if (best.channels > 0 && speed / best.bw_inter <= kSlowestTried) break;
    const std::int32_t channels = std::min(channels_at(speed), max_channels);
    if (channels > 0 &&
        static_cast<float>(channels) * speed > static_cast<float>(best.channels) * best.bw_inter) {
      best = NcclGraph{channels, speed, speed, false};
    }
    if (best.channels == max_channels ||
        static_cast<float>(best.channels) * best.bw_inter >= enough) {
      break;
    }
  }
  return best;
}

std::int32_t fit(float capacity, float speed) {
  return static_cast<std::int32_t>(std::floor(capacity / speed));
}

// ncclTopoDupChannels: each channel becomes two at half the speed, unless the speed is low.
void duplicate_channels(NcclGraph& graph, std::int32_t cc) {
  if (graph.bw_intra < 25.0F) return;
  if (cc > 80 && graph.bw_intra < 50.0F && graph.channels > 4) return;
  graph.channels = std::min(2 * graph.channels, kRingMaxChannels);
  graph.bw_intra /= 2.0F;
  graph.bw_inter /= 2.0F;
}

// The fastest speed between nodes that a GPU's path to its NIC carries.
float fastest_inter_speed(std::int32_t cc, float nic_path) {
  for (const float speed : inter_speeds(cc)) {
    if (speed <= nic_path) return speed;
  }
  return inter_speeds(cc).back();
}

int log2_down(std::int64_t value) {
  return value <= 0 ? -1 : 63 - std::countl_zero(static_cast<std::uint64_t>(value));
}

std::optional<Algo> algo_index(NcclAlgorithm algorithm) {
  switch (algorithm) {
    case NcclAlgorithm::kTree:
      return kTree;
    case NcclAlgorithm::kRing:
      return kRing;
    case NcclAlgorithm::kNvls:
      return kNvls;
    case NcclAlgorithm::kNvlsTree:
      return kNvlsTree;
    case NcclAlgorithm::kHierarchical:
    case NcclAlgorithm::kCollNetDirect:
      return std::nullopt;
  }
  return std::nullopt;
}

std::size_t proto_index(NcclProtocol protocol) {
  switch (protocol) {
    case NcclProtocol::kLL:
      return 0;
    case NcclProtocol::kLL128:
      return 1;
    case NcclProtocol::kSimple:
      return 2;
  }
  return 2;
}

bool rated(CollectiveOp op, Algo algo, std::size_t proto, const NcclSystem& system,
           const NcclGraphs& graphs) {
  if ((algo == kNvls || algo == kNvlsTree) && proto != 2) return false;
  switch (op) {
    case CollectiveOp::kAllReduce:
      if (algo == kNvls) return graphs.nvls.channels > 0 && system.nodes == 1;
      if (algo == kNvlsTree) return graphs.nvls.channels > 0 && system.nodes > 1;
      return true;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
      return algo == kRing;
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kSendRecv:
      return nccl_rates(op);
  }
  return false;
}

}  // namespace

NcclGraphs nccl_graphs(const NcclSystem& system) {
  const std::int32_t cc = system.compute_capability;
  const float nvlink = gigabytes_per_second(system.nvlink);
  const std::int32_t gpus = system.ranks_per_node;
  // A tree's channels load a GPU's NVLink by (gpus - 1) / gpus of a ring's.
  const float tree_nvlink =
      gpus > 1 ? nvlink * static_cast<float>(gpus) / static_cast<float>(gpus - 1) : nvlink;
  const float nic_path =
      std::min(gigabytes_per_second(system.gpu_nic_pcie), gigabytes_per_second(system.nic));
  NcclGraphs graphs;
  if (system.nodes == 1) {
    graphs.ring = best_speed(intra_speeds(cc), nvlink, kRingMaxChannels, nvlink,
                             [&](float speed) { return fit(nvlink, speed); });
    duplicate_channels(graphs.ring, cc);
    const std::int32_t tree_channels = graphs.ring.channels;
    graphs.tree = best_speed(intra_speeds(cc), nvlink, tree_channels, tree_nvlink, [&](float s) {
      return static_cast<float>(tree_channels) * s <= tree_nvlink ? tree_channels : 0;
    });
  } else {
    // One NIC per GPU: each carries the channels its path fits. A ring channel enters a node
    // through one GPU's NIC and leaves through another's, so it crosses the NVLink of all GPUs
    // but one in each direction.
    graphs.ring = best_speed(inter_speeds(cc), nic_path, kRingMaxChannels, nvlink, [&](float s) {
      std::int32_t per_nic = fit(nic_path, s);
      while (per_nic > 0 && static_cast<float>(per_nic * (gpus - 1)) * s > nvlink) {
        --per_nic;
      }
      return gpus * per_nic;
    });
    duplicate_channels(graphs.ring, cc);
    const std::int32_t tree_channels = graphs.ring.channels;
    graphs.tree = best_speed(inter_speeds(cc), nic_path, tree_channels, tree_nvlink, [&](float s) {
      return static_cast<float>(tree_channels) * s <= tree_nvlink &&
                     gpus * fit(nic_path, s) >= tree_channels
                 ? tree_channels
                 : 0;
    });
    graphs.tree.tree_pattern =
        static_cast<float>(graphs.tree.channels) * graphs.tree.bw_inter < nvlink;
    // Pass 2: the speed inside a node rises while the NVLink carries it, below twice the speed
    // between nodes.
    for (auto speed = inter_speeds(cc).rbegin(); speed != inter_speeds(cc).rend(); ++speed) {
      if (*speed <= graphs.tree.bw_intra) continue;
      if (*speed >= 2.0F * graphs.tree.bw_inter ||
          static_cast<float>(tree_channels) * *speed > tree_nvlink) {
        break;
      }
      graphs.tree.bw_intra = *speed;
    }
  }
  if (system.nvls) {
    // The head's link carries its channels and the multicast; the search ends only at one channel
    // per GPU (or the slowest speed it tries).
    const std::span<const float> speeds = system.nodes == 1 ? intra_speeds(cc) : inter_speeds(cc);
    graphs.nvls = best_speed(speeds, nvlink, gpus, std::numeric_limits<float>::infinity(),
                             [&](float speed) { return fit(nvlink, speed) - 1; });
    if (system.nodes > 1) graphs.nvls.bw_inter = fastest_inter_speed(cc, nic_path);
    graphs.nvls_channels = kNvlsChannelsSm90;
  }
  graphs.channels = 2 * std::min(graphs.ring.channels, graphs.tree.channels);
  if (cc >= 90 && system.nodes > 1 && graphs.ring.bw_intra > 45.0F && graphs.channels < 16) {
    graphs.channels *= 2;
  }
  graphs.channels = std::min(graphs.channels, 64);
  return graphs;
}

std::optional<float> nccl_bus_bandwidth(const NcclSystem& system, const NcclGraphs& graphs,
                                        CollectiveOp op, NcclAlgorithm algorithm,
                                        NcclProtocol protocol) {
  const std::optional<Algo> found = algo_index(algorithm);
  if (!found) return std::nullopt;
  const Algo a = *found;
  const std::size_t p = proto_index(protocol);
  if (!rated(op, a, p, system, graphs)) return std::nullopt;
  const std::int32_t nodes = system.nodes;
  const std::size_t cc_index = system.compute_capability >= 90   ? 2
                               : system.compute_capability >= 80 ? 1
                                                                 : 0;
  const std::size_t nodes_index = nodes <= 2 ? static_cast<std::size_t>(nodes - 1) : 2;
  const std::size_t ll_index = nodes == 1 ? cc_index : system.amd_cpus ? 1 : 0;
  const float ll_max_bw = kLlMaxBw[ll_index][nodes_index];
  const NcclGraph& graph = a == kTree ? graphs.tree : a == kRing ? graphs.ring : graphs.nvls;
  const auto channels = static_cast<float>(graph.channels);

  // ncclTopoTuneModel, in NCCL's float and double arithmetic.
  float bw = nodes <= 2 ? graph.bw_intra : graph.bw_inter;
  if (a == kNvls) bw = std::min(graph.bw_intra, graph.bw_inter);
  if (a == kNvlsTree)
    bw = std::min(graph.bw_intra, nodes <= 2 ? graph.bw_inter : graph.bw_inter / 2);
  float bus_bw = channels * bw;
  if (a == kRing && p == 0) bus_bw = static_cast<float>(std::min<double>(ll_max_bw, bus_bw * .5));
  if (a == kRing && p == 1) {
    bus_bw = static_cast<float>(
        std::min<double>(bus_bw * 0.92, channels * kPerChMaxRingLL128[cc_index][nodes_index]));
  }
  if (a == kTree && op == CollectiveOp::kAllReduce) {
    bus_bw = static_cast<float>(
        std::min<double>(bus_bw * .92, channels * kPerChMaxTree[cc_index][nodes_index]));
  }
  if (a == kTree && p == 0)
    bus_bw = static_cast<float>(std::min<double>(bus_bw * 1.0 / 3.8, ll_max_bw));
  if (a == kTree && p == 1) {
    bus_bw =
        static_cast<float>(std::min<double>(bus_bw * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                                            channels * kPerChMaxTreeLL128[cc_index][nodes_index]));
  }
  if (a == kTree && graph.tree_pattern) bus_bw = static_cast<float>(bus_bw * .85);
  if (bus_bw <= 0.0F) return std::nullopt;
  return bus_bw;
}

std::optional<Duration> nccl_model_time(const NcclSystem& system, const NcclGraphs& graphs,
                                        CollectiveOp op, NcclAlgorithm algorithm,
                                        NcclProtocol protocol, Bytes bytes) {
  const std::optional<float> bus_bw = nccl_bus_bandwidth(system, graphs, op, algorithm, protocol);
  if (!bus_bw) return std::nullopt;
  const Algo a = *algo_index(algorithm);
  const std::size_t p = proto_index(protocol);
  const std::int32_t nodes = system.nodes;
  const std::int32_t ppn = system.ranks_per_node;
  const std::int32_t ranks = nodes * ppn;
  const bool all_reduce = op == CollectiveOp::kAllReduce;
  const std::int32_t steps = all_reduce ? 2 * (ranks - 1)
                             : op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter
                                 ? ranks - 1
                                 : ranks;
  double ratio = .5;
  if (a == kRing) ratio = static_cast<double>(ranks) / steps;
  if (a == kNvls || a == kNvlsTree) ratio = 5.0 / 6.0;
  float alg_bw = static_cast<float>(*bus_bw * ratio);
  if (alg_bw <= 0.0F) return std::nullopt;

  // Latency.
  const float intra_lat = kNvlinkLat[a][p];
  const float inter_lat = ppn == 1 ? kNetLat[kTree][p] : kNetLat[a][p];
  float lat = kBaseLat[a][p];
  if (a == kRing) {
    if (op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce) {
      lat += kNvlinkLat[kRing][p];  // the search's channels are alike
    } else {
      float net_overhead = 0.0F;
      if (nodes > 1) {
        net_overhead = system.amd_cpus ? 2.0F : 1.0F;
        if (p == 2) net_overhead *= 3.0F;
      }
      const float step_lat = std::max(intra_lat, net_overhead);
      const std::int32_t inter_steps = nodes == 1 ? 0 : all_reduce ? 2 * (nodes - 1) : nodes - 1;
      lat += static_cast<float>(steps - inter_steps) * step_lat +
             static_cast<float>(inter_steps) * inter_lat;
    }
  } else if (a == kTree) {
    lat += 2.0F * (static_cast<float>(ppn - 1) * intra_lat +
                   static_cast<float>(log2_down(nodes)) * inter_lat);
  } else if (a == kNvls) {
    lat = intra_lat + (nodes > 1 ? inter_lat : 0.0F);
  } else {
    lat += intra_lat + 2.0F * static_cast<float>(log2_down(nodes)) * inter_lat;
  }

  // ncclTopoGetAlgoTime.
  const std::int64_t n = bytes.count();
  const int log_size = log2_down(n >> 6);
  if (a == kTree && all_reduce && log_size >= 0 && log_size < 23) {
    alg_bw *= kTreeCorrection[p][static_cast<std::size_t>(log_size)];
  }
  if (a == kRing && p == 2 && nodes > 1 && all_reduce &&
      n / (static_cast<std::int64_t>(graphs.channels) * ranks) >= 64) {
    lat = static_cast<float>(lat * (system.compute_capability < 80 ? 1.9 : 1.4));
  }
  const float time_us = lat + static_cast<float>(n) / (1000.0F * alg_bw);
  return Duration::ps(std::llround(static_cast<double>(time_us) * 1e6));
}

std::int32_t nccl_channels(const NcclSystem& system, const NcclGraphs& graphs,
                           NcclAlgorithm algorithm, NcclProtocol protocol, Bytes bytes) {
  if (algorithm == NcclAlgorithm::kNvls || algorithm == NcclAlgorithm::kNvlsTree) {
    return graphs.nvls_channels;
  }
  const std::size_t p = proto_index(protocol);
  std::int64_t threshold = kThreadThreshold[p];
  if (algorithm == NcclAlgorithm::kRing && protocol == NcclProtocol::kLL) {
    threshold *= std::int64_t{system.nodes} * system.ranks_per_node;
  }
  std::int32_t channels = graphs.channels;
  while (bytes.count() < channels * kMaxThreads[p] * threshold && channels >= 2) --channels;
  return channels;
}

std::optional<NcclTunerChoice> nccl_tuner_choice(
    const NcclSystem& system, CollectiveOp op, Bytes bytes,
    const std::vector<std::pair<NcclAlgorithm, NcclProtocol>>& pairs) {
  const NcclGraphs graphs = nccl_graphs(system);
  std::optional<NcclTunerChoice> best;
  std::optional<std::pair<Algo, std::size_t>> best_order;
  for (const auto& [algorithm, protocol] : pairs) {
    const std::optional<Duration> time =
        nccl_model_time(system, graphs, op, algorithm, protocol, bytes);
    if (!time) continue;
    const std::pair<Algo, std::size_t> order{*algo_index(algorithm), proto_index(protocol)};
    if (!best || *time < best->model_time || (*time == best->model_time && order < *best_order)) {
      best = NcclTunerChoice{algorithm, protocol, *time, 0};
      best_order = order;
    }
  }
  if (!best) return std::nullopt;
  best->channels = nccl_channels(system, graphs, best->algorithm, best->protocol, bytes);
  return best;
}

}  // namespace lockstep
