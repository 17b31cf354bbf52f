// Plays a flow list (traffic.hpp) on a Network: each flow is sent as one message at its start time,
// or when the flow it waits on is fully acknowledged, and each completion is recorded. Everything
// is driven by events: a flow's launch is scheduled once its trigger is known, and completions
// arrive through MessageListener, so an idle driver costs nothing. Records the table "flows", one
// row per completed flow in completion order: flow (its index in the list), message (the network's
// id, to join with the network's own tables), source, destination, queue_pair, bytes, start_ps,
// first_sent_ps, delivered_ps, acknowledged_ps and fct_ps (acknowledged - start). A flow whose
// queue pair failed gets a row in "failed_flows" instead (flow, message, source, destination,
// queue_pair, bytes, start_ps, failed_ps), and the flows waiting on it never start. Flows still
// running when the run ends have no row; summary() counts them. Left out: flows that wait on more
// than one other, retries and think time beyond the fixed `start` delay. Units: picoseconds, bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "models/network/message.hpp"
#include "models/network/network.hpp"
#include "models/traffic/traffic.hpp"
#include "models/traffic/traffic_statistics.hpp"
#include "sim/core/simulator.hpp"
#include "sim/core/table.hpp"

namespace lockstep {

struct TrafficDriverOptions {
  // Calls Simulator::stop() once every flow is acknowledged or failed (all_settled), for runs whose
  // other components keep scheduling events forever (periodic sampling, timers) and so never drain.
  bool stop_when_settled = false;
};

class TrafficDriver final : public MessageListener {
 public:
  struct FlowRow {
    std::int64_t flow;
    std::int64_t message;
    std::int64_t source;
    std::int64_t destination;
    std::int64_t queue_pair;
    std::int64_t bytes;
    std::int64_t start_ps;
    std::int64_t first_sent_ps;
    std::int64_t delivered_ps;
    std::int64_t acknowledged_ps;
    std::int64_t fct_ps;
  };
  struct FailedFlowRow {
    std::int64_t flow;
    std::int64_t message;
    std::int64_t source;
    std::int64_t destination;
    std::int64_t queue_pair;
    std::int64_t bytes;
    std::int64_t start_ps;
    std::int64_t failed_ps;
  };

  // What happened to one flow so far.
  struct FlowOutcome {
    std::optional<Time> start;          // when it was handed to the network
    std::optional<MessageTimes> times;  // once it is fully acknowledged
    std::uint64_t message = 0;          // the network's id, valid once started
  };

  struct Summary {
    std::int64_t flows = 0;
    std::int64_t started = 0;
    std::int64_t completed = 0;
    std::int64_t failed = 0;              // their queue pair failed
    std::int64_t abandoned = 0;           // waiting on a failed flow, directly or not
    std::optional<Time> first_start;      // empty until a flow starts
    std::optional<Time> last_completion;  // empty until a flow completes
    std::optional<FctStatistics> fct;     // over completed flows; empty until one completes
  };

  // Checks `flows` against the network (flow_list_problems) and throws std::invalid_argument
  // listing every problem, one per line, before anything is scheduled.
  TrafficDriver(Simulator& sim, Network& network, std::vector<FlowSpec> flows,
                RecordBackend& output, TrafficDriverOptions options = {});
  TrafficDriver(const TrafficDriver&) = delete;
  TrafficDriver& operator=(const TrafficDriver&) = delete;

  // Schedules every flow that waits on no other at now() + its start; the others follow their
  // predecessors. Call once.
  void start();
  // Writes out buffered rows; call once the run is over.
  void flush();

  [[nodiscard]] const std::vector<FlowSpec>& flows() const { return flows_; }
  [[nodiscard]] const std::vector<FlowOutcome>& outcomes() const { return outcomes_; }
  [[nodiscard]] std::int64_t completed() const { return completed_; }
  [[nodiscard]] bool all_complete() const {
    return completed_ == static_cast<std::int64_t>(flows_.size());
  }
  [[nodiscard]] std::int64_t failed() const { return failed_; }
  // Every flow completed, failed, or will never start because one it waits on failed.
  [[nodiscard]] bool all_settled() const {
    return completed_ + failed_ + abandoned_ == static_cast<std::int64_t>(flows_.size());
  }
  // Counts, first start, last completion and exact FCT statistics (traffic_statistics.hpp) over the
  // flows completed so far. Sorts a copy of the FCTs: call it at the end, not per event.
  [[nodiscard]] Summary summary() const;

 private:
  void on_message_complete(const Message& message, const MessageTimes& times) override;
  void on_message_failed(const Message& message, Time failed) override;
  void launch(std::uint64_t flow);
  // The flow's message is done with, one way or the other: which flow it was.
  std::size_t take_flow_of(const Message& message);
  void abandon_followers(std::size_t flow);
  void stop_if_settled();

  Simulator& sim_;
  Network& network_;
  std::vector<FlowSpec> flows_;
  TrafficDriverOptions options_;
  // The flows waiting on flow i are waiting_[waiting_begin_[i] .. waiting_begin_[i + 1]), in list
  // order, so that flows triggered by one completion start in a reproducible order.
  std::vector<std::size_t> waiting_begin_;
  std::vector<std::size_t> waiting_;
  std::vector<FlowOutcome> outcomes_;
  // Looked up by id only, never iterated, so its order cannot leak into results.
  std::unordered_map<std::uint64_t, std::size_t> flow_of_message_;
  std::int64_t started_ = 0;
  std::int64_t completed_ = 0;
  std::int64_t failed_ = 0;
  std::int64_t abandoned_ = 0;
  bool traffic_started_ = false;
  Table<FlowRow> rows_;
  Table<FailedFlowRow> failed_rows_;
};

}  // namespace lockstep
