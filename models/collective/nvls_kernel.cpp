#include "models/collective/nvls_kernel.hpp"

namespace lockstep {

NvlsKernelCollective::NvlsKernelCollective(Simulator& sim, Network& network,
                                           std::optional<ProtocolOverheads> overheads,
                                           NcclAlgorithm algorithm, Bytes size, std::int32_t loops)
    : CollectiveAlgorithm(sim, network, every_endpoint(network), overheads, algorithm),
      size_(size),
      steps_(size, loops) {}

Duration NvlsKernelCollective::last_gather() const {
  return local_copy(steps_.loop_bytes(steps_.count() - 1));
}

void NvlsKernelCollective::launch(std::int32_t rank) {
  if (size_ == Bytes(0)) return;
  const Duration scatter = local_copy(steps_.loop_bytes(0));
  if (scatter == Duration()) {
    reduce(rank);
  } else {
    schedule_counted<&NvlsKernelCollective::scattered>(sim_.now() + scatter, this,
                                                       static_cast<std::uint64_t>(rank));
  }
}

void NvlsKernelCollective::scattered(std::uint64_t rank) {
  event_ran();
  if (running()) reduce(static_cast<std::int32_t>(rank));
}

}  // namespace lockstep
