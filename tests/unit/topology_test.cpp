#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "models/fabric/fat_tree.hpp"
#include "models/fabric/leaf_spine.hpp"
#include "models/fabric/rail_optimized.hpp"
#include "models/fabric/topology.hpp"

namespace lockstep {
namespace {

const LinkSpec kLink{BitRate::gbps(100), Duration::us(1)};
const Bytes kBuffer(32'000'000);

std::int32_t switches_named(const Topology& t, const std::string& prefix) {
  std::int32_t n = 0;
  for (NodeId s = t.endpoint_count(); s < t.node_count(); ++s) {
    if (t.switch_spec(s).name.rfind(prefix, 0) == 0) ++n;
  }
  return n;
}

NodeId named(const Topology& t, const std::string& name) {
  const NodeId id = t.find_switch(name);
  REQUIRE(id >= 0);
  return id;
}

std::vector<NodeId> peers(const Topology& t, NodeId node) {
  std::vector<NodeId> out;
  for (const Port& p : t.ports(node)) out.push_back(p.peer);
  return out;
}

std::int32_t cables_between(const Topology& t, NodeId a, NodeId b) {
  std::int32_t n = 0;
  for (const Port& p : t.ports(a)) n += p.peer == b ? 1 : 0;
  return n;
}

// Both ends of every cable name each other: port i at a node is the cable's end there, and the
// peer's port index points back.
void check_ports_are_consistent(const Topology& t) {
  std::size_t ends = 0;
  for (NodeId n = 0; n < t.node_count(); ++n) {
    const auto ports = t.ports(n);
    ends += ports.size();
    for (std::size_t i = 0; i < ports.size(); ++i) {
      const Port& back = t.port(ports[i].peer, ports[i].peer_port);
      CHECK(back.peer == n);
      CHECK(back.peer_port == i);
      CHECK(back.cable == ports[i].cable);
      const Cable& c = t.cable(ports[i].cable);
      CHECK(((c.a == n && c.b == ports[i].peer) || (c.b == n && c.a == ports[i].peer)));
    }
  }
  CHECK(ends == 2 * static_cast<std::size_t>(t.cable_count()));
}

// k-ary fat tree: k^3/4 hosts, k^2/2 ToR and agg, k^2/4 cores, and k^3/4 cables per tier.
TEST_CASE("a k=4 fat tree topology has 16 hosts, 8 ToRs, 8 aggs, 4 cores and 48 cables") {
  const Topology t = build_fat_tree(4, kLink, kBuffer);
  CHECK(t.endpoint_count() == 16);
  CHECK(t.switch_count() == 20);
  CHECK(switches_named(t, "tor") == 8);
  CHECK(switches_named(t, "agg") == 8);
  CHECK(switches_named(t, "core") == 4);
  CHECK(t.cable_count() == 48);
  check_ports_are_consistent(t);
}

TEST_CASE("a k=8 fat tree topology has 128 hosts, 32 ToRs, 32 aggs, 16 cores and 384 cables") {
  const Topology t = build_fat_tree(8, kLink, kBuffer);
  CHECK(t.endpoint_count() == 128);
  CHECK(switches_named(t, "tor") == 32);
  CHECK(switches_named(t, "agg") == 32);
  CHECK(switches_named(t, "core") == 16);
  CHECK(t.cable_count() == 384);
  for (const Cable& c : t.cables()) {
    CHECK(c.rate == BitRate::gbps(100));
    CHECK(c.delay == Duration::us(1));
  }
  CHECK(t.switch_spec(named(t, "core3")).buffer == kBuffer);
  check_ports_are_consistent(t);
}

TEST_CASE("the k=8 fat tree topology is wired exactly as the shared benchmarks number it") {
  const Topology t = build_fat_tree(8, kLink, kBuffer);
  // Spot checks quoted from benchmarks.md.
  CHECK(t.host_switch(5) == named(t, "tor1"));
  CHECK(peers(t, named(t, "tor5")) == std::vector<NodeId>{20, 21, 22, 23, named(t, "agg4"),
                                                          named(t, "agg5"), named(t, "agg6"),
                                                          named(t, "agg7")});
  CHECK(peers(t, named(t, "agg6")) == std::vector<NodeId>{named(t, "tor4"), named(t, "tor5"),
                                                          named(t, "tor6"), named(t, "tor7"),
                                                          named(t, "core2"), named(t, "core6"),
                                                          named(t, "core10"), named(t, "core14")});
  // And the whole rule, including the node ids the header promises (H = 128).
  for (NodeId h = 0; h < 128; ++h) CHECK(t.host_switch(h) == 128 + h / 4);
  for (std::int32_t tor = 0; tor < 32; ++tor) {
    CHECK(named(t, "tor" + std::to_string(tor)) == 128 + tor);
    for (std::int32_t j = 0; j < 4; ++j) {
      CHECK(t.port(128 + tor, static_cast<PortIndex>(4 + j)).peer == 160 + 4 * (tor / 4) + j);
    }
  }
  for (std::int32_t agg = 0; agg < 32; ++agg) {
    for (std::int32_t l = 0; l < 4; ++l) {
      CHECK(t.port(160 + agg, static_cast<PortIndex>(4 + l)).peer == 192 + agg % 4 + 4 * l);
    }
  }
  // A core's port p leads to pod p.
  for (std::int32_t core = 0; core < 16; ++core) {
    for (std::int32_t p = 0; p < 8; ++p) {
      CHECK(t.port(192 + core, static_cast<PortIndex>(p)).peer == 160 + 4 * p + core % 4);
    }
  }
}

TEST_CASE("a k=16 fat tree topology has 1024 hosts and links agg a to cores (a mod 8) + 8l") {
  const Topology t = build_fat_tree(16, kLink, kBuffer);
  CHECK(t.endpoint_count() == 1024);
  CHECK(switches_named(t, "tor") == 128);
  CHECK(switches_named(t, "agg") == 128);
  CHECK(switches_named(t, "core") == 64);
  CHECK(t.host_switch(1023) == named(t, "tor127"));
  const NodeId agg = named(t, "agg77");
  for (std::int32_t l = 0; l < 8; ++l) {
    CHECK(t.port(agg, static_cast<PortIndex>(8 + l)).peer ==
          named(t, "core" + std::to_string(77 % 8 + 8 * l)));
  }
}

TEST_CASE("a fat tree topology with an odd k or a bad link is rejected with a message") {
  CHECK_THROWS_WITH_AS(build_fat_tree(5, kLink, kBuffer),
                       "fat tree: k must be even and >= 2, got 5", std::invalid_argument);
  CHECK_THROWS_WITH_AS(build_fat_tree(0, kLink, kBuffer),
                       "fat tree: k must be even and >= 2, got 0", std::invalid_argument);
  CHECK_THROWS_WITH_AS(build_fat_tree(4, LinkSpec{BitRate::bps(0), Duration::us(1)}, kBuffer),
                       "fat tree link: rate must be positive, got 0 bit/s", std::invalid_argument);
  CHECK_THROWS_WITH_AS(build_fat_tree(4, LinkSpec{BitRate::gbps(1), Duration::ps(-1)}, kBuffer),
                       "fat tree link: delay must not be negative, got -1 ps",
                       std::invalid_argument);
}

TEST_CASE(
    "a leaf-spine topology spreads uplinks round robin, so extra uplinks become parallel cables") {
  const LeafSpineSpec spec{.leaves = 3,
                           .spines = 2,
                           .hosts_per_leaf = 12,
                           .uplinks_per_leaf = 5,
                           .host_link = kLink,
                           .fabric_link = kLink,
                           .switch_buffer = kBuffer};
  const Topology t = build_leaf_spine(spec);
  CHECK(t.endpoint_count() == 36);
  CHECK(switches_named(t, "leaf") == 3);
  CHECK(switches_named(t, "spine") == 2);
  CHECK(t.cable_count() == 36 + 3 * 5);
  CHECK(t.host_switch(13) == named(t, "leaf1"));
  // Uplinks 0, 2, 4 go to spine 0 and 1, 3 to spine 1.
  CHECK(cables_between(t, named(t, "leaf2"), named(t, "spine0")) == 3);
  CHECK(cables_between(t, named(t, "leaf2"), named(t, "spine1")) == 2);
  CHECK(t.port(named(t, "leaf0"), 12 + 3).peer == named(t, "spine1"));
  // 12 hosts x 100 Gb/s in, 5 x 100 Gb/s out.
  CHECK(oversubscription(spec) == doctest::Approx(12.0 / 5.0));
  check_ports_are_consistent(t);
}

TEST_CASE("a leaf-spine topology's oversubscription follows from host and fabric rates") {
  LeafSpineSpec spec{.leaves = 2,
                     .spines = 4,
                     .hosts_per_leaf = 16,
                     .uplinks_per_leaf = 4,
                     .host_link = {BitRate::gbps(100), Duration::ns(100)},
                     .fabric_link = {BitRate::gbps(400), Duration::ns(500)},
                     .switch_buffer = kBuffer};
  CHECK(oversubscription(spec) == doctest::Approx(1.0));  // 1600 / 1600 Gb/s
  spec.fabric_link.rate = BitRate::gbps(200);
  CHECK(oversubscription(spec) == doctest::Approx(2.0));
}

TEST_CASE("a leaf-spine topology with fewer uplinks than spines is rejected") {
  CHECK_THROWS_WITH_AS(build_leaf_spine({.leaves = 2,
                                         .spines = 4,
                                         .hosts_per_leaf = 2,
                                         .uplinks_per_leaf = 3,
                                         .host_link = kLink,
                                         .fabric_link = kLink,
                                         .switch_buffer = kBuffer}),
                       "leaf-spine: uplinks_per_leaf (one per spine at least) must be >= 4, got 3",
                       std::invalid_argument);
}

TEST_CASE("a rail-optimized topology puts NIC i of every server on rail switch i") {
  const Topology t = build_rail_optimized({.servers = 4,
                                           .nics_per_server = 8,
                                           .spines = 2,
                                           .uplinks_per_rail_switch = 4,
                                           .nic_link = kLink,
                                           .fabric_link = kLink,
                                           .switch_buffer = kBuffer});
  CHECK(t.endpoint_count() == 32);
  CHECK(switches_named(t, "rail") == 8);
  CHECK(switches_named(t, "spine") == 2);
  for (std::int32_t server = 0; server < 4; ++server) {
    for (std::int32_t nic = 0; nic < 8; ++nic) {
      CHECK(t.host_switch(server * 8 + nic) == named(t, "rail" + std::to_string(nic)));
    }
  }
  // A rail switch: its NICs in server order, then its uplinks.
  const NodeId rail3 = named(t, "rail3");
  CHECK(peers(t, rail3) == std::vector<NodeId>{3, 11, 19, 27, named(t, "spine0"),
                                               named(t, "spine1"), named(t, "spine0"),
                                               named(t, "spine1")});
  check_ports_are_consistent(t);
}

TEST_CASE("rail groups give each group of a rail-optimized topology its own rail switches") {
  const Topology t = build_rail_optimized({.servers = 5,
                                           .nics_per_server = 2,
                                           .servers_per_rail_group = 2,
                                           .spines = 1,
                                           .uplinks_per_rail_switch = 1,
                                           .nic_link = kLink,
                                           .fabric_link = kLink,
                                           .switch_buffer = kBuffer});
  // Groups {0,1}, {2,3}, {4}: three groups of two rails.
  CHECK(switches_named(t, "rail") == 6);
  CHECK(t.host_switch(3 * 2 + 1) == named(t, "rail3"));
  CHECK(t.host_switch(4 * 2 + 0) == named(t, "rail4"));
}

TEST_CASE("a rail-optimized topology with uplinks but no spines is rejected") {
  CHECK_THROWS_WITH_AS(build_rail_optimized({.servers = 2,
                                             .nics_per_server = 2,
                                             .spines = 0,
                                             .uplinks_per_rail_switch = 1,
                                             .nic_link = kLink,
                                             .fabric_link = kLink,
                                             .switch_buffer = kBuffer}),
                       "rail-optimized: uplinks_per_rail_switch must be 0 without spines, got 1",
                       std::invalid_argument);
}

TEST_CASE("each node's ports in a topology follow the order of the cable list") {
  // Two hosts on switch s0 (node 2), s0 double-linked to s1 (node 3).
  const Topology t = build_explicit(2, {{"s0", kBuffer}, {"s1", kBuffer}},
                                    {{2, 3, kLink.rate, kLink.delay},
                                     {0, 2, kLink.rate, kLink.delay},
                                     {3, 2, kLink.rate, kLink.delay},
                                     {1, 2, kLink.rate, kLink.delay}});
  CHECK(peers(t, 2) == std::vector<NodeId>{3, 0, 3, 1});
  CHECK(peers(t, 3) == std::vector<NodeId>{2, 2});
  CHECK(t.port(2, 2).cable == 2);
  CHECK(t.port(2, 2).peer_port == 1);
  CHECK(t.host_switch(1) == 2);
  CHECK(t.host_switch_port(1) == 3);
  CHECK(t.find_switch("s1") == 3);
  CHECK(t.find_switch("s9") == -1);
  check_ports_are_consistent(t);
}

TEST_CASE("an explicit topology with a cable to an unknown node is rejected with its message") {
  CHECK_THROWS_WITH_AS(
      build_explicit(2, {{"s0", kBuffer}},
                     {{0, 2, kLink.rate, kLink.delay}, {1, 7, kLink.rate, kLink.delay}}),
      "cable 1: node 7 does not exist (endpoints are 0..1, switches 2..2)", std::invalid_argument);
}

TEST_CASE("explicit topologies reject multi-homed endpoints, host-to-host cables and loops") {
  const std::vector<SwitchSpec> two{{"s0", kBuffer}, {"s1", kBuffer}};
  CHECK_THROWS_WITH_AS(
      build_explicit(1, two, {{0, 1, kLink.rate, kLink.delay}, {0, 2, kLink.rate, kLink.delay}}),
      "endpoint 0 has 2 cables; an endpoint has exactly one (give a multi-NIC "
      "server one endpoint per NIC)",
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(build_explicit(2, two, {{0, 1, kLink.rate, kLink.delay}}),
                       "cable 0: joins two endpoints (0 and 1); an endpoint connects to a switch",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      build_explicit(1, two, {{0, 1, kLink.rate, kLink.delay}, {2, 2, kLink.rate, kLink.delay}}),
      "cable 1: joins node 2 to itself", std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      build_explicit(1, {{"s0", kBuffer}, {"s0", kBuffer}}, {{0, 1, kLink.rate, kLink.delay}}),
      "switch 1: name \"s0\" is already used", std::invalid_argument);
  CHECK_THROWS_WITH_AS(build_explicit(1, two, {}),
                       "endpoint 0 has 0 cables; an endpoint has exactly one (give a multi-NIC "
                       "server one endpoint per NIC)",
                       std::invalid_argument);
}

TEST_CASE("a topology's cable delay is 5 ns per metre, exact to the millimetre") {
  CHECK(delay_for_cable(0.0) == Duration());
  CHECK(delay_for_cable(2.0) == Duration::ns(10));
  CHECK(delay_for_cable(0.001) == Duration::ps(5));
  CHECK(delay_for_cable(200.0) == Duration::us(1));  // HPCC's 1 us link is about 200 m
  CHECK(delay_for_cable(3.3) == Duration::ps(16'500));
  CHECK_THROWS_AS((void)delay_for_cable(-1.0), std::invalid_argument);
}

TEST_CASE("nodes are found by switch name or host<i>, and cables by their two ends") {
  const Topology t = build_explicit(
      2, {{"sw", Bytes(1000)}},
      {{0, 2, BitRate::gbps(100), Duration::us(1)}, {2, 1, BitRate::gbps(100), Duration::us(1)}});
  CHECK(t.find_node("sw") == 2);
  CHECK(t.find_node("host1") == 1);
  CHECK(t.find_node("host2") == -1);
  CHECK(t.find_node("host") == -1);
  CHECK(t.find_node("host-1") == -1);
  CHECK(t.find_node("host1x") == -1);
  CHECK(t.cable_between(1, 2) == 1);
  CHECK(t.cable_between(2, 0) == 0);
  CHECK(t.cable_between(0, 1) == -1);
  CHECK(host_index("host07") == 7);
  CHECK_FALSE(host_index("sw"));
}

}  // namespace
}  // namespace lockstep
