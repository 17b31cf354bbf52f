#include "models/gpu/kernel_time.hpp"

#include <stdexcept>
#include <string>

namespace lockstep {
namespace {

constexpr std::int64_t kCalibrationSize = 8192;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The HBM traffic of a kernel that moves `moved` bytes, at what HBM sustains.
Duration memory_time(Bytes moved, const GpuSpec& spec) { return tx_time(moved, spec.hbm_measured); }

}  // namespace

KernelModel::KernelModel(const GpuSpec& spec) : spec_(spec) {
  if (spec_.sm_count < 1 || spec_.gemm_tile_m < 1 || spec_.gemm_tile_n < 1) {
    throw std::invalid_argument("GPU " + spec_.name + " needs SMs and a GEMM tile");
  }
  for (const TensorRate& rate : spec_.tensor_rates) {
    const Gemm calibration{kCalibrationSize, kCalibrationSize, kCalibrationSize, rate.type};
    const Flops useful(2 * kCalibrationSize * kCalibrationSize * kCalibrationSize);
    const Duration body = compute_time(useful, rate.measured_gemm_8192) - spec_.kernel_launch;
    if (body <= Duration()) {
      throw std::invalid_argument("GPU " + spec_.name + ": the measured " +
                                  std::string(data_type_name(rate.type)) +
                                  " GEMM leaves no time once the launch gap is taken off");
    }
    const Flops padded(gemm_waves(calibration) * spec_.sm_count * 2 * spec_.gemm_tile_m *
                       spec_.gemm_tile_n * kCalibrationSize);
    sustained_.emplace_back(rate.type, achieved_rate(padded, body));
  }
}

const TensorRate& KernelModel::tensor_rate(DataType type) const {
  const TensorRate* rate = spec_.tensor_rate(type);
  if (rate == nullptr) {
    throw std::invalid_argument("GPU " + spec_.name + " has no " +
                                std::string(data_type_name(type)) + " tensor cores");
  }
  return *rate;
}

FlopRate KernelModel::sustained_rate(DataType type) const {
  (void)tensor_rate(type);  // the message for a type the GPU lacks
  for (const auto& [sustained_type, rate] : sustained_) {
    if (sustained_type == type) return rate;
  }
  return FlopRate();
}

double KernelModel::tile_efficiency(DataType type) const {
  return static_cast<double>(sustained_rate(type).per_second()) /
         static_cast<double>(tensor_rate(type).dense_peak.per_second());
}

std::int64_t KernelModel::gemm_tiles(const Gemm& gemm) const {
  if (gemm.m < 1 || gemm.n < 1 || gemm.k < 1 || gemm.batch < 1) {
    throw std::invalid_argument("a GEMM's dimensions and batch are at least 1");
  }
  return gemm.batch * ceil_div(gemm.m, spec_.gemm_tile_m) * ceil_div(gemm.n, spec_.gemm_tile_n);
}

std::int64_t KernelModel::gemm_waves(const Gemm& gemm) const {
  return ceil_div(gemm_tiles(gemm), spec_.sm_count);
}

KernelCost KernelModel::gemm(const Gemm& gemm) const {
  const FlopRate sustained = sustained_rate(gemm.type);
  // One wave is every SM computing one tile, so it lasts as long as one SM takes for its tile at
  // its share of the sustained rate.
  const Flops wave(spec_.sm_count * 2 * spec_.gemm_tile_m * spec_.gemm_tile_n * gemm.k);
  const std::int64_t elements = gemm.m * gemm.k + gemm.k * gemm.n + gemm.m * gemm.n;
  const Bytes moved(gemm.batch * elements * element_bytes(gemm.type));
  return KernelCost{.flops = Flops(2 * gemm.batch * gemm.m * gemm.n * gemm.k),
                    .bytes = moved,
                    .launch = spec_.kernel_launch,
                    .compute = compute_time(wave, sustained) * gemm_waves(gemm),
                    .memory = memory_time(moved, spec_)};
}

KernelCost KernelModel::generic(Flops work, Bytes moved, DataType type) const {
  if (work < Flops() || moved < Bytes()) {
    throw std::invalid_argument("a kernel's work and traffic are not negative");
  }
  return KernelCost{.flops = work,
                    .bytes = moved,
                    .launch = spec_.kernel_launch,
                    .compute = compute_time(work, sustained_rate(type)),
                    .memory = memory_time(moved, spec_)};
}

KernelCost KernelModel::memory_bound(Bytes moved) const {
  if (moved < Bytes()) throw std::invalid_argument("a kernel's traffic is not negative");
  return KernelCost{.flops = Flops(),
                    .bytes = moved,
                    .launch = spec_.kernel_launch,
                    .compute = Duration(),
                    .memory = memory_time(moved, spec_)};
}

}  // namespace lockstep
