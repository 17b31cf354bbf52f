#include "models/fabric/routing.hpp"

// Boost.Graph stays in this file: it is heavy to compile and needed only while tables are built.
#include <algorithm>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/visitors.hpp>
#include <boost/property_map/property_map.hpp>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

namespace lockstep {
namespace {

using Graph = boost::compressed_sparse_row_graph<boost::directedS>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;

// The working switch-to-switch cables of each switch, by switch row (node id - endpoint count).
// Endpoints never forward, so they are left out of the search.
struct FabricAdjacency {
  std::vector<std::int32_t> begin;  // rows + 1 offsets
  std::vector<PortIndex> port;
  std::vector<std::int32_t> peer_row;
};

FabricAdjacency fabric_adjacency(const Topology& topology,
                                 const std::vector<std::uint8_t>& cable_up) {
  const std::int32_t first_switch = topology.endpoint_count();
  FabricAdjacency adjacency;
  adjacency.begin.reserve(static_cast<std::size_t>(topology.switch_count()) + 1);
  adjacency.begin.push_back(0);
  for (std::int32_t row = 0; row < topology.switch_count(); ++row) {
    const std::span<const Port> ports = topology.ports(first_switch + row);
    for (std::size_t p = 0; p < ports.size(); ++p) {
      if (!topology.is_switch(ports[p].peer)) continue;
      if (cable_up[static_cast<std::size_t>(ports[p].cable)] == 0) continue;
      adjacency.port.push_back(static_cast<PortIndex>(p));
      adjacency.peer_row.push_back(ports[p].peer - first_switch);
    }
    adjacency.begin.push_back(static_cast<std::int32_t>(adjacency.port.size()));
  }
  return adjacency;
}

// Identical ECMP sets are stored once. The map is keyed by lockstep's hash of the set and only
// looked up, never iterated, so its order cannot leak into results; on a (64-bit) collision the set
// is simply stored again.
class SetPool final {
 public:
  explicit SetPool(std::vector<PortIndex>& pool) : pool_(pool) {}

  [[nodiscard]] std::uint32_t intern(const std::vector<PortIndex>& set) {
    std::uint64_t key = set.size();
    for (const PortIndex p : set) key = hash_combine(key, p);
    const auto [it, inserted] = offsets_.try_emplace(key, 0);
    if (!inserted && it->second + set.size() <= pool_.size() &&
        std::equal(set.begin(), set.end(), pool_.begin() + it->second)) {
      return it->second;
    }
    if (pool_.size() + set.size() > std::numeric_limits<std::uint32_t>::max()) {
      throw std::length_error("routing: more distinct ECMP sets than 32-bit offsets can address");
    }
    const auto offset = static_cast<std::uint32_t>(pool_.size());
    pool_.insert(pool_.end(), set.begin(), set.end());
    if (inserted) it->second = offset;
    return offset;
  }

 private:
  std::vector<PortIndex>& pool_;
  std::unordered_map<std::uint64_t, std::uint32_t> offsets_;
};

}  // namespace

Routing::Routing(const Topology& topology, std::span<const CableId> failed_cables)
    : topology_(&topology),
      endpoint_count_(topology.endpoint_count()),
      node_count_(topology.node_count()),
      cable_up_(static_cast<std::size_t>(topology.cable_count()), 1) {
  for (const CableId c : failed_cables) {
    if (c < 0 || c >= topology.cable_count()) {
      throw std::invalid_argument("routing: failed cable " + std::to_string(c) +
                                  " does not exist (cables are 0.." +
                                  std::to_string(topology.cable_count() - 1) + ")");
    }
    cable_up_[static_cast<std::size_t>(c)] = 0;
  }

  // Columns: switches with at least one endpoint, in node order.
  const std::int32_t switches = topology.switch_count();
  std::vector<std::int32_t> column_of_row(static_cast<std::size_t>(switches), -1);
  for (NodeId x = 0; x < endpoint_count_; ++x) {
    column_of_row[static_cast<std::size_t>(topology.host_switch(x) - endpoint_count_)] = 0;
  }
  std::vector<std::int32_t> row_of_column;
  for (std::int32_t row = 0; row < switches; ++row) {
    if (column_of_row[static_cast<std::size_t>(row)] < 0) continue;
    column_of_row[static_cast<std::size_t>(row)] = static_cast<std::int32_t>(row_of_column.size());
    row_of_column.push_back(row);
  }
  columns_ = static_cast<std::int32_t>(row_of_column.size());

  endpoints_.resize(static_cast<std::size_t>(endpoint_count_));
  for (NodeId x = 0; x < endpoint_count_; ++x) {
    const std::int32_t row = topology.host_switch(x) - endpoint_count_;
    endpoints_[static_cast<std::size_t>(x)] = EndpointRoute{
        row, column_of_row[static_cast<std::size_t>(row)], topology.host_switch_port(x),
        cable_up_[static_cast<std::size_t>(topology.ports(x)[0].cable)] != 0};
  }

  const FabricAdjacency adjacency = fabric_adjacency(topology, cable_up_);
  std::vector<std::pair<Vertex, Vertex>> arcs;
  arcs.reserve(adjacency.port.size());
  for (std::int32_t row = 0; row < switches; ++row) {
    for (auto i = adjacency.begin[static_cast<std::size_t>(row)];
         i < adjacency.begin[static_cast<std::size_t>(row) + 1]; ++i) {
      arcs.emplace_back(static_cast<Vertex>(row),
                        static_cast<Vertex>(adjacency.peer_row[static_cast<std::size_t>(i)]));
    }
  }
  const Graph graph(boost::edges_are_unsorted_multi_pass, arcs.begin(), arcs.end(),
                    static_cast<std::size_t>(switches));
  const auto index = boost::get(boost::vertex_index, graph);
  std::vector<std::int32_t> hops(static_cast<std::size_t>(switches));
  std::vector<boost::default_color_type> colors(static_cast<std::size_t>(switches));
  auto hops_map = boost::make_iterator_property_map(hops.begin(), index);
  auto color_map = boost::make_iterator_property_map(colors.begin(), index);

  SetPool interned(pool_);
  (void)interned.intern({0});  // offset 0: the endpoints' only port
  sets_.resize(static_cast<std::size_t>(switches) * static_cast<std::size_t>(columns_));
  std::vector<PortIndex> set;
  std::vector<EcmpSet> previous(static_cast<std::size_t>(switches));
  for (std::int32_t column = 0; column < columns_; ++column) {
    // Hop counts to this edge switch; links are symmetric, so distances from it are distances to
    // it.
    const std::int32_t target = row_of_column[static_cast<std::size_t>(column)];
    std::fill(hops.begin(), hops.end(), -1);
    hops[static_cast<std::size_t>(target)] = 0;
    boost::breadth_first_search(graph, static_cast<Vertex>(target),
                                boost::visitor(boost::make_bfs_visitor(boost::record_distances(
                                                   hops_map, boost::on_tree_edge())))
                                    .color_map(color_map));

    for (std::int32_t row = 0; row < switches; ++row) {
      const std::int32_t here = hops[static_cast<std::size_t>(row)];
      if (row == target || here < 0) continue;  // the edge switch uses its direct ports
      set.clear();
      for (auto i = adjacency.begin[static_cast<std::size_t>(row)];
           i < adjacency.begin[static_cast<std::size_t>(row) + 1]; ++i) {
        const auto peer = static_cast<std::size_t>(adjacency.peer_row[static_cast<std::size_t>(i)]);
        if (hops[peer] == here - 1) set.push_back(adjacency.port[static_cast<std::size_t>(i)]);
      }
      EcmpSet& cell = sets_[static_cast<std::size_t>(row) * static_cast<std::size_t>(columns_) +
                            static_cast<std::size_t>(column)];
      // Most destinations look alike from one switch (all "up", say), so comparing with this
      // row's previous set first skips the hash for most cells: it halves the build time.
      EcmpSet& before = previous[static_cast<std::size_t>(row)];
      if (before.size == set.size() &&
          std::equal(set.begin(), set.end(), pool_.begin() + before.offset)) {
        cell = before;
        continue;
      }
      cell.offset = interned.intern(set);
      cell.size = static_cast<std::uint16_t>(set.size());
      before = cell;
    }
  }
  pool_.shrink_to_fit();
}

std::vector<Hop> Routing::path(NodeId source, NodeId destination,
                               std::uint64_t flow_entropy) const {
  assert(source >= 0 && source < endpoint_count_);
  std::vector<Hop> hops;
  NodeId node = source;
  while (node != destination) {
    const PortIndex port = choose_port(node, destination, flow_entropy);
    if (port == kNoPort) return {};
    const Port& cable_end = topology_->port(node, port);
    hops.push_back(Hop{node, port, cable_end.cable});
    node = cable_end.peer;
    // Every hop is one step closer, so a path never revisits a node.
    assert(hops.size() <= static_cast<std::size_t>(node_count_));
  }
  return hops;
}

std::size_t Routing::table_bytes() const {
  return endpoints_.capacity() * sizeof(EndpointRoute) + sets_.capacity() * sizeof(EcmpSet) +
         pool_.capacity() * sizeof(PortIndex) + cable_up_.capacity();
}

Duration path_latency(const Topology& topology, const std::vector<Hop>& hops, Bytes packet) {
  Duration total;
  for (std::size_t i = 0; i < hops.size(); ++i) {
    const Cable& cable = topology.cable(hops[i].cable);
    total += cable.delay;
    if (i > 0 && cable.rate.bps() > 0) total += tx_time(packet, cable.rate);
  }
  return total;
}

}  // namespace lockstep
