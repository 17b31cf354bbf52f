#include "models/collective/collective.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace lockstep {

Collective::Collective(Simulator& sim, std::int32_t endpoints,
                       std::vector<std::int32_t> participants)
    : sim_(sim),
      participants_(std::move(participants)),
      takes_part_(static_cast<std::size_t>(std::max(endpoints, 0)), 0),
      arrived_at_(takes_part_.size()) {
  std::vector<std::int32_t> sorted = participants_;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    throw std::invalid_argument("a rank appears twice in the collective");
  }
  for (const std::int32_t rank : participants_) {
    if (rank < 0 || rank >= endpoints) {
      throw std::invalid_argument("rank on endpoint " + std::to_string(rank) +
                                  ", which the network does not have");
    }
    takes_part_[static_cast<std::size_t>(rank)] = 1;
  }
}

void Collective::arrive(std::int32_t rank, Time at) {
  if (state_ != CollectiveState::kRunning) return;
  if (rank < 0 || static_cast<std::size_t>(rank) >= takes_part_.size() ||
      takes_part_[static_cast<std::size_t>(rank)] == 0) {
    throw std::invalid_argument("rank " + std::to_string(rank) +
                                " does not take part in the collective");
  }
  std::optional<Time>& arrival = arrived_at_[static_cast<std::size_t>(rank)];
  if (arrival) {
    throw std::invalid_argument("rank " + std::to_string(rank) +
                                " arrived at the collective twice");
  }
  if (at < sim_.now()) {
    throw std::invalid_argument("rank " + std::to_string(rank) + " cannot arrive in the past");
  }
  arrival = at;
  started_at_ = std::min(started_at_, at);
  on_arrival(rank, at);
}

void Collective::start() {
  if (state_ != CollectiveState::kRunning) return;
  std::vector<std::int32_t> arriving;
  for (const std::int32_t rank : participants_) {
    std::optional<Time>& arrival = arrived_at_[static_cast<std::size_t>(rank)];
    if (arrival) continue;
    arrival = sim_.now();
    arriving.push_back(rank);
  }
  if (arriving.empty()) return;
  started_at_ = std::min(started_at_, sim_.now());
  on_arrivals(arriving);
}

void Collective::abort() {
  if (state_ != CollectiveState::kRunning) return;
  state_ = CollectiveState::kAborted;
  on_abort();
}

void Collective::set_timeout(Duration after, TimedOut on_timeout) {
  if (timeout_at_) throw std::invalid_argument("a collective has one timeout");
  if (after < Duration()) throw std::invalid_argument("a timeout cannot be negative");
  timeout_at_ = sim_.now() + after;
  on_timeout_ = std::move(on_timeout);
  schedule_counted<&Collective::deadline>(*timeout_at_, this);
}

void Collective::deadline() {
  event_ran();
  if (state_ != CollectiveState::kRunning) return;
  std::vector<std::int32_t> never_arrived;
  for (const std::int32_t rank : participants_) {
    if (!arrived_by(rank, sim_.now())) never_arrived.push_back(rank);
  }
  std::sort(never_arrived.begin(), never_arrived.end());
  abort();
  state_ = CollectiveState::kTimedOut;
  if (on_timeout_) on_timeout_(never_arrived);
}

std::optional<Time> Collective::arrived_at(std::int32_t rank) const {
  if (rank < 0 || static_cast<std::size_t>(rank) >= arrived_at_.size()) return std::nullopt;
  return arrived_at_[static_cast<std::size_t>(rank)];
}

bool Collective::arrived_by(std::int32_t rank, Time t) const {
  const std::optional<Time>& arrival = arrived_at_[static_cast<std::size_t>(rank)];
  return arrival && *arrival <= t;
}

void Collective::rank_done(std::int32_t rank, Time at) {
  if (!on_rank_finished_) return;
  schedule_counted<&Collective::report_rank_finished>(at, this, rank);
}

void Collective::all_done(Time at) {
  finished_at_ = at;
  // Reported by an event, like every end: a caller starting several collectives in a loop is not
  // re-entered before its loop is done.
  schedule_counted<&Collective::report_finished>(at, this);
}

void Collective::fail(const TransferFailure& failure) {
  if (state_ != CollectiveState::kRunning) return;
  state_ = CollectiveState::kFailed;
  failure_ = failure;
  on_abort();
  schedule_counted<&Collective::report_failed>(sim_.now(), this);
}

void Collective::report_failed() {
  event_ran();
  if (on_failed_) on_failed_(*failure_);
}

void Collective::report_finished() {
  event_ran();
  if (state_ != CollectiveState::kRunning) return;
  state_ = CollectiveState::kFinished;
  if (on_finished_) on_finished_();
}

void Collective::report_rank_finished(std::int32_t rank) {
  event_ran();
  if (state_ != CollectiveState::kRunning && state_ != CollectiveState::kFinished) return;
  if (!on_rank_finished_) return;  // the listener left
  on_rank_finished_(rank, sim_.now());
}

}  // namespace lockstep
