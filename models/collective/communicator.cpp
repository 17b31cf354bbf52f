#include "models/collective/communicator.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace lockstep {

CommunicatorLayout communicator_layout(const std::vector<std::int32_t>& communicator,
                                       std::int32_t ranks, std::int32_t gpus_per_node) {
  if (communicator.empty()) throw std::invalid_argument("a communicator needs a member");
  std::vector<bool> seen(static_cast<std::size_t>(ranks), false);
  std::vector<std::int32_t> node_order;
  std::vector<std::vector<std::int32_t>> by_node(
      static_cast<std::size_t>((ranks + gpus_per_node - 1) / gpus_per_node));
  for (const std::int32_t r : communicator) {
    if (r < 0 || r >= ranks) {
      throw std::invalid_argument("communicator rank " + std::to_string(r) +
                                  ": the cluster has ranks 0 to " + std::to_string(ranks - 1));
    }
    if (seen[static_cast<std::size_t>(r)]) {
      throw std::invalid_argument("communicator rank " + std::to_string(r) + " listed twice");
    }
    seen[static_cast<std::size_t>(r)] = true;
    std::vector<std::int32_t>& node = by_node[static_cast<std::size_t>(r / gpus_per_node)];
    if (node.empty()) node_order.push_back(r / gpus_per_node);
    node.push_back(r);
  }
  CommunicatorLayout layout;
  layout.nodes = static_cast<std::int32_t>(node_order.size());
  layout.gpus_per_node =
      static_cast<std::int32_t>(by_node[static_cast<std::size_t>(node_order.front())].size());
  for (const std::int32_t n : node_order) {
    const std::vector<std::int32_t>& node = by_node[static_cast<std::size_t>(n)];
    if (static_cast<std::int32_t>(node.size()) != layout.gpus_per_node) {
      throw std::invalid_argument(
          "a communicator takes the same number of GPUs on each of its nodes: node " +
          std::to_string(n) + " has " + std::to_string(node.size()) + ", node " +
          std::to_string(node_order.front()) + " has " + std::to_string(layout.gpus_per_node));
    }
    layout.members.insert(layout.members.end(), node.begin(), node.end());
  }
  return layout;
}

CommunicatorNetwork::CommunicatorNetwork(Network& cluster, std::vector<std::int32_t> members,
                                         std::uint32_t first_queue_pair)
    : cluster_(cluster), members_(std::move(members)), first_queue_pair_(first_queue_pair) {
  for (const std::int32_t member : members_) {
    if (member < 0 || member >= cluster.endpoint_count()) {
      throw std::invalid_argument("communicator member " + std::to_string(member) +
                                  " is not a rank of the network");
    }
  }
}

std::int32_t CommunicatorNetwork::endpoint_count() const {
  return static_cast<std::int32_t>(members_.size());
}

Duration CommunicatorNetwork::latency(std::int32_t source, std::int32_t destination,
                                      std::uint32_t queue_pair) const {
  return cluster_.latency(members_[static_cast<std::size_t>(source)],
                          members_[static_cast<std::size_t>(destination)],
                          first_queue_pair_ + queue_pair);
}

std::uint64_t CommunicatorNetwork::send(std::int32_t source, std::int32_t destination, Bytes size,
                                        std::uint32_t queue_pair, MessageListener& listener) {
  check_message_endpoints(source, destination, endpoint_count());
  const std::uint64_t id = cluster_.send(members_[static_cast<std::size_t>(source)],
                                         members_[static_cast<std::size_t>(destination)], size,
                                         first_queue_pair_ + queue_pair, *this);
  sent_.insert(id, Sent{&listener, source, destination});
  return id;
}

Message CommunicatorNetwork::local(const Message& message, const Sent& sent) const {
  Message out = message;
  out.source = sent.source;
  out.destination = sent.destination;
  out.queue_pair -= first_queue_pair_;
  return out;
}

void CommunicatorNetwork::on_message_delivered(const Message& message, Time delivered) {
  const Sent& sent = sent_.at(message.id);
  sent.listener->on_message_delivered(local(message, sent), delivered);
}

void CommunicatorNetwork::on_message_complete(const Message& message, const MessageTimes& times) {
  const Sent sent = *sent_.take(message.id);
  sent.listener->on_message_complete(local(message, sent), times);
}

void CommunicatorNetwork::on_message_failed(const Message& message, Time failed) {
  const Sent sent = *sent_.take(message.id);
  sent.listener->on_message_failed(local(message, sent), failed);
}

}  // namespace lockstep
