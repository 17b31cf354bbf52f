// One sequential reader per replica behind a window of `prefetch` batches; see data_loader.hpp
// for the model and its sources.
#include "models/training/data_loader.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sim/core/check.hpp"

namespace lockstep {
namespace {

// The bytes of a batch its node's cache holds: one rounding of the whole share, not per sample.
Bytes cached_bytes(Bytes batch, double cache_hit) {
  return Bytes(std::llround(cache_hit * static_cast<double>(batch.count())));
}

// The node-local NVMe of every node as one storage whose aggregate never binds: each node reads
// its own device at cache_rate, shared by that node's reads only.
StorageSpec local_cache_spec(BitRate cache_rate, std::int32_t nodes) {
  return StorageSpec{.aggregate = BitRate::bps(cache_rate.bps() * nodes),
                     .per_node = cache_rate,
                     .latency = Duration()};
}

}  // namespace

DataLoader::DataLoader(Simulator& sim, SharedStorage& storage, const DataLoading& config,
                       std::vector<std::int32_t> readers, std::int64_t samples_per_replica,
                       std::int64_t steps)
    : sim_(sim), file_system_(storage), prefetch_(config.prefetch), steps_(steps) {
  LOCKSTEP_CHECK(config.cache_hit >= 0.0 && config.cache_hit <= 1.0, sim_.now(), "data loader",
                 "cache_hit is a share of the bytes, between 0 and 1");
  LOCKSTEP_CHECK(config.prefetch >= 0, sim_.now(), "data loader", "negative prefetch");
  LOCKSTEP_CHECK(samples_per_replica >= 0 && config.bytes_per_sample.count() >= 0, sim_.now(),
                 "data loader", "negative batch size");
  const Bytes batch = config.bytes_per_sample * samples_per_replica;
  cached_part_ = cached_bytes(batch, config.cache_hit);
  file_system_part_ = batch - cached_part_;
  if (cached_part_.count() > 0) {
    local_cache_.emplace(sim_, local_cache_spec(config.cache_rate, storage.nodes()),
                         storage.nodes());
  }
  replicas_.reserve(readers.size());
  for (const std::int32_t node : readers) {
    LOCKSTEP_CHECK(node >= 0 && node < storage.nodes(), sim_.now(), "data loader",
                   "a reader on a node the file system does not serve");
    replicas_.push_back(Replica{.node = node});
  }
}

void DataLoader::start() {
  started_ = true;
  for (Replica& replica : replicas_) {
    replica.read_until = std::min<std::int64_t>(prefetch_, steps_);
    read_next_if_idle(replica);
  }
}

void DataLoader::want(std::int32_t replica_index, std::int64_t step, Ready ready) {
  LOCKSTEP_CHECK(replica_index >= 0 && static_cast<std::size_t>(replica_index) < replicas_.size(),
                 sim_.now(), "data loader", "no such replica");
  LOCKSTEP_CHECK(started_, sim_.now(), "data loader", "a batch wanted before the loader started");
  Replica& replica = replicas_[static_cast<std::size_t>(replica_index)];
  LOCKSTEP_CHECK(
      step == replica.consumed && step < steps_ && !replica.waiting && !replica.delivering,
      sim_.now(), "data loader", "a replica wants its batches in step order, one at a time");
  replica.waiting = std::move(ready);
  if (prefetch_ == 0) replica.read_until = std::max(replica.read_until, step + 1);
  read_next_if_idle(replica);
  hand_over_if_ready(replica);
}

void DataLoader::read_next_if_idle(Replica& replica) {
  if (replica.reading || replica.next_to_read >= replica.read_until) return;
  replica.reading = true;
  ++replica.next_to_read;
  // Both parts are requested at once and read concurrently; a batch of no bytes still arrives
  // through an event, as every batch does.
  replica.parts_in_flight = 0;
  auto arrived = [this, target = &replica](Time) { part_arrived(target); };
  if (cached_part_.count() > 0) {
    ++replica.parts_in_flight;
    local_cache_->transfer(replica.node, cached_part_, arrived);
  }
  if (file_system_part_.count() > 0) {
    ++replica.parts_in_flight;
    file_system_.transfer(replica.node, file_system_part_, arrived);
  }
  if (replica.parts_in_flight == 0) {
    replica.parts_in_flight = 1;
    sim_.schedule<&DataLoader::part_arrived>(sim_.now(), this, &replica);
  }
}

void DataLoader::part_arrived(Replica* replica) {
  if (--replica->parts_in_flight > 0) return;
  replica->reading = false;
  ++replica->in_memory;
  hand_over_if_ready(*replica);
  read_next_if_idle(*replica);
}

// The step begins consuming its batch: PyTorch then requests the batch `prefetch` ahead.
void DataLoader::hand_over_if_ready(Replica& replica) {
  if (!replica.waiting || replica.in_memory <= replica.consumed) return;
  replica.delivering = std::move(replica.waiting);
  replica.waiting = nullptr;
  ++replica.consumed;
  replica.read_until = std::max(replica.read_until, std::min(replica.consumed + prefetch_, steps_));
  read_next_if_idle(replica);
  sim_.schedule<&DataLoader::deliver>(sim_.now(), this, &replica);
}

void DataLoader::deliver(Replica* replica) {
  Ready ready = std::move(replica->delivering);
  replica->delivering = nullptr;
  ready(sim_.now());
}

}  // namespace lockstep
