#include "models/fault/fault_config.hpp"

namespace lockstep {

std::string_view fault_kind_name(FaultKind kind) {
  switch (kind) {
    case FaultKind::kThermal:
      return "thermal";
    case FaultKind::kEcc:
      return "ecc";
    case FaultKind::kXid:
      return "xid";
    case FaultKind::kStragglers:
      return "stragglers";
    case FaultKind::kLinkDown:
      return "link_down";
    case FaultKind::kLinkFlap:
      return "link_flap";
    case FaultKind::kLinkDegraded:
      return "link_degraded";
    case FaultKind::kPfcStorm:
      return "pfc_storm";
    case FaultKind::kSlowReceiver:
      return "slow_receiver";
    case FaultKind::kNicNuma:
      return "nic_numa";
    case FaultKind::kGpuDirectOff:
      return "gpudirect_off";
    case FaultKind::kNcclSocket:
      return "nccl_socket";
    case FaultKind::kSlowStorage:
      return "slow_storage";
    case FaultKind::kRandomFailures:
      return "random_failures";
  }
  return "";
}

}  // namespace lockstep
