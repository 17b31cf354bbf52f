#include "models/collective/fluid_replay.hpp"

namespace lockstep {

FluidReplay::FluidReplay(Simulator& sim, Network& network, std::vector<FluidFlow> flows,
                         NcclAlgorithm algorithm)
    : CollectiveAlgorithm(sim, network, every_endpoint(network), std::nullopt, algorithm),
      flows_(std::move(flows)),
      yet_to_join_(network.endpoint_count()) {
  std::vector<std::int64_t> per_rank(static_cast<std::size_t>(network.endpoint_count()), 0);
  for (const FluidFlow& flow : flows_) {
    check_message_endpoints(flow.pair.source, flow.pair.destination, network.endpoint_count());
    ++per_rank[static_cast<std::size_t>(flow.pair.source)];
    ++per_rank[static_cast<std::size_t>(flow.pair.destination)];
  }
  expect_transfers(std::move(per_rank));
}

void FluidReplay::launch(std::int32_t /*rank*/) {
  if (--yet_to_join_ > 0) return;
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    schedule_counted<&FluidReplay::start>(sim_.now() + flows_[i].starts, this,
                                          static_cast<std::uint64_t>(i));
  }
}

void FluidReplay::start(std::uint64_t flow) {
  event_ran();
  if (!running()) return;
  const FluidFlow& f = flows_[flow];
  send(StepTransfer{f.pair.destination, f.bytes, f.pair.index, 0, 1, -1, f.then}, f.pair.source);
}

void FluidReplay::arrived(const Message& /*message*/, Time /*ready*/, std::uint64_t /*tag*/) {}

}  // namespace lockstep
