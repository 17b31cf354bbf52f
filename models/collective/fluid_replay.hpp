// A collective as the fluid of its own traffic: the bytes each queue pair carried over the whole of
// a step-by-step run (traffic_tally.hpp) stream again as one flow per queue pair, each from when
// that queue pair first sent in the run (counted from the last rank's join), and each is followed
// by what the run took after that flow's bytes would be in, alone: its steps' handshakes and
// latencies, the waits between its stages, the pipeline's drain. Alone on the same fabric every
// flow's receiver is therefore done when the step-by-step run ended (collective_alone.hpp). Among
// other traffic every flow shares its links max-min fairly, and a flow held back holds back the
// end by as much, as a stage held back holds back the last loop of a pipeline that every stage is
// part of. That is what a flow-level job needs of NCCL's trees and NVLS-Tree, whose step-by-step
// runs send a message per loop, stage and GPU: an NVLS-Tree across sixteen 8-GPU servers is some
// 4,000 flows instead of 200,000 messages. Left out, as in the ring's fluid (fluid_ring.hpp): the
// progress a late rank's peers make before it joins. And a flow feels contention over its whole
// run, where the step-by-step run's transfers came in bursts between which other traffic had the
// link, and delays along a chain of stages add up there where the replay takes the largest.
#pragma once

#include <cstdint>
#include <vector>

#include "models/collective/collective_algorithm.hpp"

namespace lockstep {

struct FluidFlow {
  QueuePairKey pair;
  Bytes bytes;      // wire bytes: the protocol's flags included
  Duration starts;  // after the last rank has joined
  // What its receiver still spends on it once its last byte is in.
  Duration then;
};

class FluidReplay final : public CollectiveAlgorithm {
 public:
  // Every endpoint of `network` takes part. `algorithm` is the one whose run the flows come from.
  // Throws std::invalid_argument for a flow whose ends are not two distinct endpoints.
  FluidReplay(Simulator& sim, Network& network, std::vector<FluidFlow> flows,
              NcclAlgorithm algorithm);

 private:
  void launch(std::int32_t rank) override;
  void start(std::uint64_t flow);
  void arrived(const Message& message, Time ready, std::uint64_t tag) override;

  std::vector<FluidFlow> flows_;
  std::int64_t yet_to_join_;
};

}  // namespace lockstep
