#include "models/traffic/traffic_generators.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/core/random.hpp"

namespace lockstep::traffic {
namespace {

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument(message);
}

void require_positive_size(const char* generator, const char* argument, Bytes size) {
  require(size > Bytes(0), std::string(generator) + ": " + argument +
                               " must be at least 1 B, got " + std::to_string(size.count()) + " B");
}

// The smallest host listed more than once, found in a sorted copy (n log n, no set).
std::optional<std::int32_t> first_repeated(std::vector<std::int32_t> hosts) {
  std::sort(hosts.begin(), hosts.end());
  const auto repeated = std::adjacent_find(hosts.begin(), hosts.end());
  if (repeated == hosts.end()) return {};
  return *repeated;
}

FlowSpec flow(std::int32_t source, std::int32_t destination, Bytes size) {
  FlowSpec spec;
  spec.source = source;
  spec.destination = destination;
  spec.size = size;
  return spec;
}

std::size_t transfers_per_chunk(std::size_t ring_size, RingHops hops) {
  return hops == RingHops::kBenchmark ? 2 * ring_size - 1 : 2 * (ring_size - 1);
}

}  // namespace

std::vector<std::int32_t> host_range(std::int32_t first, std::int32_t last) {
  require(first >= 0, "host_range: first host must not be negative, got " + std::to_string(first));
  require(first <= last, "host_range: first host " + std::to_string(first) +
                             " comes after last host " + std::to_string(last));
  std::vector<std::int32_t> hosts;
  hosts.reserve(static_cast<std::size_t>(last - first) + 1);
  for (std::int32_t h = first; h <= last; ++h) {
    hosts.push_back(h);
    if (h == last) break;  // so that last = INT32_MAX does not overflow h
  }
  return hosts;
}

std::vector<FlowSpec> permutation(std::int32_t hosts, Bytes size, std::uint64_t seed) {
  require(hosts >= 2,
          "permutation: needs at least 2 hosts for every host to send to another, got " +
              std::to_string(hosts));
  require_positive_size("permutation", "size", size);
  RandomStream random(seed, "traffic.permutation", 0);
  const auto n = static_cast<std::size_t>(hosts);
  std::vector<std::int32_t> destination(n);
  const auto has_fixed_point = [&destination] {
    for (std::size_t i = 0; i < destination.size(); ++i) {
      if (destination[i] == static_cast<std::int32_t>(i)) return true;
    }
    return false;
  };
  do {
    // Each attempt shuffles the identity afresh, so accepted draws are uniform over derangements.
    for (std::size_t i = 0; i < n; ++i) destination[i] = static_cast<std::int32_t>(i);
    for (std::size_t i = n - 1; i > 0; --i) {
      std::swap(destination[i], destination[static_cast<std::size_t>(random.below(i + 1))]);
    }
  } while (has_fixed_point());
  std::vector<FlowSpec> flows;
  flows.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    flows.push_back(flow(static_cast<std::int32_t>(i), destination[i], size));
  }
  return flows;
}

std::vector<FlowSpec> incast(const std::vector<std::int32_t>& sources, std::int32_t destination,
                             Bytes size) {
  require(!sources.empty(), "incast: needs at least one source");
  require(destination >= 0,
          "incast: destination must not be negative, got " + std::to_string(destination));
  require_positive_size("incast", "size", size);
  for (std::int32_t source : sources) {
    if (source < 0) {
      throw std::invalid_argument("incast: source " + std::to_string(source) + " is negative");
    }
    if (source == destination) {
      throw std::invalid_argument("incast: the destination " + std::to_string(destination) +
                                  " is also listed as a source; it would send to itself");
    }
  }
  if (const auto repeated = first_repeated(sources)) {
    throw std::invalid_argument("incast: source " + std::to_string(*repeated) +
                                " is listed more than once");
  }
  std::vector<FlowSpec> flows;
  flows.reserve(sources.size());
  for (std::int32_t source : sources) flows.push_back(flow(source, destination, size));
  return flows;
}

std::vector<FlowSpec> all_to_all(std::int32_t hosts, Bytes size) {
  require(hosts >= 2, "all_to_all: needs at least 2 hosts, got " + std::to_string(hosts));
  require_positive_size("all_to_all", "size", size);
  std::vector<FlowSpec> flows;
  flows.reserve(static_cast<std::size_t>(hosts) * static_cast<std::size_t>(hosts - 1));
  for (std::int32_t shift = 1; shift < hosts; ++shift) {
    for (std::int32_t source = 0; source < hosts; ++source) {
      // source + shift < 2 * hosts, which may exceed int32 for huge host counts: add in 64 bits.
      const auto destination = static_cast<std::int32_t>(
          (static_cast<std::int64_t>(source) + shift) % static_cast<std::int64_t>(hosts));
      flows.push_back(flow(source, destination, size));
    }
  }
  return flows;
}

std::vector<std::vector<std::int32_t>> strided_rings(std::int32_t ring_count,
                                                     std::int32_t ring_size) {
  require(ring_count >= 1,
          "strided_rings: needs at least one ring, got " + std::to_string(ring_count));
  require(ring_size >= 2,
          "strided_rings: a ring needs at least 2 hosts, got " + std::to_string(ring_size));
  require(
      static_cast<std::int64_t>(ring_count) * ring_size <= std::numeric_limits<std::int32_t>::max(),
      "strided_rings: " + std::to_string(ring_count) + " rings of " + std::to_string(ring_size) +
          " hosts exceed the endpoint ids");
  std::vector<std::vector<std::int32_t>> rings(static_cast<std::size_t>(ring_count));
  for (std::int32_t r = 0; r < ring_count; ++r) {
    auto& ring = rings[static_cast<std::size_t>(r)];
    ring.reserve(static_cast<std::size_t>(ring_size));
    for (std::int32_t k = 0; k < ring_size; ++k) ring.push_back(r + k * ring_count);
  }
  return rings;
}

std::vector<FlowSpec> ring_all_reduce_chains(const std::vector<std::vector<std::int32_t>>& rings,
                                             Bytes chunk_size, RingHops hops) {
  require(!rings.empty(), "ring_all_reduce_chains: needs at least one ring");
  require_positive_size("ring_all_reduce_chains", "chunk_size", chunk_size);
  std::size_t total = 0;
  for (std::size_t r = 0; r < rings.size(); ++r) {
    const auto& ring = rings[r];
    const std::string which = "ring_all_reduce_chains: ring " + std::to_string(r);
    require(ring.size() >= 2,
            which + " has " + std::to_string(ring.size()) + " hosts; a ring needs at least 2");
    for (std::int32_t host : ring) {
      if (host < 0) {
        throw std::invalid_argument(which + " visits host " + std::to_string(host) +
                                    ", which is negative");
      }
    }
    if (const auto repeated = first_repeated(ring)) {
      throw std::invalid_argument(which + " visits host " + std::to_string(*repeated) +
                                  " more than once");
    }
    const std::size_t m = ring.size();
    total += m * transfers_per_chunk(m, hops);
  }

  std::vector<FlowSpec> flows;
  flows.reserve(total);
  std::uint32_t queue_pair = 0;  // one per chunk, across all rings
  for (const auto& ring : rings) {
    const std::size_t m = ring.size();
    const std::size_t transfers = transfers_per_chunk(m, hops);
    for (std::size_t chunk = 0; chunk < m; ++chunk, ++queue_pair) {
      for (std::size_t d = 1; d <= transfers; ++d) {
        FlowSpec transfer = flow(ring[(chunk + d - 1) % m], ring[(chunk + d) % m], chunk_size);
        transfer.queue_pair = queue_pair;
        if (d > 1) transfer.after = static_cast<std::int64_t>(flows.size()) - 1;
        flows.push_back(transfer);
      }
    }
  }
  return flows;
}

std::vector<FlowSpec> random_arrivals(std::int32_t hosts, std::int64_t flows,
                                      Duration mean_interval, Bytes mean_size, double shape,
                                      std::uint64_t seed) {
  require(hosts >= 2, "random_arrivals: needs at least 2 hosts, got " + std::to_string(hosts));
  require(flows >= 1, "random_arrivals: flows must be at least 1, got " + std::to_string(flows));
  require(mean_interval > Duration(), "random_arrivals: mean_interval must be positive");
  require_positive_size("random_arrivals", "mean_size", mean_size);
  require(shape > 1.0, "random_arrivals: shape must exceed 1 for the mean to exist, got " +
                           std::to_string(shape));
  RandomStream random(seed, "traffic.random_arrivals", 0);
  const double scale = static_cast<double>(mean_size.count()) * (shape - 1.0) / shape;
  const auto n = static_cast<std::uint64_t>(hosts);
  std::vector<FlowSpec> out;
  out.reserve(static_cast<std::size_t>(flows));
  double clock_ps = 0.0;
  for (std::int64_t i = 0; i < flows; ++i) {
    clock_ps += random.exponential(static_cast<double>(mean_interval.ps()));
    const auto source = static_cast<std::int32_t>(random.below(n));
    // Uniform over the other hosts: draw among n - 1 and skip the source.
    auto destination = static_cast<std::int32_t>(random.below(n - 1));
    if (destination >= source) ++destination;
    const double size = std::ceil(scale * std::pow(1.0 - random.uniform(), -1.0 / shape));
    require(size < 9e18, "random_arrivals: a drawn size overflows; lower mean_size or raise shape");
    FlowSpec spec = flow(source, destination, Bytes(static_cast<std::int64_t>(size)));
    spec.start = Duration::ps(std::llround(clock_ps));
    spec.queue_pair = static_cast<std::uint32_t>(i);
    out.push_back(spec);
  }
  return out;
}

}  // namespace lockstep::traffic
