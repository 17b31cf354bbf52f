#include "models/collective/nvls_all_reduce.hpp"

namespace lockstep {

NvlsAllReduce::NvlsAllReduce(Simulator& sim, Network& network, Bytes size,
                             std::optional<ProtocolOverheads> overheads)
    : CollectiveAlgorithm(sim, network, every_endpoint(network), overheads, NcclAlgorithm::kNvls),
      size_(size) {
  const std::int64_t gpus = network_.endpoint_count();
  // Every GPU sends to and receives from every other one.
  expect_transfers(std::vector<std::int64_t>(static_cast<std::size_t>(gpus),
                                             size_ > Bytes(0) ? 2 * (gpus - 1) : 0));
}

Bytes NvlsAllReduce::per_gpu_traffic(Bytes size, std::int32_t gpus) {
  return size + Bytes((size.count() + gpus - 1) / gpus);
}

void NvlsAllReduce::launch(std::int32_t rank) {
  const std::int32_t gpus = network_.endpoint_count();
  if (size_ == Bytes(0)) return;
  const Bytes traffic = per_gpu_traffic(size_, gpus);
  for (std::int32_t k = 1; k < gpus; ++k) {
    send(rank, (rank + k) % gpus, even_share(traffic, gpus - 1, k - 1),
         static_cast<std::uint32_t>(k - 1), 0);
  }
}

void NvlsAllReduce::arrived(const Message& /*message*/, Time /*ready*/, std::uint64_t /*tag*/) {
  // One step: the switch's reduction is done when the data is in.
}

}  // namespace lockstep
