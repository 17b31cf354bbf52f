#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

#include "models/fabric/fat_tree.hpp"
#include "models/fabric/leaf_spine.hpp"
#include "models/fabric/rail_optimized.hpp"
#include "models/fabric/routing.hpp"
#include "models/fabric/topology.hpp"
#include "sim/core/random.hpp"

namespace lockstep {
namespace {

const LinkSpec kLink{BitRate::gbps(100), Duration::us(1)};
const Bytes kBuffer(32'000'000);

std::vector<PortIndex> as_vector(std::span<const PortIndex> ports) {
  return {ports.begin(), ports.end()};
}

// A path is well formed when it starts at the source, each hop leaves the node the previous one
// reached, it uses only working cables, and it ends at the destination.
void check_path_connects(const Routing& routing, NodeId source, NodeId destination,
                         const std::vector<Hop>& path) {
  const Topology& t = routing.topology();
  REQUIRE(!path.empty());
  NodeId at = source;
  for (const Hop& hop : path) {
    CHECK(hop.node == at);
    const Port& port = t.port(hop.node, hop.port);
    CHECK(port.cable == hop.cable);
    CHECK(routing.cable_up(hop.cable));
    at = port.peer;
  }
  CHECK(at == destination);
}

TEST_CASE(
    "routing in a k=8 fat tree takes 2 cables under one ToR, 4 within a pod and 6 between pods") {
  const Topology t = build_fat_tree(8, kLink, kBuffer);
  const Routing routing(t);
  for (NodeId s = 0; s < 128; ++s) {
    for (NodeId d = 0; d < 128; ++d) {
      if (s == d) continue;
      const std::uint64_t entropy =
          static_cast<std::uint64_t>(s) * 131 + static_cast<std::uint64_t>(d);
      const std::vector<Hop> path = routing.path(s, d, entropy);
      const std::size_t expected = s / 4 == d / 4 ? 2 : s / 16 == d / 16 ? 4 : 6;
      CHECK(path.size() == expected);
      check_path_connects(routing, s, d, path);
    }
  }
  CHECK(routing.path(7, 7, 0).empty());
  CHECK(!routing.reachable(7, 7));
}

TEST_CASE("k=8 fat tree ECMP sets have k/2 ports going up and one going down") {
  const Topology t = build_fat_tree(8, kLink, kBuffer);
  const Routing routing(t);
  const NodeId tor0 = t.find_switch("tor0");
  const NodeId agg0 = t.find_switch("agg0");
  const NodeId core5 = t.find_switch("core5");
  const std::vector<PortIndex> up{4, 5, 6, 7};  // ToR and agg up-links follow their 4 down-links
  // ToR: a host elsewhere in the pod or in another pod is reached through any agg.
  CHECK(as_vector(routing.next_ports(tor0, 5)) == up);
  CHECK(as_vector(routing.next_ports(tor0, 100)) == up);
  // ToR: its own hosts by their own port.
  CHECK(as_vector(routing.next_ports(tor0, 2)) == std::vector<PortIndex>{2});
  // Agg: another pod through any of its cores; its own pod through the one ToR.
  CHECK(as_vector(routing.next_ports(agg0, 100)) == up);
  CHECK(as_vector(routing.next_ports(agg0, 13)) == std::vector<PortIndex>{3});
  // Core: one way down, the port of the destination's pod (host 100 is in pod 6).
  CHECK(as_vector(routing.next_ports(core5, 100)) == std::vector<PortIndex>{6});
  // An endpoint has only its NIC's port.
  CHECK(as_vector(routing.next_ports(9, 100)) == std::vector<PortIndex>{0});
}

TEST_CASE("k=4 fat tree ECMP sets have 2 ports going up") {
  const Topology t = build_fat_tree(4, kLink, kBuffer);
  const Routing routing(t);
  CHECK(routing.next_ports(t.find_switch("tor3"), 0).size() == 2);
  CHECK(routing.next_ports(t.find_switch("agg3"), 0).size() == 2);
  CHECK(routing.next_ports(t.find_switch("core1"), 0).size() == 1);
  CHECK(routing.path(0, 15, 99).size() == 6);
}

TEST_CASE("identical ECMP sets are stored once") {
  const Topology t = build_fat_tree(8, kLink, kBuffer);
  const Routing routing(t);
  // Every ToR's up set, whatever the destination, is one run of the shared pool.
  const PortIndex* first = routing.next_ports(t.find_switch("tor0"), 100).data();
  CHECK(routing.next_ports(t.find_switch("tor0"), 40).data() == first);
  CHECK(routing.next_ports(t.find_switch("tor9"), 3).data() == first);
  CHECK(routing.next_ports(t.find_switch("agg17"), 3).data() == first);
}

TEST_CASE("one flow entropy always takes one path, in any Routing built from the topology") {
  const Topology t = build_fat_tree(8, kLink, kBuffer);
  const Routing a(t);
  const Routing b(t);
  RandomStream rng(7, "test.routing.same_path", 0);
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t entropy = rng.next_u64();
    const auto s = static_cast<NodeId>(rng.below(128));
    const auto d = static_cast<NodeId>((s + 1 + static_cast<NodeId>(rng.below(127))) % 128);
    const std::vector<Hop> first = a.path(s, d, entropy);
    const std::vector<Hop> again = a.path(s, d, entropy);
    const std::vector<Hop> other = b.path(s, d, entropy);
    REQUIRE(first.size() == again.size());
    REQUIRE(first.size() == other.size());
    for (std::size_t h = 0; h < first.size(); ++h) {
      CHECK(first[h].port == again[h].port);
      CHECK(first[h].port == other[h].port);
    }
  }
}

// Each spine's count over n flows is Binomial(n, 1/8) when the hash is uniform: mean n/8, standard
// deviation sqrt(n * 1/8 * 7/8) = 33.07 for n = 10,000. Five sigma is 165.4, so every spine must
// carry 1250 +- 166 flows (12.5% +- 1.66 points); a fair hash fails this with probability about
// 8 * 5.7e-7.
TEST_CASE("ECMP over 8 spines loads each within 5 sigma of 1/8 of 10,000 random flows") {
  const Topology t = build_leaf_spine({.leaves = 2,
                                       .spines = 8,
                                       .hosts_per_leaf = 16,
                                       .uplinks_per_leaf = 8,
                                       .host_link = kLink,
                                       .fabric_link = kLink,
                                       .switch_buffer = kBuffer});
  const Routing routing(t);
  const NodeId leaf0 = t.find_switch("leaf0");
  const NodeId first_spine = t.find_switch("spine0");
  REQUIRE(routing.next_ports(leaf0, 20).size() == 8);
  RandomStream rng(2024, "test.routing.ecmp_balance", 0);
  constexpr int kFlows = 10'000;
  std::array<int, 8> per_spine{};
  for (int i = 0; i < kFlows; ++i) {
    const auto source = static_cast<NodeId>(rng.below(16));
    const auto destination = static_cast<NodeId>(16 + rng.below(16));
    const std::vector<Hop> path = routing.path(source, destination, rng.next_u64());
    REQUIRE(path.size() == 4);
    const NodeId spine = t.port(path[1].node, path[1].port).peer;
    ++per_spine[static_cast<std::size_t>(spine - first_spine)];
  }
  const double mean = kFlows / 8.0;
  const double bound = 5.0 * std::sqrt(kFlows * (1.0 / 8.0) * (7.0 / 8.0));
  for (const int count : per_spine) {
    CHECK(std::abs(count - mean) <= bound);
  }
}

// With 4 choices at the ToR and 4 at the agg (k=8, destination in another pod), independent
// uniform choices put each of the 16 (ToR port, agg port) pairs at Binomial(n, 1/16): for n =
// 16,000, mean 1000 and sigma sqrt(16000 * 1/16 * 15/16) = 30.6, so 5 sigma is 153. If the agg's
// choice were a function of the ToR's, 12 of the 16 cells would be empty.
TEST_CASE("the agg's ECMP choice is independent of the ToR's") {
  const Topology t = build_fat_tree(8, kLink, kBuffer);
  const Routing routing(t);
  RandomStream rng(99, "test.routing.independence", 0);
  constexpr int kFlows = 16'000;
  std::array<std::array<int, 4>, 4> joint{};
  for (int i = 0; i < kFlows; ++i) {
    const std::vector<Hop> path = routing.path(1, 70, rng.next_u64());
    REQUIRE(path.size() == 6);
    const int at_tor = path[1].port - 4;
    const int at_agg = path[2].port - 4;
    REQUIRE((at_tor >= 0 && at_tor < 4 && at_agg >= 0 && at_agg < 4));
    ++joint[static_cast<std::size_t>(at_tor)][static_cast<std::size_t>(at_agg)];
  }
  const double mean = kFlows / 16.0;
  const double bound = 5.0 * std::sqrt(kFlows * (1.0 / 16.0) * (15.0 / 16.0));
  for (const auto& row : joint) {
    for (const int count : row) CHECK(std::abs(count - mean) <= bound);
  }
}

TEST_CASE("leaf-spine ECMP uses every uplink, parallel cables included") {
  const Topology t = build_leaf_spine({.leaves = 2,
                                       .spines = 2,
                                       .hosts_per_leaf = 4,
                                       .uplinks_per_leaf = 4,
                                       .host_link = kLink,
                                       .fabric_link = kLink,
                                       .switch_buffer = kBuffer});
  const Routing routing(t);
  CHECK(as_vector(routing.next_ports(t.find_switch("leaf0"), 6)) ==
        std::vector<PortIndex>{4, 5, 6, 7});
  // Spine 1's ports: leaf 0 uplinks 1 and 3, then leaf 1 uplinks 1 and 3.
  CHECK(as_vector(routing.next_ports(t.find_switch("spine1"), 6)) == std::vector<PortIndex>{2, 3});
}

TEST_CASE(
    "rail-optimized routing: a NIC's rail switch is one hop, same-rail NICs are 2 cables apart") {
  const RailOptimizedSpec spec{.servers = 4,
                               .nics_per_server = 8,
                               .spines = 2,
                               .uplinks_per_rail_switch = 2,
                               .nic_link = kLink,
                               .fabric_link = kLink,
                               .switch_buffer = kBuffer};
  const Topology t = build_rail_optimized(spec);
  const Routing routing(t);
  for (std::int32_t nic = 0; nic < 8; ++nic) {
    const NodeId here = 0 * 8 + nic;
    const NodeId there = 3 * 8 + nic;
    const std::vector<Hop> path = routing.path(here, there, 1);
    REQUIRE(path.size() == 2);
    CHECK(t.port(here, path[0].port).peer == t.find_switch("rail" + std::to_string(nic)));
    check_path_connects(routing, here, there, path);
  }
  // Another rail goes through a spine.
  CHECK(routing.path(0, 3 * 8 + 1, 1).size() == 4);

  // Without spines, rails are separate networks.
  RailOptimizedSpec rail_only = spec;
  rail_only.spines = 0;
  rail_only.uplinks_per_rail_switch = 0;
  const Topology isolated = build_rail_optimized(rail_only);
  const Routing isolated_routing(isolated);
  CHECK(isolated_routing.path(0, 8 * 2, 1).size() == 2);
  CHECK(!isolated_routing.reachable(0, 8 * 2 + 1));
  CHECK(isolated_routing.choose_port(0, 8 * 2 + 1, 1) == Routing::kNoPort);
  CHECK(isolated_routing.path(0, 8 * 2 + 1, 1).empty());
}

TEST_CASE("only shortest paths are ECMP candidates in an explicit topology") {
  // Host 0 on s0 (node 2), host 1 on s3 (node 5). s0-s1-s3 and s0-s2-s3 are 2 switch hops,
  // s0-s4-s5-s3 is 3 (switch nodes 2..7).
  const LinkSpec l = kLink;
  const Topology t = build_explicit(2,
                                    {{"s0", kBuffer},
                                     {"s1", kBuffer},
                                     {"s2", kBuffer},
                                     {"s3", kBuffer},
                                     {"s4", kBuffer},
                                     {"s5", kBuffer}},
                                    {{0, 2, l.rate, l.delay},
                                     {1, 5, l.rate, l.delay},
                                     {2, 6, l.rate, l.delay},
                                     {2, 3, l.rate, l.delay},
                                     {2, 4, l.rate, l.delay},
                                     {3, 5, l.rate, l.delay},
                                     {4, 5, l.rate, l.delay},
                                     {6, 7, l.rate, l.delay},
                                     {7, 5, l.rate, l.delay}});
  const Routing routing(t);
  // s0's ports: host 0, s4, s1, s2.
  CHECK(as_vector(routing.next_ports(2, 1)) == std::vector<PortIndex>{2, 3});
  CHECK(as_vector(routing.next_ports(2, 0)) == std::vector<PortIndex>{0});
  // s4 (node 6; ports s0, s5) is 2 switch hops from s3 through s5 and 3 through s0, but next to s0.
  CHECK(as_vector(routing.next_ports(6, 1)) == std::vector<PortIndex>{1});
  CHECK(as_vector(routing.next_ports(6, 0)) == std::vector<PortIndex>{0});
  CHECK(routing.path(0, 1, 3).size() == 4);
}

TEST_CASE("routing leaves a failed cable out of new paths and can find a host unreachable") {
  const Topology t = build_fat_tree(4, kLink, kBuffer);
  // Cable 16 is the first ToR-agg cable: tor0 (port 2) to agg0.
  REQUIRE(t.cable(16).a == t.find_switch("tor0"));
  REQUIRE(t.cable(16).b == t.find_switch("agg0"));
  const std::vector<CableId> failed{16};
  const Routing routing(t, failed);
  CHECK(!routing.cable_up(16));
  CHECK(as_vector(routing.next_ports(t.find_switch("tor0"), 15)) == std::vector<PortIndex>{3});
  for (std::uint64_t e = 0; e < 64; ++e) {
    const std::vector<Hop> path = routing.path(0, 15, e);
    CHECK(path.size() == 6);
    check_path_connects(routing, 0, 15, path);
  }
  // tor1 reaches tor0 only through agg1 now: agg0 has lost its cable to tor0.
  CHECK(as_vector(routing.next_ports(t.find_switch("tor1"), 0)) == std::vector<PortIndex>{3});
  const std::vector<Hop> around = routing.path(2, 0, 5);
  check_path_connects(routing, 2, 0, around);
  CHECK(around.size() == 4);  // host 2 - tor1 - agg1 - tor0 - host 0

  // Failing host 15's cable (cable 15) isolates it.
  const std::vector<CableId> host_cable{15};
  const Routing without_host(t, host_cable);
  CHECK(!without_host.reachable(0, 15));
  CHECK(!without_host.reachable(15, 0));
  CHECK(without_host.next_ports(t.find_switch("core0"), 15).empty());
  CHECK(without_host.reachable(0, 14));
}

TEST_CASE("routing rejects a failed cable that does not exist") {
  const Topology t = build_fat_tree(4, kLink, kBuffer);
  const std::vector<CableId> failed{48};
  CHECK_THROWS_WITH_AS(Routing(t, failed),
                       "routing: failed cable 48 does not exist (cables are 0..47)",
                       std::invalid_argument);
}

}  // namespace
}  // namespace lockstep
