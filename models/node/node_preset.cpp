#include "models/node/node_preset.hpp"

namespace lockstep {
namespace {

// NCCL's effective NVLink bandwidth per link and direction, in bit/s: 20.0 GB/s (SM80) and
// 20.6 GB/s (SM90).
constexpr std::int64_t kSm80LinkBps = 160'000'000'000;
constexpr std::int64_t kSm90LinkBps = 164'800'000'000;
// NCCL's PCIe x16 figures, in bit/s: 24 GB/s for Gen4 (DGX A100), 48 GB/s for Gen5 (DGX H100,
// H200).
constexpr std::int64_t kPcieGen4x16Bps = 192'000'000'000;
constexpr std::int64_t kPcieGen5x16Bps = 384'000'000'000;

}  // namespace

const std::vector<NodePreset>& node_presets() {
  static const std::vector<NodePreset> presets{
      {"dgx-a100", 8, BitRate::bps(12 * kSm80LinkBps), Duration::ns(300), BitRate::gbps(200), false,
       "a100", CpuVendor::kAmd, 80, BitRate::bps(kPcieGen4x16Bps)},
      {"dgx-h100", 8, BitRate::bps(18 * kSm90LinkBps), Duration::ns(300), BitRate::gbps(400), true,
       "h100", CpuVendor::kIntel, 90, BitRate::bps(kPcieGen5x16Bps)},
      {"dgx-h200", 8, BitRate::bps(18 * kSm90LinkBps), Duration::ns(300), BitRate::gbps(400), true,
       "h200", CpuVendor::kIntel, 90, BitRate::bps(kPcieGen5x16Bps)},
  };
  return presets;
}

std::optional<NodePreset> node_preset(std::string_view name) {
  for (const NodePreset& preset : node_presets()) {
    if (preset.name == name) return preset;
  }
  return std::nullopt;
}

}  // namespace lockstep
