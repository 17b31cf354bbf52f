// What one checkpoint costs a job whose steps are replayed at a priced time (training_job.hpp,
// job.reuse_steady_step): the stall every rank sees and how long the write to the file system
// takes, found by running the file system model (shared_storage.hpp) alone on the checkpoint's
// writes. The file system carries nothing else then, which is what the job's own checkpoints see
// once its data loader has read ahead. Units: Bytes, BitRate, Duration.
#pragma once

#include <vector>

#include "models/training/shared_storage.hpp"
#include "models/training/training_job_config.hpp"

namespace lockstep {

struct CheckpointCost {
  Duration stall;  // what each rank waits at the end of a checkpoint step
  Duration write;  // from the start of the stall until the checkpoint is complete on storage
};

// `node_bytes`: what each node writes (zero for nodes without ranks of the job); `largest_copy`:
// the most any one GPU copies to host memory (asynchronous mode).
[[nodiscard]] CheckpointCost price_checkpoint(const StorageSpec& storage,
                                              const std::vector<Bytes>& node_bytes,
                                              Bytes largest_copy, const CheckpointConfig& config);

}  // namespace lockstep
