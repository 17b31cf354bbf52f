#include "models/transport/network_footprint.hpp"

namespace lockstep {
namespace {

constexpr std::int64_t kPacketBytesPerPort = 1270;
constexpr std::int64_t kFlowBytesPerPort = 470;
constexpr double kSetupSecondsPerPort = 1e-6;
constexpr double kRoutingSecondsPerEndpointAndSwitch = 9e-9;

}  // namespace

NetworkFootprint network_footprint(const Topology& topology, NetworkModel model) {
  NetworkFootprint footprint;
  footprint.ports = 2 * static_cast<std::int64_t>(topology.cable_count());
  if (model == NetworkModel::kAnalytic) return footprint;  // priced by formula: nothing is built
  footprint.memory = Bytes(
      footprint.ports * (model == NetworkModel::kPacket ? kPacketBytesPerPort : kFlowBytesPerPort));
  footprint.setup_seconds = static_cast<double>(footprint.ports) * kSetupSecondsPerPort +
                            static_cast<double>(topology.endpoint_count()) *
                                static_cast<double>(topology.switch_count()) *
                                kRoutingSecondsPerEndpointAndSwitch;
  return footprint;
}

}  // namespace lockstep
