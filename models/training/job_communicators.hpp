// The communicators of a training job on the cluster (its tensor-, context-, data- and
// pipeline-parallel groups) and the collectives it runs on them. Each collective runs NCCL's own
// choice of algorithm and protocol for its size (nccl_default_choice: NCCL's tuner over the
// group's nodes and GPUs per node), as `lockstep nccl-tests` would for the same group:
// - across servers, at packet level, on the cluster's network beside everything else, laid out
//   and charged as nccl-tests runs it (nccl_collective.hpp): the tree, NVLS-Tree or ring on
//   NCCL's channels for the size, with the protocol's costs;
// - across servers at flow level the same, as fluids that keep its costs:
//   - a ring all-reduce, reduce-scatter or all-gather streams one flow per NCCL channel and link
//     (fluid_ring.hpp), in its protocol's wire bytes and latencies (each hop's: NVLink's and NCCL's
//     proxy inside a server, the fabric's between servers) and no faster than NCCL's speed for its
//     channels (nccl_ring, LL's ceiling): a data-parallel ring of 128 ranks on 8 channels costs
//     1,024 flows, not 260,096 messages;
//   - anything else (the tree, NVLS-Tree, a ring's all-to-all) runs step by step alone on an idle
//     copy of the machine once per shape (collective_alone.hpp), and then every collective of that
//     shape streams each queue pair's bytes of that run as one flow, followed by what the steps
//     took beyond them (fluid_replay.hpp): alone it takes the step-by-step time, and traffic
//     beside it holds it back;
// - a group whose members all sit on one server, where the non-blocking NVSwitch leaves nothing to
//   contend with, pays what nccl-tests times for it there (node_collective_times.hpp);
// - on the analytic network level a group across servers pays what its flow-level collective takes
//   alone on this machine (fabric_time: the fluid ring's time, or the step-by-step run's), and one
//   whose servers hold different counts of its members the ring's alpha-beta formula, whose figures
//   come from the machine: the path's cable delays and the NIC's rate (halved for a NIC reached
//   through host memory, capped at the socket stack's throughput over sockets), times the GPUs per
//   node that the rail-aligned rings spread over as many NICs, and NCCL's Simple-protocol latencies
//   on top (nccl_protocol.hpp);
// - a send/receive pair across servers is point_to_point.hpp's at flow and packet level, and on the
//   analytic level takes what the flow level's takes alone on this machine (transfer_time); inside
//   a server it is priced by the alpha-beta formula.
// The group's collectives have queue pairs of their own on the cluster's network, as NCCL opens
// its own.
//
// Members of a group are addressed by their index in the group; collectives report them that way.
// Left out: contention on NVLink between collectives of different groups that share a server's
// GPUs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "models/cluster/cluster.hpp"
#include "models/cluster/collective_alone.hpp"
#include "models/cluster/nccl_collective.hpp"
#include "models/cluster/node_collective_times.hpp"
#include "models/collective/alpha_beta.hpp"
#include "models/collective/collective.hpp"
#include "models/collective/collective_op.hpp"
#include "models/collective/communicator.hpp"
#include "models/transport/network_config.hpp"

namespace lockstep {

class JobCommunicators {
 public:
  // The job's collectives have queue pairs of their own, from this one on, as NCCL opens its own:
  // their messages never queue behind another traffic's on one queue pair.
  static constexpr std::uint32_t kFirstQueuePair = 1U << 20;

  using MemberFinished = std::function<void(std::int32_t member, Time at)>;

  JobCommunicators(Simulator& sim, Cluster& cluster, const ClusterSpec& spec, NetworkModel level);
  ~JobCommunicators();
  JobCommunicators(const JobCommunicators&) = delete;
  JobCommunicators& operator=(const JobCommunicators&) = delete;

  // A communicator over `gpus` (the cluster's ranks, in the group's order); returns its id.
  std::int32_t add_group(std::vector<std::int32_t> gpus);
  [[nodiscard]] std::int32_t group_size(std::int32_t group) const;

  // `op` of `size` over every member of `group`; `finished` hears each member's end.
  [[nodiscard]] std::unique_ptr<Collective> collective(std::int32_t group, CollectiveOp op,
                                                       Bytes size, MemberFinished finished);
  // `size` bytes from member `sender` to member `receiver` of `group`.
  [[nodiscard]] std::unique_ptr<Collective> send(std::int32_t group, std::int32_t sender,
                                                 std::int32_t receiver, Bytes size,
                                                 MemberFinished finished);
  // The collective's participant (as Collective numbers them) of a member, and back.
  [[nodiscard]] std::int32_t participant(std::int32_t group, std::int32_t member) const;
  [[nodiscard]] std::int32_t member(std::int32_t group, std::int32_t participant) const;

 private:
  struct Group;

  // The ring's alpha-beta figures for the group's members, over its path.
  [[nodiscard]] AlphaBeta cost_between(const Group& group) const;
  [[nodiscard]] BitRate nic_rate(std::int32_t gpu) const;
  // The cables' delays along the longest path from the first of `gpus` to one on another server.
  [[nodiscard]] Duration longest_path(const std::vector<std::int32_t>& gpus) const;
  [[nodiscard]] bool priced(const Group& group) const;
  // What a priced collective of the group takes.
  [[nodiscard]] Duration price(const Group& group, CollectiveOp op, Bytes size);
  // Where a group's collective across servers is timed alone, what it is: its operation, size,
  // nodes, members per node, the members' GPU indices in their servers (their rails), the longest
  // path's delays and how many members sit behind host-staged NICs. Two groups of one shape take
  // the same on a symmetric fabric; where the fabric is not (a group inside one leaf, another
  // across the spine, with the same cable delays) the second takes the first's time.
  using ShapeKey = std::tuple<std::vector<std::int32_t>, std::int64_t, std::int64_t>;
  [[nodiscard]] ShapeKey shape_key(const Group& group, CollectiveOp op, Bytes size) const;
  // What the collective of a group across servers takes alone on an idle copy of this machine at
  // flow level (its flow-level collective: NCCL's choice, a ring as a fluid), timed once for each
  // shape. Empty where the fabric has no path between some members, which the formula, knowing no
  // paths, prices instead.
  [[nodiscard]] std::optional<Duration> fabric_time(const Group& group, CollectiveOp op,
                                                    Bytes size);
  // What a send between the two GPUs of `pair`, on different servers, takes alone on an idle copy
  // of this machine at flow level, timed once for each pair of rails, host-staged NICs, size and
  // path; empty where the fabric has no path between them.
  [[nodiscard]] std::optional<Duration> transfer_time(const Group& pair, Bytes size);
  // NCCL's choice for the size (`algorithm` with `protocol`, other than a fluid ring), run step by
  // step alone on this machine at flow level (collective_alone.hpp), once for each shape; empty
  // where the fabric has no path between some members.
  const std::optional<CollectiveAlone>& alone_of(const Group& group, CollectiveOp op, Bytes size,
                                                 NcclAlgorithm algorithm, NcclProtocol protocol);
  [[nodiscard]] NcclCommunicator communicator_of(const Group& group) const;
  // The cluster's ranks of the group's members, node-major: the order its communicator numbers
  // them.
  [[nodiscard]] static std::vector<std::int32_t> members_of(const Group& group);
  // The group's ring for `op` of `size` with `protocol` as a fluid (fluid_ring.hpp) on `network`.
  [[nodiscard]] std::unique_ptr<Collective> fluid_ring(Simulator& sim, Network& network,
                                                       const Group& group, CollectiveOp op,
                                                       Bytes size, NcclProtocol protocol) const;
  // What a step of the group's ring costs on average over its hops, beyond its data: the path's
  // delays and NCCL's step cost across servers, NVLink's hops and the larger of NCCL's step cost
  // there and its proxy's inside a server (as the ring's steps take them, nccl_collective.hpp).
  [[nodiscard]] Duration ring_step_latency(const Group& group, NcclProtocol protocol) const;
  // The group's members on the cluster's network, in its node-major order; made on first use.
  CommunicatorNetwork& network_of(Group& group);
  void finish_on(Collective& collective, const Group& group, MemberFinished finished) const;

  Simulator& sim_;
  Cluster& cluster_;
  ClusterSpec spec_;
  NetworkModel level_;
  std::vector<std::unique_ptr<Group>> groups_;
  std::vector<char> host_staged_;                    // by GPU
  std::unique_ptr<NodeCollectiveTimes> node_times_;  // made for the first group inside a server
  std::map<ShapeKey, std::optional<Duration>> fabric_times_;    // fabric_time's
  std::map<ShapeKey, std::optional<CollectiveAlone>> alone_;    // alone_of's
  std::map<ShapeKey, std::optional<Duration>> transfer_times_;  // transfer_time's
};

}  // namespace lockstep
