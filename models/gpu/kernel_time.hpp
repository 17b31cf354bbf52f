// How long a kernel takes on one GPU: a roofline whose compute side follows how GEMM libraries
// tile their work, calibrated on the measured GEMM and HBM figures of reference.md section 1.
//
// A kernel needs arithmetic (FLOPs on the tensor cores) and HBM traffic (bytes read plus written).
// The two overlap, so the kernel lasts as long as the slower of them, plus the gap every kernel
// leaves on its stream:
//     t = launch + max(t_compute / clock, t_memory)
// The clock factor (clock_factor.hpp) slows the SMs, not HBM.
//
// Memory: t_memory = bytes / measured HBM bandwidth. STREAM triad and device copies are what HBM
// sustains for streaming kernels: A100 1.70 of 2.039 TB/s (83%), H100 2.97 of 3.35 (89%), H200
// ~4.3 of 4.8 (90%). The bytes of a GEMM are the compulsory traffic: A and B read once, C written
// once.
//
// Compute of a GEMM (C = A B, M x K times K x N), from tile and wave quantization as NVIDIA's Deep
// Learning Performance Guide explains them ("Matrix Multiplication Background", whose example is an
// A100 with 108 SMs and 256 x 128 tiles): the library cuts C into output tiles of tm x tn, each
// one thread block that computes its tile over the whole of K, one block per SM at a time. An edge
// tile that is only partly inside C costs a whole tile, and the tiles run in waves of one per SM,
// of which the last, even if partial, costs a whole wave:
//     tiles = batch ceil(M / tm) ceil(N / tn),   waves = ceil(tiles / SMs)
//     t_compute = waves x 2 tm tn K / (R / SMs)
// R is what the GPU sustains on full waves of full tiles. It falls short of the datasheet peak by
// what no tile avoids (filling and draining the operand pipeline, the epilogue that writes C, and
// clocks below boost under a full load), so R = eta x peak with one eta per (GPU, data type),
// fitted so that the model reproduces the measured 8192^3 GEMM exactly:
//     R = waves(8192) SMs 2 tm tn 8192 / (2 8192^3 / measured - launch)
// The tile is 128 x 256: cuBLAS's kernels for large 16-bit GEMMs on SM80 and SM90 use 128 x 256
// or 256 x 128 tiles (profilers show the tile in their names), as the guide's example does; FP8
// on SM90 keeps the output tile. With the 1 us launch gap this gives:
//     H100/H200 bf16: 2048 tiles in 16 waves of 132 (97.0% useful), eta 0.818, R 808.6 TFLOP/s
//     H100/H200 fp8:  2048 tiles in 16 waves of 132 (97.0% useful), eta 0.673, R 1331.9 TFLOP/s
//     A100 fp16/bf16: 2048 tiles in 19 waves of 108 (99.8% useful), eta 0.815, R 254.3 TFLOP/s
// The bf16 and fp16 etas of two GPU generations agree within 0.5% (0.818 and 0.815), which suggests
// that what eta holds is the kernels' fixed costs rather than an accident of one measurement. A
// GEMM's efficiency (achieved over peak) is then eta x useful tiles / (waves SMs), further reduced
// by the launch gap and by HBM when it, not compute, binds. So small GEMMs lose: 1024^3 on an H100
// is 32 tiles, one wave with 100 SMs idle, and runs at a quarter of the 8192^3 rate or less.
//
// Kernels of unknown shape (generic) run at R without quantization; pure memory kernels
// (elementwise, copies) have no compute side.
//
// Left out: the library's switch to smaller tiles, split-K or stream-K for small or skinny
// problems (so the model is pessimistic there), L2 hits and operand re-reads (bytes are the
// compulsory traffic), and contention between concurrent kernels for SMs and HBM. Units: Flops,
// Bytes, Duration (compute at full clock).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "models/gpu/clock_factor.hpp"
#include "models/gpu/flops.hpp"
#include "models/gpu/gpu_spec.hpp"
#include "sim/core/bytes.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

// batch independent products C = A B with A M x K, B K x N; A, B and C all of `type`.
struct Gemm {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  DataType type = DataType::kBf16;
  std::int64_t batch = 1;
};

struct KernelCost {
  Flops flops;  // useful work, as profilers count it (2 M N K per product)
  Bytes bytes;  // HBM traffic, read plus written
  Duration launch;
  Duration compute;  // at full clock
  Duration memory;

  [[nodiscard]] Duration body(ClockFactor clock) const {
    return std::max(at_clock(compute, clock), memory);
  }
  [[nodiscard]] Duration total(ClockFactor clock) const { return launch + body(clock); }
};

class KernelModel {
 public:
  // Throws std::invalid_argument when the spec has no SMs or tile, or when a calibration figure
  // leaves no time for work once the launch gap is taken off.
  explicit KernelModel(const GpuSpec& spec);

  // Throw std::invalid_argument for a data type the tensor cores lack (FP8 on an A100), a
  // dimension below 1, or negative work.
  [[nodiscard]] KernelCost gemm(const Gemm& gemm) const;
  [[nodiscard]] KernelCost generic(Flops work, Bytes moved, DataType type) const;
  [[nodiscard]] KernelCost memory_bound(Bytes moved) const;

  [[nodiscard]] std::int64_t gemm_tiles(const Gemm& gemm) const;
  [[nodiscard]] std::int64_t gemm_waves(const Gemm& gemm) const;
  // R above, and R / peak (eta).
  [[nodiscard]] FlopRate sustained_rate(DataType type) const;
  [[nodiscard]] double tile_efficiency(DataType type) const;

  [[nodiscard]] const GpuSpec& spec() const { return spec_; }

 private:
  [[nodiscard]] const TensorRate& tensor_rate(DataType type) const;

  GpuSpec spec_;
  std::vector<std::pair<DataType, FlopRate>> sustained_;
};

}  // namespace lockstep
