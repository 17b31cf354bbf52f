#include <doctest/doctest.h>

#include <stdexcept>
#include <string_view>
#include <vector>

#include "models/gpu/gpu.hpp"
#include "sim/core/check.hpp"

namespace lockstep {
namespace {

GpuSpec spec_of(std::string_view name) {
  const std::optional<GpuSpec> spec = gpu_spec(name);
  REQUIRE(spec.has_value());
  return *spec;
}

Gemm cube(std::int64_t size, DataType type) { return Gemm{size, size, size, type}; }

double tflops(const KernelCost& cost) {
  return static_cast<double>(cost.flops.count()) / cost.total(ClockFactor::full()).seconds() *
         1e-12;
}

constexpr ClockFactor kHalfClock = ClockFactor::ppm(500'000);

// A kernel of `compute` at full clock and `memory`, with no launch gap unless given.
KernelCost kernel(Duration compute, Duration memory, Duration launch = Duration()) {
  return KernelCost{
      .flops = Flops(), .bytes = Bytes(), .launch = launch, .compute = compute, .memory = memory};
}

// Records when each operation it listens to started and finished.
struct Spans final : GpuOpListener {
  std::vector<Time> started;
  std::vector<Time> finished;
  void on_gpu_op_started(GpuOpId /*id*/, Time at) override { started.push_back(at); }
  void on_gpu_op_finished(GpuOpId /*id*/, Time /*started*/, Time at) override {
    finished.push_back(at);
  }
};

// An external operation (a collective, say) that lasts `duration` once the GPU lets it begin.
struct External final : GpuOpListener {
  External(Simulator& s, Gpu& g, Duration d) : sim(s), gpu(g), duration(d) {}
  Simulator& sim;
  Gpu& gpu;
  Duration duration;
  GpuOpId id = 0;
  Time started = Time::max();
  Time finished = Time::max();

  void on_gpu_op_started(GpuOpId op, Time at) override {
    id = op;
    started = at;
    if (duration == Duration()) {
      gpu.finish_external(id);
    } else {
      sim.schedule<&External::end>(at + duration, this);
    }
  }
  void on_gpu_op_finished(GpuOpId /*id*/, Time /*started*/, Time at) override { finished = at; }
  void end() { gpu.finish_external(id); }
};

struct ClockChanger {
  Gpu& gpu;
  void to_ppm(std::int64_t ppm) { gpu.set_clock(ClockFactor::ppm(ppm)); }
};

TEST_CASE("gpu: specs are found by name, with the SM counts of the datasheets") {
  CHECK(spec_of("a100").sm_count == 108);
  CHECK(spec_of("h100").sm_count == 132);
  CHECK(spec_of("h200").sm_count == 132);
  CHECK(spec_of("h200").hbm_capacity == Bytes(141'000'000'000));
  CHECK_FALSE(gpu_spec("b200").has_value());
  CHECK(spec_of("a100").tensor_rate(DataType::kFp8) == nullptr);
}

// The calibration: each measured 8192^3 GEMM is reproduced, and the H100's bf16 rate, never
// measured, comes from the H200 (same GH100 compute), so both land in the H200's band.
TEST_CASE("gpu: an 8192^3 bf16 GEMM runs in the measured 769-798 TFLOP/s on an H200 and an H100") {
  const KernelCost h200 = KernelModel(spec_of("h200")).gemm(cube(8192, DataType::kBf16));
  const KernelCost h100 = KernelModel(spec_of("h100")).gemm(cube(8192, DataType::kBf16));
  CHECK(tflops(h200) >= 769.0);
  CHECK(tflops(h200) <= 798.0);
  CHECK(h100.total(ClockFactor::full()) == h200.total(ClockFactor::full()));
  CHECK(h200.compute > h200.memory);  // compute-bound, so HBM does not tell the two apart
}

TEST_CASE("gpu: FP8 on an H100 and FP16 on an A100 reach the measured 1290 and 253.7 TFLOP/s") {
  CHECK(tflops(KernelModel(spec_of("h100")).gemm(cube(8192, DataType::kFp8))) ==
        doctest::Approx(1290.0).epsilon(0.005));
  const KernelModel a100(spec_of("a100"));
  CHECK(tflops(a100.gemm(cube(8192, DataType::kFp16))) == doctest::Approx(253.7).epsilon(0.005));
  CHECK(a100.gemm(cube(8192, DataType::kBf16)).total(ClockFactor::full()) ==
        a100.gemm(cube(8192, DataType::kFp16)).total(ClockFactor::full()));
}

// eta = waves SMs 2 tm tn 8192 / (peak (2 8192^3 / measured - 1 us)), the values kernel_time.hpp
// quotes: 16 x 132 tiles for 2048 on the H100, 19 x 108 on the A100.
TEST_CASE("gpu: the fitted tile efficiencies are those the kernel model's header derives") {
  const KernelModel h100(spec_of("h100"));
  const KernelModel a100(spec_of("a100"));
  CHECK(h100.gemm_waves(cube(8192, DataType::kBf16)) == 16);
  CHECK(a100.gemm_waves(cube(8192, DataType::kFp16)) == 19);
  CHECK(h100.tile_efficiency(DataType::kBf16) == doctest::Approx(0.8176).epsilon(0.0005));
  CHECK(h100.tile_efficiency(DataType::kFp8) == doctest::Approx(0.6730).epsilon(0.0005));
  CHECK(a100.tile_efficiency(DataType::kFp16) == doctest::Approx(0.8149).epsilon(0.0005));
}

TEST_CASE("gpu: the tensor cores refuse a data type they lack") {
  const KernelModel a100(spec_of("a100"));
  CHECK_THROWS_AS((void)a100.gemm(cube(1024, DataType::kFp8)), std::invalid_argument);
  CHECK_THROWS_AS((void)a100.gemm(Gemm{0, 8, 8}), std::invalid_argument);
}

// Moving the bytes HBM sustains in one second per 1000 takes exactly 1 ms, whatever the clock.
TEST_CASE("gpu: a memory-bound kernel moves its bytes at the measured HBM bandwidth") {
  const KernelCost h100 = KernelModel(spec_of("h100")).memory_bound(Bytes(2'970'000'000));
  CHECK(h100.memory == Duration::ms(1));
  CHECK(h100.total(ClockFactor::full()) == Duration::ms(1) + Duration::us(1));
  CHECK(h100.total(kHalfClock) == h100.total(ClockFactor::full()));
  CHECK(KernelModel(spec_of("a100")).memory_bound(Bytes(1'700'000'000)).memory == Duration::ms(1));
  CHECK(KernelModel(spec_of("h200")).memory_bound(Bytes(4'300'000'000)).memory == Duration::ms(1));
}

// 128 x 256 tiles: M = 128 x 132, N = 256 fills one wave of the H100's 132 SMs exactly; one more
// row makes a 133rd tile, and the second wave it starts costs as much as the first.
TEST_CASE("gpu: a GEMM one tile past a full wave takes two waves") {
  const KernelModel h100(spec_of("h100"));
  const KernelCost one_tile = h100.gemm(Gemm{128, 256, 8192});
  const KernelCost full_wave = h100.gemm(Gemm{128 * 132, 256, 8192});
  const KernelCost one_more_row = h100.gemm(Gemm{128 * 132 + 1, 256, 8192});
  CHECK(h100.gemm_tiles(Gemm{128 * 132 + 1, 256, 8192}) == 133);
  CHECK(full_wave.compute == one_tile.compute);
  CHECK(one_more_row.compute == full_wave.compute * 2);
  CHECK(one_more_row.compute > one_more_row.memory);
  CHECK(h100.gemm(Gemm{128, 256, 8192, DataType::kBf16, 133}).compute == one_more_row.compute);
}

// 1024^3 is 8 x 4 = 32 tiles: one wave with 100 of 132 SMs idle, against 2048 tiles in 16 full
// waves at 8192. The compute side alone runs at (32 / 132) / (2048 / 2112) = 1/4 of the 8192 rate,
// and the launch gap takes more.
TEST_CASE("gpu: small GEMMs reach a smaller share of peak, as waves go unfilled") {
  const KernelModel h100(spec_of("h100"));
  const KernelCost small = h100.gemm(cube(1024, DataType::kBf16));
  const KernelCost large = h100.gemm(cube(8192, DataType::kBf16));
  const double small_rate = static_cast<double>(small.flops.count()) / small.compute.seconds();
  const double large_rate = static_cast<double>(large.flops.count()) / large.compute.seconds();
  CHECK(small_rate / large_rate == doctest::Approx(0.25).epsilon(1e-6));
  CHECK(tflops(small) < 0.25 * tflops(large));
  double previous = 0.0;
  for (const std::int64_t size : {256, 512, 1024, 2048}) {
    const double rate = tflops(h100.gemm(cube(size, DataType::kBf16)));
    CHECK(rate > previous);
    previous = rate;
  }
}

// A kernel of unknown shape runs at the sustained rate R without wave quantization, so the same
// work as an 8192^3 GEMM takes 2048 / (16 x 132) of the GEMM's compute time.
TEST_CASE("gpu: a generic kernel runs at the sustained rate, without quantization") {
  const KernelModel h100(spec_of("h100"));
  const KernelCost gemm = h100.gemm(cube(8192, DataType::kBf16));
  const KernelCost generic = h100.generic(gemm.flops, gemm.bytes, DataType::kBf16);
  CHECK(generic.compute.seconds() / gemm.compute.seconds() ==
        doctest::Approx(2048.0 / 2112.0).epsilon(1e-6));
  CHECK(generic.memory == gemm.memory);
  CHECK_THROWS_AS((void)h100.generic(Flops(-1), Bytes(), DataType::kBf16), std::invalid_argument);
}

TEST_CASE("gpu: compute time scales exactly as 1 / clock, memory time not at all") {
  const KernelCost gemm = KernelModel(spec_of("h100")).gemm(cube(8192, DataType::kBf16));
  CHECK(gemm.body(kHalfClock) == gemm.compute * 2);
  CHECK(kernel(Duration::us(1000), Duration()).body(ClockFactor::ppm(800'000)) ==
        Duration::us(1250));
  // Memory-bound at full clock (60 < 100), compute-bound at half (120 > 100).
  CHECK(kernel(Duration::us(60), Duration::us(100)).body(ClockFactor::full()) == Duration::us(100));
  CHECK(kernel(Duration::us(60), Duration::us(100)).body(kHalfClock) == Duration::us(120));
  CHECK_THROWS_AS((void)ClockFactor::ppm(0), std::invalid_argument);
  CHECK_THROWS_AS((void)ClockFactor::ppm(1'000'001), std::invalid_argument);
}

TEST_CASE("gpu: a kernel holds its stream for its launch gap and its body at the current clock") {
  Simulator sim;
  Gpu gpu(sim, spec_of("h100"));
  const KernelCost gemm = gpu.kernels().gemm(cube(4096, DataType::kBf16));
  Spans spans;
  gpu.set_clock(kHalfClock);
  (void)gpu.launch_kernel(Stream::kCompute, gemm, &spans);
  (void)sim.run();
  REQUIRE(spans.finished.size() == 1);
  CHECK(spans.finished[0] == Time::zero() + gemm.launch + gemm.compute * 2);
  CHECK(gpu.counters(Stream::kCompute).kernels == 1);
  CHECK(gpu.counters(Stream::kCompute).busy == gemm.launch + gemm.compute * 2);
}

// Launch gap 1 us, then 100 us of compute. At 41 us, 40 us of it is done; the other 60 us at half
// clock take 120 us: the kernel ends at 161 us instead of 101 us.
TEST_CASE("gpu: a clock change in mid-kernel finishes the remaining work at the new rate") {
  Simulator sim;
  Gpu gpu(sim, spec_of("h100"));
  ClockChanger changer{gpu};
  Spans spans;
  (void)gpu.launch_kernel(Stream::kCompute, kernel(Duration::us(100), Duration(), Duration::us(1)),
                          &spans);
  sim.schedule<&ClockChanger::to_ppm>(Time::zero() + Duration::us(41), &changer, 500'000);
  (void)sim.run();
  REQUIRE(spans.finished.size() == 1);
  CHECK(spans.finished[0] == Time::zero() + Duration::us(161));
}

// During the launch gap no work is done, so all 100 us of compute run at half clock: 1 + 200 us.
// Restored to full at 101 us, with 50 us of work left, the kernel ends at 151 us.
TEST_CASE("gpu: a clock change in the launch gap slows the whole body; a restore speeds it up") {
  for (const bool restored : {false, true}) {
    Simulator sim;
    Gpu gpu(sim, spec_of("h100"));
    ClockChanger changer{gpu};
    Spans spans;
    (void)gpu.launch_kernel(Stream::kCompute,
                            kernel(Duration::us(100), Duration(), Duration::us(1)), &spans);
    sim.schedule<&ClockChanger::to_ppm>(Time::from_ps(500'000), &changer, 500'000);
    if (restored) {
      sim.schedule<&ClockChanger::to_ppm>(Time::zero() + Duration::us(101), &changer, 1'000'000);
    }
    (void)sim.run();
    REQUIRE(spans.finished.size() == 1);
    CHECK(spans.finished[0] == Time::zero() + Duration::us(restored ? 151 : 201));
  }
}

// Compute 60 us, memory 100 us: memory-bound (100 us) at full clock, compute-bound (120 us) at
// half. Half done at 50 us, the other half takes 60 us at half clock: the end is at 110 us. Back
// at full clock at 80 us, 30 us at 1/120 per us leave a quarter, 25 us at full: the end is 105 us.
TEST_CASE("gpu: the roofline decides the remaining time at every clock") {
  for (const bool restored : {false, true}) {
    Simulator sim;
    Gpu gpu(sim, spec_of("h100"));
    ClockChanger changer{gpu};
    Spans spans;
    (void)gpu.launch_kernel(Stream::kCompute, kernel(Duration::us(60), Duration::us(100)), &spans);
    sim.schedule<&ClockChanger::to_ppm>(Time::zero() + Duration::us(50), &changer, 500'000);
    if (restored) {
      sim.schedule<&ClockChanger::to_ppm>(Time::zero() + Duration::us(80), &changer, 1'000'000);
    }
    (void)sim.run();
    REQUIRE(spans.finished.size() == 1);
    CHECK(spans.finished[0] == Time::zero() + Duration::us(restored ? 105 : 110));
  }
}

TEST_CASE("gpu: operations on one stream run in order") {
  Simulator sim;
  Gpu gpu(sim, spec_of("h100"));
  Spans spans;
  (void)gpu.launch_kernel(Stream::kCompute, kernel(Duration::us(30), Duration()), &spans);
  (void)gpu.launch_kernel(Stream::kCompute, kernel(Duration(), Duration::us(20)), &spans);
  (void)sim.run();
  CHECK(spans.started == std::vector<Time>{Time::zero(), Time::zero() + Duration::us(30)});
  CHECK(spans.finished.back() == Time::zero() + Duration::us(50));
  CHECK(gpu.counters(Stream::kCompute).kernels == 2);
}

// A 100 us kernel and an 80 us collective side by side: the GPU is done at 100 us, not 180 us.
TEST_CASE("gpu: the compute and communication streams run concurrently") {
  Simulator sim;
  Gpu gpu(sim, spec_of("h100"));
  Spans compute;
  External all_reduce(sim, gpu, Duration::us(80));
  (void)gpu.launch_kernel(Stream::kCompute, kernel(Duration::us(100), Duration()), &compute);
  (void)gpu.enqueue_external(Stream::kCommunication, all_reduce);
  (void)sim.run();
  CHECK(all_reduce.started == Time::zero());
  CHECK(all_reduce.finished == Time::zero() + Duration::us(80));
  CHECK(compute.finished == std::vector<Time>{Time::zero() + Duration::us(100)});
  CHECK(sim.now() == Time::zero() + Duration::us(100));
  CHECK(gpu.counters(Stream::kCommunication).external_ops == 1);
  CHECK(gpu.counters(Stream::kCommunication).busy == Duration::us(80));
  CHECK(gpu.idle());
}

TEST_CASE("gpu: an event makes compute wait for the all-reduce, and the all-reduce for compute") {
  SUBCASE("compute waits") {
    Simulator sim;
    Gpu gpu(sim, spec_of("h100"));
    Spans compute;
    External all_reduce(sim, gpu, Duration::us(80));
    (void)gpu.enqueue_external(Stream::kCommunication, all_reduce);
    gpu.wait_event(Stream::kCompute, gpu.record_event(Stream::kCommunication));
    (void)gpu.launch_kernel(Stream::kCompute, kernel(Duration::us(100), Duration()), &compute);
    (void)sim.run();
    CHECK(compute.started == std::vector<Time>{Time::zero() + Duration::us(80)});
    CHECK(compute.finished == std::vector<Time>{Time::zero() + Duration::us(180)});
    CHECK(gpu.counters(Stream::kCompute).blocked == Duration::us(80));
    CHECK(gpu.counters(Stream::kCompute).busy == Duration::us(100));
  }
  SUBCASE("the all-reduce waits for the gradients") {
    Simulator sim;
    Gpu gpu(sim, spec_of("h100"));
    External all_reduce(sim, gpu, Duration::us(80));
    (void)gpu.launch_kernel(Stream::kCompute, kernel(Duration::us(100), Duration()));
    const StreamEvent gradients = gpu.record_event(Stream::kCompute);
    (void)gpu.launch_kernel(Stream::kCompute, kernel(Duration::us(100), Duration()));
    gpu.wait_event(Stream::kCommunication, gradients);
    (void)gpu.enqueue_external(Stream::kCommunication, all_reduce);
    (void)sim.run();
    CHECK(all_reduce.started == Time::zero() + Duration::us(100));
    CHECK(all_reduce.finished == Time::zero() + Duration::us(180));
    CHECK(gpu.reached(gradients));
    CHECK(sim.now() == Time::zero() + Duration::us(200));
  }
}

TEST_CASE("gpu: an external operation may end the moment it starts, and the stream moves on") {
  Simulator sim;
  Gpu gpu(sim, spec_of("h100"));
  External empty(sim, gpu, Duration());
  Spans after;
  (void)gpu.enqueue_external(Stream::kCommunication, empty);
  (void)gpu.launch_kernel(Stream::kCommunication, kernel(Duration::us(5), Duration()), &after);
  (void)sim.run();
  CHECK(empty.finished == Time::zero());
  CHECK(after.finished == std::vector<Time>{Time::zero() + Duration::us(5)});
}

// An Xid at 40 us: the kernel running since 0 (100 us long) never ends, the kernel queued behind
// it never starts, and a collective ending later is not heard of.
TEST_CASE("gpu: a failed GPU finishes nothing and starts nothing") {
  Simulator sim;
  Gpu gpu(sim, spec_of("h100"));
  Spans spans;
  External all_reduce(sim, gpu, Duration::us(80));
  (void)gpu.launch_kernel(Stream::kCompute, kernel(Duration::us(100), Duration()), &spans);
  (void)gpu.launch_kernel(Stream::kCompute, kernel(Duration::us(10), Duration()), &spans);
  (void)gpu.enqueue_external(Stream::kCommunication, all_reduce);
  struct Failure {
    Gpu& gpu;
    void now() { gpu.fail(); }
  } failure{gpu};
  sim.schedule<&Failure::now>(Time::zero() + Duration::us(40), &failure);
  (void)sim.run();
  CHECK(gpu.failed());
  CHECK(spans.started == std::vector<Time>{Time::zero()});
  CHECK(spans.finished.empty());
  CHECK(all_reduce.started == Time::zero());
  CHECK(all_reduce.finished == Time::max());
  CHECK(gpu.counters(Stream::kCompute).kernels == 0);
  CHECK_FALSE(gpu.idle());
}

TEST_CASE("gpu: finishing an external operation that is not running is an invariant violation") {
  Simulator sim;
  Gpu gpu(sim, spec_of("h100"));
  const GpuOpId kernel_id =
      gpu.launch_kernel(Stream::kCompute, kernel(Duration::us(5), Duration()));
  (void)sim.run(Time::zero());
  CHECK_THROWS_AS(gpu.finish_external(kernel_id), InvariantViolation);
  CHECK_THROWS_AS(gpu.finish_external(kernel_id + 1), InvariantViolation);
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// Kernels launched as one sequence end exactly when the same kernels launched one by one do, at
// whatever clock changes come in the middle of one kernel, in a launch gap or at a boundary. The
// shapes and clock changes are drawn from a fixed linear congruential sequence (reproducible).
TEST_CASE("gpu: a kernel sequence ends exactly when its kernels launched one by one end") {
  std::uint64_t state = 12345;
  auto draw = [&state](std::uint64_t below) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % below;
  };
  for (int trial = 0; trial < 300; ++trial) {
    CAPTURE(trial);
    std::vector<KernelCost> kernels;
    const std::uint64_t count = 1 + draw(6);
    for (std::uint64_t k = 0; k < count; ++k) {
      kernels.push_back(kernel(Duration::ns(static_cast<std::int64_t>(draw(3) * draw(40'000))),
                               Duration::ns(static_cast<std::int64_t>(draw(2) * draw(40'000))),
                               Duration::ns(static_cast<std::int64_t>(draw(3) * 1'000))));
    }
    struct Change {
      Time at;
      std::int64_t ppm;
    };
    std::vector<Change> changes;
    for (std::uint64_t c = draw(4); c > 0; --c) {
      changes.push_back(Change{Time::from_ps(static_cast<std::int64_t>(draw(200'000'000))),
                               static_cast<std::int64_t>(300'000 + draw(700'001))});
    }
    auto end_of = [&](bool as_sequence) {
      Simulator sim;
      Gpu gpu(sim, spec_of("h100"));
      ClockChanger changer{gpu};
      for (const Change& c : changes) {
        sim.schedule<&ClockChanger::to_ppm>(c.at, &changer, c.ppm);
      }
      Spans spans;
      if (as_sequence) {
        (void)gpu.launch_kernels(Stream::kCompute, kernels, &spans);
      } else {
        for (const KernelCost& k : kernels) (void)gpu.launch_kernel(Stream::kCompute, k, &spans);
      }
      (void)sim.run();
      REQUIRE(spans.finished.size() == (as_sequence ? 1 : kernels.size()));
      CHECK(gpu.counters(Stream::kCompute).kernels == static_cast<std::int64_t>(kernels.size()));
      return spans.finished.back();
    };
    CHECK(end_of(true) == end_of(false));
  }
}

}  // namespace
}  // namespace lockstep
