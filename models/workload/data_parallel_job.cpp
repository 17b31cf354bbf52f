#include "models/workload/data_parallel_job.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "models/collective/channel_rings.hpp"

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
                                 std::uint64_t seed, RecordBackend& output, Network* network,
                                 std::int32_t gpus_per_node)
    : sim_(sim),
      config_(config),
      network_(nullptr),
      gpus_per_node_(gpus_per_node),
      all_reduce_duration_(network != nullptr
                               ? Duration()
                               : all_reduce_time(config.all_reduce.algorithm, config.ranks,
                                                 config.gradient_size, config.all_reduce.cost())),
      all_reduce_end_(static_cast<std::size_t>(config.ranks)),
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
  if (network == nullptr) return;
  std::vector<std::int32_t> placement = config.placement;
  if (placement.empty()) {
    for (std::int32_t r = 0; r < static_cast<std::int32_t>(config.ranks); ++r) {
      placement.push_back(r);
    }
  }
  if (static_cast<std::int64_t>(placement.size()) != config.ranks) {
    throw std::invalid_argument("the placement places " + std::to_string(placement.size()) +
                                " ranks; the job has " + std::to_string(config.ranks));
  }
  // As NCCL lays a communicator out, by node (communicator.hpp); a default placement that fills
  // its last node in part keeps one ring in rank order instead, as if every rank had a node.
  CommunicatorLayout layout;
  try {
    layout = communicator_layout(placement, network->endpoint_count(), gpus_per_node);
  } catch (const std::invalid_argument&) {
    if (!config.placement.empty()) throw;
    layout = CommunicatorLayout{placement, static_cast<std::int32_t>(placement.size()), 1};
  }
  gpus_per_node_ = layout.gpus_per_node;
  nodes_ = layout.nodes;
  std::vector<std::int32_t> local_of_member(static_cast<std::size_t>(network->endpoint_count()));
  for (std::size_t local = 0; local < layout.members.size(); ++local) {
    local_of_member[static_cast<std::size_t>(layout.members[local])] =
        static_cast<std::int32_t>(local);
  }
  local_of_rank_.resize(placement.size());
  job_rank_of_local_.resize(placement.size());
  for (std::size_t r = 0; r < placement.size(); ++r) {
    const std::int32_t local = local_of_member[static_cast<std::size_t>(placement[r])];
    local_of_rank_[r] = local;
    job_rank_of_local_[static_cast<std::size_t>(local)] = static_cast<std::int64_t>(r);
  }
  communicator_ = std::make_unique<CommunicatorNetwork>(*network, layout.members);
  network_ = communicator_.get();
}

Duration DataParallelJob::all_reduce_duration() const {
  if (network_ == nullptr || steps_completed_ == 0) return all_reduce_duration_;
  return Duration::ps(all_reduce_duration_.ps() / steps_completed_);
}

std::unique_ptr<RingCollective> DataParallelJob::network_all_reduce() {
  // NCCL's rings over the communicator's nodes: a channel per GPU of a node, rail-aligned.
  std::vector<std::vector<std::int32_t>> rings =
      rail_aligned_rings(nodes_, gpus_per_node_, gpus_per_node_);
  // The job's communicator has queue pairs of its own, as NCCL opens its own: its messages never
  // queue behind other traffic's on one queue pair.
  constexpr std::uint32_t kJobQueuePairs = 1U << 20;
  auto collective = std::make_unique<RingCollective>(
      sim_, *network_, std::move(rings), CollectiveOp::kAllReduce, config_.gradient_size,
      ProtocolOverheads{NcclProtocol::kSimple, gpus_per_node_}, kJobQueuePairs);
  collective->when_rank_finished([this](std::int32_t local, Time at) {
    all_reduce_end_[static_cast<std::size_t>(job_rank_of_local_[static_cast<std::size_t>(local)])] =
        at;
  });
  collective->when_finished([this] { end_all_reduce(); });
  return collective;
}

void DataParallelJob::start() {
  if (config_.steps > 0) sim_.schedule<&DataParallelJob::begin_step>(sim_.now(), this);
}

void DataParallelJob::begin_step() {
  step_start_ = sim_.now();
  ranks_computing_ = config_.ranks;
  if (network_ != nullptr) {
    while (!finished_collectives_.empty() && finished_collectives_.front()->settled()) {
      finished_collectives_.pop_front();
    }
    if (collective_) finished_collectives_.push_back(std::move(collective_));
    collective_ = network_all_reduce();
  }
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
  if (collective_) collective_->arrive(local_of_rank_[static_cast<std::size_t>(rank)], sim_.now());
  if (--ranks_computing_ > 0) return;
  // Equal-time events run in scheduling order, so on a tie the highest rank counts as the slowest.
  slowest_rank_ = rank;
  all_reduce_start_ = sim_.now();
  if (network_ == nullptr) {
    sim_.schedule<&DataParallelJob::end_all_reduce>(all_reduce_start_ + all_reduce_duration_, this);
  }
}

void DataParallelJob::end_all_reduce() {
  const Time end = sim_.now();
  for (std::int64_t r = 0; r < config_.ranks; ++r) {
    const Time compute_end = compute_end_[static_cast<std::size_t>(r)];
    // On a network a rank's part of the ring can end before the whole does.
    const Time rank_end = network_ != nullptr ? all_reduce_end_[static_cast<std::size_t>(r)] : end;
    ops_.append(OpRow{r, steps_completed_, "all_reduce", all_reduce_start_.ps(), rank_end.ps(),
                      config_.gradient_size.count()});
    rank_steps_.append(RankStepRow{r, steps_completed_, (compute_end - step_start_).ps(),
                                   (all_reduce_start_ - compute_end).ps(),
                                   (end - all_reduce_start_).ps()});
  }
  const Duration all_reduce = end - all_reduce_start_;
  steps_.append(
      StepRow{steps_completed_, step_start_.ps(), end.ps(), slowest_rank_, all_reduce.ps()});
  if (network_ != nullptr) all_reduce_duration_ += all_reduce;
  ++steps_completed_;
  if (steps_completed_ < config_.steps) {
    begin_step();
  } else if (on_done_) {
    on_done_();
  }
}

void DataParallelJob::flush() {
  ops_.flush();
  rank_steps_.flush();
  steps_.flush();
}

}  // namespace lockstep
