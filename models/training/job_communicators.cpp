#include "models/training/job_communicators.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/cluster/nccl_collective.hpp"
#include "models/collective/channel_rings.hpp"
#include "models/collective/fluid_replay.hpp"
#include "models/collective/fluid_ring.hpp"
#include "models/collective/nccl_protocol.hpp"
#include "models/collective/point_to_point.hpp"
#include "models/collective/priced_collective.hpp"
#include "models/node/server_config.hpp"

namespace lockstep {
namespace {

// NCCL's ring for an all-reduce, reduce-scatter or all-gather streams as one fluid flow per
// channel and link.
bool streams_as_fluid_ring(CollectiveOp op, NcclAlgorithm algorithm) {
  return algorithm == NcclAlgorithm::kRing &&
         (op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter ||
          op == CollectiveOp::kAllGather);
}

// A pipeline transfer is one send on NCCL's Simple protocol, its costs taken as across servers,
// over the hosts' queue pairs per connection.
ProtocolOverheads transfer_overheads(const HostsConfig& hosts) {
  ProtocolOverheads overheads{NcclProtocol::kSimple, 1, {}, {}};
  overheads.queue_pairs_per_connection = hosts.queue_pairs_per_connection;
  return overheads;
}

}  // namespace

struct JobCommunicators::Group {
  std::vector<std::int32_t> gpus;             // by member
  std::vector<std::int32_t> member_of_local;  // the communicator network's order: node-major
  std::vector<std::int32_t> local_of_member;
  std::int32_t nodes = 1;
  std::int32_t gpus_per_node = 1;  // members per node (1 when they differ from node to node)
  bool regular = true;             // the same count of members on each of its nodes
  std::unique_ptr<CommunicatorNetwork> network;
  Duration path;  // cables' delays from its first member to the farthest on another server
  AlphaBeta cost;
};

JobCommunicators::JobCommunicators(Simulator& sim, Cluster& cluster, const ClusterSpec& spec,
                                   NetworkModel level)
    : sim_(sim),
      cluster_(cluster),
      spec_(spec),
      level_(level),
      host_staged_(static_cast<std::size_t>(cluster.ranks()), 0) {
  for (const std::int32_t gpu : host_staged_nics(spec.hosts, cluster.ranks())) {
    host_staged_[static_cast<std::size_t>(gpu)] = 1;
  }
}

JobCommunicators::~JobCommunicators() = default;

std::int32_t JobCommunicators::add_group(std::vector<std::int32_t> gpus) {
  auto group = std::make_unique<Group>();
  group->gpus = std::move(gpus);
  const auto n = static_cast<std::int32_t>(group->gpus.size());
  try {
    const CommunicatorLayout layout =
        communicator_layout(group->gpus, cluster_.ranks(), cluster_.gpus_per_node());
    group->nodes = layout.nodes;
    group->gpus_per_node = layout.gpus_per_node;
    for (const std::int32_t gpu : layout.members) {
      group->member_of_local.push_back(static_cast<std::int32_t>(
          std::find(group->gpus.begin(), group->gpus.end(), gpu) - group->gpus.begin()));
    }
  } catch (const std::invalid_argument&) {
    // Different member counts per node: one ring in the group's order, as if each had a node.
    group->regular = false;
    group->nodes = n;
    group->gpus_per_node = 1;
    for (std::int32_t m = 0; m < n; ++m) group->member_of_local.push_back(m);
  }
  group->local_of_member.resize(static_cast<std::size_t>(n));
  for (std::int32_t local = 0; local < n; ++local) {
    group->local_of_member[static_cast<std::size_t>(
        group->member_of_local[static_cast<std::size_t>(local)])] = local;
  }
  group->path = longest_path(group->gpus);
  group->cost = cost_between(*group);
  groups_.push_back(std::move(group));
  return static_cast<std::int32_t>(groups_.size() - 1);
}

std::int32_t JobCommunicators::group_size(std::int32_t group) const {
  return static_cast<std::int32_t>(groups_[static_cast<std::size_t>(group)]->gpus.size());
}

std::int32_t JobCommunicators::participant(std::int32_t group, std::int32_t member) const {
  return groups_[static_cast<std::size_t>(group)]
      ->local_of_member[static_cast<std::size_t>(member)];
}

std::int32_t JobCommunicators::member(std::int32_t group, std::int32_t participant) const {
  return groups_[static_cast<std::size_t>(group)]
      ->member_of_local[static_cast<std::size_t>(participant)];
}

BitRate JobCommunicators::nic_rate(std::int32_t gpu) const {
  const Topology& topology = cluster_.routing().topology();
  BitRate rate = topology.cable(topology.ports(gpu)[0].cable).rate;
  if (spec_.hosts.transport == FabricTransport::kSocket) {
    rate = std::min(rate, kSocketThroughput);
  }
  if (host_staged_[static_cast<std::size_t>(gpu)] != 0) {
    rate =
        BitRate::bps(static_cast<std::int64_t>(static_cast<double>(rate.bps()) * kHostStagedShare));
  }
  return rate;
}

AlphaBeta JobCommunicators::cost_between(const Group& group) const {
  const std::vector<std::int32_t>& gpus = group.gpus;
  const ProtocolCost protocol = protocol_cost(NcclProtocol::kSimple, NcclAlgorithm::kRing);
  const NodePreset& node = *cluster_.servers();
  const BitRate nvlink = node.nvlink_bandwidth;
  if (group.nodes == 1) {
    return AlphaBeta{node.nvlink_hop_latency * 2 + protocol.nvlink_step, nvlink};
  }
  // Each channel's ring leaves every node once, through its own NIC (rail-aligned): a ring with g
  // members per node moves its data over g NICs side by side, unless NVLink binds first.
  BitRate slowest = nic_rate(gpus[0]);
  for (const std::int32_t gpu : gpus) slowest = std::min(slowest, nic_rate(gpu));
  const BitRate per_rank = std::min(BitRate::bps(slowest.bps() * group.gpus_per_node), nvlink);
  return AlphaBeta{group.path + protocol.network_step, per_rank};
}

Duration JobCommunicators::longest_path(const std::vector<std::int32_t>& gpus) const {
  Duration path;
  const std::int32_t gpus_per_server = cluster_.gpus_per_node();
  for (std::size_t i = 1; i < gpus.size(); ++i) {
    if (gpus[i] / gpus_per_server == gpus[0] / gpus_per_server) continue;
    Duration delay;
    for (const Hop& hop : cluster_.routing().path(gpus[0], gpus[i], 0)) {
      delay += cluster_.routing().topology().cable(hop.cable).delay;
    }
    path = std::max(path, delay);
  }
  return path;
}

CommunicatorNetwork& JobCommunicators::network_of(Group& group) {
  if (!group.network) {
    group.network = std::make_unique<CommunicatorNetwork>(cluster_.network(), members_of(group),
                                                          kFirstQueuePair);
  }
  return *group.network;
}

Duration JobCommunicators::price(const Group& group, CollectiveOp op, Bytes size) {
  const auto n = static_cast<std::int32_t>(group.gpus.size());
  if (group.nodes == 1 && spec_.servers) {
    if (!node_times_) node_times_ = std::make_unique<NodeCollectiveTimes>(spec_);
    return node_times_->time(op, size, n);
  }
  if (group.regular && spec_.servers) {
    if (const std::optional<Duration> alone = fabric_time(group, op, size)) return *alone;
  }
  const Duration base = protocol_cost(NcclProtocol::kSimple, NcclAlgorithm::kRing).base_latency;
  return base + ring_collective_time(op, n, size, group.cost);
}

JobCommunicators::ShapeKey JobCommunicators::shape_key(const Group& group, CollectiveOp op,
                                                       Bytes size) const {
  const std::int32_t gpus_per_server = cluster_.gpus_per_node();
  std::vector<std::int32_t> shape{static_cast<std::int32_t>(op), group.nodes, group.gpus_per_node};
  std::vector<std::int32_t> rails;
  std::int32_t staged = 0;
  for (const std::int32_t gpu : group.gpus) {
    rails.push_back(gpu % gpus_per_server);
    staged += host_staged_[static_cast<std::size_t>(gpu)];
  }
  std::sort(rails.begin(), rails.end());
  shape.insert(shape.end(), rails.begin(), rails.end());
  shape.push_back(staged);
  return std::make_tuple(std::move(shape), size.count(), group.path.ps());
}

std::optional<Duration> JobCommunicators::fabric_time(const Group& group, CollectiveOp op,
                                                      Bytes size) {
  if (size == Bytes(0)) return Duration();
  ShapeKey key = shape_key(group, op, size);
  if (const auto found = fabric_times_.find(key); found != fabric_times_.end()) {
    return found->second;
  }
  const NcclCommunicator nccl = communicator_of(group);
  const auto [algorithm, protocol] = nccl_default_choice(nccl, op, size);
  IdleMachine machine(spec_, cluster_.routing(), members_of(group), kFirstQueuePair);
  // A ring as the fluid a flow-level job streams; anything else step by step, as alone_of's run,
  // without the tally and the replay that only a flow-level job's fluid needs.
  const std::unique_ptr<Collective> collective =
      streams_as_fluid_ring(op, algorithm)
          ? fluid_ring(machine.sim(), machine.network(), group, op, size, protocol)
          : make_nccl_collective(machine.sim(), machine.network(), nccl, op, size, algorithm,
                                 protocol)
                .collective;
  return fabric_times_.emplace(std::move(key), machine.run(*collective)).first->second;
}

const std::optional<CollectiveAlone>& JobCommunicators::alone_of(const Group& group,
                                                                 CollectiveOp op, Bytes size,
                                                                 NcclAlgorithm algorithm,
                                                                 NcclProtocol protocol) {
  ShapeKey key = shape_key(group, op, size);
  if (const auto found = alone_.find(key); found != alone_.end()) return found->second;
  return alone_
      .emplace(std::move(key),
               collective_alone(spec_, cluster_.routing(), members_of(group), kFirstQueuePair,
                                communicator_of(group), op, size, algorithm, protocol))
      .first->second;
}

std::optional<Duration> JobCommunicators::transfer_time(const Group& pair, Bytes size) {
  const std::int32_t gpus = cluster_.gpus_per_node();
  const std::int32_t from = pair.gpus[0];
  const std::int32_t to = pair.gpus[1];
  auto key = std::make_tuple(std::vector<std::int32_t>{from % gpus, to % gpus,
                                                       host_staged_[static_cast<std::size_t>(from)],
                                                       host_staged_[static_cast<std::size_t>(to)]},
                             size.count(), pair.path.ps());
  if (const auto found = transfer_times_.find(key); found != transfer_times_.end()) {
    return found->second;
  }
  IdleMachine machine(spec_, cluster_.routing(), pair.gpus, kFirstQueuePair);
  PointToPoint transfer(machine.sim(), machine.network(), 0, 1, size,
                        transfer_overheads(spec_.hosts));
  return transfer_times_.emplace(std::move(key), machine.run(transfer)).first->second;
}

std::vector<std::int32_t> JobCommunicators::members_of(const Group& group) {
  std::vector<std::int32_t> members;
  for (const std::int32_t m : group.member_of_local) {
    members.push_back(group.gpus[static_cast<std::size_t>(m)]);
  }
  return members;
}

std::unique_ptr<Collective> JobCommunicators::fluid_ring(Simulator& sim, Network& network,
                                                         const Group& group, CollectiveOp op,
                                                         Bytes size, NcclProtocol protocol) const {
  const NcclCommunicator nccl = communicator_of(group);
  const ProtocolCost cost = protocol_cost(protocol, NcclAlgorithm::kRing);
  const NcclRing ring =
      nccl.servers ? nccl_ring(*nccl.servers, nccl.nodes, nccl.gpus, nccl.nic, op, protocol, size)
                   : NcclRing{};
  return std::make_unique<FluidRing>(
      sim, network, rail_aligned_rings(group.nodes, group.gpus_per_node, ring.channels), op, size,
      cost.base_latency, ring_step_latency(group, protocol), cost.data_per_wire_byte,
      ring.channel_ceiling, RingConnections{group.gpus_per_node, nccl.queue_pairs_per_connection});
}

Duration JobCommunicators::ring_step_latency(const Group& group, NcclProtocol protocol) const {
  const ProtocolCost cost = protocol_cost(protocol, NcclAlgorithm::kRing);
  const Duration across = group.path + cost.network_step;
  if (!cluster_.servers() || group.gpus_per_node == 1) return across;
  const NodePreset& node = *cluster_.servers();
  // Through the NVSwitch, two NVLink hops; every step inside a node waits on NCCL's proxy too.
  const Duration inside =
      node.nvlink_hop_latency * 2 +
      std::max(cost.nvlink_step,
               ring_step_overhead(protocol, group.nodes, node.cpu == CpuVendor::kAmd));
  // A ring leaves each node once: of its n hops, one per node crosses the fabric.
  const std::int64_t ranks = std::int64_t{group.nodes} * group.gpus_per_node;
  return Duration::ps((across.ps() * group.nodes + inside.ps() * (ranks - group.nodes)) / ranks);
}

NcclCommunicator JobCommunicators::communicator_of(const Group& group) const {
  return NcclCommunicator{cluster_.servers(),
                          group.nodes,
                          group.gpus_per_node,
                          cluster_.routing().topology().nic_rate(),
                          0,
                          true,
                          spec_.hosts.queue_pairs_per_connection};
}

bool JobCommunicators::priced(const Group& group) const {
  return level_ == NetworkModel::kAnalytic || group.nodes == 1;
}

void JobCommunicators::finish_on(Collective& collective, const Group& group,
                                 MemberFinished finished) const {
  collective.when_rank_finished(
      [&group, finished = std::move(finished)](std::int32_t local, Time at) {
        finished(group.member_of_local[static_cast<std::size_t>(local)], at);
      });
}

std::unique_ptr<Collective> JobCommunicators::collective(std::int32_t group_id, CollectiveOp op,
                                                         Bytes size, MemberFinished finished) {
  Group& group = *groups_[static_cast<std::size_t>(group_id)];
  const auto n = static_cast<std::int32_t>(group.gpus.size());
  std::unique_ptr<Collective> made;
  if (priced(group)) {
    std::vector<std::int32_t> everyone(static_cast<std::size_t>(n));
    for (std::int32_t m = 0; m < n; ++m) everyone[static_cast<std::size_t>(m)] = m;
    made = std::make_unique<PricedCollective>(sim_, n, std::move(everyone), price(group, op, size));
  } else {
    const NcclCommunicator nccl = communicator_of(group);
    const auto [algorithm, protocol] = nccl_default_choice(nccl, op, size);
    const bool as_fluid_ring =
        level_ == NetworkModel::kFlow && streams_as_fluid_ring(op, algorithm);
    const std::optional<CollectiveAlone>* alone =
        level_ == NetworkModel::kFlow && !as_fluid_ring && size > Bytes(0)
            ? &alone_of(group, op, size, algorithm, protocol)
            : nullptr;
    if (as_fluid_ring) {
      made = fluid_ring(sim_, network_of(group), group, op, size, protocol);
    } else if (alone && *alone) {
      made = std::make_unique<FluidReplay>(sim_, network_of(group), (*alone)->fluid, algorithm);
    } else {
      made = make_nccl_collective(sim_, network_of(group), nccl, op, size, algorithm, protocol)
                 .collective;
    }
  }
  finish_on(*made, group, std::move(finished));
  return made;
}

std::unique_ptr<Collective> JobCommunicators::send(std::int32_t group_id, std::int32_t sender,
                                                   std::int32_t receiver, Bytes size,
                                                   MemberFinished finished) {
  Group& group = *groups_[static_cast<std::size_t>(group_id)];
  const std::int32_t from = group.local_of_member[static_cast<std::size_t>(sender)];
  const std::int32_t to = group.local_of_member[static_cast<std::size_t>(receiver)];
  std::unique_ptr<Collective> made;
  const std::int32_t gpu_from = group.gpus[static_cast<std::size_t>(sender)];
  const std::int32_t gpu_to = group.gpus[static_cast<std::size_t>(receiver)];
  const bool same_server = gpu_from / cluster_.gpus_per_node() == gpu_to / cluster_.gpus_per_node();
  if (level_ == NetworkModel::kAnalytic || same_server) {
    Group pair;
    pair.gpus = {gpu_from, gpu_to};
    pair.nodes = same_server ? 1 : 2;
    pair.path = longest_path(pair.gpus);
    std::optional<Duration> took;
    if (!same_server && spec_.servers) took = transfer_time(pair, size);
    if (!took) {
      const Duration base = protocol_cost(NcclProtocol::kSimple, NcclAlgorithm::kRing).base_latency;
      took = base + ring_collective_time(CollectiveOp::kSendRecv, 2, size, cost_between(pair));
    }
    made = std::make_unique<PricedCollective>(sim_, static_cast<std::int32_t>(group.gpus.size()),
                                              std::vector<std::int32_t>{from, to}, *took);
  } else {
    made = std::make_unique<PointToPoint>(sim_, network_of(group), from, to, size,
                                          transfer_overheads(spec_.hosts));
  }
  finish_on(*made, group, std::move(finished));
  return made;
}

}  // namespace lockstep
