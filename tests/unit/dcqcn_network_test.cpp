// End-to-end tests of DCQCN on the packet-level network (reference.md section 5): long flows that
// share one bottleneck converge to their fair share, the bottleneck queue settles near the fluid
// model's fixed point, the switch marks at its RED probability, and per-flow ECMP spreads flows
// over the spines of a leaf-spine and repeats itself for a given seed. Every test checks the
// conservation invariants: bytes injected = delivered + in the fabric + dropped, and no drop on a
// lossless class.
//
// Set-up shared by the DCQCN tests: a star, senders 0..n-1 and receiver n on one switch (node
// n+1), whose port towards the receiver is the 40 Gb/s bottleneck; PFC on the data class (so
// nothing drops), RED/ECN with the paper's Kmin 5 KB, Kmax 200 KB, Pmax 1%, and DCQCN with the
// paper's parameters (DcqcnParams::paper). Packets carry 1000 B of payload and 62 B of headers, so
// the bottleneck's goodput capacity is G = 40 Gb/s x 1000/1062 = 37.66 Gb/s and the switch sees
// 1062 B packets (the size the fixed point needs).
//
// What "converged" can mean here. Reference.md's criterion (any two flows within 10% of fair share,
// reached in about 100 ms) comes from the fluid model, which has no noise. At packet level the
// marks are Bernoulli draws, and each cut that lands soon after the previous one lowers a flow's
// target rate by up to alpha/2 = 5% for good, while additive increase restores 40 Mb/s (0.2%) per
// step: the flows' shares random-walk around fair share with a weak restoring force. Measured on
// a long run (two flows, 1 s): a flow's 1 ms rate deviates from fair share by 8% RMS, the deviation
// stays correlated for about 30 ms (autocorrelation 1/e), and 10 to 50 ms windows miss the 10%
// criterion about half the time. So the tests judge the transient by the newcomer's approach to
// fair share, and the equilibrium by time averages over 300 ms (about ten correlation times), as
// the fluid model's fixed point describes it. The mean transient matches the fluid model of Zhu et
// al. (CoNEXT'16) integrated for the same scenario: there a second flow reaches 90% of fair share
// 50 ms after joining and comes within 10% of the first after 60 ms. (These runs also exercise the
// NIC's lazy replay of DCQCN timers with alpha and rate-timer expiries falling between two sends.)
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "memory_backend.hpp"
#include "models/cc/dcqcn_fixed_point.hpp"
#include "models/fabric/ecn_marking.hpp"
#include "models/fabric/leaf_spine.hpp"
#include "models/transport/packet_network.hpp"

namespace lockstep {
namespace {

constexpr int kDataClass = 3;
constexpr std::int64_t kPayload = 1000;
constexpr std::int64_t kWire = 1062;  // payload + RoCEv2 headers (TransportConfig defaults)
const BitRate kBottleneck = BitRate::gbps(40);
const double kGoodput = 40e9 * static_cast<double>(kPayload) / static_cast<double>(kWire);
const EcnConfig kPaperRed{true, Bytes(5'000), Bytes(200'000), 0.01};

struct Ignore final : MessageListener {
  void on_message_complete(const Message&, const MessageTimes&) override {}
  void on_message_failed(const Message&, Time) override { FAIL("a queue pair failed"); }
};

// Bytes are conserved and the lossless class never drops.
void check_invariants(const PacketNetwork& network) {
  const DataAccount a = network.data_account();
  CHECK(a.injected == a.delivered + a.in_fabric + a.dropped);
  CHECK(a.dropped == 0);
  CHECK(network.lossless_drops() == 0);
}

// Senders 0..n-1 at `sender_rate`, receiver n behind the 40 Gb/s bottleneck, all cables 1 us.
Topology star(std::int32_t senders, BitRate sender_rate, Bytes switch_buffer = Bytes(12'000'000)) {
  std::vector<Cable> cables;
  for (std::int32_t h = 0; h <= senders; ++h) {
    cables.push_back({h, senders + 1, h == senders ? kBottleneck : sender_rate, Duration::us(1)});
  }
  return build_explicit(senders + 1, {{"sw", switch_buffer}}, std::move(cables));
}

PacketNetworkConfig dcqcn_config(BitRate line_rate) {
  PacketNetworkConfig c;
  c.switches.pfc.lossless.set(kDataClass);
  c.switches.ecn = kPaperRed;
  c.transport.data_class = kDataClass;
  c.transport.dcqcn = DcqcnParams::paper(line_rate);
  return c;
}

// Samples the bottleneck every microsecond (after everything else at that instant) and closes a
// 1 ms window every thousand samples: per-flow bytes delivered in order at the receiver, the mean
// queue, the mean RED probability of that queue, and the port's cumulative marked and sent
// packets. It also checks conservation at every window, not only at the end.
class Observer {
 public:
  struct Window {
    std::vector<double> goodput;   // per flow, bits/s over the window
    double queue = 0.0;            // bytes, time-averaged
    double red_probability = 0.0;  // time average of ecn_mark_probability(queue)
    std::int64_t marked = 0;       // cumulative at the window's end
    std::int64_t sent = 0;
  };

  Observer(Simulator& sim, PacketNetwork& network, const EgressPort& port)
      : sim_(sim), network_(network), port_(port) {
    sim_.schedule_in_phase<&Observer::tick>(Time::zero() + Duration::us(1), Phase::kObserve, this);
  }

  [[nodiscard]] const std::vector<Window>& windows() const { return windows_; }
  [[nodiscard]] std::int64_t conservation_failures() const { return conservation_failures_; }

  // Mean over windows [from_ms, to_ms) of flow f's goodput, bits/s.
  [[nodiscard]] double mean_goodput(std::size_t f, int from_ms, int to_ms) const {
    double sum = 0.0;
    for (int k = from_ms; k < to_ms; ++k) sum += goodput(k, f);
    return sum / (to_ms - from_ms);
  }
  [[nodiscard]] double goodput(int window, std::size_t f) const {
    const std::vector<double>& g = windows_[static_cast<std::size_t>(window)].goodput;
    return f < g.size() ? g[f] : 0.0;
  }
  [[nodiscard]] double mean_queue(int from_ms, int to_ms) const {
    double sum = 0.0;
    for (int k = from_ms; k < to_ms; ++k) sum += windows_[static_cast<std::size_t>(k)].queue;
    return sum / (to_ms - from_ms);
  }

 private:
  void tick() {
    const std::int64_t queue = port_.queue_bytes(kDataClass);
    queue_sum_ += static_cast<double>(queue);
    probability_sum_ += ecn_mark_probability(kPaperRed, queue);
    if (++samples_ == kSamplesPerWindow) close_window();
    sim_.schedule_in_phase<&Observer::tick>(sim_.now() + Duration::us(1), Phase::kObserve, this);
  }

  void close_window() {
    Window w;
    const std::deque<QueuePair>& flows = network_.flows();
    delivered_.resize(flows.size(), 0);
    for (std::size_t f = 0; f < flows.size(); ++f) {
      // Every packet carries a full payload (the messages are whole multiples of it), so the
      // in-order sequence count is the byte count.
      const auto bytes = static_cast<std::int64_t>(flows[f].expected_sequence) * kPayload;
      w.goodput.push_back(static_cast<double>(bytes - delivered_[f]) * 8.0 / 1e-3);
      delivered_[f] = bytes;
    }
    w.queue = queue_sum_ / kSamplesPerWindow;
    w.red_probability = probability_sum_ / kSamplesPerWindow;
    w.marked = port_.counters().classes[kDataClass].ecn_marked;
    w.sent = port_.counters().classes[kDataClass].packets_sent;
    windows_.push_back(std::move(w));
    queue_sum_ = probability_sum_ = 0.0;
    samples_ = 0;
    const DataAccount a = network_.data_account();
    if (a.injected != a.delivered + a.in_fabric + a.dropped || a.dropped != 0 ||
        network_.lossless_drops() != 0) {
      ++conservation_failures_;
    }
  }

  static constexpr int kSamplesPerWindow = 1000;
  Simulator& sim_;
  PacketNetwork& network_;
  const EgressPort& port_;
  std::vector<Window> windows_;
  std::vector<std::int64_t> delivered_;
  double queue_sum_ = 0.0;
  double probability_sum_ = 0.0;
  int samples_ = 0;
  std::int64_t conservation_failures_ = 0;
};

// Long flows from senders 0..n-1 to the receiver, flow i starting at start_ms[i], observed until
// end_ms. Messages of 4 GB outlast every run (4 GB at 40 Gb/s takes 0.8 s); sim.run(limit) stops
// the clock at the end instead of draining them.
class DcqcnStar {
 public:
  DcqcnStar(std::int32_t senders, BitRate sender_rate, std::uint64_t seed)
      : senders_(senders),
        topology_(star(senders, sender_rate)),
        routing_(topology_),
        config_(dcqcn_config(sender_rate)),
        network_(sim_, routing_, config_, seed, output_),
        observer_(sim_, network_,
                  network_.switch_node(senders + 1).port(topology_.host_switch_port(senders))) {}

  void run(const std::vector<int>& start_ms, int end_ms) {
    for (std::size_t i = 0; i < start_ms.size(); ++i) {
      (void)sim_.run(Time::zero() + Duration::ms(start_ms[i]));
      (void)network_.send(static_cast<std::int32_t>(i), senders_, Bytes(4'000'000'000), 0, ignore_);
    }
    (void)sim_.run(Time::zero() + Duration::ms(end_ms));
  }

  [[nodiscard]] const Observer& observer() const { return observer_; }
  [[nodiscard]] const PacketNetwork& network() const { return network_; }

 private:
  std::int32_t senders_;
  Simulator sim_;
  Topology topology_;
  Routing routing_;
  PacketNetworkConfig config_;
  testing::MemoryBackend output_;
  PacketNetwork network_;
  Observer observer_;
  Ignore ignore_;
};

// The fairness scenario, run once for the two fairness tests: senders at 100 Gb/s (the paper's RP
// starts a flow at its NIC's line rate, so a newcomer arrives at 2.5 C), flow A alone from 0 ms
// (it saturates the bottleneck and settles with a small alpha), B joins at 50 ms, C at 450 ms, end
// at 850 ms. A newcomer has no congestion state, so its first cuts use alpha = 1 and halve it,
// while the incumbents, with alpha near 0.1, lose only about 5% per cut: each join starts far from
// fair share.
constexpr int kJoinB = 50;
constexpr int kJoinC = 450;
constexpr int kEnd = 850;

const DcqcnStar& fairness_run() {
  static DcqcnStar run(3, BitRate::gbps(100), 1);
  static const bool done = (run.run({0, kJoinB, kJoinC}, kEnd), true);
  (void)done;
  return run;
}

// First time (ms after `join`) at which flow f's goodput averaged over the last 10 ms reaches
// `fraction` of `share`; -1 if never before `until`.
int time_to_reach(const Observer& o, std::size_t f, int join, int until, double share,
                  double fraction) {
  for (int end = join + 10; end <= until; ++end) {
    if (o.mean_goodput(f, end - 10, end) >= fraction * share) return end - join;
  }
  return -1;
}

// Checks the equilibrium criteria on [from, to) for flows 0..n-1: each time-averaged goodput within
// 10% of fair share G/n, any two within 10% of it of each other, the link at least 97% busy, and no
// 1 ms window in which a flow falls below half its share.
void check_fair_share(const Observer& o, std::size_t n, int from, int to) {
  const double share = kGoodput / static_cast<double>(n);
  std::vector<double> mean;
  double total = 0.0;
  double lowest_window = 1e300;
  for (std::size_t f = 0; f < n; ++f) {
    mean.push_back(o.mean_goodput(f, from, to));
    total += mean.back();
    for (int k = from; k < to; ++k) lowest_window = std::min(lowest_window, o.goodput(k, f));
  }
  const auto [lo, hi] = std::minmax_element(mean.begin(), mean.end());
  MESSAGE("flows " << n << " on [" << from << ", " << to << ") ms: mean goodputs (Gb/s) "
                   << mean[0] * 1e-9 << " " << mean[1] * 1e-9 << " "
                   << (n > 2 ? mean[2] * 1e-9 : 0.0) << ", spread " << (*hi - *lo) / share
                   << " of fair share, utilisation " << total / kGoodput << ", lowest 1 ms window "
                   << lowest_window / share << " of fair share");
  for (const double m : mean) CHECK(std::abs(m - share) <= 0.1 * share);
  // Reference.md's criterion on the time averages: any two flows within 10% of fair share.
  CHECK(*hi - *lo <= 0.1 * share);
  // DCQCN keeps the queue above zero most of the time, so the link stays busy: measured 99.8%.
  CHECK(total >= 0.97 * kGoodput);
  // No starvation: the 1 ms noise has an RMS near 8% of the share (measured lowest window 0.72 to
  // 0.87 of the share over twelve seeds), so half the share is far outside it.
  CHECK(lowest_window >= 0.5 * share);
}

// Flow B joins A at 50 ms. Its first cuts (alpha = 1) throw it down to a few Gb/s, then it climbs
// by fast recovery and additive increase while A, cut more often because it sends more, comes
// down. Measured on twelve seeds: B's 10 ms goodput reaches 90% of the share G/2 = 18.83 Gb/s 47
// to 76 ms after joining (fluid model: 50 ms); the bound is the reference's 100 ms. From 100 ms
// after the join to the end (300 ms, ten correlation times of the noise), the time averages meet
// the 10% criterion: measured spread 0.9 to 9.4% of the share over those seeds (0.9% here).
TEST_CASE(
    "two DCQCN flows on a 40 Gb/s bottleneck converge to within 10% of fair share within "
    "100 ms and stay there") {
  const DcqcnStar& run = fairness_run();
  const Observer& o = run.observer();
  REQUIRE(o.windows().size() == static_cast<std::size_t>(kEnd));
  // Before B joins, A alone fills the bottleneck (its NIC is faster; DCQCN holds it at C).
  CHECK(o.mean_goodput(0, 40, kJoinB) >= 0.97 * kGoodput);
  const int converged = time_to_reach(o, 1, kJoinB, kJoinC, kGoodput / 2, 0.9);
  MESSAGE("flow B reached 90% of fair share " << converged << " ms after joining");
  CHECK(converged > 0);
  CHECK(converged <= 100);
  check_fair_share(o, 2, kJoinB + 100, kJoinC);
  CHECK(o.conservation_failures() == 0);
  check_invariants(run.network());
}

// C joins A and B at 450 ms and is halved by its alpha = 1 cuts as B was. Measured on twelve
// seeds: C's 10 ms goodput reaches 90% of G/3 = 12.55 Gb/s 42 to 63 ms after joining (fluid model
// for this join: 43 ms), and the 300 ms averages from 100 ms after the join have a spread of 1.6 to
// 7.6% of the share.
TEST_CASE("a third DCQCN flow joining two converges the three to within 10% of fair share") {
  const DcqcnStar& run = fairness_run();
  const Observer& o = run.observer();
  const int converged = time_to_reach(o, 2, kJoinC, kEnd, kGoodput / 3, 0.9);
  MESSAGE("flow C reached 90% of fair share " << converged << " ms after joining");
  CHECK(converged > 0);
  CHECK(converged <= 100);
  check_fair_share(o, 3, kJoinC + 100, kEnd);
  CHECK(o.conservation_failures() == 0);
  check_invariants(run.network());
}

struct Equilibrium {
  double queue = 0.0;            // time-averaged bottleneck queue, bytes
  double marked_fraction = 0.0;  // marked / sent packets at the bottleneck
  double red_probability = 0.0;  // time average of the RED probability of the queue
};

// n flows starting together at the bottleneck's rate, averaged over [100, 300) ms: they all start
// with alpha = 1 and are cut together, recover together, and are at equilibrium well before 100 ms.
Equilibrium equilibrium(std::int32_t n) {
  DcqcnStar run(n, kBottleneck, 1);
  run.run(std::vector<int>(static_cast<std::size_t>(n), 0), 300);
  const Observer& o = run.observer();
  const auto& w = o.windows();
  Equilibrium e;
  e.queue = o.mean_queue(100, 300);
  e.marked_fraction = static_cast<double>(w[299].marked - w[99].marked) /
                      static_cast<double>(w[299].sent - w[99].sent);
  for (int k = 100; k < 300; ++k) {
    e.red_probability += w[static_cast<std::size_t>(k)].red_probability;
  }
  e.red_probability /= 200;
  CHECK(o.conservation_failures() == 0);
  check_invariants(run.network());
  return e;
}

// The fluid model's fixed point for N flows (dcqcn_fixed_point.hpp), per 1062 B packet:
//   N = 2: p* = 9.82e-4, q* = 5000 + (p*/0.01) x 195000 = 24,149 B;
//   N = 4: p* = 2.463e-3, q* = 53,035 B.
// The test compares in marking probability, p_sim = Pmax (q - Kmin)/(Kmax - Kmin), since the
// model predicts p and Kmin is only an offset. Tolerance 25% of p*, because the closed form is
// itself only good to about 20%, in both directions:
// - It drops the factor (1-p)^(F T R*) that holds additive increase back until fast recovery
//   ends: F T R* p* = 0.64 (N = 2) and 0.80 (N = 4), so the factor is about 0.5, not 1. Solving the
//   full fluid fixed point (with that factor, the cut rate (1-(1-p)^(tau R))/tau and alpha =
//   1-(1-p)^(tau' R) unlinearised) gives p 16% (N = 2) and 19% (N = 4) below the closed form:
//   q = 21,090 and 44,088 B.
// - The fluid model charges each cut the time-averaged gap R_T - R_C, but cuts cannot come in the
//   first tau = 50 us after a cut (the CNP interval), when the gap is largest, so a real cut
//   removes less of the target than the model assumes and more marks are needed: an isolated RP/NP
//   pair under Bernoulli marking at constant p (no network) holds 20 Gb/s at p = 1.0e-3, 20% above
//   the full fluid value and 3% above the closed form.
// - Marks within tau of a CNP are not turned into CNPs, and alpha counts CNPs per period, not marks
//   (a few % each, same direction); the time average of 200 ms varies by about 5% between seeds.
// Measured on twelve seeds: p_sim / p* = 0.99 to 1.10 (N = 2) and 1.03 to 1.09 (N = 4).
TEST_CASE("the DCQCN bottleneck queue of 2 and 4 long flows settles near the fluid fixed point") {
  const DcqcnParams params = DcqcnParams::paper(kBottleneck);
  const auto red_p = [](double queue) {
    return kPaperRed.pmax * (queue - static_cast<double>(kPaperRed.kmin.count())) /
           static_cast<double>((kPaperRed.kmax - kPaperRed.kmin).count());
  };
  std::array<double, 2> simulated{};
  std::array<double, 2> predicted{};
  const std::array<std::int32_t, 2> flows{2, 4};
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const std::int32_t n = flows[i];
    const Bytes q_star = dcqcn_equilibrium_queue(n, kBottleneck, params, Bytes(kWire),
                                                 kPaperRed.kmin, kPaperRed.kmax, kPaperRed.pmax);
    const double p_star =
        dcqcn_equilibrium_marking_probability(n, kBottleneck, params, Bytes(kWire));
    const Equilibrium e = equilibrium(n);
    simulated[i] = red_p(e.queue);
    predicted[i] = p_star;
    MESSAGE(n << " flows: queue " << e.queue << " B against q* " << q_star.count()
              << " B; p from the queue " << simulated[i] << ", p* " << p_star
              << "; marked fraction " << e.marked_fraction << ", mean RED p(q) "
              << e.red_probability);
    CHECK(std::abs(simulated[i] - p_star) <= 0.25 * p_star);
    // The same in bytes: within 25% of q* - Kmin of q*.
    CHECK(std::abs(e.queue - static_cast<double>(q_star.count())) <=
          0.25 * static_cast<double>((q_star - kPaperRed.kmin).count()));
    // The congestion point marks at the RED probability of the queue it sees: the marked fraction
    // equals the time average of p(q) up to the Poisson noise of the count (about 1,000 marks for
    // N = 2, so 3.2%; 2,500 for N = 4) and the difference between the queue arrivals see and the
    // time average; 10% is three standard deviations for N = 2 (measured 0.95 to 1.04 over twelve
    // seeds). The time average of p(q) exceeds p(time-averaged q) because the queue spends about a
    // fifth of the time below Kmin (N = 2), where p is clamped at zero.
    CHECK(std::abs(e.marked_fraction - e.red_probability) <= 0.1 * e.red_probability);
  }
  // The trend with N: p*(4)/p*(2) = 2.508 (the timer term dominates, p* ~ N^(4/3) there; the byte
  // counter's share pulls it below 2^(4/3) = 2.52). The model's errors largely cancel in the ratio
  // (the full fluid ratio is 2.429, 3% off), leaving the seed-to-seed spread of each average:
  // measured 0.94 to 1.08 of 2.508 over twelve seeds.
  const double ratio = simulated[1] / simulated[0];
  const double expected = predicted[1] / predicted[0];
  MESSAGE("p(4 flows) / p(2 flows): simulated " << ratio << ", fixed point " << expected);
  CHECK(std::abs(ratio - expected) <= 0.15 * expected);
}

// DCQCN settling with many flows: N - 1 flows at equilibrium on the 40 Gb/s bottleneck, all NICs at
// 40 Gb/s, and one more joining at 300 ms, observed for 500 ms. Reference.md's criterion, every
// flow's 20 ms average within 10% of fair share, is met 29 ms after the join at N = 2 and never in
// 400 ms at N = 16, while the fluid model converges faster as N grows. Why, measured here and on
// seeds 1-3:
// - The mean transient is the fluid model's: the newcomer's 20 ms average reaches 90% of the share
//   42 to 59 ms after joining whatever N, and the queue settles where the fixed point puts it (N =
//   8: q* = 126 KB, measured 118-119 KB). At N = 16 the fixed point needs p* = 1.56%, more than the
//   paper's Pmax of 1%: q* would be 309 KB, above Kmax, so the queue rides just under Kmax (185
//   KB).
// - What fails is the conjunction. Each flow's 20 ms average deviates from its share by 8 to 10%
// RMS
//   at N = 8 and 16 (4% at N = 2): which flow's packets carry the marks of a 50 us CNP interval is
//   a lottery at packet level, and a flow sends only 15 packets per interval at N = 16. It is not
//   the switch's coin flips (marking every 1/p-th packet instead leaves 8.6% RMS at N = 16) nor the
//   additive step being large against a small share (R_AI scaled by 2/N: 7.7%). A flow is within
//   10% in about 70-77% of the windows, and all N at once about that to the power N: 0.77^8 = 0.12
//   (measured 0.14-0.20), 0.71^16 = 0.004 (measured 0.00-0.01).
// - Over 300 ms every flow's mean is within 10% of its share (measured within 1.7-7.1%).
// So the test checks the fluid-like transient and equilibrium, long-run fairness, and that the
// fraction of windows with every flow within 10% is what independent per-flow noise predicts.
struct Settling {
  int newcomer_ms = -1;     // the newcomer's 20 ms average first at 90% of the share
  double queue = 0.0;       // mean bottleneck queue over the last 300 ms
  double worst_mean = 0.0;  // largest |300 ms mean / share - 1| over the flows
  double one_within = 0.0;  // fraction of (flow, 20 ms window) pairs within 10% of the share
  double all_within = 0.0;  // fraction of 20 ms windows with every flow within 10%
};

Settling settle(std::int32_t n) {
  constexpr int kJoin = 300;
  constexpr int kHorizon = 500;
  DcqcnStar run(n, kBottleneck, 1);
  std::vector<int> starts(static_cast<std::size_t>(n - 1), 0);
  starts.push_back(kJoin);
  run.run(starts, kJoin + kHorizon);
  const Observer& o = run.observer();
  const double share = kGoodput / n;
  Settling s;
  for (int end = kJoin + 20; end <= kJoin + kHorizon && s.newcomer_ms < 0; ++end) {
    if (o.mean_goodput(static_cast<std::size_t>(n - 1), end - 20, end) >= 0.9 * share) {
      s.newcomer_ms = end - kJoin;
    }
  }
  int windows = 0;
  int all = 0;
  int one = 0;
  for (int end = kJoin + 100; end <= kJoin + kHorizon; ++end) {
    bool every = true;
    for (std::size_t f = 0; f < static_cast<std::size_t>(n); ++f) {
      const bool within = std::abs(o.mean_goodput(f, end - 20, end) / share - 1) <= 0.1;
      one += within ? 1 : 0;
      every = every && within;
    }
    all += every ? 1 : 0;
    ++windows;
  }
  s.one_within = static_cast<double>(one) / (windows * n);
  s.all_within = static_cast<double>(all) / windows;
  for (std::size_t f = 0; f < static_cast<std::size_t>(n); ++f) {
    const double mean = o.mean_goodput(f, kJoin + 200, kJoin + kHorizon) / share;
    s.worst_mean = std::max(s.worst_mean, std::abs(mean - 1));
  }
  s.queue = o.mean_queue(kJoin + 200, kJoin + kHorizon);
  CHECK(o.conservation_failures() == 0);
  check_invariants(run.network());
  return s;
}

TEST_CASE(
    "with many DCQCN flows the mean settles as the fluid model does; the noise of packet-level "
    "marking keeps the flows from being within 10% all at once") {
  const DcqcnParams params = DcqcnParams::paper(kBottleneck);
  for (const std::int32_t n : {8, 16}) {
    CAPTURE(n);
    const Settling s = settle(n);
    const double p_star =
        dcqcn_equilibrium_marking_probability(n, kBottleneck, params, Bytes(kWire));
    MESSAGE(n << " flows: newcomer at 90% after " << s.newcomer_ms << " ms; queue " << s.queue
              << " B (p* " << p_star << "); worst 300 ms mean off by " << s.worst_mean
              << "; one flow within 10% in " << s.one_within << " of the windows, all "
              << s.all_within);
    CHECK(s.newcomer_ms > 0);
    CHECK(s.newcomer_ms <= 100);
    CHECK(s.worst_mean <= 0.1);
    if (p_star < kPaperRed.pmax) {
      const Bytes q_star = dcqcn_equilibrium_queue(n, kBottleneck, params, Bytes(kWire),
                                                   kPaperRed.kmin, kPaperRed.kmax, kPaperRed.pmax);
      CHECK(std::abs(s.queue - static_cast<double>(q_star.count())) <=
            0.25 * static_cast<double>((q_star - kPaperRed.kmin).count()));
    } else {
      // No fixed point on the RED ramp: the queue rides just under Kmax.
      CHECK(s.queue >= 0.85 * static_cast<double>(kPaperRed.kmax.count()));
      CHECK(s.queue <= static_cast<double>(kPaperRed.kmax.count()));
    }
    // Most windows find any one flow within 10%; all N at once as often as independent flows
    // would be, within the spread of a 400 ms run.
    CHECK(s.one_within >= 0.6);
    CHECK(std::abs(s.all_within - std::pow(s.one_within, n)) <= 0.1);
  }
}

// A leaf-spine of 4 leaves x 16 hosts and 8 spines, 100 Gb/s everywhere; host h sends 64 packets
// to host (h + 16) mod 64 on the next leaf: 64 flows, each crossing one spine chosen by its leaf's
// ECMP hash. Leaf l's uplink to spine s is its port 16 + s (leaf_spine.hpp).
constexpr std::int32_t kLeaves = 4;
constexpr std::int32_t kHostsPerLeaf = 16;
constexpr std::int32_t kSpines = 8;
constexpr std::int32_t kHosts = kLeaves * kHostsPerLeaf;
constexpr std::int64_t kPacketsPerFlow = 64;

Topology ecmp_fabric() {
  LeafSpineSpec spec;
  spec.leaves = kLeaves;
  spec.spines = kSpines;
  spec.hosts_per_leaf = kHostsPerLeaf;
  spec.uplinks_per_leaf = kSpines;
  spec.host_link = LinkSpec{BitRate::gbps(100), Duration::us(1)};
  spec.fabric_link = LinkSpec{BitRate::gbps(100), Duration::us(1)};
  spec.switch_buffer = Bytes(32'000'000);
  return build_leaf_spine(spec);
}

struct EcmpRun {
  std::vector<std::int64_t> packets_per_spine;  // data packets on the leaves' uplinks to spine s
  std::vector<std::int64_t> flows_per_spine;    // from the routing's path of each flow
  std::vector<std::int32_t> spine_of_flow;      // by flow id
  std::vector<std::int64_t> port_bytes;         // every switch port: data bytes per class, control
  std::int64_t completed = 0;
};

EcmpRun run_ecmp(std::uint64_t seed) {
  Simulator sim;
  const Topology topology = ecmp_fabric();
  const Routing routing(topology);
  const PacketNetworkConfig config = dcqcn_config(BitRate::gbps(100));
  testing::MemoryBackend output;
  PacketNetwork network(sim, routing, config, seed, output);
  struct Count final : MessageListener {
    std::int64_t done = 0;
    void on_message_complete(const Message&, const MessageTimes&) override { ++done; }
    void on_message_failed(const Message&, Time) override { FAIL("a queue pair failed"); }
  } count;
  for (std::int32_t h = 0; h < kHosts; ++h) {
    (void)network.send(h, (h + kHostsPerLeaf) % kHosts, Bytes(kPacketsPerFlow * kPayload), 0,
                       count);
  }
  (void)sim.run();
  EcmpRun r;
  r.completed = count.done;
  r.packets_per_spine.assign(kSpines, 0);
  r.flows_per_spine.assign(kSpines, 0);
  for (std::int32_t l = 0; l < kLeaves; ++l) {
    Switch& leaf = network.switch_node(kHosts + l);
    for (std::int32_t s = 0; s < kSpines; ++s) {
      r.packets_per_spine[static_cast<std::size_t>(s)] +=
          leaf.port(static_cast<std::size_t>(kHostsPerLeaf + s))
              .counters()
              .classes[kDataClass]
              .packets_sent;
    }
  }
  for (const QueuePair& flow : network.flows()) {
    // Hops: source NIC, its leaf, the spine, the destination's leaf.
    const std::vector<Hop> path = routing.path(flow.source, flow.destination, flow.entropy);
    REQUIRE(path.size() == 4);
    r.spine_of_flow.push_back(path[2].node - kHosts - kLeaves);
    ++r.flows_per_spine[static_cast<std::size_t>(r.spine_of_flow.back())];
  }
  for (NodeId n = kHosts; n < topology.node_count(); ++n) {
    Switch& s = network.switch_node(n);
    for (std::size_t p = 0; p < s.port_count(); ++p) {
      const PortCounters& c = s.port(p).counters();
      for (const ClassCounters& k : c.classes) r.port_bytes.push_back(k.bytes_sent);
      r.port_bytes.push_back(c.control_bytes_sent);
    }
  }
  check_invariants(network);
  return r;
}

// HPCC ns-3's DCQCN profile (a notification for every CE mark) with the CNPs on `carrier`.
PacketNetworkConfig hpcc_reference_config(CnpCarrier carrier) {
  PacketNetworkConfig c = dcqcn_config(kBottleneck);
  c.transport.dcqcn = DcqcnParams::hpcc_reference(kBottleneck);
  c.transport.dcqcn->cnp_carrier = carrier;
  return c;
}

// Senders 0..n-1 at 40 Gb/s into the bottleneck, each sending one message to receiver n, run to
// completion.
struct CnpIncast {
  CnpIncast(std::int32_t senders, Bytes switch_buffer, PacketNetworkConfig network_config)
      : receiver(senders),
        topology(star(senders, kBottleneck, switch_buffer)),
        routing(topology),
        config(std::move(network_config)),
        network(sim, routing, config, 1, output) {}

  void run(Bytes size, MessageListener& listener) {
    for (std::int32_t sender = 0; sender < receiver; ++sender) {
      (void)network.send(sender, receiver, size, 0, listener);
    }
    (void)sim.run();
  }

  std::int32_t receiver;
  Simulator sim;
  Topology topology;
  Routing routing;
  PacketNetworkConfig config;
  testing::MemoryBackend output;
  PacketNetwork network;
};

// Two senders, 2 MB each. The receiver answers each of its 2 x 2000 data packets with one ACK
// (lossless, in order), and every marked packet notifies its sender once. Carried by the ACKs, as
// ns-3 carries them, the notifications add no frame: the receiver sends exactly 4000 control
// frames. In frames of their own they add one frame each. Either way the senders hear of every
// mark the bottleneck made.
TEST_CASE("a CNP rides on the ACK of its marked packet or goes in a frame of its own") {
  for (const CnpCarrier carrier : {CnpCarrier::kAckOrNack, CnpCarrier::kOwnFrame}) {
    CAPTURE(static_cast<int>(carrier));
    CnpIncast incast(2, Bytes(12'000'000), hpcc_reference_config(carrier));
    Ignore ignore;
    incast.run(Bytes(2'000'000), ignore);
    PacketNetwork& network = incast.network;
    const std::int64_t marks = network.switch_node(3)
                                   .port(incast.topology.host_switch_port(2))
                                   .counters()
                                   .classes[kDataClass]
                                   .ecn_marked;
    std::int64_t notified = 0;
    for (const QueuePair& flow : network.flows()) notified += flow.cnps_received;
    MESSAGE(marks << " packets marked");
    CHECK(marks > 100);
    CHECK(notified == marks);
    const std::int64_t frames = network.nic(2).port().counters().control_bytes_sent /
                                incast.config.transport.control_frame.count();
    CHECK(frames == (carrier == CnpCarrier::kAckOrNack ? 4000 : 4000 + marks));
    check_invariants(network);
  }
}

// Four senders, 1 MB each, lossy, into a 60 KB switch: packets drop, the receiver NACKs the gaps
// and lets packets ahead of an outstanding NACK go unanswered, and go-back-N resends. Marks still
// notify: on whatever answers them, or in frames of their own; a mark that nothing answers is not
// counted as sent. So each sender hears exactly the notifications its receiver sent.
TEST_CASE(
    "with drops and go-back-N, every CNP sent reaches its sender, on an answer or in a frame") {
  struct CountCompletions final : MessageListener {
    int completed = 0;
    void on_message_complete(const Message&, const MessageTimes&) override { ++completed; }
    void on_message_failed(const Message&, Time) override { FAIL("a queue pair failed"); }
  };
  for (const CnpCarrier carrier : {CnpCarrier::kAckOrNack, CnpCarrier::kOwnFrame}) {
    CAPTURE(static_cast<int>(carrier));
    PacketNetworkConfig config = hpcc_reference_config(carrier);
    config.switches.pfc.lossless.reset(kDataClass);
    config.switches.ecn = EcnConfig{true, Bytes(5'000), Bytes(30'000), 0.5};  // marks below 60 KB
    CnpIncast incast(4, Bytes(60'000), std::move(config));
    CountCompletions completions;
    incast.run(Bytes(1'000'000), completions);
    CHECK(completions.completed == 4);
    const DataAccount a = incast.network.data_account();
    CHECK(a.dropped > 0);
    CHECK(a.injected == a.delivered + a.in_fabric + a.dropped);
    std::int64_t notified = 0;
    std::int64_t resent = 0;
    for (const QueuePair& flow : incast.network.flows()) {
      CHECK(flow.cnps_received == flow.cnps_sent);
      notified += flow.cnps_received;
      resent += flow.retransmitted_packets;
    }
    MESSAGE(notified << " notifications, " << resent << " packets resent");
    CHECK(notified > 0);
    CHECK(resent > 0);
  }
}

// Per-flow ECMP puts all of a flow's packets on one spine, so every spine carries a whole number of
// flows, and the counters agree with the routing's own path for each flow. With a uniform hash the
// flow count per spine is Binomial(64, 1/8) (mean 8, sd 2.6), and the spread is judged by Pearson's
// statistic chi2 = sum over spines of (n_s - 8)^2 / 8, which has 7 degrees of freedom: a uniform
// hash exceeds 24.32 with probability 0.001. Also every spine carries between 1 and 19 flows (a
// uniform hash leaves one empty with probability 0.0016 and puts 19 or more on one with 0.0017).
TEST_CASE("ECMP spreads 64 inter-leaf flows over 8 spines as a uniform hash would") {
  const EcmpRun r = run_ecmp(1);
  CHECK(r.completed == kHosts);
  double chi2 = 0.0;
  std::int64_t flows = 0;
  for (std::int32_t s = 0; s < kSpines; ++s) {
    const auto i = static_cast<std::size_t>(s);
    CHECK(r.packets_per_spine[i] % kPacketsPerFlow == 0);
    const std::int64_t n = r.packets_per_spine[i] / kPacketsPerFlow;
    CHECK(n == r.flows_per_spine[i]);
    CHECK(n >= 1);
    CHECK(n <= 19);
    flows += n;
    const double expected = static_cast<double>(kHosts) / kSpines;
    chi2 += (static_cast<double>(n) - expected) * (static_cast<double>(n) - expected) / expected;
  }
  MESSAGE("flows per spine " << r.flows_per_spine[0] << " " << r.flows_per_spine[1] << " "
                             << r.flows_per_spine[2] << " " << r.flows_per_spine[3] << " "
                             << r.flows_per_spine[4] << " " << r.flows_per_spine[5] << " "
                             << r.flows_per_spine[6] << " " << r.flows_per_spine[7]
                             << ", chi2 = " << chi2);
  CHECK(flows == kHosts);  // every flow crossed exactly one spine
  CHECK(chi2 <= 24.32);
}

// The ECMP entropy of a flow is a hash of (seed, source, destination, queue pair), so the same seed
// must reproduce every path, and with it every byte counter of every port; another seed must move
// flows (64 independent uniform choices all repeating by chance has probability 8^-64), which shows
// the comparison can fail.
TEST_CASE("the same seed gives the same ECMP paths and identical port counters") {
  const EcmpRun first = run_ecmp(7);
  const EcmpRun second = run_ecmp(7);
  const EcmpRun other = run_ecmp(8);
  REQUIRE(first.spine_of_flow.size() == static_cast<std::size_t>(kHosts));
  CHECK(first.spine_of_flow == second.spine_of_flow);
  CHECK(first.port_bytes == second.port_bytes);
  CHECK(first.spine_of_flow != other.spine_of_flow);
  CHECK(first.port_bytes != other.port_bytes);
}

}  // namespace
}  // namespace lockstep
