#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>

#include "models/cc/dcqcn.hpp"
#include "sim/core/check.hpp"

namespace lockstep {
namespace {

Time at_us(std::int64_t us) { return Time::zero() + Duration::us(us); }
Time at_ns(std::int64_t ns) { return Time::zero() + Duration::ns(ns); }
BitRate mbps(std::int64_t v) { return BitRate::bps(v * 1'000'000); }

// Line rate 40 Gb/s, alpha = 1 (no congestion state yet): R_T = R_C = 40 Gb/s,
// R_C = 40 (1 - 1/2) = 20 Gb/s, alpha = (1 - g) 1 + g = 1.
TEST_CASE("a DCQCN sender halves its rate on a CNP at alpha 1 and targets the rate it had") {
  const DcqcnParams params = DcqcnParams::paper(BitRate::gbps(40));
  DcqcnReactionPoint rp(params);
  CHECK(rp.rate() == BitRate::gbps(40));
  CHECK(rp.alpha() == 1.0);
  CHECK(rp.on_cnp(at_us(0)) == CnpOutcome::kRateCut);
  CHECK(rp.rate() == BitRate::gbps(20));
  CHECK(rp.target_rate() == BitRate::gbps(40));
  CHECK(rp.alpha() == 1.0);
}

// Alpha expiries before the first CNP are ignored, so alpha is still 1 at the first cut. The period
// holding that CNP ends without decay (the CNP already raised alpha); ten quiet periods then leave
// a = (255/256)^10 = 0.961617. The next CNP cuts with that a, R_C = floor(20 Gb/s (1 - a/2)) =
// 10.38383 Gb/s, sets R_T = 20 Gb/s, and only then moves alpha to (1 - g) a + g = 0.961767.
TEST_CASE("DCQCN alpha decays per quiet period, and a CNP cuts with alpha before raising it") {
  const DcqcnParams params = DcqcnParams::paper(BitRate::gbps(40));
  DcqcnReactionPoint rp(params);
  rp.on_alpha_timer(at_us(55));
  rp.on_alpha_timer(at_us(110));
  CHECK(rp.alpha() == 1.0);
  CHECK(rp.on_cnp(at_us(120)) == CnpOutcome::kRateCut);
  rp.on_alpha_timer(at_us(165));
  CHECK(rp.alpha() == 1.0);
  for (int k = 1; k <= 10; ++k) rp.on_alpha_timer(at_us(165 + 55 * k));
  const double a = std::pow(255.0 / 256.0, 10);
  CHECK(rp.alpha() == doctest::Approx(a).epsilon(1e-12));
  CHECK(rp.alpha() == doctest::Approx(0.961617).epsilon(1e-6));

  CHECK(rp.on_cnp(at_us(800)) == CnpOutcome::kRateCut);
  const double cut = std::floor(20e9 * (1.0 - a / 2.0));
  CHECK(rp.rate().bps() == static_cast<std::int64_t>(cut));
  CHECK(rp.rate().bps() / 10'000 == 1'038'382);  // 10.38383 Gb/s
  CHECK(rp.target_rate() == BitRate::gbps(20));
  CHECK(rp.alpha() == doctest::Approx(a * 255.0 / 256.0 + 1.0 / 256.0).epsilon(1e-12));
}

// After k quiet periods alpha = (1 - g)^k; replaying k expiries at once gives the same. Two CNPs in
// one alpha period raise alpha once: (1 - g) a + g, not twice.
TEST_CASE("DCQCN alpha decay over k quiet periods is (1 - g)^k however the expiries are replayed") {
  const DcqcnParams params = DcqcnParams::paper(BitRate::gbps(40));
  DcqcnReactionPoint one_by_one(params);
  DcqcnReactionPoint at_once(params);
  CHECK(one_by_one.on_cnp(at_us(0)) == CnpOutcome::kRateCut);
  CHECK(at_once.on_cnp(at_us(0)) == CnpOutcome::kRateCut);
  one_by_one.on_alpha_timer(at_us(55));  // the CNP's own period: no decay
  const int k = 40;
  for (int i = 1; i <= k; ++i) one_by_one.on_alpha_timer(at_us(55 + 55 * i));
  at_once.on_alpha_timers(k + 1, at_us(55 + 55 * k));
  const double expected = std::pow(1.0 - 1.0 / 256.0, k);
  CHECK(one_by_one.alpha() == doctest::Approx(expected).epsilon(1e-12));
  CHECK(at_once.alpha() == doctest::Approx(expected).epsilon(1e-12));

  // Two CNPs 10 us apart, inside one 55 us period.
  CHECK(one_by_one.on_cnp(at_us(3000)) == CnpOutcome::kRateCut);
  CHECK(one_by_one.on_cnp(at_us(3010)) == CnpOutcome::kRateCut);
  CHECK(one_by_one.alpha() ==
        doctest::Approx(expected * (1.0 - 1.0 / 256.0) + 1.0 / 256.0).epsilon(1e-12));
}

// Catch-ups replay many quiet periods at once; the decay they apply is exactly std::pow's, for
// counts below and above those the reaction point keeps ready, and for two gains used alternately.
TEST_CASE("DCQCN alpha decay over many quiet periods at once is exactly std::pow(1 - g, k)") {
  const DcqcnParams paper = DcqcnParams::paper(BitRate::gbps(100));
  const DcqcnParams firmware = DcqcnParams::nic_firmware(BitRate::gbps(100));
  REQUIRE(paper.alpha_gain != firmware.alpha_gain);
  for (const std::int64_t quiet : {2, 37, 255, 256, 1000}) {
    for (const DcqcnParams* params : {&paper, &firmware}) {
      CAPTURE(quiet);
      CAPTURE(params->alpha_gain);
      DcqcnReactionPoint rp(*params);
      CHECK(rp.on_cnp(at_us(0)) == CnpOutcome::kRateCut);
      const double before = rp.alpha();
      rp.on_alpha_timers(quiet + 1, Time::zero() + params->alpha_update_period * (quiet + 1));
      CHECK(rp.alpha() == before * std::pow(1.0 - params->alpha_gain, static_cast<double>(quiet)));
    }
  }
}

// Cut from 40 to 20 Gb/s with R_T = 40 Gb/s: each fast-recovery step R_C = (R_T + R_C)/2 halves the
// gap of 20 Gb/s exactly, so after step k R_C = 40 - 20/2^k Gb/s: 30, 35, 37.5, 38.75, 39.375, and
// R_T does not move.
TEST_CASE("DCQCN fast recovery halves the gap to the target on each of its F steps") {
  const DcqcnParams params = DcqcnParams::paper(BitRate::gbps(40));
  DcqcnReactionPoint rp(params);
  CHECK(rp.on_cnp(at_us(0)) == CnpOutcome::kRateCut);
  const std::int64_t expected[] = {30'000'000'000, 35'000'000'000, 37'500'000'000, 38'750'000'000,
                                   39'375'000'000};
  for (int step = 0; step < params.fast_recovery_stages; ++step) {
    rp.on_rate_timer(at_us(55 * (step + 1)));
    CHECK(rp.rate().bps() == expected[step]);
    CHECK(rp.target_rate() == BitRate::gbps(40));
  }
  CHECK(rp.timer_stage() == 5);
}

// Two CNPs 1 us apart (the paper cuts on every CNP, alpha stays 1): 40 -> 20 Gb/s with R_T = 40,
// then R_T = 20, R_C = 10 Gb/s. Five fast-recovery steps: R_C = 20 - 10/32 = 19.6875 Gb/s. The
// sixth timer event (stage F = 5) is additive: R_T = 20.04, gap 352.5 Mb/s halves to 176.25, R_C
// = 19.86375; the seventh: R_T = 20.08, gap 216.25 -> 108.125, R_C = 19.971875 Gb/s.
TEST_CASE(
    "DCQCN additive increase raises the target by R_AI per increase event after fast recovery") {
  const DcqcnParams params = DcqcnParams::paper(BitRate::gbps(40));
  DcqcnReactionPoint rp(params);
  CHECK(rp.on_cnp(at_us(0)) == CnpOutcome::kRateCut);
  CHECK(rp.on_cnp(at_us(1)) == CnpOutcome::kRateCut);
  CHECK(rp.rate() == BitRate::gbps(10));
  CHECK(rp.target_rate() == BitRate::gbps(20));
  for (int step = 1; step <= 5; ++step) rp.on_rate_timer(at_us(1 + 55 * step));
  CHECK(rp.rate().bps() == 19'687'500'000);
  CHECK(rp.target_rate() == BitRate::gbps(20));
  rp.on_rate_timer(at_us(1 + 55 * 6));
  CHECK(rp.target_rate().bps() == 20'040'000'000);
  CHECK(rp.rate().bps() == 19'863'750'000);
  rp.on_rate_timer(at_us(1 + 55 * 7));
  CHECK(rp.target_rate().bps() == 20'080'000'000);
  CHECK(rp.rate().bps() == 19'971'875'000);
}

// Paper rule with a 1000 B byte counter. After the double cut (R_T = 20 Gb/s): six timer events
// (five fast recovery, one additive) give R_T = 20.04. Six byte-counter events find the timer past
// F but the byte counter not: additive, R_T = 20.28. Now both counters are past F = 5 and hyper
// increase adds i R_HAI, i = min(stages) - F: timer (6, 6): i = 1, R_T = 20.68; byte (7, 6): i = 1,
// 21.08; timer (7, 7): i = 2, 21.88 Gb/s.
TEST_CASE("DCQCN hyper increase starts when both counters passed F and grows with the stage") {
  DcqcnParams params = DcqcnParams::paper(BitRate::gbps(40));
  params.rate_increase_bytes = Bytes(1000);
  DcqcnReactionPoint rp(params);
  CHECK(rp.on_cnp(at_us(0)) == CnpOutcome::kRateCut);
  CHECK(rp.on_cnp(at_us(1)) == CnpOutcome::kRateCut);
  for (int step = 1; step <= 6; ++step) rp.on_rate_timer(at_us(1 + 55 * step));
  CHECK(rp.target_rate().bps() == 20'040'000'000);
  rp.on_bytes_sent(Bytes(6000));
  CHECK(rp.byte_stage() == 6);
  CHECK(rp.target_rate().bps() == 20'280'000'000);
  rp.on_rate_timer(at_us(1 + 55 * 7));
  CHECK(rp.target_rate().bps() == 20'680'000'000);
  rp.on_bytes_sent(Bytes(1000));
  CHECK(rp.target_rate().bps() == 21'080'000'000);
  rp.on_rate_timer(at_us(1 + 55 * 8));
  CHECK(rp.target_rate().bps() == 21'880'000'000);
  CHECK(rp.rate() <= rp.target_rate());
}

// HPCC's profile at 100 Gb/s: F = 1, timer only, R_HAI constant, target kept unless the timer fired
// since the last cut. CNP at 0: R_C = 50, R_T stays 100. Timer (stage 0, fast recovery): R_C = 75.
// CNP at 301 us: the timer fired, so R_T = 75, R_C = 37.5 (alpha is still 1: no alpha expiry ran).
// Timer stage 0: fast recovery, R_C = 56.25; stage 1 = F: additive, R_T = 75.02; stages 2 and 3:
// hyper, R_T = 75.22 then 75.42 Gb/s (+200 Mb/s each, not growing).
TEST_CASE("DCQCN hyper increase in the ns-3 profile adds a constant R_HAI on the timer alone") {
  const DcqcnParams params = DcqcnParams::hpcc_reference(BitRate::gbps(100));
  DcqcnReactionPoint rp(params);
  CHECK(rp.on_cnp(at_us(0)) == CnpOutcome::kRateCut);
  CHECK(rp.rate() == BitRate::gbps(50));
  CHECK(rp.target_rate() == BitRate::gbps(100));
  rp.on_rate_timer(at_us(300));
  CHECK(rp.rate() == BitRate::gbps(75));
  CHECK(rp.on_cnp(at_us(301)) == CnpOutcome::kRateCut);
  CHECK(rp.target_rate() == BitRate::gbps(75));
  CHECK(rp.rate().bps() == 37'500'000'000);
  rp.on_bytes_sent(Bytes(1'000'000'000));  // no byte counter: nothing happens
  CHECK(rp.byte_stage() == 0);
  rp.on_rate_timer(at_us(601));
  CHECK(rp.rate().bps() == 56'250'000'000);
  CHECK(rp.target_rate() == BitRate::gbps(75));
  rp.on_rate_timer(at_us(901));
  CHECK(rp.target_rate().bps() == 75'020'000'000);
  rp.on_rate_timer(at_us(1201));
  CHECK(rp.target_rate().bps() == 75'220'000'000);
  rp.on_rate_timer(at_us(1501));
  CHECK(rp.target_rate().bps() == 75'420'000'000);
}

// Cuts at alpha = 1 halve the rate: 40 Gb/s / 2^16 = 0.61 Mb/s would be below the 1 Mb/s floor, so
// from the 16th cut on R_C = 1 Mb/s. Increase events then climb by at most R_AI per event on the
// target and never pass 40 Gb/s; once R_T reaches it the gap halves (rounded towards R_T) to zero.
TEST_CASE("a DCQCN sender's rate stays between its minimum and the line rate") {
  const DcqcnParams params = DcqcnParams::paper(BitRate::gbps(40));
  DcqcnReactionPoint rp(params);
  for (int k = 0; k < 40; ++k) CHECK(rp.on_cnp(at_us(k)) == CnpOutcome::kRateCut);
  CHECK(rp.rate() == mbps(1));
  CHECK(rp.target_rate() == mbps(1));
  for (int k = 1; k <= 2000; ++k) {
    rp.on_rate_timer(at_us(40 + 55 * k));
    REQUIRE(rp.rate() <= BitRate::gbps(40));
    REQUIRE(rp.target_rate() <= BitRate::gbps(40));
    REQUIRE(rp.rate() <= rp.target_rate());
  }
  CHECK(rp.at_line_rate());
}

// Firmware: 4 us between cuts. CNP at 0 cuts 100 -> 50 Gb/s. CNP at 2 us is deferred to 4 us, CNP
// at 3 us merges into it; at 4 us one cut, 50 -> 25 (alpha 1: no alpha expiry ran). CNP at 8 us is
// 4 us after that cut, so it cuts at once: 12.5 Gb/s. No rate timer fired, so R_T stays at 100 Gb/s
// (CLAMP_TGT_RATE_AFTER_TIME_INC).
TEST_CASE("DCQCN firmware merges CNPs inside the minimum interval into one deferred cut") {
  const DcqcnParams params = DcqcnParams::nic_firmware(BitRate::gbps(100));
  DcqcnReactionPoint rp(params);
  CHECK(rp.on_cnp(at_us(0)) == CnpOutcome::kRateCut);
  CHECK(rp.rate() == BitRate::gbps(50));
  CHECK(rp.on_cnp(at_us(2)) == CnpOutcome::kCutDeferred);
  CHECK(rp.rate() == BitRate::gbps(50));
  CHECK(rp.cut_pending());
  CHECK(rp.deferred_cut_time() == at_us(4));
  CHECK(rp.on_cnp(at_us(3)) == CnpOutcome::kMergedIntoPendingCut);
  rp.on_deferred_cut(at_us(4));
  CHECK_FALSE(rp.cut_pending());
  CHECK(rp.rate().bps() == 25'000'000'000);
  CHECK(rp.on_cnp(at_us(8)) == CnpOutcome::kRateCut);
  CHECK(rp.rate().bps() == 12'500'000'000);
  CHECK(rp.target_rate() == BitRate::gbps(100));
}

// A CNP that may not cut yet still counts towards alpha. g = 5/1024. CNP at 0 (alpha 1), its period
// ends at 1 us without decay, the period to 2 us is quiet: a = 1 - g. CNP at 2.5 us (deferred):
// a = (1 - g)^2 + g. Expiries at 3 us (had a CNP) and 4 us (quiet), then the cut at 4 us uses
// a' = (1 - g)((1 - g)^2 + g) = 0.990282: R_C = floor(50 Gb/s (1 - a'/2)) = 25.24295 Gb/s.
TEST_CASE("a DCQCN CNP inside the minimum cut interval still raises alpha") {
  const DcqcnParams params = DcqcnParams::nic_firmware(BitRate::gbps(100));
  const double g = 5.0 / 1024.0;
  CHECK(params.alpha_gain == g);
  DcqcnReactionPoint rp(params);
  CHECK(rp.on_cnp(at_us(0)) == CnpOutcome::kRateCut);
  rp.on_alpha_timer(at_us(1));
  rp.on_alpha_timer(at_us(2));
  CHECK(rp.alpha() == doctest::Approx(1.0 - g).epsilon(1e-15));
  CHECK(rp.on_cnp(at_ns(2500)) == CnpOutcome::kCutDeferred);
  const double raised = (1.0 - g) * (1.0 - g) + g;
  CHECK(rp.alpha() == doctest::Approx(raised).epsilon(1e-15));
  rp.on_alpha_timer(at_us(3));
  rp.on_alpha_timer(at_us(4));
  rp.on_deferred_cut(at_us(4));
  const double a = (1.0 - g) * raised;
  CHECK(rp.rate().bps() == static_cast<std::int64_t>(std::floor(50e9 * (1.0 - a / 2.0))));
  CHECK(rp.rate().bps() / 10'000 == 2'524'295);
}

// The paper clamps the target on every cut: 40 -> 20 (R_T 40) -> 10 (R_T 20). The firmware keeps
// the target until the rate timer has fired since the last cut: 40 -> 20 -> 10 with R_T 40
// throughout.
TEST_CASE(
    "DCQCN firmware keeps the target on a cut unless the rate timer fired since the last cut") {
  const DcqcnParams paper = DcqcnParams::paper(BitRate::gbps(40));
  DcqcnParams firmware = DcqcnParams::nic_firmware(BitRate::gbps(40));
  firmware.min_cut_interval = Duration();
  DcqcnReactionPoint clamps(paper);
  DcqcnReactionPoint keeps(firmware);
  for (DcqcnReactionPoint* rp : {&clamps, &keeps}) {
    CHECK(rp->on_cnp(at_us(0)) == CnpOutcome::kRateCut);
    CHECK(rp->on_cnp(at_us(1)) == CnpOutcome::kRateCut);
    CHECK(rp->rate() == BitRate::gbps(10));
  }
  CHECK(clamps.target_rate() == BitRate::gbps(20));
  CHECK(keeps.target_rate() == BitRate::gbps(40));
}

// Firmware byte counter B = 32767 B: 32766 B sent is no event; one more byte is the first (fast
// recovery: R_C = (100 + 50)/2 = 75 Gb/s); 2 x 32767 B more are two further events.
TEST_CASE("the DCQCN byte counter raises the rate once every B bytes") {
  const DcqcnParams params = DcqcnParams::nic_firmware(BitRate::gbps(100));
  DcqcnReactionPoint rp(params);
  CHECK(rp.on_cnp(at_us(0)) == CnpOutcome::kRateCut);
  rp.on_bytes_sent(Bytes(32'766));
  CHECK(rp.byte_stage() == 0);
  CHECK(rp.rate() == BitRate::gbps(50));
  rp.on_bytes_sent(Bytes(1));
  CHECK(rp.byte_stage() == 1);
  CHECK(rp.rate() == BitRate::gbps(75));
  rp.on_bytes_sent(Bytes(2 * 32'767));
  CHECK(rp.byte_stage() == 3);
}

// tau = 50 us: marks at 0 and 10 us give one CNP; the next goes at exactly 50 us, not at 60 us.
TEST_CASE("a DCQCN receiver sends at most one CNP per flow per CNP interval") {
  DcqcnNotificationPoint np(DcqcnParams::paper(BitRate::gbps(40)).cnp_interval);
  CHECK(np.should_send_cnp(at_us(0)));
  CHECK_FALSE(np.should_send_cnp(at_us(10)));
  CHECK(np.should_send_cnp(at_us(50)));
  CHECK_FALSE(np.should_send_cnp(at_us(60)));

  DcqcnNotificationPoint every_mark(DcqcnParams::hpcc_reference(BitRate::gbps(100)).cnp_interval);
  CHECK(every_mark.should_send_cnp(at_ns(0)));
  CHECK(every_mark.should_send_cnp(at_ns(0)));
  CHECK(every_mark.should_send_cnp(at_ns(80)));
}

TEST_CASE("DCQCN parameters list every problem and a reaction point refuses them") {
  for (const DcqcnParams& profile :
       {DcqcnParams::paper(BitRate::gbps(40)), DcqcnParams::nic_firmware(BitRate::gbps(100)),
        DcqcnParams::hpcc_reference(BitRate::gbps(100))}) {
    CHECK(profile.problems().empty());
  }
  DcqcnParams bad = DcqcnParams::paper(BitRate::gbps(40));
  bad.min_rate = BitRate::gbps(50);
  bad.alpha_gain = 0.0;
  const auto problems = bad.problems();
  REQUIRE(problems.size() == 2);
  CHECK(problems[0] == "min_rate must not exceed line_rate");
  CHECK(problems[1] == "alpha_gain must be in (0, 1]");
  CHECK_THROWS_WITH_AS(DcqcnReactionPoint{bad},
                       "invalid DCQCN parameters: min_rate must not exceed line_rate; alpha_gain "
                       "must be in (0, 1];",
                       std::invalid_argument);
}

TEST_CASE("a DCQCN reaction point rejects calls that go back in time") {
  const DcqcnParams params = DcqcnParams::paper(BitRate::gbps(40));
  DcqcnReactionPoint rp(params);
  CHECK(rp.on_cnp(at_us(10)) == CnpOutcome::kRateCut);
  CHECK_THROWS_AS(rp.on_rate_timer(at_us(5)), InvariantViolation);
}

}  // namespace
}  // namespace lockstep
