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

CommunicatorNetwork::CommunicatorNetwork(Network& cluster, std::vector<std::int32_t> members)
    : cluster_(cluster), members_(std::move(members)), local_of_(members_.size()) {
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (members_[i] < 0 || members_[i] >= cluster.endpoint_count()) {
      throw std::invalid_argument("communicator member " + std::to_string(members_[i]) +
                                  " is not a rank of the network");
    }
    local_of_[i] = {members_[i], static_cast<std::int32_t>(i)};
  }
  std::sort(local_of_.begin(), local_of_.end());
}

std::int32_t CommunicatorNetwork::local_rank(std::int32_t global) const {
  const auto it = std::lower_bound(local_of_.begin(), local_of_.end(),
                                   std::pair<std::int32_t, std::int32_t>{global, -1});
  return it != local_of_.end() && it->first == global ? it->second : -1;
}

std::int32_t CommunicatorNetwork::endpoint_count() const {
  return static_cast<std::int32_t>(members_.size());
}

std::uint64_t CommunicatorNetwork::send(std::int32_t source, std::int32_t destination, Bytes size,
                                        std::uint32_t queue_pair, MessageListener& listener) {
  check_message_endpoints(source, destination, endpoint_count());
  const std::uint64_t id =
      cluster_.send(members_[static_cast<std::size_t>(source)],
                    members_[static_cast<std::size_t>(destination)], size, queue_pair, *this);
  listeners_.emplace(id, &listener);
  return id;
}

Message CommunicatorNetwork::local(const Message& message) const {
  Message out = message;
  out.source = local_rank(message.source);
  out.destination = local_rank(message.destination);
  return out;
}

void CommunicatorNetwork::on_message_delivered(const Message& message, Time delivered) {
  listeners_.at(message.id)->on_message_delivered(local(message), delivered);
}

void CommunicatorNetwork::on_message_complete(const Message& message, const MessageTimes& times) {
  const auto it = listeners_.find(message.id);
  MessageListener* listener = it->second;
  listeners_.erase(it);
  listener->on_message_complete(local(message), times);
}

void CommunicatorNetwork::on_message_failed(const Message& message, Time failed) {
  const auto it = listeners_.find(message.id);
  MessageListener* listener = it->second;
  listeners_.erase(it);
  listener->on_message_failed(local(message), failed);
}

}  // namespace lockstep
