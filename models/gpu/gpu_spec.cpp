#include "models/gpu/gpu_spec.hpp"

#include <utility>

namespace lockstep {
namespace {

constexpr std::int64_t kTerabytePerSecondInBps = 8'000'000'000'000;

// 1 TB/s is 8 x 10^12 bit/s; `thousandths` of a TB/s keeps the figures exact (2.039 TB/s).
constexpr BitRate terabytes_per_second(std::int64_t thousandths) {
  return BitRate::bps(thousandths * (kTerabytePerSecondInBps / 1000));
}

// Between back-to-back kernels that the host queued ahead, the GPU idles about 1 us: NVIDIA's
// "Getting Started with CUDA Graphs" (2019) ran a 2.9 us kernel at 3.8 us per launch from a
// stream. Not a reference.md figure; it matters only for kernels of a few microseconds.
constexpr Duration kKernelLaunch = Duration::us(1);

// H100 SXM5 and H200 SXM share the GH100 compute configuration (same SMs, clocks and peaks, only
// HBM differs), so each calibrates the other where one was not measured: bf16 on the H200, FP8
// on the H100. The H200 bf16 figure is the middle of its measured band, 769-798 TFLOP/s.
constexpr FlopRate kGh100Bf16Gemm = FlopRate::gflops(783'500);
constexpr FlopRate kGh100Fp8Gemm = FlopRate::tflops(1290);

}  // namespace

std::int64_t element_bytes(DataType type) {
  switch (type) {
    case DataType::kFp16:
    case DataType::kBf16:
      return 2;
    case DataType::kFp8:
      return 1;
  }
  return 0;
}

std::string_view data_type_name(DataType type) {
  switch (type) {
    case DataType::kFp16:
      return "fp16";
    case DataType::kBf16:
      return "bf16";
    case DataType::kFp8:
      return "fp8";
  }
  return "?";
}

const TensorRate* GpuSpec::tensor_rate(DataType type) const {
  for (const TensorRate& rate : tensor_rates) {
    if (rate.type == type) return &rate;
  }
  return nullptr;
}

namespace {

// H100 SXM5 and H200 SXM: the same GH100 compute, with different HBM.
GpuSpec gh100(std::string name, BitRate hbm_peak, BitRate hbm_measured, Bytes hbm_capacity) {
  return {.name = std::move(name),
          .sm_count = 132,
          .tensor_rates = {{DataType::kFp16, FlopRate::tflops(989), kGh100Bf16Gemm},
                           {DataType::kBf16, FlopRate::tflops(989), kGh100Bf16Gemm},
                           {DataType::kFp8, FlopRate::tflops(1979), kGh100Fp8Gemm}},
          .hbm_peak = hbm_peak,
          .hbm_measured = hbm_measured,
          .hbm_capacity = hbm_capacity,
          .kernel_launch = kKernelLaunch};
}

}  // namespace

const std::vector<GpuSpec>& gpu_specs() {
  // The A100's tensor cores run FP16 and BF16 at one rate (312 TFLOP/s), so the FP16 measurement
  // (253.7 TFLOP/s, Azure ND A100 v4) stands for both. HBM: datasheet bandwidth, and STREAM triad
  // (A100, H100) or a device-to-device copy (H200), which count bytes read plus written.
  // Capacities: 80 GB from the A100 80GB and H100 SXM5 datasheets, 141 GB for the H200.
  static const std::vector<GpuSpec> specs{
      {.name = "a100",
       .sm_count = 108,
       .tensor_rates = {{DataType::kFp16, FlopRate::tflops(312), FlopRate::gflops(253'700)},
                        {DataType::kBf16, FlopRate::tflops(312), FlopRate::gflops(253'700)}},
       .hbm_peak = terabytes_per_second(2'039),
       .hbm_measured = terabytes_per_second(1'700),
       .hbm_capacity = Bytes(80'000'000'000),
       .kernel_launch = kKernelLaunch},
      gh100("h100", terabytes_per_second(3'350), terabytes_per_second(2'970),
            Bytes(80'000'000'000)),
      gh100("h200", terabytes_per_second(4'800), terabytes_per_second(4'300),
            Bytes(141'000'000'000)),
  };
  return specs;
}

std::optional<GpuSpec> gpu_spec(std::string_view name) {
  for (const GpuSpec& spec : gpu_specs()) {
    if (spec.name == name) return spec;
  }
  return std::nullopt;
}

}  // namespace lockstep
