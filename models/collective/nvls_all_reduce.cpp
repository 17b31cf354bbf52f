#include "models/collective/nvls_all_reduce.hpp"

namespace lockstep {

NvlsAllReduce::NvlsAllReduce(Simulator& sim, Network& network, Bytes size,
                             std::optional<ProtocolOverheads> overheads)
    : NvlsKernelCollective(sim, network, overheads, NcclAlgorithm::kNvls, size,
                           nvls_loops(NvlsKernel::kNvls, size, network.endpoint_count(), 1)) {
  const std::int64_t gpus = network_.endpoint_count();
  // Every GPU sends to and receives from every other one, once a step.
  expect_transfers(std::vector<std::int64_t>(
      static_cast<std::size_t>(gpus), size_ > Bytes(0) ? 2 * (gpus - 1) * steps_.count() : 0));
}

Bytes NvlsAllReduce::per_gpu_traffic(Bytes size, std::int32_t gpus) {
  return size + Bytes((size.count() + gpus - 1) / gpus);
}

void NvlsAllReduce::reduce(std::int32_t rank) {
  const std::int32_t gpus = network_.endpoint_count();
  const std::int32_t last = steps_.count() - 1;
  std::vector<StepTransfer> step(static_cast<std::size_t>(gpus - 1));
  for (std::int32_t s = 0; s <= last; ++s) {
    const Bytes traffic = per_gpu_traffic(steps_.bytes_of(s), gpus);
    for (std::int32_t k = 1; k < gpus; ++k) {
      step[static_cast<std::size_t>(k - 1)] = StepTransfer{(rank + k) % gpus,
                                                           even_share(traffic, gpus - 1, k - 1),
                                                           static_cast<std::uint32_t>(k - 1),
                                                           0,
                                                           steps_.loops_in(s),
                                                           -1,
                                                           s == last ? last_gather() : Duration()};
    }
    send_step(rank, 0, step);
  }
}

void NvlsAllReduce::arrived(const Message& /*message*/, Time /*ready*/, std::uint64_t /*tag*/) {
  // The switch's reduction of a loop is done when its data is in; send_step starts the next.
}

}  // namespace lockstep
