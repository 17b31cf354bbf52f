#include "models/collective/collective_algorithm.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace lockstep {

Bytes even_share(Bytes total, std::int64_t parts, std::int64_t index) {
  return Bytes(total.count() / parts + (index < total.count() % parts ? 1 : 0));
}

std::int32_t pipeline_chunks(Bytes bytes) {
  constexpr std::int64_t kChunk = std::int64_t{1} << 20;
  constexpr std::int64_t kMostChunks = 64;
  return static_cast<std::int32_t>(
      std::clamp<std::int64_t>((bytes.count() + kChunk - 1) / kChunk, 1, kMostChunks));
}

std::vector<std::int32_t> every_endpoint(const Network& network) {
  std::vector<std::int32_t> endpoints;
  for (std::int32_t e = 0; e < network.endpoint_count(); ++e) endpoints.push_back(e);
  return endpoints;
}

CollectiveAlgorithm::CollectiveAlgorithm(Simulator& sim, Network& network,
                                         std::vector<std::int32_t> participants,
                                         std::optional<ProtocolOverheads> overheads,
                                         NcclAlgorithm algorithm)
    : Collective(sim, network.endpoint_count(), std::move(participants)),
      network_(network),
      overheads_(overheads),
      cost_(overheads ? protocol_cost(overheads->protocol, algorithm) : ProtocolCost{}),
      rank_transfer_times_(static_cast<std::size_t>(network.endpoint_count())),
      waiting_for_(rank_transfer_times_.size()),
      rank_transfers_left_(rank_transfer_times_.size(), 0),
      rank_last_transfer_(rank_transfer_times_.size()),
      ranks_yet_to_arrive_(static_cast<std::int32_t>(this->participants().size())) {
  if (overheads_ && overheads_->gpus_per_node < 1) {
    throw std::invalid_argument("a node holds at least one GPU");
  }
  if (overheads_ && overheads_->queue_pairs_per_connection < 1) {
    throw std::invalid_argument("a connection has at least one queue pair");
  }
}

void CollectiveAlgorithm::expect_transfers(std::vector<std::int64_t> per_rank) {
  std::int64_t touched = 0;
  for (const std::int64_t count : per_rank) touched += count;
  transfers_ = touched / 2;  // every transfer has a sender and a receiver
  rank_transfers_left_ = std::move(per_rank);
}

void CollectiveAlgorithm::count_arrival(Time at) {
  latest_arrival_ = std::max(latest_arrival_, at);
  if (--ranks_yet_to_arrive_ == 0 && transfers_ == 0) {
    // Nothing to send: the collective ends when its last rank arrives.
    all_done(latest_arrival_);
  }
}

void CollectiveAlgorithm::on_arrival(std::int32_t rank, Time at) {
  count_arrival(at);
  const Time joins = at + cost_.base_latency;
  if (joins == sim_.now()) {
    admit(rank);
    launch(rank);
  } else {
    schedule_counted<&CollectiveAlgorithm::join>(joins, this, rank);
  }
}

void CollectiveAlgorithm::on_arrivals(const std::vector<std::int32_t>& ranks) {
  for (std::size_t i = 0; i < ranks.size(); ++i) count_arrival(sim_.now());
  started_ = ranks;
  if (cost_.base_latency == Duration()) {
    join_started();
  } else {
    schedule_counted<&CollectiveAlgorithm::join_started_event>(sim_.now() + cost_.base_latency,
                                                               this);
  }
}

void CollectiveAlgorithm::join(std::int32_t rank) {
  event_ran();
  if (!running()) return;
  admit(rank);
  launch(rank);
}

void CollectiveAlgorithm::join_started_event() {
  event_ran();
  if (running()) join_started();
}

void CollectiveAlgorithm::join_started() {
  const std::vector<std::int32_t> ranks = std::move(started_);
  started_.clear();
  for (const std::int32_t rank : ranks) admit(rank);
  launch_together(ranks);
}

void CollectiveAlgorithm::launch_together(const std::vector<std::int32_t>& ranks) {
  for (const std::int32_t rank : ranks) launch(rank);
}

void CollectiveAlgorithm::admit(std::int32_t rank) {
  // Transfers that waited for this rank leave first, in the order they were sent.
  std::vector<Waiting> waiting = std::move(waiting_for_[static_cast<std::size_t>(rank)]);
  waiting_for_[static_cast<std::size_t>(rank)].clear();
  for (const Waiting& w : waiting) send_waiting(w);
  if (rank_transfers_left_[static_cast<std::size_t>(rank)] == 0) rank_done(rank, sim_.now());
}

bool CollectiveAlgorithm::has_joined(std::int32_t rank) const {
  const std::optional<Time> arrival = recorded_arrival(rank);
  return arrival && *arrival + cost_.base_latency <= sim_.now();
}

void CollectiveAlgorithm::on_abort() {
  for (std::vector<Waiting>& waiting : waiting_for_) waiting.clear();
  for (StepStream& stream : step_streams_) stream.queued.clear();
}

std::uint32_t connection_queue_pair(std::uint32_t queue_pair, std::int32_t per_connection,
                                    std::int64_t k) {
  const auto n = static_cast<std::uint32_t>(per_connection);
  return queue_pair * n + static_cast<std::uint32_t>(k % per_connection);
}

void CollectiveAlgorithm::send(std::int32_t from, std::int32_t to, Bytes data,
                               std::uint32_t queue_pair, std::uint64_t tag,
                               std::optional<Time> relayed_from) {
  Waiting transfer{to, from, data, queue_pair, tag};
  transfer.relayed_from = relayed_from;
  send_waiting(transfer);
}

void CollectiveAlgorithm::send_paced(std::int32_t from, std::int32_t to, Bytes data,
                                     std::uint32_t queue_pair, std::uint64_t tag,
                                     Duration paced_for) {
  Waiting transfer{to, from, data, queue_pair, tag};
  transfer.paced_for = paced_for;
  send_waiting(transfer);
}

bool CollectiveAlgorithm::forwards_lines() const {
  return overheads_ && overheads_->protocol != NcclProtocol::kSimple;
}

void CollectiveAlgorithm::send(const StepTransfer& transfer, std::int32_t from) {
  send_waiting(Waiting{transfer.to, from, transfer.data, transfer.queue_pair, transfer.tag, -1,
                       transfer.steps, -1, transfer.copied_out});
}

Duration CollectiveAlgorithm::local_copy(Bytes data) const {
  if (!overheads_ || !overheads_->gpu_memory) return Duration();
  // Every byte is read from one buffer and written to the other.
  return tx_time(data * 2, *overheads_->gpu_memory) + cost_.nvlink_step;
}

void CollectiveAlgorithm::send_rail_local(std::int32_t from, std::int32_t to, Bytes data,
                                          std::uint32_t queue_pair, std::uint64_t tag) {
  const std::optional<std::int32_t> via = pxn_relay(from, to);
  if (!via) {
    send(from, to, data, queue_pair, tag);
    return;
  }
  Waiting first{*via, from, data, queue_pair, tag};
  first.relay_to = to;
  send_waiting(first);
}

std::optional<std::int32_t> CollectiveAlgorithm::pxn_relay(std::int32_t from,
                                                           std::int32_t to) const {
  if (!overheads_ || !overheads_->pxn) return std::nullopt;
  const std::int32_t gpus = overheads_->gpus_per_node;
  if (from / gpus == to / gpus || from % gpus == to % gpus) return std::nullopt;
  return from / gpus * gpus + to % gpus;
}

void CollectiveAlgorithm::relay_event(std::uint64_t relay) {
  event_ran();
  send_waiting(relays_[relay]);
}

void CollectiveAlgorithm::send_step(std::int32_t from, std::uint32_t group,
                                    const std::vector<StepTransfer>& step) {
  if (step.empty()) return;
  const std::uint64_t key = (static_cast<std::uint64_t>(from) << 32) | group;
  const auto [found, added] =
      step_stream_index_.insert(key, static_cast<std::int32_t>(step_streams_.size()));
  if (added) step_streams_.emplace_back();
  std::vector<Waiting> transfers;
  transfers.reserve(step.size());
  for (const StepTransfer& t : step) {
    transfers.push_back(Waiting{t.to, t.from >= 0 ? t.from : from, t.data, t.queue_pair, t.tag,
                                *found, t.steps, -1, t.copied_out});
  }
  StepStream& stream = step_streams_[static_cast<std::size_t>(*found)];
  if (stream.busy) {
    stream.queued.push_back(std::move(transfers));
  } else {
    send_whole_step(stream, transfers);
  }
}

void CollectiveAlgorithm::send_whole_step(StepStream& stream, const std::vector<Waiting>& step) {
  stream.busy = true;
  stream.transfers_left = static_cast<std::int32_t>(step.size());
  stream.step_ends = sim_.now();
  for (const Waiting& transfer : step) send_waiting(transfer);
}

void CollectiveAlgorithm::next_step_event(std::uint64_t stream) {
  event_ran();
  next_step(stream);
}

void CollectiveAlgorithm::next_step(std::uint64_t stream) {
  if (!running()) return;
  StepStream& s = step_streams_[stream];
  if (s.queued.empty()) {
    s.busy = false;
    return;
  }
  const std::vector<Waiting> step = std::move(s.queued.front());
  s.queued.pop_front();
  send_whole_step(s, step);
}

void CollectiveAlgorithm::send_waiting(const Waiting& transfer) {
  if (!running()) return;
  const std::int32_t from = transfer.from;
  const std::int32_t to = transfer.to;
  const Bytes data = transfer.data;
  const std::uint32_t queue_pair = transfer.queue_pair;
  if (!has_joined(to)) {
    waiting_for_[static_cast<std::size_t>(to)].push_back(transfer);
    return;
  }
  // The protocol's flags travel with the data (LL moves twice the bytes), and what the NVSwitch
  // costs NVLS is charged as bytes too.
  Bytes wire = data;
  Time paced_until = sim_.now();
  std::optional<Time> began;
  std::uint32_t on_wire = queue_pair;
  if (overheads_) {
    const bool same_node = from / overheads_->gpus_per_node == to / overheads_->gpus_per_node;
    if (!same_node && overheads_->queue_pairs_per_connection > 1) {
      std::int64_t& sent = connection_messages_[QueuePairKey{from, to, queue_pair}];
      on_wire = connection_queue_pair(queue_pair, overheads_->queue_pairs_per_connection, sent++);
    }
    const double data_per_wire_byte =
        cost_.data_per_wire_byte * (same_node ? cost_.nvlink_efficiency : 1.0);
    wire = Bytes(static_cast<std::int64_t>(
        std::ceil(static_cast<double>(data.count()) / data_per_wire_byte)));
    const std::optional<BitRate>& ceiling =
        same_node ? overheads_->nvlink_stream_ceiling : overheads_->network_stream_ceiling;
    if (ceiling) {
      Time& free = stream_paced_until_[QueuePairKey{from, to, queue_pair}];
      Time flows_from = sim_.now();
      if (transfer.relayed_from) {
        // A relay's data flows from when it began to arrive, but to a rank only once it joined.
        flows_from = std::max(*transfer.relayed_from, *recorded_arrival(to) + cost_.base_latency);
      }
      began = std::max(free, flows_from);
      free = *began + tx_time(data, *ceiling);
      paced_until = free;
    }
  }
  if (transfer.paced_for) {
    if (!began) began = sim_.now();
    paced_until = std::max(paced_until, sim_.now() + *transfer.paced_for);
  }
  const std::uint64_t id = network_.send(from, to, wire, on_wire, *this);
  // The paced sender's bytes leave while its pacing lasts and still have the path to cross.
  if (began) {
    const Duration latency = network_.latency(from, to, on_wire);
    paced_until += latency;
    *began += latency;
  }
  std::int64_t relay = -1;
  if (transfer.relay_to >= 0) {
    relay = static_cast<std::int64_t>(relays_.size());
    relays_.push_back(Waiting{transfer.relay_to, to, data, queue_pair, transfer.tag});
  }
  in_flight_.insert(id, InFlight{sim_.now(), transfer.tag, paced_until, transfer.step_stream,
                                 transfer.steps, relay, transfer.copied_out, began});
  ++unacknowledged_;
}

void CollectiveAlgorithm::on_message_delivered(const Message& message, Time delivered) {
  const InFlight transfer = *in_flight_.take(message.id);
  if (!running()) return;  // aborted: what was on the wire is discarded
  ++arrived_;
  const Duration took = delivered - transfer.sent_at;
  rank_transfer_times_[static_cast<std::size_t>(message.source)].sent += took;
  rank_transfer_times_[static_cast<std::size_t>(message.destination)].received += took;
  Time ready = std::max(delivered, transfer.paced_until);
  if (overheads_) {
    const bool same_node = message.source / overheads_->gpus_per_node ==
                           message.destination / overheads_->gpus_per_node;
    ready += (same_node ? std::max(cost_.nvlink_step, overheads_->nvlink_step_floor)
                        : cost_.network_step) *
             transfer.steps;
  }
  const Time copied = ready + transfer.copied_out;
  last_noticed_ = std::max(last_noticed_, copied);
  // Each rank's end is reported ahead of the whole's at the same instant.
  transfer_done(message.source, delivered);
  transfer_done(message.destination, copied);
  if (arrived_ == transfers_) all_done(last_noticed_);
  if (transfer.relay >= 0) {
    // PXN's first leg is in the relay's buffer: its NIC sends the data on.
    schedule_counted<&CollectiveAlgorithm::relay_event>(ready, this,
                                                        static_cast<std::uint64_t>(transfer.relay));
    return;
  }
  if (transfer.step_stream >= 0) {
    StepStream& stream = step_streams_[static_cast<std::size_t>(transfer.step_stream)];
    stream.step_ends = std::max(stream.step_ends, ready);
    if (--stream.transfers_left == 0) {
      const auto index = static_cast<std::uint64_t>(transfer.step_stream);
      if (stream.step_ends == sim_.now()) {
        next_step(index);
      } else {
        schedule_counted<&CollectiveAlgorithm::next_step_event>(stream.step_ends, this, index);
      }
    }
  }
  arrival_began_ = transfer.began.value_or(delivered);
  arrived(message, ready, transfer.tag);
}

void CollectiveAlgorithm::transfer_done(std::int32_t rank, Time at) {
  const auto r = static_cast<std::size_t>(rank);
  rank_last_transfer_[r] = std::max(rank_last_transfer_[r], at);
  if (--rank_transfers_left_[r] == 0) rank_done(rank, rank_last_transfer_[r]);
}

void CollectiveAlgorithm::on_message_complete(const Message& /*message*/,
                                              const MessageTimes& /*times*/) {
  // Every step waits for the data to arrive, not for the sender to hear of it; the
  // acknowledgement only ends the network's hold on this collective.
  --unacknowledged_;
}

void CollectiveAlgorithm::on_message_failed(const Message& message, Time failed) {
  // Delivered already (its acknowledgements were lost): no longer in flight.
  in_flight_.erase(message.id);
  --unacknowledged_;
  fail(TransferFailure{message.source, message.destination, failed});
}

}  // namespace lockstep
