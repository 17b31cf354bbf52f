// Cost of building shortest-path ECMP tables for k-ary fat trees (k = 8, 16, 40: 128 to 16,000
// hosts), and of looking a port up. Prints, per k: topology build time, routing build time (median
// of runs), the bytes the routing tables keep, the process's resident memory after the build, and
// its peak; then the nanoseconds per choose_port and per path(). The design target is well under a
// second and a few hundred MB for k = 40.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "models/fabric/fat_tree.hpp"
#include "models/fabric/routing.hpp"
#include "sim/core/random.hpp"

namespace {

using lockstep::BitRate;
using lockstep::Bytes;
using lockstep::Duration;
using lockstep::NodeId;
using lockstep::RandomStream;
using lockstep::Routing;
using lockstep::Topology;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Resident set size now, from /proc/self/statm (pages).
double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  long total = 0;
  long resident = 0;
  statm >> total >> resident;
  return static_cast<double>(resident) * 4096.0 / (1024.0 * 1024.0);
}

double peak_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // kilobytes on Linux
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run(std::int32_t k, int trials) {
  const lockstep::LinkSpec link{BitRate::gbps(100), Duration::us(1)};
  auto start = Clock::now();
  const Topology topology = lockstep::build_fat_tree(k, link, Bytes(32'000'000));
  const double topology_s = seconds_since(start);

  std::vector<double> build_s;
  std::unique_ptr<Routing> routing;
  for (int t = 0; t < trials; ++t) {
    routing.reset();
    start = Clock::now();
    routing = std::make_unique<Routing>(topology);
    build_s.push_back(seconds_since(start));
  }
  const double resident = resident_mib();

  // Lookups at random switches towards random destinations, as a packet's hops would do them.
  const std::int32_t hosts = topology.endpoint_count();
  RandomStream rng(1, "bench.routing", static_cast<std::uint64_t>(k));
  constexpr int kLookups = 4'000'000;
  std::vector<NodeId> nodes(1 << 16);
  std::vector<NodeId> destinations(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    nodes[i] =
        hosts + static_cast<NodeId>(rng.below(static_cast<std::uint64_t>(topology.switch_count())));
    destinations[i] = static_cast<NodeId>(rng.below(static_cast<std::uint64_t>(hosts)));
  }
  std::uint64_t sink = 0;
  start = Clock::now();
  for (int i = 0; i < kLookups; ++i) {
    const std::size_t j = static_cast<std::size_t>(i) & (nodes.size() - 1);
    sink += routing->choose_port(nodes[j], destinations[j], static_cast<std::uint64_t>(i));
  }
  const double lookup_ns = seconds_since(start) * 1e9 / kLookups;

  constexpr int kPaths = 200'000;
  start = Clock::now();
  for (int i = 0; i < kPaths; ++i) {
    const std::size_t j = static_cast<std::size_t>(i) & (nodes.size() - 1);
    const NodeId source = (destinations[j] + 1 + i % (hosts - 1)) % hosts;
    sink += routing->path(source, destinations[j], static_cast<std::uint64_t>(i)).size();
  }
  const double path_ns = seconds_since(start) * 1e9 / kPaths;

  // Stored through a volatile so that the compiler cannot drop the lookups.
  volatile std::uint64_t keep = sink;
  (void)keep;
  std::printf("%4d %7d %6d %10.1f %10.1f %12.2f %10.1f %10.1f %12.1f %10.0f\n", k, hosts,
              topology.switch_count(), topology_s * 1e3, median(build_s) * 1e3,
              static_cast<double>(routing->table_bytes()) / (1024.0 * 1024.0), resident, peak_mib(),
              lookup_ns, path_ns);
}

}  // namespace

int main() {
  std::printf("fat tree routing tables: build time (median of runs), memory, lookup cost\n");
  std::printf("%4s %7s %6s %10s %10s %12s %10s %10s %12s %10s\n", "k", "hosts", "switch",
              "topo (ms)", "route (ms)", "tables (MiB)", "RSS (MiB)", "peak (MiB)", "choose (ns)",
              "path (ns)");
  run(8, 7);
  run(16, 7);
  run(40, 5);
  return 0;
}
