#include "models/cc/dcqcn.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/check.hpp"

namespace lockstep {
namespace {

constexpr const char* kComponent = "dcqcn reaction point";

std::string joined(const std::vector<std::string>& problems) {
  std::string text = "invalid DCQCN parameters:";
  for (const std::string& problem : problems) text += " " + problem + ";";
  return text;
}

// retained^periods, bit for bit what std::pow gives. A NIC catches a flow's alpha up when the flow
// next sends, tens of 1 us periods at a time under congestion, and pow was 2% of a congested
// 128-host run; so the usual counts come from a table of pow's own results, one per thread (runs in
// one process stay independent) and per alpha gain in use, which is usually one.
double power_of_retained(double retained, std::int64_t periods) {
  constexpr std::int64_t kTabled = 256;
  struct Powers {
    double retained;
    std::array<double, kTabled> to;
  };
  static thread_local std::vector<Powers> tables;
  if (periods >= kTabled) return std::pow(retained, static_cast<double>(periods));
  auto table = std::find_if(tables.begin(), tables.end(),
                            [&](const Powers& p) { return p.retained == retained; });
  if (table == tables.end()) {
    Powers& fresh = tables.emplace_back();
    fresh.retained = retained;
    for (std::int64_t n = 0; n < kTabled; ++n) {
      fresh.to[static_cast<std::size_t>(n)] = std::pow(retained, static_cast<double>(n));
    }
    table = tables.end() - 1;
  }
  return table->to[static_cast<std::size_t>(periods)];
}

}  // namespace

DcqcnReactionPoint::DcqcnReactionPoint(const DcqcnParams& params)
    : params_(&params), rate_(params.line_rate), target_(params.line_rate) {
  // Parameters are validated before time zero; this guards direct construction (tests, tools).
  if (const auto problems = params.problems(); !problems.empty()) {
    throw std::invalid_argument(joined(problems));
  }
}

void DcqcnReactionPoint::observe(Time now, const char* event) {
  LOCKSTEP_CHECK(now >= last_seen_, now, kComponent,
                 std::string(event) + " arrived earlier than a previous call");
  last_seen_ = now;
}

CnpOutcome DcqcnReactionPoint::on_cnp(Time now) {
  observe(now, "a CNP");
  seen_cnp_ = true;
  CnpOutcome outcome = CnpOutcome::kMergedIntoPendingCut;
  if (!cut_pending_) {
    if (!last_cut_ || now - *last_cut_ >= params_->min_cut_interval) {
      cut(now);
      outcome = CnpOutcome::kRateCut;
    } else {
      cut_pending_ = true;
      outcome = CnpOutcome::kCutDeferred;
    }
  }
  // After the cut: the paper cuts with the alpha that preceded this CNP.
  if (!cnp_in_alpha_period_) {
    alpha_ = (1.0 - params_->alpha_gain) * alpha_ + params_->alpha_gain;
    cnp_in_alpha_period_ = true;
  }
  return outcome;
}

void DcqcnReactionPoint::on_deferred_cut(Time now) {
  observe(now, "a deferred cut");
  LOCKSTEP_CHECK(cut_pending_, now, kComponent, "deferred cut fired with no cut pending");
  LOCKSTEP_CHECK(now >= deferred_cut_time(), now, kComponent, "deferred cut fired early");
  cut(now);
}

void DcqcnReactionPoint::cut(Time now) {
  if (params_->target_on_cut == TargetOnCut::kAlwaysClamp || timer_stage_ > 0) target_ = rate_;
  const double reduced = std::floor(static_cast<double>(rate_.bps()) * (1.0 - alpha_ / 2.0));
  rate_ = std::max(params_->min_rate, BitRate::bps(static_cast<std::int64_t>(reduced)));
  timer_stage_ = 0;
  byte_stage_ = 0;
  bytes_toward_next_stage_ = Bytes(0);
  last_cut_ = now;
  cut_pending_ = false;
}

void DcqcnReactionPoint::on_alpha_timer(Time now) { on_alpha_timers(1, now); }

void DcqcnReactionPoint::on_alpha_timers(std::int64_t count, Time last) {
  observe(last, "an alpha expiry");
  LOCKSTEP_CHECK(count >= 1, last, kComponent, "alpha expiries replayed with a count below one");
  if (!seen_cnp_) return;
  // A period that saw a CNP already raised alpha when the CNP came; only the quiet ones decay.
  const std::int64_t quiet_periods = cnp_in_alpha_period_ ? count - 1 : count;
  cnp_in_alpha_period_ = false;
  if (quiet_periods == 1) {
    alpha_ *= 1.0 - params_->alpha_gain;
  } else if (quiet_periods > 1) {
    alpha_ *= power_of_retained(1.0 - params_->alpha_gain, quiet_periods);
  }
}

void DcqcnReactionPoint::on_rate_timer(Time now) {
  observe(now, "a rate-timer expiry");
  increase(IncreaseSource::kTimer);
}

void DcqcnReactionPoint::on_bytes_sent(Bytes sent) {
  const Bytes per_stage = params_->rate_increase_bytes;
  if (per_stage <= Bytes(0)) return;
  bytes_toward_next_stage_ += sent;
  while (bytes_toward_next_stage_ >= per_stage) {
    bytes_toward_next_stage_ -= per_stage;
    increase(IncreaseSource::kByteCounter);
  }
}

void DcqcnReactionPoint::increase(IncreaseSource source) {
  const DcqcnParams& p = *params_;
  // The phase depends on how many increase events each counter had since the last cut, this one
  // not included, so each counter gives exactly F fast-recovery steps. Without a byte counter the
  // timer alone decides (ns-3's model): stage F is additive, beyond it hyper.
  const bool byte_counter_on = p.rate_increase_bytes > Bytes(0);
  const std::int64_t leading = byte_counter_on ? std::max(timer_stage_, byte_stage_) : timer_stage_;
  const std::int64_t lagging = byte_counter_on ? std::min(timer_stage_, byte_stage_) : timer_stage_;
  const std::int64_t stages = p.fast_recovery_stages;
  const std::int64_t headroom = p.line_rate.bps() - target_.bps();
  std::int64_t step = 0;  // fast recovery leaves the target where the last cut put it
  if (lagging > stages) {
    const std::int64_t hyper_round =
        p.hyper_increase_growth == HyperIncreaseGrowth::kLinearInStage ? lagging - stages : 1;
    const std::int64_t per_round = p.hyper_increase.bps();
    // Saturate rather than overflow when a flow sat at line rate for very many rounds.
    step = per_round > 0 && hyper_round > headroom / per_round ? headroom : hyper_round * per_round;
  } else if (leading >= stages) {
    step = p.additive_increase.bps();
  }
  target_ = BitRate::bps(target_.bps() + std::min(step, headroom));
  LOCKSTEP_CHECK(target_ >= rate_, last_seen_, kComponent, "target rate fell below the rate");
  const std::int64_t gap = target_.bps() - rate_.bps();
  rate_ = BitRate::bps(rate_.bps() + (gap + 1) / 2);
  if (source == IncreaseSource::kTimer) {
    ++timer_stage_;
  } else {
    ++byte_stage_;
  }
}

bool DcqcnNotificationPoint::should_send_cnp(Time now) {
  if (last_cnp_ && now - *last_cnp_ < cnp_interval_) return false;
  last_cnp_ = now;
  return true;
}

}  // namespace lockstep
