// Communicators: how their members are laid out by node, that their collectives touch only their
// members and run as they would on a network of their own, and that on a bare fabric their order
// decides the ring.
#include "models/collective/communicator.hpp"

#include <doctest/doctest.h>

#include <set>
#include <stdexcept>
#include <vector>

#include "flow_fabric.hpp"
#include "memory_backend.hpp"
#include "models/collective/ring_collective.hpp"
#include "models/transport/flow_network.hpp"
#include "small_topologies.hpp"

namespace lockstep {
namespace {

TEST_CASE("a communicator is laid out node by node, nodes and GPUs in the order given") {
  const CommunicatorLayout layout = communicator_layout({9, 1, 8, 0, 3, 10}, 16, 8);
  CHECK(layout.members == std::vector<std::int32_t>{9, 8, 10, 1, 0, 3});
  CHECK(layout.nodes == 2);
  CHECK(layout.gpus_per_node == 3);
  // On a bare fabric every endpoint is a node: the order stays as given.
  CHECK(communicator_layout({3, 0, 2}, 4, 1).members == std::vector<std::int32_t>{3, 0, 2});
}

TEST_CASE("a communicator with a rank out of range, twice, or uneven over its nodes is refused") {
  CHECK_THROWS_AS(static_cast<void>(communicator_layout({}, 16, 8)), std::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(communicator_layout({0, 16}, 16, 8)), std::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(communicator_layout({0, -1}, 16, 8)), std::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(communicator_layout({0, 1, 0}, 16, 8)), std::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(communicator_layout({0, 1, 8}, 16, 8)), std::invalid_argument);
}

// Passes messages on and remembers which endpoints and queue pairs sent.
class RecordingNetwork final : public Network {
 public:
  explicit RecordingNetwork(Network& inner) : inner_(inner) {}
  std::uint64_t send(std::int32_t source, std::int32_t destination, Bytes size,
                     std::uint32_t queue_pair, MessageListener& listener) override {
    endpoints.insert(source);
    endpoints.insert(destination);
    queue_pairs.insert(queue_pair);
    return inner_.send(source, destination, size, queue_pair, listener);
  }
  [[nodiscard]] std::int32_t endpoint_count() const override { return inner_.endpoint_count(); }
  [[nodiscard]] Duration latency(std::int32_t source, std::int32_t destination,
                                 std::uint32_t queue_pair) const override {
    return inner_.latency(source, destination, queue_pair);
  }

  std::set<std::int32_t> endpoints;
  std::set<std::uint32_t> queue_pairs;

 private:
  Network& inner_;
};

Duration ring_all_reduce(Network& network, Simulator& sim, std::int32_t ranks, Bytes size) {
  std::vector<std::int32_t> ring;
  for (std::int32_t r = 0; r < ranks; ++r) ring.push_back(r);
  RingCollective run(sim, network, {ring}, CollectiveOp::kAllReduce, size);
  run.start();
  static_cast<void>(sim.run());
  REQUIRE(run.finished());
  return run.finished_at() - run.started_at();
}

TEST_CASE("four of eight hosts on a switch all-reduce as four hosts alone, touching no other") {
  const Bytes size(64 << 20);
  Duration alone;
  {
    testing::FlowFabric fabric(testing::star(4));
    alone = ring_all_reduce(fabric.network, fabric.sim, 4, size);
  }
  testing::FlowFabric fabric(testing::star(8));
  RecordingNetwork recording(fabric.network);
  CommunicatorNetwork communicator(recording, {5, 2, 7, 0});
  CHECK(communicator.endpoint_count() == 4);
  CHECK(ring_all_reduce(communicator, fabric.sim, 4, size) == alone);
  CHECK(recording.endpoints == std::set<std::int32_t>{0, 2, 5, 7});
}

// Hears what a message's sender is told, in the communicator's terms.
class LastMessage final : public MessageListener {
 public:
  void on_message_complete(const Message& message, const MessageTimes& /*times*/) override {
    complete = message;
  }
  void on_message_delivered(const Message& message, Time /*delivered*/) override {
    delivered = message;
  }
  void on_message_failed(const Message& /*message*/, Time /*failed*/) override {}

  Message complete;
  Message delivered;
};

// A training job's communicators open queue pairs of their own: the cluster's network sees the
// communicator's queue pair 2 as 1,002, and the sender hears of it as 2, from local rank 1 to 0.
TEST_CASE("a communicator's queue pairs are the network's from its first on") {
  testing::FlowFabric fabric(testing::star(4));
  FlowNetwork& network = fabric.network;
  RecordingNetwork recording(network);
  CommunicatorNetwork communicator(recording, {3, 1}, 1000);
  CHECK(communicator.latency(1, 0, 2) == network.latency(1, 3, 1002));
  LastMessage listener;
  (void)communicator.send(1, 0, Bytes(4'000), 2, listener);
  static_cast<void>(fabric.sim.run());
  CHECK(recording.queue_pairs == std::set<std::uint32_t>{1002});
  CHECK(recording.endpoints == std::set<std::int32_t>{1, 3});
  for (const Message& heard : {listener.delivered, listener.complete}) {
    CHECK(heard.queue_pair == 2);
    CHECK(heard.source == 1);
    CHECK(heard.destination == 0);
  }
}

// Hosts 0, 1 on one switch and 2, 3 on another, one cable between the switches. The ring 0 1 2 3
// crosses it once each way; the ring 0 2 1 3 crosses it twice each way, so the two transfers that
// share each direction get half of it: a bandwidth-bound all-reduce takes twice as long.
TEST_CASE("on a bare fabric the communicator's order decides the ring") {
  auto all_reduce = [](std::vector<std::int32_t> order) {
    Simulator sim;
    const Topology topology =
        build_explicit(4, {{"left", Bytes(32'000'000)}, {"right", Bytes(32'000'000)}},
                       {{0, 4, testing::kRate, testing::kDelay},
                        {1, 4, testing::kRate, testing::kDelay},
                        {2, 5, testing::kRate, testing::kDelay},
                        {3, 5, testing::kRate, testing::kDelay},
                        {4, 5, testing::kRate, testing::kDelay}});
    const Routing routing(topology);
    testing::MemoryBackend output;
    FlowNetwork network(sim, routing, FlowNetworkConfig{}, 1, output);
    CommunicatorNetwork communicator(network, communicator_layout(order, 4, 1).members);
    return static_cast<double>(ring_all_reduce(communicator, sim, 4, Bytes(256 << 20)).ps());
  };
  CHECK(all_reduce({0, 2, 1, 3}) / all_reduce({0, 1, 2, 3}) == doctest::Approx(2.0).epsilon(0.01));
}

}  // namespace
}  // namespace lockstep
