// GPU server presets (DGX/HGX A100, H100, H200) with the figures the node model uses, from
// reference.md section 1: GPUs per node, the NVLink bandwidth per GPU and direction that NCCL
// achieves (NCCL's own per-link figure times links: SM80 12 x 20.0 GB/s, SM90 18 x 20.6 GB/s, in
// NVIDIA/nccl src/graph/topo.h; the line rate is 25 GB/s per link), the latency of a transfer
// through the NVSwitch, one NIC per GPU with its line rate, and whether the NVSwitch reduces
// (NVLink SHARP). Each GPU shares a PCIe switch with its NIC (GPUDirect RDMA at the NIC's rate); a
// NIC reached through host memory instead is a limit on its host path (collective_timing.hpp).
// The host CPUs' maker, which NCCL's tuning reads for what its proxy threads move between nodes:
// AMD EPYC 7742 in the DGX A100, Intel Xeon Platinum 8480C in the DGX H100 and H200 (NVIDIA's DGX
// user guides). GPU compute is the GPU model's (models/gpu).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/bit_rate.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

enum class CpuVendor { kIntel, kAmd };

struct NodePreset {
  std::string name;  // "dgx-h100"
  std::int32_t gpus = 8;
  BitRate nvlink_bandwidth;  // per GPU and direction, as NCCL's Simple protocol achieves it
  // Per NVLink hop (GPU to NVSwitch, NVSwitch to GPU): half of NCCL's NVLink per-step latency
  // for its LL protocol, 0.6 us (NVIDIA/nccl src/graph/tuning.cc, reference.md section 3).
  Duration nvlink_hop_latency;
  BitRate nic_rate;  // per NIC, one NIC per GPU
  // Third-generation NVSwitch (Hopper) reduces in the switch: NCCL's NVLS algorithm.
  bool nvlink_sharp = false;
  std::string gpu = "h100";  // the GPU model's name (models/gpu/gpu_spec.hpp)
  CpuVendor cpu = CpuVendor::kIntel;
  // What NCCL's tuning reads of the GPU and of its path to the NIC: the compute capability (80
  // Ampere, 90 Hopper) and the PCIe link between GPU and NIC at NCCL's figure (src/graph/topo.cc:
  // width x per-lane rate / 80, 24 GB/s for Gen4 x16, 48 GB/s for Gen5 x16).
  std::int32_t compute_capability = 90;
  BitRate gpu_nic_pcie;
};

[[nodiscard]] const std::vector<NodePreset>& node_presets();
[[nodiscard]] std::optional<NodePreset> node_preset(std::string_view name);

}  // namespace lockstep
