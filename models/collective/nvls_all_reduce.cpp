#include "models/collective/nvls_all_reduce.hpp"

namespace lockstep {

NvlsAllReduce::NvlsAllReduce(Simulator& sim, Network& network, Bytes size,
                             std::optional<ProtocolOverheads> overheads)
    : CollectiveAlgorithm(sim, network, overheads, NcclAlgorithm::kNvls), size_(size) {
  const std::int64_t gpus = network_.endpoint_count();
  expect_transfers(gpus > 1 && size_ > Bytes(0) ? gpus * (gpus - 1) : 0);
}

Bytes NvlsAllReduce::per_gpu_traffic(Bytes size, std::int32_t gpus) {
  return size + Bytes((size.count() + gpus - 1) / gpus);
}

void NvlsAllReduce::launch() {
  const std::int32_t gpus = network_.endpoint_count();
  const Bytes traffic = per_gpu_traffic(size_, gpus);
  for (std::int32_t from = 0; from < gpus; ++from) {
    for (std::int32_t k = 1; k < gpus; ++k) {
      send(from, (from + k) % gpus, even_share(traffic, gpus - 1, k - 1),
           static_cast<std::uint32_t>(k - 1));
    }
  }
}

void NvlsAllReduce::on_message_delivered(const Message& message, Time delivered) {
  noticed(message, delivered);
}

}  // namespace lockstep
