#include "models/transport/network_config.hpp"

namespace lockstep {
namespace {

DcqcnParams profile(DcqcnProfile which, BitRate line) {
  switch (which) {
    case DcqcnProfile::kPaper:
      return DcqcnParams::paper(line);
    case DcqcnProfile::kNicFirmware:
      return DcqcnParams::nic_firmware(line);
    case DcqcnProfile::kHpccReference:
      return DcqcnParams::hpcc_reference(line);
  }
  return DcqcnParams::paper(line);
}

}  // namespace

PacketNetworkConfig packet_network_config(const NetworkConfig& config, BitRate nic_rate) {
  PacketNetworkConfig out;
  out.switches = config.switches;
  out.transport.payload_per_packet = config.transport.payload_per_packet;
  out.transport.header = config.transport.header;
  out.transport.data_class = static_cast<int>(config.transport.traffic_class);
  out.transport.ack_timeout =
      qp_ack_timeout(static_cast<std::int32_t>(config.transport.qp_timeout));
  out.transport.retry_count = static_cast<std::int32_t>(config.transport.retry_count);
  if (config.transport.congestion_control == CongestionControl::kDcqcn) {
    out.transport.dcqcn = profile(config.transport.dcqcn_profile, nic_rate);
  }
  out.sample_period = config.sample_period;
  return out;
}

FlowNetworkConfig flow_network_config(const NetworkConfig& config) {
  FlowNetworkConfig out;
  out.payload_per_packet = config.transport.payload_per_packet;
  out.header = config.transport.header;
  out.data_class = static_cast<int>(config.transport.traffic_class);
  out.sample_period = config.sample_period;
  return out;
}

}  // namespace lockstep
