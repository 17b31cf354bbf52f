// The input pipeline of a data-parallel training job: each replica's share of the global batch is
// read ahead of the step that consumes it, from the shared file system and a node-local cache, so a
// step waits for data only when storage cannot keep up with compute.
//
// One reader per data-parallel replica: Megatron-LM builds the data loader on tensor-parallel rank
// 0 only and broadcasts each batch to the other ranks of its group (get_batch_on_this_tp_rank in
// megatron/training/utils.py), so a replica reads global_batch / dp samples per step from one
// node. The caller names that node (the node of the first pipeline stage's first rank).
//
// Prefetch follows PyTorch's DataLoader (torch/utils/data/dataloader.py): it keeps `prefetch`
// batches requested ahead, and hands out the next batch index (_try_put_index) when the training
// loop takes a batch. So batch k + prefetch may start reading when step k begins consuming batch k,
// that is when both the step wants it and it is in memory; before the first step, batches 0 ..
// prefetch-1 may. With prefetch 0 a batch is read on demand when its step wants it. A replica's
// batches are read one after another, as one DataLoader worker reads them (num_workers = 1): so a
// file system too slow for the step time delivers one batch per read time R and each step waits
// R - T, instead of several batches of one replica splitting the same node limit and arriving in
// bursts.
//
// A batch's bytes split by `cache_hit` (rounded to the byte) between the node's local NVMe cache
// and the file system, read at the same time; the batch is in memory when both parts are. The NVMe
// is private to its node: the reads of the replicas on one node share its cache_rate fairly,
// modelled as a second SharedStorage whose aggregate never binds (nodes x cache_rate) and whose
// latency is zero.
//
// Left out: NVMe access latency (tens of microseconds against reads of milliseconds), decoding
// and collation on the CPU, the broadcast inside the tensor-parallel group, the labels that
// Megatron's last pipeline stage also reads, which files a sample lives in (every sample costs the
// same bytes), and several loader workers per replica. Units: Bytes, BitRate, Time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "models/training/shared_storage.hpp"
#include "sim/core/bit_rate.hpp"
#include "sim/core/bytes.hpp"
#include "sim/core/simulator.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

struct DataLoading {
  Bytes bytes_per_sample;     // what one sample costs to read (tokens x bytes per token for
                              // pre-tokenized data, more for raw or compressed data)
  double cache_hit = 0.0;     // share of bytes served from the node's local NVMe cache
  BitRate cache_rate{};       // local NVMe read bandwidth per node
  std::int32_t prefetch = 2;  // batches read ahead (PyTorch DataLoader prefetch_factor)
};

class DataLoader {
 public:
  using Ready = std::function<void(Time ready)>;

  // readers[r] = node that reads replica r's batches, a node of `storage`; each batch holds
  // `samples_per_replica` samples, and there are `steps` of them per replica.
  DataLoader(Simulator& sim, SharedStorage& storage, const DataLoading& config,
             std::vector<std::int32_t> readers, std::int64_t samples_per_replica,
             std::int64_t steps);
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // Lets batches 0 .. prefetch-1 be read, one after another from now (nothing when prefetch is 0):
  // call at the job's start, before any want().
  void start();

  // Replica `replica` begins step `step` (steps in order, one at a time) and wants its batch now:
  // `ready` is called, from an event, when the batch is in memory, possibly at the current time.
  void want(std::int32_t replica, std::int64_t step, Ready ready);

  [[nodiscard]] Bytes batch_bytes() const { return cached_part_ + file_system_part_; }

 private:
  struct Replica {
    std::int32_t node = 0;
    std::int64_t read_until = 0;    // batches below it may be read
    std::int64_t next_to_read = 0;  // the reader's next batch
    bool reading = false;
    std::int32_t parts_in_flight = 0;
    std::int64_t in_memory = 0;  // batches read so far
    std::int64_t consumed = 0;   // batches handed to their steps
    Ready waiting{};             // of the step that wants batch `consumed`
    Ready delivering{};          // of the step whose batch was just handed over
  };

  void read_next_if_idle(Replica& replica);
  void part_arrived(Replica* replica);
  void hand_over_if_ready(Replica& replica);
  void deliver(Replica* replica);

  Simulator& sim_;
  SharedStorage& file_system_;
  std::optional<SharedStorage> local_cache_;  // absent when no byte is cached
  std::int32_t prefetch_;
  std::int64_t steps_;
  Bytes cached_part_;
  Bytes file_system_part_;
  std::vector<Replica> replicas_;
  bool started_ = false;
};

}  // namespace lockstep
