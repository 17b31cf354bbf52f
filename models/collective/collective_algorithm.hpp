// What every collective algorithm on a Network shares: it sends the transfers its algorithm says,
// holds back a transfer to a rank that has not joined yet (collective.hpp) and releases it when the
// rank joins, counts the transfers expected of each rank and those arrived, and charges NCCL's
// protocol costs (nccl_protocol.hpp) on each transfer: the protocol's wire bytes (and NVLS's
// efficiency on NVLink), its base latency between a rank's arrival and its first send, and its
// step latency after each arrival, NVLink's when both ranks share a node (endpoint /
// gpus_per_node), the network's otherwise. Without a protocol it is the bare transfers: what the
// fabric alone costs. The algorithms (ring: ring_collective.hpp, tree: tree_all_reduce.hpp, NVLS:
// nvls_all_reduce.hpp, NVLS-Tree: nvls_tree_all_reduce.hpp) say what a rank sends when it joins
// and what an arrival sets off. Two of NCCL's mechanisms are theirs to use: the steps of a warp
// group, which moves one step's data at a time (send_step), and PXN's relay of a transfer across
// rails over NVLink (send_rail_local).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/collective/collective.hpp"
#include "models/collective/nccl_protocol.hpp"
#include "models/network/network.hpp"
#include "sim/core/bit_rate.hpp"
#include "sim/core/flat_hash_map.hpp"
#include "sim/core/ring_queue.hpp"

namespace lockstep {

// Part `index` of `total` split into `parts` as evenly as whole bytes allow.
[[nodiscard]] Bytes even_share(Bytes total, std::int64_t parts, std::int64_t index);

// How many chunks a pipelined stream of `bytes` is cut into (trees, broadcast and reduce chains):
// 1 MiB each, at least one and at most 64, which bounds the messages of a large collective.
[[nodiscard]] std::int32_t pipeline_chunks(Bytes bytes);

// Endpoints 0 .. network.endpoint_count() - 1: the participants of an algorithm that runs on all.
[[nodiscard]] std::vector<std::int32_t> every_endpoint(const Network& network);

struct ProtocolOverheads {
  NcclProtocol protocol = NcclProtocol::kSimple;
  std::int32_t gpus_per_node = 1;
  // The most data one of the algorithm's streams (a ring's channel, a tree) moves per second
  // between nodes, however fast the wire (the protocol's ceiling, as ll_bus_bandwidth_ceiling):
  // the transfers a rank sends another on one queue pair are paced one after the other at this
  // rate, and each is noticed no sooner than its pacing ends and its last byte has crossed the
  // path (Network::latency).
  std::optional<BitRate> network_stream_ceiling;
  // The least a step inside a node costs beyond the wire: a ring that crosses nodes still has
  // every step wait on NCCL's proxy (ring_step_overhead).
  Duration nvlink_step_floor;
  // NCCL's PXN (NCCL_PXN_DISABLE=0, its default from 2.12 on): a point-to-point transfer to a GPU
  // of another node on another rail first crosses NVLink to the GPU of its own node on the
  // receiver's rail, whose NIC sends it on (send_rail_local).
  bool pxn = true;
  // As network_stream_ceiling, for the transfers inside a node (a communicator on one node).
  std::optional<BitRate> nvlink_stream_ceiling = std::nullopt;
  // The GPU's memory, bytes read plus bytes written per second (GpuSpec::hbm_measured): NVLS's
  // scatter and gather warps copy each loop through it between the user's buffers and NCCL's
  // (local_copy). Without it those copies are free.
  std::optional<BitRate> gpu_memory = std::nullopt;
  // The queue pairs of each connection between nodes (connection_queue_pair).
  std::int32_t queue_pairs_per_connection = 1;
};

// NCCL_IB_QPS_PER_CONNECTION: NCCL opens `per_connection` queue pairs for each of its connections
// between GPUs of different nodes over RDMA and posts each message on the next, round robin
// (src/transport/net_ib.cc, with NCCL_IB_SPLIT_DATA_ON_QPS=0, its default), so that ECMP spreads a
// connection's messages over as many paths. The connection's queue pair `queue_pair` sends its
// `k`-th message on queue pair queue_pair x per_connection + k mod per_connection: one queue pair
// per connection is the queue pair itself, and the connections between two GPUs never share one.
[[nodiscard]] std::uint32_t connection_queue_pair(std::uint32_t queue_pair,
                                                  std::int32_t per_connection, std::int64_t k);

class CollectiveAlgorithm : public Collective, public MessageListener {
 public:
  [[nodiscard]] std::int64_t transfers() const { return transfers_; }
  [[nodiscard]] std::vector<RankTransferTimes> rank_transfer_times() const override {
    return rank_transfer_times_;
  }
  [[nodiscard]] std::int64_t messages_in_flight() const override { return unacknowledged_; }

  void on_message_complete(const Message& message, const MessageTimes& times) final;
  void on_message_delivered(const Message& message, Time delivered) final;
  void on_message_failed(const Message& message, Time failed) final;

 protected:
  // Throws std::invalid_argument for fewer than one GPU per node, and as Collective does.
  CollectiveAlgorithm(Simulator& sim, Network& network, std::vector<std::int32_t> participants,
                      std::optional<ProtocolOverheads> overheads, NcclAlgorithm algorithm);

  // What rank `rank` sends the moment it has joined.
  virtual void launch(std::int32_t rank) = 0;
  // What the ranks that start() brought in send, having joined together; each launch() in turn
  // unless the algorithm orders a simultaneous start otherwise.
  virtual void launch_together(const std::vector<std::int32_t>& ranks);
  // A transfer sent with `tag` arrived at message.destination, which can act on it at `ready`
  // (after the step latency; not before now).
  virtual void arrived(const Message& message, Time ready, std::uint64_t tag) = 0;
  // Inside arrived(): when the arriving transfer's first bytes reached its receiver. For a paced
  // stream (ProtocolOverheads::network_stream_ceiling) that is when its pacing began plus the
  // path's latency; for any other transfer, its delivery.
  [[nodiscard]] Time arrival_began() const { return arrival_began_; }
  // Whether the protocol forwards data as it arrives: LL's and LL128's threads pass each line on
  // the moment its flag shows it, where Simple waits for a step's whole data.
  [[nodiscard]] bool forwards_lines() const;

  // How many transfers the collective has, and how many each rank (by endpoint) sends or receives.
  void expect_transfers(std::vector<std::int64_t> per_rank);
  // Sends `data` bytes of payload as the protocol's wire bytes; `tag` comes back with the arrival.
  // A transfer to a rank that has not joined waits for it. A transfer that passes on data still
  // arriving (forwards_lines) names when that data began to arrive, `relayed_from`
  // (arrival_began): its pacing may begin then rather than now, so a stream's ceiling is paid once
  // along a chain of ranks, not once at every hop.
  void send(std::int32_t from, std::int32_t to, Bytes data, std::uint32_t queue_pair,
            std::uint64_t tag, std::optional<Time> relayed_from = std::nullopt);
  // Sends as send() does, noticed no sooner than `paced_for` after it leaves and the path's latency
  // after that: a stream that its protocol paces below what the network gives it (a fluid ring's
  // channel at NCCL's speed for it).
  void send_paced(std::int32_t from, std::int32_t to, Bytes data, std::uint32_t queue_pair,
                  std::uint64_t tag, Duration paced_for);
  // Sends as send() does, or, where PXN applies (ProtocolOverheads::pxn), in two transfers: over
  // NVLink to pxn_relay(from, to), then from there over its NIC on the receiver's rail. The
  // arrival of the second is the transfer's arrival.
  void send_rail_local(std::int32_t from, std::int32_t to, Bytes data, std::uint32_t queue_pair,
                       std::uint64_t tag);
  // The GPU that relays a transfer from `from` to `to` under PXN: the one of from's node with to's
  // index in its node (on to's rail), unless that is `from` itself or both share a node.
  [[nodiscard]] std::optional<std::int32_t> pxn_relay(std::int32_t from, std::int32_t to) const;
  // Sends as send() does, as one step of one of NCCL's warp groups, `group` of rank `from`: a
  // group moves one step's data at a time and takes the step's handshake before the next (its
  // slots let it run ahead of the group that consumes, not ahead of itself), so a step's transfers
  // leave together once every transfer of the group's step before is ready (arrived, and its step
  // latency spent). A transfer may stand for `steps` of the group's steps in a row, whose data it
  // carries and whose latencies it takes: that bounds the events of a large collective. A transfer
  // may also come from another rank than the group's (`from`), where the group pulls data, as
  // NVLS's reduce reads every GPU's share through the switch.
  struct StepTransfer {
    std::int32_t to = 0;
    Bytes data;
    std::uint32_t queue_pair = 0;
    std::uint64_t tag = 0;
    std::int32_t steps = 1;
    std::int32_t from = -1;  // -1: the group's rank
    // What the receiver's warps then spend copying the data out of NCCL's buffer (NVLS's gather):
    // the receiving rank's end waits for it, the group's next step does not.
    Duration copied_out = Duration();
  };
  void send_step(std::int32_t from, std::uint32_t group, const std::vector<StepTransfer>& step);
  // As send(), for a transfer that stands for `steps` of its stream's steps in a row (as
  // StepTransfer::steps): it takes their step latencies.
  void send(const StepTransfer& transfer, std::int32_t from);
  // One step of the warps that copy `data` between the user's buffer and NCCL's on one GPU, as
  // NVLS's scatter and gather do (NCCL 2.26.2, src/device/all_reduce.h): read and written through
  // the GPU's memory (ProtocolOverheads::gpu_memory), then handed to the next warp group with the
  // protocol's step latency inside a node. Zero without overheads or a memory rate.
  [[nodiscard]] Duration local_copy(Bytes data) const;

  Network& network_;

 private:
  struct InFlight {
    Time sent_at;
    std::uint64_t tag = 0;
    Time paced_until;                  // when the stream's ceiling lets it be noticed
    std::int32_t step_stream = -1;     // send_step's warp group, whose step it ends when ready
    std::int32_t steps = 1;            // the step latencies it takes
    std::int64_t relay = -1;           // PXN's first leg: its second, in relays_
    Duration copied_out = Duration();  // StepTransfer::copied_out
    std::optional<Time> began = std::nullopt;  // a paced stream's first bytes at the receiver
  };
  struct Waiting {
    std::int32_t to = 0;
    std::int32_t from = 0;
    Bytes data;
    std::uint32_t queue_pair = 0;
    std::uint64_t tag = 0;
    std::int32_t step_stream = -1;
    std::int32_t steps = 1;
    std::int32_t relay_to = -1;  // PXN's first leg: where its relay sends it on
    Duration copied_out = Duration();
    std::optional<Time> relayed_from = std::nullopt;   // send()'s
    std::optional<Duration> paced_for = std::nullopt;  // send_paced()'s
  };
  // send_step's warp groups: the steps each holds back while one is under way.
  struct StepStream {
    bool busy = false;
    std::int32_t transfers_left = 0;         // of the step under way
    Time step_ends;                          // when the last of them is ready
    RingQueue<std::vector<Waiting>> queued;  // a step taken off leaves its slot emptied
  };

  void on_arrival(std::int32_t rank, Time at) override;
  void on_arrivals(const std::vector<std::int32_t>& ranks) override;
  void on_abort() override;
  void count_arrival(Time at);
  // The events at an arrival plus the base latency: the rank, or start()'s ranks, join.
  void join(std::int32_t rank);
  void join_started_event();
  void join_started();
  // Releases the transfers that waited for the rank, and reports it done if it has no transfer.
  void admit(std::int32_t rank);
  void transfer_done(std::int32_t rank, Time at);
  void send_waiting(const Waiting& transfer);
  // PXN's second leg of the relayed transfer `relay` (an index into relays_) leaves.
  void relay_event(std::uint64_t relay);
  // The step under way of send_step's warp group `stream` has ended: its next, if any, leaves.
  void next_step(std::uint64_t stream);
  void send_whole_step(StepStream& stream, const std::vector<Waiting>& step);
  void next_step_event(std::uint64_t stream);
  [[nodiscard]] bool has_joined(std::int32_t rank) const;

  std::optional<ProtocolOverheads> overheads_;
  ProtocolCost cost_;
  std::vector<RankTransferTimes> rank_transfer_times_;
  FlatHashMap<std::uint64_t, InFlight> in_flight_;                        // by message id
  FlatHashMap<QueuePairKey, Time, QueuePairKeyHash> stream_paced_until_;  // when each is next free
  // How many messages each connection between nodes has sent (connection_queue_pair).
  FlatHashMap<QueuePairKey, std::int64_t, QueuePairKeyHash> connection_messages_;
  std::vector<std::vector<Waiting>> waiting_for_;               // by receiving rank
  FlatHashMap<std::uint64_t, std::int32_t> step_stream_index_;  // by (from, group)
  std::vector<StepStream> step_streams_;
  std::vector<Waiting> relays_;  // PXN's second legs, waiting for the first to be ready
  std::vector<std::int64_t> rank_transfers_left_;  // by rank
  std::vector<Time> rank_last_transfer_;           // by rank
  std::int64_t transfers_ = 0;
  std::int64_t arrived_ = 0;
  std::int64_t unacknowledged_ = 0;    // sent, and the network has yet to call back on completion
  std::vector<std::int32_t> started_;  // the ranks start() brought in, until they join
  std::int32_t ranks_yet_to_arrive_ = 0;
  Time latest_arrival_;
  Time last_noticed_;
  Time arrival_began_;  // arrival_began()'s, for the arrival being handed to arrived()
};

}  // namespace lockstep
