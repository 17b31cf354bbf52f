#include "models/gpu/gpu.hpp"

#include <algorithm>

namespace lockstep {
namespace {

__extension__ using Work = unsigned __int128;

Work compute_units(const KernelCost& cost) {
  return static_cast<Work>(cost.compute.ps()) * ClockFactor::kFull;
}
Work memory_units(const KernelCost& cost) { return static_cast<Work>(cost.memory.ps()); }

Work total_work(const KernelCost& cost) {
  if (compute_units(cost) == 0) return memory_units(cost);
  if (memory_units(cost) == 0) return compute_units(cost);
  return compute_units(cost) * memory_units(cost);
}

// Work units done per picosecond at `clock`.
Work work_rate(const KernelCost& cost, ClockFactor clock) {
  const auto ppm = static_cast<Work>(clock.ppm());
  if (compute_units(cost) == 0) return 1;
  if (memory_units(cost) == 0) return ppm;
  return std::min(ppm * memory_units(cost), compute_units(cost));
}

}  // namespace

Gpu::Gpu(Simulator& sim, const GpuSpec& spec)
    : sim_(sim),
      kernels_(spec),
      compute_(sim, this, Stream::kCompute),
      communication_(sim, this, Stream::kCommunication) {}

GpuOpId Gpu::launch_kernel(Stream stream, const KernelCost& cost, GpuOpListener* listener) {
  return enqueue(stream, Op{.kind = Op::Kind::kKernel, .listener = listener, .cost = cost});
}

GpuOpId Gpu::launch_kernels(Stream stream, std::span<const KernelCost> kernels,
                            GpuOpListener* listener) {
  LOCKSTEP_CHECK(!kernels.empty(), sim_.now(), "gpu", "a kernel sequence without a kernel");
  return enqueue(stream,
                 Op{.kind = Op::Kind::kKernel,
                    .listener = listener,
                    .cost = kernels.front(),
                    .sequence = kernels.size() > 1 ? kernels : std::span<const KernelCost>()});
}

GpuOpId Gpu::enqueue_external(Stream stream, GpuOpListener& listener) {
  return enqueue(stream, Op{.kind = Op::Kind::kExternal, .listener = &listener});
}

void Gpu::wait_event(Stream stream, StreamEvent event) {
  (void)enqueue(stream, Op{.kind = Op::Kind::kWait, .awaited = event});
}

StreamEvent Gpu::record_event(Stream stream) const {
  return StreamEvent{stream, queue(stream).enqueued};
}

bool Gpu::reached(StreamEvent event) const {
  return queue(event.stream).finished >= event.position;
}

const StreamCounters& Gpu::counters(Stream stream) const { return queue(stream).counters; }

GpuOpId Gpu::enqueue(Stream stream, Op op) {
  op.id = next_id_++;
  Queue& q = queue(stream);
  q.ops.push_back(op);
  ++q.enqueued;
  // Only an operation at the head of its queue can start: behind a running or waiting one it
  // starts when the one ahead finishes, from that finish.
  if (q.ops.size() == 1) advance_soon();
  return op.id;
}

void Gpu::finish_external(GpuOpId id) {
  if (failed_) return;
  for (Queue* q : {&compute_, &communication_}) {
    if (q->head_running && q->ops.front().id == id) {
      LOCKSTEP_CHECK(q->ops.front().kind == Op::Kind::kExternal, sim_.now(), "gpu",
                     "finish_external on a kernel or wait");
      finish_head(*q);
      return;
    }
  }
  fail_invariant(sim_.now(), "gpu", "finish_external on an operation that is not running");
}

void Gpu::set_clock(ClockFactor clock) {
  if (failed_) return;
  const Time now = sim_.now();
  for (Queue* q : {&compute_, &communication_}) {
    if (!q->head_running || q->ops.front().kind != Op::Kind::kKernel) continue;
    catch_up(*q, now);
    if (now > q->progress_from) {
      const Work done = static_cast<Work>((now - q->progress_from).ps()) *
                        work_rate(q->ops.front().kernel(q->kernel_index), clock_);
      q->remaining -= std::min(done, q->remaining);
      q->progress_from = now;
    }
  }
  clock_ = clock;
  for (Queue* q : {&compute_, &communication_}) {
    if (q->head_running && q->ops.front().kind == Op::Kind::kKernel) arm_kernel_end(*q);
  }
}

void Gpu::fail() {
  failed_ = true;
  compute_.done.cancel();
  communication_.done.cancel();
}

void Gpu::advance_soon() {
  if (advance_scheduled_ || failed_) return;
  advance_scheduled_ = true;
  sim_.schedule<&Gpu::on_advance_event>(sim_.now(), this);
}

void Gpu::on_advance_event() {
  advance_scheduled_ = false;
  advance();
}

void Gpu::advance() {
  // A listener told of a start or an end may enqueue, finish or satisfy a wait at once; the
  // outermost call sweeps again instead of nesting.
  if (advancing_) {
    advance_again_ = true;
    return;
  }
  if (failed_) return;
  advancing_ = true;
  // A listener may fail the GPU (an Xid as a step ends): nothing more starts then.
  do {
    advance_again_ = false;
    if (!failed_) start_head(compute_);
    if (!failed_) start_head(communication_);
  } while (advance_again_ && !failed_);
  advancing_ = false;
}

void Gpu::start_head(Queue& q) {
  while (!q.ops.empty()) {
    Op& head = q.ops.front();
    if (!q.head_running) {
      q.head_running = true;
      q.head_started = sim_.now();
      if (head.kind == Op::Kind::kKernel) {
        q.kernel_index = 0;
        q.progress_from = sim_.now() + head.cost.launch;
        q.remaining = total_work(head.cost);
        arm_kernel_end(q);
      }
      if (head.kind != Op::Kind::kWait) {
        // The listener may finish an external operation right away: `head` is not touched again.
        if (head.listener != nullptr) head.listener->on_gpu_op_started(head.id, sim_.now());
        return;
      }
    }
    if (head.kind != Op::Kind::kWait || !reached(head.awaited)) return;
    finish_head(q);
  }
}

void Gpu::finish_head(Queue& q) {
  const Op op = q.ops.front();
  const Time started = q.head_started;
  const Duration spent = sim_.now() - started;
  q.ops.pop_front();
  q.head_running = false;
  ++q.finished;
  switch (op.kind) {
    case Op::Kind::kKernel:
      q.counters.kernels += static_cast<std::int64_t>(op.kernel_count());
      q.counters.busy += spent;
      break;
    case Op::Kind::kExternal:
      ++q.counters.external_ops;
      q.counters.busy += spent;
      break;
    case Op::Kind::kWait:
      q.counters.blocked += spent;
      break;
  }
  if (op.listener != nullptr) op.listener->on_gpu_op_finished(op.id, started, sim_.now());
  advance();
}

Time Gpu::kernel_end(const Queue& q) const {
  const Work rate = work_rate(q.ops.front().kernel(q.kernel_index), clock_);
  return q.progress_from + Duration::ps_from_wide((q.remaining + rate - 1) / rate);
}

void Gpu::catch_up(Queue& q, Time now) {
  const Op& head = q.ops.front();
  for (Time end = kernel_end(q); q.kernel_index + 1 < head.kernel_count() && end <= now;
       end = kernel_end(q)) {
    const KernelCost& next = head.kernel(++q.kernel_index);
    q.progress_from = end + next.launch;
    q.remaining = total_work(next);
  }
}

void Gpu::arm_kernel_end(Queue& q) {
  // The kernels after the current one run, each after its launch gap, at the clock as it is now;
  // a clock change re-arms from where the sequence has got to (catch_up).
  const Op& head = q.ops.front();
  Time end = kernel_end(q);
  for (std::size_t i = q.kernel_index + 1; i < head.kernel_count(); ++i) {
    const KernelCost& next = head.kernel(i);
    const Work rate = work_rate(next, clock_);
    end += next.launch + Duration::ps_from_wide((total_work(next) + rate - 1) / rate);
  }
  q.done.arm_at(end);
}

void Gpu::on_kernel_done(std::uint64_t stream) {
  Queue& q = queue(static_cast<Stream>(stream));
  LOCKSTEP_CHECK(q.head_running && !q.ops.empty() && q.ops.front().kind == Op::Kind::kKernel,
                 sim_.now(), "gpu", "kernel end without a running kernel");
  finish_head(q);
}

}  // namespace lockstep
