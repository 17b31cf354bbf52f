// One GPU as a training step drives it through CUDA: a compute stream and a communication stream,
// each an in-order queue of operations, running concurrently, with cudaEventRecord /
// cudaStreamWaitEvent-style dependencies between them, and an SM clock that faults may lower or
// restore at any moment.
//
// Operations:
// - a kernel, described by its KernelCost (kernel_time.hpp): it holds its stream for
//   launch + max(compute / clock, memory), at whatever the clock is while it runs;
// - a sequence of kernels run back to back as one operation, timed exactly as launching each in
//   turn (one event at its end, which a clock change moves, instead of one per kernel: how a
//   training job runs the kernels between two collectives);
// - an external operation, such as a collective: when it reaches the head of its stream the GPU
//   tells its listener to begin, and the caller reports its end with finish_external;
// - a wait for an event. An event is a position in a stream's queue, reached once that stream has
//   finished everything enqueued before the event was recorded, so events cost no storage.
// Operations start from the event loop, never inside the call that enqueues them, so a caller
// knows an operation's id before it hears of it.
//
// A clock change keeps the remaining work of a kernel in flight exact. Work is counted in units in
// which both roofline limits advance at integer rates: with compute C (ps at full clock), memory M
// (ps) and clock f (millionths), a kernel's work is C 10^6 M units, and each picosecond does
// min(f M, C 10^6) of them: f M while compute binds (the kernel then lasts C 10^6 M / (f M) =
// C 10^6 / f ps) and C 10^6 while memory binds (M ps). A clock change charges the time since the
// body started, or since the last change, at the old rate, and the rest runs at the new one. Only
// the end time is rounded up to the next picosecond; the work itself never is, so no rounding
// accumulates over changes. A kernel with only compute or only memory counts C 10^6 or M alone.
// The launch gap ignores the clock.
//
// Left out: contention between the streams (a communication kernel takes SMs and HBM bandwidth
// from compute), more than two streams, and host-side launch stalls. The GPU must outlive the run
// loop. Units: Time, Duration.
#pragma once

#include <cstdint>
#include <span>

#include "models/gpu/clock_factor.hpp"
#include "models/gpu/gpu_spec.hpp"
#include "models/gpu/kernel_time.hpp"
#include "sim/core/ring_queue.hpp"
#include "sim/core/simulator.hpp"
#include "sim/core/timer.hpp"

namespace lockstep {

enum class Stream : std::uint8_t { kCompute, kCommunication };

struct StreamEvent {
  Stream stream = Stream::kCompute;
  std::uint64_t position = 0;  // operations enqueued on `stream` when the event was recorded
};

using GpuOpId = std::uint64_t;

class GpuOpListener {
 public:
  virtual ~GpuOpListener() = default;
  // The operation reached the head of its stream with every wait before it satisfied. For an
  // external operation this is the cue to begin it and, once it is over, call finish_external.
  virtual void on_gpu_op_started(GpuOpId /*id*/, Time /*at*/) {}
  virtual void on_gpu_op_finished(GpuOpId /*id*/, Time /*started*/, Time /*finished*/) {}
};

// Totals of finished operations, per stream.
struct StreamCounters {
  std::int64_t kernels = 0;
  std::int64_t external_ops = 0;
  Duration busy;     // running a kernel (its launch gap included) or an external operation
  Duration blocked;  // its head waiting for an event not yet reached
};

class Gpu {
 public:
  Gpu(Simulator& sim, const GpuSpec& spec);
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;

  GpuOpId launch_kernel(Stream stream, const KernelCost& cost, GpuOpListener* listener = nullptr);
  // `kernels` back to back as one operation: every kernel starts and ends exactly when launching
  // each in turn would have it (clock changes included), with one start and one finish for the
  // whole and one event at its end instead of one per kernel. `kernels` (at least one) must
  // outlive the operation.
  GpuOpId launch_kernels(Stream stream, std::span<const KernelCost> kernels,
                         GpuOpListener* listener = nullptr);
  GpuOpId enqueue_external(Stream stream, GpuOpListener& listener);
  // Ends the external operation `id`, which must be running.
  void finish_external(GpuOpId id);

  [[nodiscard]] StreamEvent record_event(Stream stream) const;
  // Nothing enqueued on `stream` after the wait starts before `event` is reached.
  void wait_event(Stream stream, StreamEvent event);
  [[nodiscard]] bool reached(StreamEvent event) const;

  void set_clock(ClockFactor clock);
  [[nodiscard]] ClockFactor clock() const { return clock_; }
  // The GPU stops for good (an Xid: it fell off the bus, or its HBM failed): the operations
  // running now never finish, nothing enqueued starts, and its listeners hear nothing more.
  void fail();
  [[nodiscard]] bool failed() const { return failed_; }

  [[nodiscard]] const KernelModel& kernels() const { return kernels_; }
  [[nodiscard]] const StreamCounters& counters(Stream stream) const;
  [[nodiscard]] bool idle() const { return compute_.ops.empty() && communication_.ops.empty(); }

 private:
  __extension__ using Work = unsigned __int128;

  struct Op {
    enum class Kind : std::uint8_t { kKernel, kExternal, kWait };
    Kind kind = Kind::kKernel;
    GpuOpId id = 0;
    GpuOpListener* listener = nullptr;
    KernelCost cost{};
    std::span<const KernelCost> sequence{};  // launch_kernels: the kernels, run in turn
    StreamEvent awaited{};

    [[nodiscard]] std::size_t kernel_count() const {
      return sequence.empty() ? 1 : sequence.size();
    }
    [[nodiscard]] const KernelCost& kernel(std::size_t index) const {
      return sequence.empty() ? cost : sequence[index];
    }
  };

  struct Queue {
    Queue(Simulator& sim, Gpu* gpu, Stream stream)
        : done(Timer::calling<&Gpu::on_kernel_done>(sim, gpu, static_cast<std::uint64_t>(stream))) {
    }
    RingQueue<Op> ops;
    std::uint64_t enqueued = 0;
    std::uint64_t finished = 0;
    bool head_running = false;
    Time head_started;
    // The kernel at the head (of its sequence): where its unaccounted progress starts, and its
    // work left then.
    std::size_t kernel_index = 0;
    Time progress_from;
    Work remaining = 0;
    Timer done;
    StreamCounters counters;
  };

  [[nodiscard]] Queue& queue(Stream stream) {
    return stream == Stream::kCompute ? compute_ : communication_;
  }
  [[nodiscard]] const Queue& queue(Stream stream) const {
    return stream == Stream::kCompute ? compute_ : communication_;
  }
  GpuOpId enqueue(Stream stream, Op op);
  void advance_soon();
  void on_advance_event();
  void advance();
  void start_head(Queue& queue);
  void finish_head(Queue& queue);
  void arm_kernel_end(Queue& queue);
  // The end of the head's current kernel at the current clock.
  [[nodiscard]] Time kernel_end(const Queue& queue) const;
  // Moves the head's sequence on to the kernel running at `now`.
  void catch_up(Queue& queue, Time now);
  void on_kernel_done(std::uint64_t stream);

  Simulator& sim_;
  KernelModel kernels_;
  ClockFactor clock_ = ClockFactor::full();
  Queue compute_;
  Queue communication_;
  GpuOpId next_id_ = 0;
  bool advance_scheduled_ = false;
  bool advancing_ = false;
  bool advance_again_ = false;
  bool failed_ = false;
};

}  // namespace lockstep
