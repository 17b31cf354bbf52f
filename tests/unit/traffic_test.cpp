#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "memory_backend.hpp"
#include "models/network/network.hpp"
#include "models/traffic/traffic.hpp"
#include "models/traffic/traffic_driver.hpp"
#include "models/traffic/traffic_generators.hpp"
#include "models/traffic/traffic_pairs_file.hpp"
#include "models/traffic/traffic_statistics.hpp"
#include "sim/core/simulator.hpp"

namespace lockstep {
namespace {

// Every host of 0..hosts-1 sends exactly one flow and receives exactly one, never from itself.
void check_derangement(const std::vector<FlowSpec>& flows, std::int32_t hosts) {
  REQUIRE(flows.size() == static_cast<std::size_t>(hosts));
  std::vector<int> sent(static_cast<std::size_t>(hosts), 0);
  std::vector<int> received(static_cast<std::size_t>(hosts), 0);
  for (const FlowSpec& flow : flows) {
    REQUIRE(flow.source >= 0);
    REQUIRE(flow.source < hosts);
    REQUIRE(flow.destination >= 0);
    REQUIRE(flow.destination < hosts);
    CHECK(flow.source != flow.destination);
    ++sent[static_cast<std::size_t>(flow.source)];
    ++received[static_cast<std::size_t>(flow.destination)];
  }
  CHECK(std::all_of(sent.begin(), sent.end(), [](int n) { return n == 1; }));
  CHECK(std::all_of(received.begin(), received.end(), [](int n) { return n == 1; }));
}

std::vector<std::int32_t> destinations(const std::vector<FlowSpec>& flows) {
  std::vector<std::int32_t> out;
  for (const FlowSpec& flow : flows) out.push_back(flow.destination);
  return out;
}

std::string thrown_message(const auto& action) {
  try {
    action();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "(nothing thrown)";
}

FlowSpec flow(std::int32_t source, std::int32_t destination, std::int64_t bytes) {
  FlowSpec spec;
  spec.source = source;
  spec.destination = destination;
  spec.size = Bytes(bytes);
  return spec;
}

FlowSpec flow_after(std::int32_t source, std::int32_t destination, std::int64_t bytes,
                    std::int64_t after, Duration delay) {
  FlowSpec spec = flow(source, destination, bytes);
  spec.after = after;
  spec.start = delay;
  return spec;
}

// ---------------------------------------------------------------------------------------------
// Generators

TEST_CASE("a permutation makes every host send one flow to another host and receive one") {
  for (std::int32_t hosts : {2, 3, 7, 128, 1024}) {
    CAPTURE(hosts);
    const auto flows = traffic::permutation(hosts, Bytes(2'000'000), 13);
    check_derangement(flows, hosts);
    for (std::size_t i = 0; i < flows.size(); ++i) {
      CHECK(flows[i].source == static_cast<std::int32_t>(i));
      CHECK(flows[i].size == Bytes(2'000'000));
      CHECK(flows[i].start == Duration());
      CHECK_FALSE(flows[i].after.has_value());
      CHECK(flows[i].queue_pair == 0);
    }
  }
  // Two hosts admit one derangement only.
  CHECK(destinations(traffic::permutation(2, Bytes(1), 99)) == std::vector<std::int32_t>{1, 0});
}

TEST_CASE("a permutation is the same for the same seed and differs for another seed") {
  const auto a = destinations(traffic::permutation(128, Bytes(1000), 7));
  const auto b = destinations(traffic::permutation(128, Bytes(1000), 7));
  const auto c = destinations(traffic::permutation(128, Bytes(1000), 8));
  CHECK(a == b);
  CHECK(a != c);
}

TEST_CASE("a permutation draws every derangement of three hosts, and only those") {
  // Three hosts have two derangements, the two 3-cycles; rejection sampling must reach both.
  std::set<std::vector<std::int32_t>> seen;
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    seen.insert(destinations(traffic::permutation(3, Bytes(1), seed)));
  }
  CHECK(seen == std::set<std::vector<std::int32_t>>{{1, 2, 0}, {2, 0, 1}});
}

TEST_CASE("a permutation rejects fewer than two hosts and an empty flow") {
  CHECK(thrown_message([] { (void)traffic::permutation(1, Bytes(10), 1); }) ==
        "permutation: needs at least 2 hosts for every host to send to another, got 1");
  CHECK(thrown_message([] { (void)traffic::permutation(4, Bytes(0), 1); }) ==
        "permutation: size must be at least 1 B, got 0 B");
}

TEST_CASE("an incast sends from every listed source to the one destination (Incast-128)") {
  const auto flows = traffic::incast(traffic::host_range(1, 127), 0, Bytes(2'000'000));
  REQUIRE(flows.size() == 127);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    CHECK(flows[i].source == static_cast<std::int32_t>(i + 1));
    CHECK(flows[i].destination == 0);
    CHECK(flows[i].size == Bytes(2'000'000));
    CHECK(flows[i].start == Duration());
    CHECK_FALSE(flows[i].after.has_value());
  }
  const auto listed = traffic::incast({5, 2, 9}, 3, Bytes(10));
  REQUIRE(listed.size() == 3);
  CHECK(listed[0].source == 5);
  CHECK(listed[1].source == 2);
  CHECK(listed[2].source == 9);
}

TEST_CASE("an incast rejects a destination among its sources, repeated sources and no sources") {
  CHECK(thrown_message([] {
          (void)traffic::incast({1, 2, 3}, 2, Bytes(10));
        }) == "incast: the destination 2 is also listed as a source; it would send to itself");
  CHECK(thrown_message([] {
          (void)traffic::incast({4, 1, 4}, 0, Bytes(10));
        }) == "incast: source 4 is listed more than once");
  CHECK(thrown_message([] { (void)traffic::incast({}, 0, Bytes(10)); }) ==
        "incast: needs at least one source");
  CHECK(thrown_message([] { (void)traffic::host_range(5, 4); }) ==
        "host_range: first host 5 comes after last host 4");
}

TEST_CASE("all-to-all sends one flow over every ordered pair of hosts, in rounds of permutations") {
  const std::int32_t hosts = 5;
  const auto flows = traffic::all_to_all(hosts, Bytes(4096));
  REQUIRE(flows.size() == 20);
  std::set<std::pair<std::int32_t, std::int32_t>> pairs;
  for (const FlowSpec& f : flows) pairs.emplace(f.source, f.destination);
  CHECK(pairs.size() == 20);
  for (std::int32_t round = 0; round < hosts - 1; ++round) {
    const std::vector<FlowSpec> this_round(flows.begin() + round * hosts,
                                           flows.begin() + (round + 1) * hosts);
    check_derangement(this_round, hosts);
    CHECK(this_round[0].destination == round + 1);  // host 0 sends to 1, then 2, ...
  }
  CHECK(thrown_message([] { (void)traffic::all_to_all(1, Bytes(1)); }) ==
        "all_to_all: needs at least 2 hosts, got 1");
}

TEST_CASE("Rings-128 expands to 8 rings x 16 chunks x 31 chained transfers") {
  const auto rings = traffic::strided_rings(8, 16);
  REQUIRE(rings.size() == 8);
  CHECK(rings[1].front() == 1);
  CHECK(rings[1][1] == 9);
  CHECK(rings[1].back() == 121);
  const auto flows = traffic::ring_all_reduce_chains(rings, Bytes(262'144));
  REQUIRE(flows.size() == 8 * 16 * 31);

  // Ring 1, chunk 0 is flow (1 * 16 + 0) * 31 = 496 onwards: 1 -> 9 -> 17 -> ... -> 121 -> 1 ...
  const std::size_t first = 496;
  CHECK(flows[first].source == 1);
  CHECK(flows[first].destination == 9);
  CHECK_FALSE(flows[first].after.has_value());
  CHECK(flows[first + 1].source == 9);
  CHECK(flows[first + 1].destination == 17);
  CHECK(flows[first + 1].after == std::optional<std::int64_t>(496));
  CHECK(flows[first + 2].source == 17);
  CHECK(flows[first + 2].destination == 25);
  CHECK(flows[first + 2].after == std::optional<std::int64_t>(497));
  CHECK(flows[first + 15].source == 121);  // transfer 16 closes the first lap
  CHECK(flows[first + 15].destination == 1);
  CHECK(flows[first + 30].source == 113);  // transfer 31 = 2 * 16 - 1 ends at ring[15]
  CHECK(flows[first + 30].destination == 121);
  // Chunk 3 of ring 1 starts at ring[3] = 25.
  CHECK(flows[first + 3 * 31].source == 25);
  CHECK(flows[first + 3 * 31].destination == 33);

  for (std::size_t i = 0; i < flows.size(); ++i) {
    const std::size_t chunk = i / 31;  // across rings
    const std::size_t transfer = i % 31;
    CAPTURE(i);
    CHECK(flows[i].size == Bytes(262'144));
    CHECK(flows[i].start == Duration());
    CHECK(flows[i].queue_pair == chunk);  // one queue pair per chunk
    CHECK(flows[i].source % 8 == static_cast<std::int32_t>(chunk / 16));  // stays in its ring
    CHECK(flows[i].destination % 8 == static_cast<std::int32_t>(chunk / 16));
    if (transfer == 0) {
      CHECK_FALSE(flows[i].after.has_value());
    } else {
      CHECK(flows[i].after == std::optional<std::int64_t>(static_cast<std::int64_t>(i) - 1));
      CHECK(flows[i].source == flows[i - 1].destination);  // the chunk moves on from where it is
    }
  }

  // At every depth d, the 16 chunks of a ring use each of its 16 links exactly once.
  for (std::size_t ring = 0; ring < 8; ++ring) {
    for (std::size_t d = 0; d < 31; ++d) {
      std::set<std::int32_t> senders;
      for (std::size_t chunk = 0; chunk < 16; ++chunk) {
        senders.insert(flows[(ring * 16 + chunk) * 31 + d].source);
      }
      CHECK(senders.size() == 16);
    }
  }
  CHECK(flow_list_problems(flows, 128).empty());
}

TEST_CASE("a textbook ring makes 2(m - 1) hops per chunk") {
  const auto flows = traffic::ring_all_reduce_chains({{4, 0, 2}}, Bytes(100),
                                                     traffic::RingHops::kReduceScatterAllGather);
  REQUIRE(flows.size() == 3 * 4);
  // Chunk 1 starts at ring[1] = 0: 0 -> 2 -> 4 -> 0 -> 2.
  CHECK(flows[4].source == 0);
  CHECK(flows[4].destination == 2);
  CHECK(flows[7].source == 0);
  CHECK(flows[7].destination == 2);
  CHECK(flows[7].after == std::optional<std::int64_t>(6));
  CHECK(flows[7].queue_pair == 1);
}

TEST_CASE("ring chains reject short rings, repeated hosts and empty chunks") {
  CHECK(thrown_message([] {
          (void)traffic::ring_all_reduce_chains({{0, 1}, {2}}, Bytes(1));
        }) == "ring_all_reduce_chains: ring 1 has 1 hosts; a ring needs at least 2");
  CHECK(thrown_message([] {
          (void)traffic::ring_all_reduce_chains({{0, 1, 0}}, Bytes(1));
        }) == "ring_all_reduce_chains: ring 0 visits host 0 more than once");
  CHECK(thrown_message([] {
          (void)traffic::ring_all_reduce_chains({{0, 1}}, Bytes(0));
        }) == "ring_all_reduce_chains: chunk_size must be at least 1 B, got 0 B");
}

// ---------------------------------------------------------------------------------------------
// Pairs files

// 20,000 draws: the sample median of the sizes and the mean gap lie within 3% of their exact
// values (x_m 2^(1/shape) for the Pareto median; the sample median's standard error here is under
// 1%, the mean gap's 0.7%).
TEST_CASE("random arrivals: Poisson starts, distinct random pairs, Pareto sizes") {
  const double shape = 1.5;
  const std::vector<FlowSpec> flows =
      traffic::random_arrivals(64, 20'000, Duration::us(1), Bytes(1'000'000), shape, 3);
  REQUIRE(flows.size() == 20'000);
  std::vector<double> sizes;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const FlowSpec& f = flows[i];
    REQUIRE(f.source >= 0);
    REQUIRE(f.source < 64);
    REQUIRE(f.destination >= 0);
    REQUIRE(f.destination < 64);
    REQUIRE(f.source != f.destination);
    REQUIRE(f.queue_pair == i);
    REQUIRE_FALSE(f.after);
    if (i > 0) REQUIRE(f.start >= flows[i - 1].start);
    sizes.push_back(static_cast<double>(f.size.count()));
  }
  std::nth_element(sizes.begin(), sizes.begin() + 10'000, sizes.end());
  const double x_m = 1e6 * (shape - 1) / shape;
  CHECK(sizes[10'000] == doctest::Approx(x_m * std::pow(2.0, 1 / shape)).epsilon(0.03));
  const double mean_gap_ps = static_cast<double>(flows.back().start.ps()) / 20'000;
  CHECK(mean_gap_ps == doctest::Approx(1e6).epsilon(0.03));
  const std::vector<FlowSpec> again =
      traffic::random_arrivals(64, 20'000, Duration::us(1), Bytes(1'000'000), shape, 3);
  CHECK(std::equal(flows.begin(), flows.end(), again.begin(), [](const auto& a, const auto& b) {
    return a.source == b.source && a.destination == b.destination && a.size == b.size &&
           a.start == b.start;
  }));
  CHECK_THROWS(traffic::random_arrivals(64, 10, Duration::us(1), Bytes(1'000), 1.0, 3));
  CHECK_THROWS(traffic::random_arrivals(1, 10, Duration::us(1), Bytes(1'000), 1.5, 3));
  CHECK_THROWS(traffic::random_arrivals(64, 10, Duration(), Bytes(1'000), 1.5, 3));
}

TEST_CASE("a pairs text gives one flow per line and skips blank lines and comments") {
  std::istringstream text("# Perm-4\n0->1\n\n  2 -> 3 \r\n\t3->0\n1->2");
  const auto flows = traffic::from_pairs(text, "<text>", Bytes(500));
  REQUIRE(flows.size() == 4);
  CHECK(flows[0].source == 0);
  CHECK(flows[0].destination == 1);
  CHECK(flows[1].source == 2);
  CHECK(flows[1].destination == 3);
  CHECK(flows[3].source == 1);
  CHECK(flows[3].destination == 2);
  CHECK(flows[2].size == Bytes(500));
  CHECK_FALSE(flows[2].after.has_value());
}

TEST_CASE("a bad line in a flow pairs file is rejected with its line number") {
  const auto parse = [](const char* text) {
    return thrown_message([text] {
      std::istringstream in(text);
      (void)traffic::from_pairs(in, "perm.pairs", Bytes(1));
    });
  };
  CHECK(parse("0->1\n# note\n1-2\n") ==
        "perm.pairs:3: expected \"source->destination\", in \"1-2\"");
  CHECK(parse("0->1\n-1->2\n") ==
        "perm.pairs:2: expected two endpoint ids (non-negative integers) around \"->\", in "
        "\"-1->2\"");
  CHECK(parse("x->2\n") ==
        "perm.pairs:1: expected two endpoint ids (non-negative integers) around \"->\", in "
        "\"x->2\"");
  CHECK(parse("1->2 3\n") ==
        "perm.pairs:1: expected two endpoint ids (non-negative integers) around \"->\", in "
        "\"1->2 3\"");
  CHECK(parse("1->99999999999\n") ==
        "perm.pairs:1: expected two endpoint ids (non-negative integers) around \"->\", in "
        "\"1->99999999999\"");
  CHECK(parse("\n\n7->7\n") == "perm.pairs:3: endpoint 7 sends to itself, in \"7->7\"");
  CHECK(thrown_message([] { (void)traffic::from_pairs_file("/nonexistent/p.pairs", Bytes(1)); }) ==
        "/nonexistent/p.pairs: cannot open the pairs file");
}

TEST_CASE("the committed Perm-128 and Perm-1024 pairs are permutations without self-pairs") {
  const std::string dir = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/bench/";
  const auto perm128 = traffic::from_pairs_file(dir + "perm_128.pairs", Bytes(2'000'000));
  // The order of a derangement check is by host, so check the file's own first lines too:
  // make_permutation_pairs.py wrote them from CPython's random.seed(13).
  REQUIRE(perm128.size() == 128);
  CHECK(perm128[0].source == 103);
  CHECK(perm128[0].destination == 32);
  CHECK(perm128[1].source == 34);
  CHECK(perm128[1].destination == 109);
  check_derangement(perm128, 128);
  CHECK(flow_list_problems(perm128, 128).empty());

  const auto perm1024 = traffic::from_pairs_file(dir + "perm_1024.pairs", Bytes(2'000'000));
  check_derangement(perm1024, 1024);
}

// ---------------------------------------------------------------------------------------------
// Flow lists

TEST_CASE("a flow list's problems are all listed, keyed by flow, with cycles last") {
  std::vector<FlowSpec> flows = {
      flow(0, 7, 10),                            // 0: no endpoint 7
      flow(2, 2, 10),                            // 1: to itself
      flow(1, 2, 0),                             // 2: empty
      flow_after(1, 2, 10, 9, Duration()),       // 3: no flow 9
      flow_after(1, 2, 10, 4, Duration()),       // 4: waits on itself
      flow_after(1, 3, 10, 6, Duration()),       // 5: cycle 5 -> 6 -> 5
      flow_after(3, 1, 10, 5, Duration()),       // 6
      flow_after(-1, 0, 10, 5, Duration()),      // 7: negative source, waits on the cycle
      flow_after(0, 1, 10, 0, Duration::ps(-1))  // 8: negative delay
  };
  const std::vector<std::string> expected = {
      "flows[0].destination: 7 is not an endpoint of this network (0..3)",
      "flows[1].destination: endpoint 2 would send to itself, which never crosses the network",
      "flows[2].size: 0 B; a flow carries at least one byte",
      "flows[3].after: 9 is not a flow of this list (0..8)",
      "flows[4].after: the flow waits on itself, so it would never start",
      "flows[7].source: -1 is not an endpoint of this network (0..3)",
      "flows[8].start: -1 ps; a start is an offset from the flow's trigger and cannot be negative",
      "flows[5].after: the flows 5 -> 6 -> 5 wait on one another in a cycle, so none of them would "
      "ever start",
  };
  CHECK(flow_list_problems(flows, 4) == expected);
}

// ---------------------------------------------------------------------------------------------
// Statistics

TEST_CASE("flow completion time percentiles use the nearest rank, exactly") {
  std::vector<Duration> values;
  for (std::int64_t v = 200; v >= 1; --v) values.push_back(Duration::ps(v));
  const auto stats = fct_statistics(values);
  REQUIRE(stats.has_value());
  CHECK(stats->count == 200);
  CHECK(stats->min == Duration::ps(1));
  CHECK(stats->median == Duration::ps(100));  // rank ceil(0.50 * 200) = 100
  CHECK(stats->p99 == Duration::ps(198));     // rank ceil(0.99 * 200) = 198
  CHECK(stats->max == Duration::ps(200));

  // An even count's median is the lower middle value; p99 of fewer than 100 values is the largest.
  const auto four =
      fct_statistics({Duration::ps(40), Duration::ps(10), Duration::ps(30), Duration::ps(20)});
  REQUIRE(four.has_value());
  CHECK(four->median == Duration::ps(20));
  CHECK(four->p99 == Duration::ps(40));
  const std::vector<Duration> hundred_and_one = [] {
    std::vector<Duration> v;
    for (std::int64_t k = 1; k <= 101; ++k) v.push_back(Duration::ps(k));
    return v;
  }();
  CHECK(nearest_rank_percentile(hundred_and_one, 99) == Duration::ps(100));  // ceil(99.99) = 100
  CHECK_FALSE(fct_statistics({}).has_value());
}

// ---------------------------------------------------------------------------------------------
// The driver

// Completes every message a fixed 1 us after it is sent plus 10 ps per byte (800 Gb/s), with its
// last byte delivered 500 ns before the acknowledgement. Endpoints 0..3.
class FakeNetwork final : public Network {
 public:
  explicit FakeNetwork(Simulator& sim) : sim_(sim) {}

  std::uint64_t send(std::int32_t source, std::int32_t destination, Bytes size,
                     std::uint32_t queue_pair, MessageListener& listener) override {
    // Ids start at 100 so that a driver confusing ids with flow indices would fail.
    const std::uint64_t id = 100 + sent_.size();
    const Time now = sim_.now();
    const Time acknowledged = now + Duration::us(1) + Duration::ps(10) * size.count();
    sent_.push_back(Sent{Message{id, source, destination, size, queue_pair},
                         MessageTimes{now, now, acknowledged - Duration::ns(500), acknowledged},
                         &listener});
    sim_.schedule<&FakeNetwork::complete>(acknowledged, this, sent_.size() - 1);
    return id;
  }
  [[nodiscard]] std::int32_t endpoint_count() const override { return 4; }
  [[nodiscard]] Duration latency(std::int32_t /*source*/, std::int32_t /*destination*/,
                                 std::uint32_t /*queue_pair*/) const override {
    return Duration::ns(500);  // a message of no bytes is delivered 500 ns after it is sent
  }

  struct Sent {
    Message message;
    MessageTimes times;
    MessageListener* listener;
  };
  [[nodiscard]] const std::vector<Sent>& sent() const { return sent_; }

 private:
  void complete(std::uint64_t index) {
    const Sent& s = sent_[static_cast<std::size_t>(index)];
    s.listener->on_message_complete(s.message, s.times);
  }

  Simulator& sim_;
  std::vector<Sent> sent_;
};

// Hand-computed (delay = 1 us + 10 ps/B):
//   flow 0: 0->1, 1000 B, at 2 us              start 2,000,000  FCT 1,010,000  ack 3,010,000
//   flow 1: 1->2, 2000 B, right after flow 0   start 3,010,000  FCT 1,020,000  ack 4,030,000
//   flow 2: 2->3,  500 B, 300 ns after flow 1  start 4,330,000  FCT 1,005,000  ack 5,335,000
//   flow 3: 3->0, 4000 B, at 0                 start         0  FCT 1,040,000  ack 1,040,000
//   flow 4: 0->2, 3000 B, right after flow 0   start 3,010,000  FCT 1,030,000  ack 4,040,000
// Sorted FCTs 1,005,000 1,010,000 1,020,000 1,030,000 1,040,000: median (rank 3) 1,020,000,
// p99 (rank 5) 1,040,000.
std::vector<FlowSpec> chained_example() {
  FlowSpec first = flow(0, 1, 1000);
  first.start = Duration::us(2);
  return {first, flow_after(1, 2, 2000, 0, Duration()), flow_after(2, 3, 500, 1, Duration::ns(300)),
          flow(3, 0, 4000), flow_after(0, 2, 3000, 0, Duration())};
}

TEST_CASE("chained flows start the picosecond their predecessors complete, plus their delay") {
  Simulator sim;
  FakeNetwork network(sim);
  testing::MemoryBackend output;
  TrafficDriver driver(sim, network, chained_example(), output);
  driver.start();
  CHECK(sim.run() == RunOutcome::kDrained);
  driver.flush();

  CHECK(sim.now() == Time::from_ps(5'335'000));
  REQUIRE(driver.all_complete());
  const auto& outcomes = driver.outcomes();
  const std::vector<std::int64_t> starts = {2'000'000, 3'010'000, 4'330'000, 0, 3'010'000};
  const std::vector<std::int64_t> acks = {3'010'000, 4'030'000, 5'335'000, 1'040'000, 4'040'000};
  for (std::size_t i = 0; i < 5; ++i) {
    CAPTURE(i);
    REQUIRE(outcomes[i].start.has_value());
    REQUIRE(outcomes[i].times.has_value());
    CHECK(outcomes[i].start->ps() == starts[i]);
    CHECK(outcomes[i].times->acknowledged.ps() == acks[i]);
  }
  // Launch order: flow 3 at 0, flow 0 at 2 us, then flows 1 and 4 together in list order, flow 2.
  const auto& sent = network.sent();
  REQUIRE(sent.size() == 5);
  CHECK(sent[0].message.source == 3);
  CHECK(sent[1].message.source == 0);
  CHECK(sent[2].message.destination == 2);
  CHECK(sent[2].message.source == 1);
  CHECK(sent[3].message.source == 0);
  CHECK(sent[3].message.destination == 2);
  CHECK(sent[4].message.source == 2);

  const TrafficDriver::Summary summary = driver.summary();
  CHECK(summary.flows == 5);
  CHECK(summary.started == 5);
  CHECK(summary.completed == 5);
  CHECK(summary.first_start == std::optional<Time>(Time::zero()));
  CHECK(summary.last_completion == std::optional<Time>(Time::from_ps(5'335'000)));
  REQUIRE(summary.fct.has_value());
  CHECK(summary.fct->count == 5);
  CHECK(summary.fct->min == Duration::ps(1'005'000));
  CHECK(summary.fct->median == Duration::ps(1'020'000));
  CHECK(summary.fct->p99 == Duration::ps(1'040'000));
  CHECK(summary.fct->max == Duration::ps(1'040'000));
}

TEST_CASE("the flows table has one row per completed flow, in completion order, with units") {
  Simulator sim;
  FakeNetwork network(sim);
  testing::MemoryBackend output;
  TrafficDriver driver(sim, network, chained_example(), output);
  driver.start();
  (void)sim.run();
  driver.flush();

  const auto& layout = output.stored("flows").layout;
  std::vector<std::string> names;
  for (const Column& c : layout.columns) names.push_back(c.name);
  CHECK(names == std::vector<std::string>{"flow", "message", "source", "destination", "queue_pair",
                                          "bytes", "start_ps", "first_sent_ps", "delivered_ps",
                                          "acknowledged_ps", "fct_ps"});
  const auto rows = output.rows<TrafficDriver::FlowRow>("flows");
  REQUIRE(rows.size() == 5);
  std::vector<std::int64_t> order;
  for (const auto& row : rows) order.push_back(row.flow);
  CHECK(order == std::vector<std::int64_t>{3, 0, 1, 4, 2});
  const TrafficDriver::FlowRow& third = rows[4];  // flow 2
  CHECK(third.message == 104);
  CHECK(third.source == 2);
  CHECK(third.destination == 3);
  CHECK(third.bytes == 500);
  CHECK(third.start_ps == 4'330'000);
  CHECK(third.first_sent_ps == 4'330'000);
  CHECK(third.delivered_ps == 4'835'000);
  CHECK(third.acknowledged_ps == 5'335'000);
  CHECK(third.fct_ps == 1'005'000);
}

TEST_CASE("flows that wait on a flow still running have not started when the run is cut short") {
  Simulator sim;
  FakeNetwork network(sim);
  testing::MemoryBackend output;
  TrafficDriver driver(sim, network, chained_example(), output);
  driver.start();
  CHECK(sim.run(Time::from_ps(3'500'000)) == RunOutcome::kReachedLimit);
  const TrafficDriver::Summary summary = driver.summary();
  CHECK(summary.started == 4);  // flows 3, 0, 1 and 4; flow 2 waits for flow 1
  CHECK(summary.completed == 2);
  CHECK_FALSE(driver.all_complete());
  CHECK_FALSE(driver.outcomes()[2].start.has_value());
  REQUIRE(summary.fct.has_value());
  CHECK(summary.fct->count == 2);
  CHECK(summary.last_completion == std::optional<Time>(Time::from_ps(3'010'000)));
}

// Something that keeps the event set from ever draining, like a periodic sampler.
struct Ticker {
  Simulator& sim;
  void tick() { sim.schedule_in<&Ticker::tick>(Duration::us(1), this); }
};

TEST_CASE("the driver can stop the run once every flow is acknowledged") {
  Simulator sim;
  FakeNetwork network(sim);
  testing::MemoryBackend output;
  Ticker ticker{sim};
  ticker.tick();
  TrafficDriver driver(sim, network, chained_example(), output,
                       TrafficDriverOptions{.stop_when_settled = true});
  driver.start();
  CHECK(sim.run() == RunOutcome::kStopped);
  CHECK(sim.now() == Time::from_ps(5'335'000));
  CHECK(driver.all_complete());
}

TEST_CASE("a ring chain on the driver runs its hops back to back") {
  // Ring {0, 1, 2}, one chunk size of 1000 B: each hop takes 1.01 us; 3 chunks of 5 hops each run
  // in parallel, so each chunk's last hop is acknowledged at 5 x 1.01 us.
  Simulator sim;
  FakeNetwork network(sim);
  testing::MemoryBackend output;
  TrafficDriver driver(sim, network, traffic::ring_all_reduce_chains({{0, 1, 2}}, Bytes(1000)),
                       output);
  driver.start();
  (void)sim.run();
  REQUIRE(driver.all_complete());
  const auto& outcomes = driver.outcomes();
  REQUIRE(outcomes.size() == 15);
  for (std::size_t i = 0; i < 15; ++i) {
    CAPTURE(i);
    CHECK(outcomes[i].start->ps() == static_cast<std::int64_t>(i % 5) * 1'010'000);
  }
  CHECK(driver.summary().last_completion == std::optional<Time>(Time::from_ps(5'050'000)));
}

TEST_CASE("the driver rejects a bad flow list before scheduling anything, listing every problem") {
  Simulator sim;
  FakeNetwork network(sim);
  testing::MemoryBackend output;
  const std::vector<FlowSpec> flows = {flow(0, 9, 10), flow_after(1, 2, 10, 2, Duration()),
                                       flow_after(2, 1, 10, 1, Duration())};
  CHECK(thrown_message([&] { TrafficDriver driver(sim, network, flows, output); }) ==
        "traffic: 2 problems in the flow list:\n"
        "  flows[0].destination: 9 is not an endpoint of this network (0..3)\n"
        "  flows[1].after: the flows 1 -> 2 -> 1 wait on one another in a cycle, so none of them "
        "would ever start");
  CHECK(sim.pending() == 0);
}

}  // namespace
}  // namespace lockstep
