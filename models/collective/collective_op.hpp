// The collective operations of NCCL as nccl-tests names and measures them: what a size means for
// each, and the bus-bandwidth factor that makes their bandwidths comparable (reference.md section
// 2, from NVIDIA/nccl-tests doc/PERFORMANCE.md): busbw = algbw x factor, algbw = S / t.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace lockstep {

enum class CollectiveOp {
  kAllReduce,      // every rank ends with the reduction of all ranks' S bytes
  kReduceScatter,  // S is the whole array: every rank ends with its S / n reduced bytes
  kAllGather,      // S is the whole array: every rank contributes S / n and ends with S
  kAllToAll,       // every rank sends S / n bytes to every rank (itself included, locally)
  kSendRecv,       // every rank sends S bytes to the next rank of the ring
  kBroadcast,      // the root's S bytes reach every rank
  kReduce,         // the reduction of every rank's S bytes reaches the root
};

// nccl-tests' names: all_reduce, reduce_scatter, all_gather, alltoall, sendrecv, broadcast, reduce.
[[nodiscard]] std::string_view collective_name(CollectiveOp op);
[[nodiscard]] std::optional<CollectiveOp> collective_named(std::string_view name);

// 2(n-1)/n for all-reduce; (n-1)/n for reduce-scatter, all-gather and all-to-all; 1 for send/recv,
// broadcast and reduce.
// ranks >= 1.
[[nodiscard]] double bus_bandwidth_factor(CollectiveOp op, std::int64_t ranks);

}  // namespace lockstep
