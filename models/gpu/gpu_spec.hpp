// The figures the GPU model starts from, for A100 SXM4 80GB, H100 SXM5 and H200 SXM: dense
// tensor-core peak per data type, HBM bandwidth and capacity from the datasheets (reference.md
// section 1), and beside them what was measured (reference.md section 1, "Measured, not
// datasheet"): an 8192^3 GEMM's TFLOP/s and the HBM bandwidth STREAM-like kernels reach. The
// kernel model (kernel_time.hpp) derives its efficiencies from the measured figures. Left out:
// TF32, FP32 and FP64 rates (no figure in reference.md; add them with a source when a workload
// needs them), structured sparsity, and the L2 cache.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/gpu/flops.hpp"
#include "sim/core/bit_rate.hpp"
#include "sim/core/bytes.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

// Operand types of tensor-core kernels. FP8 stands for both E4M3 and E5M2 (same rate).
enum class DataType : std::uint8_t { kFp16, kBf16, kFp8 };

[[nodiscard]] std::int64_t element_bytes(DataType type);
[[nodiscard]] std::string_view data_type_name(DataType type);

struct TensorRate {
  DataType type = DataType::kBf16;
  FlopRate dense_peak;  // datasheet, without structured sparsity
  // What a square GEMM of 8192 achieved: the calibration point of the kernel model.
  FlopRate measured_gemm_8192;
};

struct GpuSpec {
  std::string name;  // "h100"
  // Streaming multiprocessors, from NVIDIA's datasheets and architecture whitepapers: A100 108,
  // H100 SXM5 132; H200 is the same GH100 configuration with more HBM, also 132.
  std::int32_t sm_count = 0;
  std::vector<TensorRate> tensor_rates;  // only the types the tensor cores support
  BitRate hbm_peak;                      // datasheet
  BitRate hbm_measured;                  // bytes read plus bytes written, per second
  Bytes hbm_capacity;
  // The output tile one SM computes at a time in the large GEMMs the calibration ran (see
  // kernel_time.hpp for why 128 x 256).
  std::int64_t gemm_tile_m = 128;
  std::int64_t gemm_tile_n = 256;
  // The gap a kernel adds on its stream beyond its own work (see gpu_spec.cpp).
  Duration kernel_launch;

  // Null when the tensor cores do not take `type` (FP8 on an A100).
  [[nodiscard]] const TensorRate* tensor_rate(DataType type) const;
};

[[nodiscard]] const std::vector<GpuSpec>& gpu_specs();
// "a100", "h100" or "h200".
[[nodiscard]] std::optional<GpuSpec> gpu_spec(std::string_view name);

}  // namespace lockstep
