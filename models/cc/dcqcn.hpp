// DCQCN's end-host state machines (Zhu et al., "Congestion Control for Large-Scale RDMA
// Deployments", SIGCOMM'15, section 3.1 and its RP state machine figure; reference.md section 5):
// the reaction point (RP), one per sending flow, which cuts its rate on a CNP and recovers it by
// timer and byte counter through fast recovery, additive and hyper increase; and the notification
// point (NP), one per receiving flow, which turns CE-marked packets into at most one CNP per
// interval. They are pure: no simulator, no scheduling, no I/O. The NIC owns every timer and calls
// in when one expires (below). Left out: the congestion point (ECN marking, models/fabric), QCN's
// randomised timer and its halved byte counter in active increase, and the firmware's integer
// arithmetic for alpha. Units: BitRate (integer bits/s), Time/Duration (picoseconds), Bytes; alpha
// is a double in [0, 1].
//
// Rate arithmetic is exact integer arithmetic except the cut: R_C (1 - alpha/2) is computed in
// double and rounded down (a cut is never smaller than the formula's). The average (R_T + R_C)/2 is
// rounded towards R_T (R_T >= R_C always holds): the gap to the target then goes d -> floor(d/2),
// reaches zero, and a flow recovers to exactly its target instead of stalling 1 b/s short of it.
//
// Where the references differ, this follows the firmware and ns-3's model of it; the paper's own
// fluid model (Zhu et al., CoNEXT'16) also updates alpha at most once per period.
// - Alpha rises at most once per alpha period: on the period's first CNP, at once,
//   alpha = (1-g) alpha + g; the period's expiry then leaves alpha alone. A period without a CNP
//   ends with alpha = (1-g) alpha. With CNPs at least one alpha period apart this is exactly the
//   paper's rule; ns-3 applies the same rise at the end of the period instead.
// - A CNP always counts towards alpha, even when it may not cut the rate yet.
// - A CNP less than min_cut_interval after the last cut does not cut at once: the cut is deferred
//   to (last cut + min_cut_interval), and further CNPs before then merge into it. This is the
//   firmware's "minimum time between two rate reductions; a reduction happens only if a CNP
//   arrived in the interval", except that a first cut is taken at once rather than at the next
//   period boundary. Dropping such CNPs instead would alias with the NP's own 4 us spacing and
//   lose cuts to jitter.
// - An immediate cut uses alpha before this CNP's update (the paper's order); a deferred cut uses
//   alpha as it stands when the cut is made, which includes the CNP's update (as ns-3 does).
// - Before the first CNP the flow has no congestion state (the firmware allocates its rate
//   limiter at the first CNP; ns-3 sets alpha = 1 then): alpha expiries are ignored, so alpha is
//   1 at the first cut however long the flow ran uncongested.
//
// How a NIC drives a reaction point. The timers are the NIC's; the RP needs only the calls in
// order of simulated time, so a NIC may apply expiries lazily (when the flow next sends or gets a
// CNP) provided it replays them in time order before the event that caught them up.
// - Every data packet put on the wire: on_bytes_sent(size); byte-counter increases happen inside.
// - Every CNP: on_cnp(now), then act on the result:
//     kRateCut: re-pace at rate() and restart the rate timer, next expiry now + T.
//     kCutDeferred: at deferred_cut_time() call on_deferred_cut(that time), then as for kRateCut.
//     kMergedIntoPendingCut: nothing; the deferred cut already due covers this CNP.
// - The alpha timer: on_alpha_timer(t) every alpha_update_period for the life of the flow
//   (expiries before the first CNP are ignored, so it may run from the start);
//   on_alpha_timers(count, t) replays `count` consecutive expiries at once. Alpha and increase
//   events do not interact, so only their order relative to cuts matters; expiries at the same
//   instant as a cut go first.
// - The rate timer: on_rate_timer(t) every rate_increase_period, restarted by each cut. While
//   at_line_rate(), increase events change nothing, so the NIC may stop it until the next cut.
#pragma once

#include <cstdint>
#include <optional>

#include "models/cc/dcqcn_params.hpp"
#include "sim/core/bit_rate.hpp"
#include "sim/core/bytes.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

enum class CnpOutcome {
  kRateCut,               // the rate was cut now
  kCutDeferred,           // a cut is due at deferred_cut_time(); the NIC must call on_deferred_cut
  kMergedIntoPendingCut,  // a deferred cut was already due; this CNP adds only to alpha
};

class DcqcnReactionPoint final {
 public:
  // Keeps a pointer to `params` (one per NIC or per traffic class), which must outlive this object.
  explicit DcqcnReactionPoint(const DcqcnParams& params);
  explicit DcqcnReactionPoint(const DcqcnParams&& params) = delete;

  [[nodiscard]] CnpOutcome on_cnp(Time now);
  void on_deferred_cut(Time now);
  void on_alpha_timer(Time now);
  // `count` consecutive alpha expiries, the last at `last`: the first honours a CNP seen in its
  // period, the others decay alpha by (1-g) each: alpha is multiplied by std::pow(1-g, quiet
  // periods), equal to that many calls of on_alpha_timer to within rounding.
  void on_alpha_timers(std::int64_t count, Time last);
  void on_rate_timer(Time now);
  void on_bytes_sent(Bytes sent);

  [[nodiscard]] BitRate rate() const { return rate_; }
  [[nodiscard]] BitRate target_rate() const { return target_; }
  [[nodiscard]] double alpha() const { return alpha_; }
  [[nodiscard]] std::int64_t timer_stage() const { return timer_stage_; }
  [[nodiscard]] std::int64_t byte_stage() const { return byte_stage_; }
  [[nodiscard]] bool at_line_rate() const {
    return rate_ == params_->line_rate && target_ == params_->line_rate;
  }
  [[nodiscard]] bool cut_pending() const { return cut_pending_; }
  // Meaningful only while cut_pending().
  [[nodiscard]] Time deferred_cut_time() const { return *last_cut_ + params_->min_cut_interval; }
  [[nodiscard]] const DcqcnParams& params() const { return *params_; }

 private:
  enum class IncreaseSource { kTimer, kByteCounter };

  void cut(Time now);
  void increase(IncreaseSource source);
  void observe(Time now, const char* event);

  const DcqcnParams* params_;
  BitRate rate_;    // R_C
  BitRate target_;  // R_T
  double alpha_ = 1.0;
  bool seen_cnp_ = false;
  bool cnp_in_alpha_period_ = false;
  bool cut_pending_ = false;
  std::optional<Time> last_cut_;
  std::int64_t timer_stage_ = 0;  // rate-timer increase events since the last cut
  std::int64_t byte_stage_ = 0;   // byte-counter increase events since the last cut
  Bytes bytes_toward_next_stage_;
  Time last_seen_;  // calls must come in time order
};

class DcqcnNotificationPoint final {
 public:
  explicit DcqcnNotificationPoint(Duration cnp_interval) : cnp_interval_(cnp_interval) {}

  // Called for each CE-marked packet of the flow; true when a CNP should go back now, i.e. none was
  // sent in the last cnp_interval (a CNP exactly one interval after the previous one is allowed).
  // Marks inside the interval are dropped, not remembered for later: under congestion marks keep
  // coming, so the next one past the interval sends.
  [[nodiscard]] bool should_send_cnp(Time now);

 private:
  Duration cnp_interval_;
  std::optional<Time> last_cnp_;
};

}  // namespace lockstep
