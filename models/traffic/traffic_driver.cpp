#include "models/traffic/traffic_driver.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "sim/core/check.hpp"

namespace lockstep {
namespace {

TableLayout flow_layout() {
  using Row = TrafficDriver::FlowRow;
  return layout<Row>(
      "flows",
      {column("flow", &Row::flow), column("message", &Row::message), column("source", &Row::source),
       column("destination", &Row::destination), column("queue_pair", &Row::queue_pair),
       column("bytes", &Row::bytes), column("start_ps", &Row::start_ps),
       column("first_sent_ps", &Row::first_sent_ps), column("delivered_ps", &Row::delivered_ps),
       column("acknowledged_ps", &Row::acknowledged_ps), column("fct_ps", &Row::fct_ps)});
}

TableLayout failed_flow_layout() {
  using Row = TrafficDriver::FailedFlowRow;
  return layout<Row>("failed_flows",
                     {column("flow", &Row::flow), column("message", &Row::message),
                      column("source", &Row::source), column("destination", &Row::destination),
                      column("queue_pair", &Row::queue_pair), column("bytes", &Row::bytes),
                      column("start_ps", &Row::start_ps), column("failed_ps", &Row::failed_ps)});
}

// Runs before any member is built, so that a bad list is rejected before the table is opened.
std::vector<FlowSpec> checked(std::vector<FlowSpec> flows, const Network& network) {
  const std::vector<std::string> problems = flow_list_problems(flows, network.endpoint_count());
  if (!problems.empty()) {
    std::string message = "traffic: " + std::to_string(problems.size()) + " problem" +
                          (problems.size() == 1 ? "" : "s") + " in the flow list:";
    for (const std::string& problem : problems) message += "\n  " + problem;
    throw std::invalid_argument(message);
  }
  return flows;
}

}  // namespace

TrafficDriver::TrafficDriver(Simulator& sim, Network& network, std::vector<FlowSpec> flows,
                             RecordBackend& output, TrafficDriverOptions options)
    : sim_(sim),
      network_(network),
      flows_(checked(std::move(flows), network)),
      options_(options),
      outcomes_(flows_.size()),
      rows_(output, flow_layout()),
      failed_rows_(output, failed_flow_layout()) {
  // The flows grouped by the flow they wait on (a counting sort), in two flat arrays rather than a
  // vector per flow: one completion then walks a contiguous slice.
  waiting_begin_.assign(flows_.size() + 1, 0);
  for (const FlowSpec& flow : flows_) {
    if (flow.after) ++waiting_begin_[static_cast<std::size_t>(*flow.after) + 1];
  }
  for (std::size_t i = 0; i < flows_.size(); ++i) waiting_begin_[i + 1] += waiting_begin_[i];
  waiting_.resize(waiting_begin_.back());
  std::vector<std::size_t> next_slot(waiting_begin_.begin(), waiting_begin_.end() - 1);
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    if (flows_[i].after) waiting_[next_slot[static_cast<std::size_t>(*flows_[i].after)]++] = i;
  }
  flow_of_message_.reserve(flows_.size());
}

void TrafficDriver::start() {
  LOCKSTEP_CHECK(!traffic_started_, sim_.now(), "traffic", "TrafficDriver::start called twice");
  traffic_started_ = true;
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    if (!flows_[i].after) {
      sim_.schedule_in<&TrafficDriver::launch>(flows_[i].start, this, i);
    }
  }
}

void TrafficDriver::launch(std::uint64_t flow) {
  const auto i = static_cast<std::size_t>(flow);
  const FlowSpec& spec = flows_[i];
  FlowOutcome& outcome = outcomes_[i];
  outcome.start = sim_.now();
  outcome.message = network_.send(spec.source, spec.destination, spec.size, spec.queue_pair, *this);
  flow_of_message_.emplace(outcome.message, i);
  ++started_;
}

std::size_t TrafficDriver::take_flow_of(const Message& message) {
  const auto found = flow_of_message_.find(message.id);
  LOCKSTEP_CHECK(found != flow_of_message_.end(), sim_.now(), "traffic",
                 "completion of message " + std::to_string(message.id) +
                     ", which no flow of this driver sent");
  const std::size_t i = found->second;
  flow_of_message_.erase(found);
  return i;
}

void TrafficDriver::on_message_complete(const Message& message, const MessageTimes& times) {
  const std::size_t i = take_flow_of(message);
  FlowOutcome& outcome = outcomes_[i];
  outcome.times = times;
  ++completed_;

  const FlowSpec& spec = flows_[i];
  const Time start = *outcome.start;
  rows_.append(FlowRow{.flow = static_cast<std::int64_t>(i),
                       .message = static_cast<std::int64_t>(message.id),
                       .source = spec.source,
                       .destination = spec.destination,
                       .queue_pair = spec.queue_pair,
                       .bytes = spec.size.count(),
                       .start_ps = start.ps(),
                       .first_sent_ps = times.first_sent.ps(),
                       .delivered_ps = times.delivered.ps(),
                       .acknowledged_ps = times.acknowledged.ps(),
                       .fct_ps = (times.acknowledged - start).ps()});

  // From now, not from times.acknowledged: the sender learns of the completion when it is told, and
  // an event cannot be scheduled in the past. A network reports at the acknowledgement itself.
  for (std::size_t k = waiting_begin_[i]; k < waiting_begin_[i + 1]; ++k) {
    const std::size_t next = waiting_[k];
    sim_.schedule_in<&TrafficDriver::launch>(flows_[next].start, this, next);
  }
  stop_if_settled();
}

void TrafficDriver::on_message_failed(const Message& message, Time failed) {
  const std::size_t i = take_flow_of(message);
  ++failed_;
  const FlowSpec& spec = flows_[i];
  failed_rows_.append(FailedFlowRow{.flow = static_cast<std::int64_t>(i),
                                    .message = static_cast<std::int64_t>(message.id),
                                    .source = spec.source,
                                    .destination = spec.destination,
                                    .queue_pair = spec.queue_pair,
                                    .bytes = spec.size.count(),
                                    .start_ps = outcomes_[i].start->ps(),
                                    .failed_ps = failed.ps()});
  abandon_followers(i);
  stop_if_settled();
}

void TrafficDriver::abandon_followers(std::size_t flow) {
  // A stack rather than recursion: a flow list may chain thousands of flows one after another.
  std::vector<std::size_t> to_visit{flow};
  while (!to_visit.empty()) {
    const std::size_t f = to_visit.back();
    to_visit.pop_back();
    for (std::size_t k = waiting_begin_[f]; k < waiting_begin_[f + 1]; ++k) {
      ++abandoned_;
      to_visit.push_back(waiting_[k]);
    }
  }
}

void TrafficDriver::stop_if_settled() {
  if (options_.stop_when_settled && all_settled()) sim_.stop();
}

void TrafficDriver::flush() {
  rows_.flush();
  failed_rows_.flush();
}

TrafficDriver::Summary TrafficDriver::summary() const {
  Summary summary;
  summary.flows = static_cast<std::int64_t>(flows_.size());
  summary.started = started_;
  summary.completed = completed_;
  summary.failed = failed_;
  summary.abandoned = abandoned_;
  std::vector<Duration> fcts;
  fcts.reserve(static_cast<std::size_t>(completed_));
  for (const FlowOutcome& outcome : outcomes_) {
    if (outcome.start && (!summary.first_start || *outcome.start < *summary.first_start)) {
      summary.first_start = outcome.start;
    }
    if (!outcome.times) continue;
    const Time acknowledged = outcome.times->acknowledged;
    if (!summary.last_completion || acknowledged > *summary.last_completion) {
      summary.last_completion = acknowledged;
    }
    fcts.push_back(acknowledged - *outcome.start);
  }
  summary.fct = fct_statistics(std::move(fcts));
  return summary;
}

}  // namespace lockstep
