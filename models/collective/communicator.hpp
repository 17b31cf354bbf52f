// A communicator: an ordered group of ranks that runs collectives among themselves, as NCCL's
// ncclComm does, while the rest of the cluster's GPUs sit idle. Its members are global ranks (GPU
// node x G + index on GPU servers; fabric endpoints otherwise). Like NCCL, which lays its rings
// and trees out by topology, lockstep groups the members by node: nodes in the order their first
// member appears, each node's members in communicator order. Local rank i is the i-th member of
// that node-major order, so the rings (channel_rings.hpp), trees and protocol costs written for
// node x G + index apply unchanged with the communicator's GPUs per node.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "models/network/network.hpp"
#include "sim/core/flat_hash_map.hpp"

namespace lockstep {

struct CommunicatorLayout {
  std::vector<std::int32_t> members;  // global rank of each local rank, node-major
  std::int32_t nodes = 0;
  std::int32_t gpus_per_node = 0;  // members on each of its nodes
};

// `communicator`'s members grouped by node (`gpus_per_node` GPUs per node of the cluster, 1 when
// ranks are fabric endpoints). Throws std::invalid_argument for a rank out of [0, ranks), a rank
// listed twice, fewer than one member, or different member counts on different nodes (NCCL's
// trees and rings assume the same count; lockstep requires it).
[[nodiscard]] CommunicatorLayout communicator_layout(const std::vector<std::int32_t>& communicator,
                                                     std::int32_t ranks,
                                                     std::int32_t gpus_per_node);

// The cluster's network as the communicator's local ranks see it: sends between local ranks go
// between their global ranks, and listeners hear of messages under local ranks. Message ids are
// the cluster network's. Its queue pairs are the cluster's from `first_queue_pair` on, as NCCL
// opens queue pairs of its own for a communicator: a training job's collectives then never queue
// behind another traffic's messages on one queue pair.
class CommunicatorNetwork final : public Network, private MessageListener {
 public:
  CommunicatorNetwork(Network& cluster, std::vector<std::int32_t> members,
                      std::uint32_t first_queue_pair = 0);

  std::uint64_t send(std::int32_t source, std::int32_t destination, Bytes size,
                     std::uint32_t queue_pair, MessageListener& listener) override;
  [[nodiscard]] std::int32_t endpoint_count() const override;
  [[nodiscard]] Duration latency(std::int32_t source, std::int32_t destination,
                                 std::uint32_t queue_pair) const override;

 private:
  void on_message_complete(const Message& message, const MessageTimes& times) override;
  void on_message_delivered(const Message& message, Time delivered) override;
  void on_message_failed(const Message& message, Time failed) override;
  // What a message sent through the communicator was, in its ranks.
  struct Sent {
    MessageListener* listener = nullptr;
    std::int32_t source = 0;
    std::int32_t destination = 0;
  };
  [[nodiscard]] Message local(const Message& message, const Sent& sent) const;

  Network& cluster_;
  std::vector<std::int32_t> members_;
  std::uint32_t first_queue_pair_;
  FlatHashMap<std::uint64_t, Sent> sent_;  // by id
};

}  // namespace lockstep
