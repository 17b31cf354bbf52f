// What every collective algorithm on a Network shares: it counts the transfers it expects and
// those delivered, knows when it started and when its last transfer was noticed, and charges NCCL's
// protocol costs (nccl_protocol.hpp) on each transfer: the protocol's wire bytes, its base latency
// before the first send, and its step latency after each arrival, NVLink's when both ranks share a
// node (endpoint / gpus_per_node), the network's otherwise. Without a protocol it is the bare
// transfers: what the fabric alone costs. The algorithms (ring: collective_run.hpp, tree:
// tree_all_reduce.hpp) say what to send and what an arrival sets off.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "models/collective/nccl_protocol.hpp"
#include "models/transport/network.hpp"
#include "sim/core/simulator.hpp"

namespace lockstep {

// Part `index` of `total` split into `parts` as evenly as whole bytes allow.
[[nodiscard]] Bytes even_share(Bytes total, std::int64_t parts, std::int64_t index);

// How many chunks a pipelined stream of `bytes` is cut into (trees, broadcast and reduce chains):
// 1 MiB each, at least one and at most 64, which bounds the messages of a large collective.
[[nodiscard]] std::int32_t pipeline_chunks(Bytes bytes);

struct RankTransferTimes {
  Duration sent;
  Duration received;
};

struct ProtocolOverheads {
  NcclProtocol protocol = NcclProtocol::kSimple;
  std::int32_t gpus_per_node = 1;
};

class CollectiveAlgorithm : public MessageListener {
 public:
  CollectiveAlgorithm(const CollectiveAlgorithm&) = delete;
  CollectiveAlgorithm& operator=(const CollectiveAlgorithm&) = delete;
  ~CollectiveAlgorithm() override = default;

  // Starts now: the first messages leave after the protocol's base latency. Call once.
  void start();
  [[nodiscard]] bool finished() const { return delivered_ == transfers_; }
  [[nodiscard]] Time started_at() const { return started_at_; }
  // When the last transfer arrived and was noticed; valid once finished().
  [[nodiscard]] Time finished_at() const { return finished_at_; }
  [[nodiscard]] std::int64_t transfers() const { return transfers_; }
  // Per rank, the time the transfers it sent and those it received took from sending to arriving,
  // summed: in a collective that ends together on every rank, this is what tells the ranks on a
  // slow path from those that only wait for them.
  [[nodiscard]] const std::vector<RankTransferTimes>& rank_transfer_times() const {
    return rank_transfer_times_;
  }
  // Called once, by an event at finished_at(), when the last transfer has been noticed (at the
  // start time when there is nothing to send).
  void when_finished(std::function<void()> callback) { on_finished_ = std::move(callback); }

  void on_message_complete(const Message& message, const MessageTimes& times) override;

 protected:
  // Throws std::invalid_argument for fewer than one GPU per node.
  CollectiveAlgorithm(Simulator& sim, Network& network, std::optional<ProtocolOverheads> overheads,
                      NcclAlgorithm algorithm);

  // Sends the first messages (after the base latency).
  virtual void launch() = 0;
  void expect_transfers(std::int64_t count) { transfers_ = count; }
  // Sends `data` bytes of payload as the protocol's wire bytes; returns the message id.
  std::uint64_t send(std::int32_t from, std::int32_t to, Bytes data, std::uint32_t queue_pair);
  // Counts an arrival; returns when the receiver can act on it (after the step latency).
  Time noticed(const Message& message, Time delivered);

  Simulator& sim_;
  Network& network_;

 private:
  void report_finished();

  std::optional<ProtocolOverheads> overheads_;
  ProtocolCost cost_;
  std::vector<RankTransferTimes> rank_transfer_times_;
  std::unordered_map<std::uint64_t, Time> sent_at_;  // by message id; looked up, never iterated
  std::function<void()> on_finished_;
  std::int64_t transfers_ = 0;
  std::int64_t delivered_ = 0;
  Time started_at_;
  Time finished_at_;
};

}  // namespace lockstep
