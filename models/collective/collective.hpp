// A collective as an activity of the cluster, as NCCL runs one: created on a communicator, it does
// not start at one instant. Each rank joins when its own stream reaches the collective (arrive),
// data moves between two ranks only once both have joined (a receiver must have posted its buffer
// before NCCL's proxy sends to it), each rank hears when its own part is done, and the whole can
// be aborted or time out while some rank has not joined, which is how one dead or late GPU stalls
// everybody, or fail when a transfer's queue pair fails, which is how a dead path does. What moves
// and when is the algorithm's (CollectiveAlgorithm and its subclasses, HierarchicalAllReduce); this
// class keeps who joined, who finished, and the activity's state.
//
// Ranks are the network's endpoints (a CommunicatorNetwork numbers a communicator's members
// 0..n-1); the participants are those the algorithm runs on, every endpoint unless it says less.
//
// Lifetime: a collective is the target of its own events and the listener of its messages, so it
// must outlive both; settled() says when nothing of it is left pending.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "sim/core/simulator.hpp"

namespace lockstep {

enum class CollectiveState {
  kRunning,   // created, some ranks may not have joined yet
  kFinished,  // every transfer arrived
  kAborted,   // abort() was called
  kTimedOut,  // the timeout fired first (then aborted)
  kFailed,    // a transfer's queue pair ran out of retries: NCCL's proxy got an error completion
};

// The transfer whose queue pair failed, between ranks of the collective.
struct TransferFailure {
  std::int32_t from = 0;
  std::int32_t to = 0;
  Time at;
};

struct RankTransferTimes {
  Duration sent;
  Duration received;
};

class Collective {
 public:
  using RankFinished = std::function<void(std::int32_t rank, Time finished)>;
  using TimedOut = std::function<void(const std::vector<std::int32_t>& never_arrived)>;
  using Failed = std::function<void(const TransferFailure& failure)>;

  Collective(const Collective&) = delete;
  Collective& operator=(const Collective&) = delete;
  virtual ~Collective() = default;

  // Rank `rank` joins at `at`, now or later: its first transfers leave then (after the protocol's
  // base latency), and transfers to it wait until then. Ignored once the collective was aborted.
  // Throws std::invalid_argument for a rank that does not take part, one that already arrived, or
  // a time in the past.
  void arrive(std::int32_t rank, Time at);
  // Every participant that has not arrived arrives now.
  void start();
  // Stops the collective: nothing more is sent, transfers waiting for a receiver are dropped and
  // later arrivals are ignored. Transfers already handed to the network finish there (their bytes
  // are on the wire or in the NIC's send queue) and are discarded on arrival. No-op unless running.
  void abort();
  // `after` from now, a collective still running is aborted, its state turns kTimedOut, and
  // `on_timeout` hears the participants that had not arrived by then, in rank order (empty when
  // every rank arrived and the data is what is late). Call at most once, before it finishes.
  void set_timeout(Duration after, TimedOut on_timeout);

  // Called once, by an event at the failure, if a transfer's queue pair fails. The collective has
  // stopped by then, as abort() stops it; its ranks are left inside, as NCCL's kernels are left
  // spinning, until whoever holds them acts on the error.
  void when_failed(Failed callback) { on_failed_ = std::move(callback); }
  // Called once, by an event at finished_at(), when the last transfer has been noticed.
  void when_finished(std::function<void()> callback) { on_finished_ = std::move(callback); }
  // Called once per participant, by an event at the time its own sends have arrived and its own
  // receives have been noticed. An empty callback stops the reports still to come.
  void when_rank_finished(RankFinished callback) { on_rank_finished_ = std::move(callback); }

  [[nodiscard]] CollectiveState state() const { return state_; }
  [[nodiscard]] bool finished() const { return state_ == CollectiveState::kFinished; }
  [[nodiscard]] bool running() const { return state_ == CollectiveState::kRunning; }
  [[nodiscard]] const std::vector<std::int32_t>& participants() const { return participants_; }
  // When the first participant arrived; valid once one has.
  [[nodiscard]] Time started_at() const { return started_at_; }
  // When the last transfer arrived and was noticed; valid once finished().
  [[nodiscard]] Time finished_at() const { return finished_at_; }
  [[nodiscard]] std::optional<Time> arrived_at(std::int32_t rank) const;
  // Per rank (by endpoint), the time the transfers it sent and those it received took from sending
  // to arriving, summed: in a collective that ends together on every rank, this is what tells the
  // ranks on a slow path from those that only wait for them.
  [[nodiscard]] virtual std::vector<RankTransferTimes> rank_transfer_times() const = 0;
  // Messages handed to the network that it has not yet reported complete (acknowledged): until
  // then it may call back.
  [[nodiscard]] virtual std::int64_t messages_in_flight() const = 0;
  // No event of this collective is pending and no message of it is in the network: it may be
  // destroyed.
  [[nodiscard]] virtual bool settled() const {
    return pending_events_ == 0 && messages_in_flight() == 0;
  }

 protected:
  // `endpoints`: how many ranks the network has; `participants`: those that take part, distinct
  // and each below `endpoints` (checked).
  Collective(Simulator& sim, std::int32_t endpoints, std::vector<std::int32_t> participants);

  // Rank `rank` has just been recorded as arriving at `at` (>= now).
  virtual void on_arrival(std::int32_t rank, Time at) = 0;
  // The ranks start() brought in, all arriving now (recorded before this is called).
  virtual void on_arrivals(const std::vector<std::int32_t>& ranks) = 0;
  // The collective was aborted: drop what waits, send nothing more.
  virtual void on_abort() = 0;

  // The participant's own part is done at `at` (>= now); told once per rank.
  void rank_done(std::int32_t rank, Time at);
  // Every transfer has arrived; the collective is finished at `at` (>= now).
  void all_done(Time at);
  // A transfer's queue pair failed: the collective stops and turns kFailed. No-op unless running.
  void fail(const TransferFailure& failure);
  // Whether `rank` has arrived by now (its arrival time is known and not in the future).
  [[nodiscard]] bool arrived_by(std::int32_t rank, Time t) const;
  [[nodiscard]] std::optional<Time> recorded_arrival(std::int32_t rank) const {
    return arrived_at_[static_cast<std::size_t>(rank)];
  }

  // Schedules `object->Method(arg)` and counts it as pending until it runs (settled()). Every event
  // whose target is the collective goes through here.
  template <auto Method, class... Arg>
  void schedule_counted(Time at, typename detail::MethodTraits<decltype(Method)>::Class* object,
                        Arg... arg) {
    ++pending_events_;
    sim_.schedule<Method>(at, object, arg...);
  }
  // Called first by every counted event.
  void event_ran() { --pending_events_; }

  Simulator& sim_;

 private:
  void report_finished();
  void report_rank_finished(std::int32_t rank);
  void report_failed();
  void deadline();

  std::vector<std::int32_t> participants_;
  std::vector<char> takes_part_;                 // by endpoint: looked up on every arrival
  std::vector<std::optional<Time>> arrived_at_;  // by endpoint
  std::function<void()> on_finished_;
  RankFinished on_rank_finished_;
  TimedOut on_timeout_;
  Failed on_failed_;
  std::optional<TransferFailure> failure_;
  std::optional<Time> timeout_at_;
  CollectiveState state_ = CollectiveState::kRunning;
  std::int64_t pending_events_ = 0;
  Time started_at_ = Time::max();
  Time finished_at_;
};

}  // namespace lockstep
