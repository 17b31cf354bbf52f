#include "models/cc/dcqcn_params.hpp"

namespace lockstep {
namespace {

constexpr BitRate mbps(std::int64_t v) { return BitRate::bps(v * 1'000'000); }

}  // namespace

DcqcnParams DcqcnParams::paper(BitRate line) {
  DcqcnParams p;
  p.line_rate = line;
  // The paper sets no floor. Its DCQCN ran in ConnectX-3 Pro firmware, whose floor is 1 Mb/s.
  p.min_rate = mbps(1);
  p.alpha_gain = 1.0 / 256;
  p.alpha_update_period = Duration::us(55);
  p.rate_increase_period = Duration::us(55);
  p.rate_increase_bytes = Bytes(10'000'000);  // "10 MB", KB = 1000 B as in reference.md
  p.fast_recovery_stages = 5;
  p.additive_increase = mbps(40);
  // The paper gives R_AI only and defers hyper increase to QCN, whose defaults (R_AI 5, R_HAI
  // 50 Mb/s, kept by the firmware) and HPCC's profile (20, 200) both use R_HAI = 10 R_AI.
  p.hyper_increase = mbps(400);
  p.hyper_increase_growth = HyperIncreaseGrowth::kLinearInStage;
  p.target_on_cut = TargetOnCut::kAlwaysClamp;
  p.min_cut_interval = Duration();
  p.cnp_interval = Duration::us(50);
  return p;
}

DcqcnParams DcqcnParams::nic_firmware(BitRate line) {
  DcqcnParams p;
  p.line_rate = line;
  p.min_rate = mbps(1);
  // DCE_TCP_G = 1019 is the weight the old alpha keeps in a 10-bit fixed-point moving average,
  // updated once per DCE_TCP_RTT (1 us):
  //   alpha' = (1019 alpha + (1024 - 1019) x 1024 x [a CNP came in the period]) / 1024,
  // with alpha scaled so that 1024 stands for 1 (RPG_GD = 11 then cuts by alpha / 2^11, which is
  // the paper's alpha / 2). The paper's g is therefore 5/1024 (about 1/205), a little above 1/256.
  // Taking 1019/1024 as g would make alpha remember only the last microsecond. Alpha is a double
  // here; the firmware's truncation to integers is left out.
  constexpr double kFirmwareGain = 1019.0;
  constexpr double kFixedPointOne = 1024.0;
  p.alpha_gain = (kFixedPointOne - kFirmwareGain) / kFixedPointOne;
  p.alpha_update_period = Duration::us(1);
  p.rate_increase_period = Duration::us(300);
  p.rate_increase_bytes = Bytes(32'767);
  // RPG_THRESHOLD defaults to 1 (not listed in reference.md); ns-3's Mellanox model uses 1 too.
  p.fast_recovery_stages = 1;
  p.additive_increase = mbps(5);
  p.hyper_increase = mbps(50);
  // The firmware's RPG_HAI_RATE is documented as the rate added in hyper increase, with no stage
  // multiplier; ns-3's model of this firmware adds it unscaled.
  p.hyper_increase_growth = HyperIncreaseGrowth::kConstant;
  p.target_on_cut = TargetOnCut::kClampAfterTimerIncrease;
  p.min_cut_interval = Duration::us(4);  // RATE_REDUCE_MONITOR_PERIOD
  p.cnp_interval = Duration::us(4);      // MIN_TIME_BETWEEN_CNPS
  return p;
}

DcqcnParams DcqcnParams::hpcc_reference(BitRate line) {
  DcqcnParams p;
  p.line_rate = line;
  p.min_rate = BitRate::gbps(1);
  p.alpha_gain = 1.0 / 256;
  p.alpha_update_period = Duration::us(1);
  p.rate_increase_period = Duration::us(300);
  p.rate_increase_bytes = Bytes(0);  // ns-3's Mellanox model has the rate timer only
  p.fast_recovery_stages = 1;
  p.additive_increase = mbps(20);
  p.hyper_increase = mbps(200);
  p.hyper_increase_growth = HyperIncreaseGrowth::kConstant;
  p.target_on_cut = TargetOnCut::kClampAfterTimerIncrease;
  // ns-3 checks every 4 us whether a CNP arrived and cuts once if so; merging cuts closer than 4 us
  // gives the same number of cuts without a periodic check (see dcqcn.hpp).
  p.min_cut_interval = Duration::us(4);
  // The receiver there echoes every CE mark in the ACK; the reaction point does the merging.
  p.cnp_interval = Duration();
  p.cnp_carrier = CnpCarrier::kAckOrNack;
  return p;
}

std::vector<std::string> DcqcnParams::problems() const {
  std::vector<std::string> found;
  if (line_rate.bps() <= 0) found.emplace_back("line_rate must be positive");
  if (min_rate.bps() <= 0) found.emplace_back("min_rate must be positive");
  if (min_rate > line_rate) found.emplace_back("min_rate must not exceed line_rate");
  if (!(alpha_gain > 0.0 && alpha_gain <= 1.0)) {
    found.emplace_back("alpha_gain must be in (0, 1]");
  }
  if (alpha_update_period <= Duration()) found.emplace_back("alpha_update_period must be positive");
  if (rate_increase_period <= Duration()) {
    found.emplace_back("rate_increase_period must be positive");
  }
  if (rate_increase_bytes < Bytes(0)) {
    found.emplace_back("rate_increase_bytes must not be negative (0 turns the byte counter off)");
  }
  if (fast_recovery_stages < 0) found.emplace_back("fast_recovery_stages must not be negative");
  if (additive_increase.bps() < 0) found.emplace_back("additive_increase must not be negative");
  if (hyper_increase.bps() < 0) found.emplace_back("hyper_increase must not be negative");
  if (min_cut_interval < Duration()) found.emplace_back("min_cut_interval must not be negative");
  if (cnp_interval < Duration()) found.emplace_back("cnp_interval must not be negative");
  return found;
}

}  // namespace lockstep
