// All-reduce time in the Hockney alpha-beta model (Thakur, Rabenseifner and Gropp, "Optimization of
// Collective Communication Operations in MPICH", IJHPCA 2005): each step costs one latency alpha
// plus the serialization of that step's bytes at the per-rank bandwidth. The step structure is
// spelled out rather than the closed form so that chunk sizes round up to whole bytes and
// serialization goes through tx_time, as on a real wire. It leaves out contention between
// concurrent collectives, congestion control and the reduction's compute (the gamma term): the
// fabric models answer those.
#pragma once

#include <cstdint>

#include "sim/core/bit_rate.hpp"
#include "sim/core/bytes.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

enum class AllReduceAlgorithm {
  kRing,               // 2(p-1) steps of n/p bytes: bandwidth optimal
  kRecursiveDoubling,  // lg p steps of n bytes: latency optimal; p a power of two
  kRabenseifner,       // recursive halving then doubling: 2 lg p steps, n/2 + n/4 + ... each way
};

struct AlphaBeta {
  Duration alpha;     // per-step latency
  BitRate bandwidth;  // per-rank injection bandwidth
};

[[nodiscard]] bool needs_power_of_two_ranks(AllReduceAlgorithm algorithm);

// `ranks` >= 1; for the recursive algorithms a power of two.
[[nodiscard]] Duration all_reduce_time(AllReduceAlgorithm algorithm, std::int64_t ranks, Bytes size,
                                       const AlphaBeta& cost);

}  // namespace lockstep
