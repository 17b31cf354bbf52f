// Collective time in the Hockney alpha-beta model on NCCL's ring (Thakur, Rabenseifner and Gropp,
// "Optimization of Collective Communication Operations in MPICH", IJHPCA 2005): each step costs
// one latency alpha plus the serialization of that step's bytes at the per-rank bandwidth. The
// step structure is spelled out rather than the closed form so that chunk sizes round up to whole
// bytes and serialization goes through tx_time, as on a real wire. It leaves out contention between
// concurrent collectives, congestion control and the reduction's compute (the gamma term): the
// fabric models answer those. The training job prices its collectives with it at the analytic
// network level, and those inside one NVSwitch at every level (priced_collective.hpp).
#pragma once

#include <cstdint>

#include "models/collective/collective_op.hpp"
#include "sim/core/bit_rate.hpp"
#include "sim/core/bytes.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

struct AlphaBeta {
  Duration alpha;     // per-step latency
  BitRate bandwidth;  // per-rank injection bandwidth
};

// `op` on a ring of `ranks` as NCCL's ring runs it: all-reduce in 2(n-1) steps of S/n,
// reduce-scatter, all-gather and all-to-all (pairwise) in n-1 steps of S/n, send/recv as one step
// of S, broadcast and reduce as one pipelined transfer of S (their chunks overlap, so a chain costs
// one latency per hop and S once). `size` means what collective_op.hpp says for `op`. ranks >= 1.
[[nodiscard]] Duration ring_collective_time(CollectiveOp op, std::int64_t ranks, Bytes size,
                                            const AlphaBeta& cost);

}  // namespace lockstep
