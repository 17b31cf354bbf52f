// The network of a GPU cluster as collectives see it: ranks are GPUs, node n holding ranks
// n G .. n G + G - 1. A message between two GPUs of one node crosses the node's NVSwitch (the
// NVLink network); between nodes it leaves through the sending GPU's NIC and arrives at the
// receiving GPU's NIC (the fabric, whose endpoint r is GPU r's NIC, one NIC per GPU as on DGX
// systems). Messages share one id space across both networks, and listeners hear of them as of any
// Network. It leaves out PXN (NCCL relaying through an NVLink peer to reach a NIC on the right
// rail) and GPUDirect being off; the PCIe/NUMA model will add the host path.
#pragma once

#include <cstdint>

#include "models/network/network.hpp"
#include "sim/core/flat_hash_map.hpp"

namespace lockstep {

class ClusterNetwork final : public Network {
 public:
  // Both networks number their endpoints as ranks: endpoint_count() equal, a multiple of
  // `gpus_per_node`. Throws std::invalid_argument otherwise.
  ClusterNetwork(Network& nvlink, Network& fabric, std::int32_t gpus_per_node);
  ClusterNetwork(const ClusterNetwork&) = delete;
  ClusterNetwork& operator=(const ClusterNetwork&) = delete;

  std::uint64_t send(std::int32_t source, std::int32_t destination, Bytes size,
                     std::uint32_t queue_pair, MessageListener& listener) override;
  [[nodiscard]] std::int32_t endpoint_count() const override;
  [[nodiscard]] Duration latency(std::int32_t source, std::int32_t destination,
                                 std::uint32_t queue_pair) const override;

  [[nodiscard]] std::int32_t node_of(std::int32_t rank) const { return rank / gpus_per_node_; }

 private:
  // Relays one network's callbacks under the cluster's message ids.
  class Side final : public MessageListener {
   public:
    void track(std::uint64_t inner, std::uint64_t outer, MessageListener& listener) {
      routed_.insert(inner, Routed{outer, &listener});
    }
    void on_message_complete(const Message& message, const MessageTimes& times) override;
    void on_message_delivered(const Message& message, Time delivered) override;
    void on_message_failed(const Message& message, Time failed) override;

   private:
    struct Routed {
      std::uint64_t outer = 0;
      MessageListener* listener = nullptr;
    };
    // The message's route, which it no longer needs: it completed or failed.
    Routed take(const Message& message);
    FlatHashMap<std::uint64_t, Routed> routed_;  // by inner id
  };

  Network& nvlink_;
  Network& fabric_;
  std::int32_t gpus_per_node_;
  Side nvlink_side_;
  Side fabric_side_;
  std::uint64_t next_message_ = 0;
};

}  // namespace lockstep
