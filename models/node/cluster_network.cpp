#include "models/node/cluster_network.hpp"

#include <stdexcept>
#include <string>

namespace lockstep {

ClusterNetwork::ClusterNetwork(Network& nvlink, Network& fabric, std::int32_t gpus_per_node)
    : nvlink_(nvlink), fabric_(fabric), gpus_per_node_(gpus_per_node) {
  if (gpus_per_node < 1 || nvlink.endpoint_count() != fabric.endpoint_count() ||
      fabric.endpoint_count() % gpus_per_node != 0) {
    throw std::invalid_argument(
        "a cluster needs an NVLink network and a fabric with one endpoint per GPU: " +
        std::to_string(nvlink.endpoint_count()) + " and " +
        std::to_string(fabric.endpoint_count()) + " endpoints for " +
        std::to_string(gpus_per_node) + " GPUs per node");
  }
}

std::int32_t ClusterNetwork::endpoint_count() const { return fabric_.endpoint_count(); }

Duration ClusterNetwork::latency(std::int32_t source, std::int32_t destination,
                                 std::uint32_t queue_pair) const {
  const Network& network = node_of(source) == node_of(destination) ? nvlink_ : fabric_;
  return network.latency(source, destination, queue_pair);
}

std::uint64_t ClusterNetwork::send(std::int32_t source, std::int32_t destination, Bytes size,
                                   std::uint32_t queue_pair, MessageListener& listener) {
  const bool same_node = node_of(source) == node_of(destination);
  Network& network = same_node ? nvlink_ : fabric_;
  Side& side = same_node ? nvlink_side_ : fabric_side_;
  const std::uint64_t outer = next_message_++;
  const std::uint64_t inner = network.send(source, destination, size, queue_pair, side);
  side.track(inner, outer, listener);
  return outer;
}

void ClusterNetwork::Side::on_message_delivered(const Message& message, Time delivered) {
  const Routed routed = routed_.at(message.id);
  Message outer = message;
  outer.id = routed.outer;
  routed.listener->on_message_delivered(outer, delivered);
}

ClusterNetwork::Side::Routed ClusterNetwork::Side::take(const Message& message) {
  return *routed_.take(message.id);
}

void ClusterNetwork::Side::on_message_complete(const Message& message, const MessageTimes& times) {
  const Routed routed = take(message);
  Message outer = message;
  outer.id = routed.outer;
  routed.listener->on_message_complete(outer, times);
}

void ClusterNetwork::Side::on_message_failed(const Message& message, Time failed) {
  const Routed routed = take(message);
  Message outer = message;
  outer.id = routed.outer;
  routed.listener->on_message_failed(outer, failed);
}

}  // namespace lockstep
