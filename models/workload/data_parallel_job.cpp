#include "models/workload/data_parallel_job.hpp"

#include <cmath>

namespace lockstep {
namespace {

TableLayout op_layout() {
  using Row = DataParallelJob::OpRow;
  return layout<Row>("rank_ops", {column("rank", &Row::rank), column("step", &Row::step),
                                  column("kind", &Row::kind), column("start_ps", &Row::start_ps),
                                  column("end_ps", &Row::end_ps), column("bytes", &Row::bytes)});
}

TableLayout rank_step_layout() {
  using Row = DataParallelJob::RankStepRow;
  return layout<Row>("rank_steps", {column("rank", &Row::rank), column("step", &Row::step),
                                    column("compute_ps", &Row::compute_ps),
                                    column("wait_for_slowest_ps", &Row::wait_for_slowest_ps),
                                    column("exposed_comm_ps", &Row::exposed_comm_ps)});
}

TableLayout step_layout() {
  using Row = DataParallelJob::StepRow;
  return layout<Row>("steps",
                     {column("step", &Row::step), column("start_ps", &Row::start_ps),
                      column("end_ps", &Row::end_ps), column("slowest_rank", &Row::slowest_rank),
                      column("all_reduce_ps", &Row::all_reduce_ps)});
}

}  // namespace

DataParallelJob::DataParallelJob(Simulator& sim, const DataParallelJobConfig& config,
                                 std::uint64_t seed, RecordBackend& output)
    : sim_(sim),
      config_(config),
      all_reduce_duration_(all_reduce_time(config.all_reduce.algorithm, config.ranks,
                                           config.gradient_size, config.all_reduce.cost())),
      compute_stretch_(static_cast<std::size_t>(config.ranks), 1.0),
      compute_end_(static_cast<std::size_t>(config.ranks)),
      ops_(output, op_layout()),
      rank_steps_(output, rank_step_layout()),
      steps_(output, step_layout()) {
  compute_noise_.reserve(compute_stretch_.size());
  for (std::int64_t r = 0; r < config.ranks; ++r) {
    compute_noise_.emplace_back(seed, "job.compute", static_cast<std::uint64_t>(r));
  }
  for (const SlowRank& slow : config.slow_ranks) {
    compute_stretch_[static_cast<std::size_t>(slow.rank)] += slow.slowdown;
  }
}

void DataParallelJob::start() {
  if (config_.steps > 0) sim_.schedule<&DataParallelJob::begin_step>(sim_.now(), this);
}

void DataParallelJob::begin_step() {
  step_start_ = sim_.now();
  ranks_computing_ = config_.ranks;
  const double mean_ps = static_cast<double>(config_.compute_per_step.ps());
  for (std::int64_t r = 0; r < config_.ranks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    const double draw = compute_noise_[i].lognormal_mean_cv(mean_ps, config_.compute_jitter);
    const auto compute = Duration::ps(std::llround(draw * compute_stretch_[i]));
    compute_end_[i] = step_start_ + compute;
    sim_.schedule<&DataParallelJob::end_compute>(compute_end_[i], this, r);
  }
}

void DataParallelJob::end_compute(std::int64_t rank) {
  ops_.append(OpRow{rank, steps_completed_, "compute", step_start_.ps(),
                    compute_end_[static_cast<std::size_t>(rank)].ps(), 0});
  if (--ranks_computing_ > 0) return;
  // Equal-time events run in scheduling order, so on a tie the highest rank counts as the slowest.
  slowest_rank_ = rank;
  all_reduce_start_ = sim_.now();
  sim_.schedule<&DataParallelJob::end_all_reduce>(all_reduce_start_ + all_reduce_duration_, this);
}

void DataParallelJob::end_all_reduce() {
  const Time end = sim_.now();
  for (std::int64_t r = 0; r < config_.ranks; ++r) {
    const Time compute_end = compute_end_[static_cast<std::size_t>(r)];
    ops_.append(OpRow{r, steps_completed_, "all_reduce", all_reduce_start_.ps(), end.ps(),
                      config_.gradient_size.count()});
    rank_steps_.append(RankStepRow{r, steps_completed_, (compute_end - step_start_).ps(),
                                   (all_reduce_start_ - compute_end).ps(),
                                   (end - all_reduce_start_).ps()});
  }
  steps_.append(StepRow{steps_completed_, step_start_.ps(), end.ps(), slowest_rank_,
                        all_reduce_duration_.ps()});
  ++steps_completed_;
  if (steps_completed_ < config_.steps) begin_step();
}

void DataParallelJob::flush() {
  ops_.flush();
  rank_steps_.flush();
  steps_.flush();
}

}  // namespace lockstep
