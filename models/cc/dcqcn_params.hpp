// Parameters of DCQCN's reaction point (sender NIC) and notification point (receiver NIC), with the
// three profiles the project measures against: the paper's recommended values (Zhu et al.,
// "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM'15, as listed in reference.md
// section 5), the ConnectX NIC firmware defaults that mlxconfig reports (same section), and the
// 'dcqcn' profile of HPCC's ns-3 code that the peer simulators ran (benchmarks.md, "Congestion
// control and switches"). The switch side (RED/ECN marking: Kmin, Kmax, Pmax) belongs to
// models/fabric and is not here. Units: rates in integer bits/s, times in picoseconds (Duration),
// byte counts in bytes; the alpha gain is the dimensionless weight of the newest congestion sample
// in alpha's moving average.
#pragma once

#include <string>
#include <vector>

#include "sim/core/bit_rate.hpp"
#include "sim/core/bytes.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

// How far the target rate moves on each hyper-increase event.
enum class HyperIncreaseGrowth {
  // R_T += i R_HAI with i = min(timer stage, byte stage) - F, stages counted before this event,
  // so i = 1, 2, ...: the QCN rule (IEEE 802.1Qau) whose increase phases the SIGCOMM'15 paper
  // adopts.
  kLinearInStage,
  // R_T += R_HAI on every event: ns-3's "Mellanox" model, written to mimic ConnectX firmware.
  kConstant,
};

// How the notification point's CNP reaches the sender.
enum class CnpCarrier {
  // A CNP frame of its own, as RoCEv2 NICs send (the paper, the firmware).
  kOwnFrame,
  // A flag on the ACK or NACK that answers the marked packet, as HPCC's ns-3 code sets the CNP bit
  // of its answers (RdmaHw::ReceiveUdp): no frame of its own, so congestion adds no packets. A
  // marked packet that nothing answers (ahead of a gap whose NACK is outstanding) notifies
  // nothing, as there; this model's receiver re-sends no NACK until the gap fills, so in lossy
  // runs such silences last longer than ns-3's NACK interval.
  kAckOrNack,
};

// What a rate cut does to the target rate.
enum class TargetOnCut {
  // R_T = R_C before the cut, on every cut (the paper).
  kAlwaysClamp,
  // R_T = R_C only if the rate timer has fired since the previous cut; otherwise R_T keeps the rate
  // the flow was recovering towards. The firmware defaults CLAMP_TGT_RATE = 0 and
  // CLAMP_TGT_RATE_AFTER_TIME_INC = 1, and HPCC's ns-3 runs with CLAMP_TARGET_RATE 0.
  kClampAfterTimerIncrease,
};

struct DcqcnParams {
  BitRate line_rate;  // flows start here and never exceed it
  BitRate min_rate;   // a cut never goes below this

  // g: alpha = (1 - g) alpha + g on congestion, alpha = (1 - g) alpha otherwise, once per period.
  double alpha_gain = 0.0;
  Duration alpha_update_period;  // tau' in reference.md: the alpha timer

  Duration rate_increase_period;  // T: the rate timer
  Bytes rate_increase_bytes;     // B: the byte counter; Bytes(0) turns it off (mlxconfig's meaning)
  int fast_recovery_stages = 0;  // F
  BitRate additive_increase;     // R_AI
  BitRate hyper_increase;        // R_HAI
  HyperIncreaseGrowth hyper_increase_growth = HyperIncreaseGrowth::kLinearInStage;
  TargetOnCut target_on_cut = TargetOnCut::kAlwaysClamp;

  // A CNP sooner than this after the last cut defers its cut to the end of the interval, merged
  // with any other CNPs until then; Duration() means every CNP cuts at once (the paper).
  Duration min_cut_interval;

  // tau, at the notification point: at most one CNP per flow per interval; Duration() means one CNP
  // per CE-marked packet (ns-3 echoes every mark in the ACK).
  Duration cnp_interval;
  CnpCarrier cnp_carrier = CnpCarrier::kOwnFrame;

  // SIGCOMM'15 defaults: g 1/256, tau' 55 us, T 55 us, B 10 MB, F 5, R_AI 40 Mb/s, tau 50 us, every
  // CNP cuts. R_HAI = 400 Mb/s and min rate 1 Mb/s are not in the paper (see the .cpp).
  [[nodiscard]] static DcqcnParams paper(BitRate line);

  // ConnectX mlxconfig defaults: alpha every 1 us with DCE_TCP_G = 1019 (g = 5/1024, see the .cpp),
  // T 300 us, B 32767 B, F 1, R_AI 5 Mb/s, R_HAI 50 Mb/s, min rate 1 Mb/s, 4 us between cuts and
  // between CNPs.
  [[nodiscard]] static DcqcnParams nic_firmware(BitRate line);

  // benchmarks.md: alpha every 1 us, cuts at most every 4 us, T 300 us, no byte counter, g 1/256,
  // F 1, R_AI 20 Mb/s, R_HAI 200 Mb/s (constant), min rate 1 Gb/s, a CNP for every CE mark, carried
  // by the ACK or NACK that answers the marked packet.
  [[nodiscard]] static DcqcnParams hpcc_reference(BitRate line);

  // Every inconsistency, one sentence each, naming the field; empty when the parameters are usable.
  [[nodiscard]] std::vector<std::string> problems() const;
};

}  // namespace lockstep
