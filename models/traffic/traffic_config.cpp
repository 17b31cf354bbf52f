#include "models/traffic/traffic_config.hpp"

#include <cstdio>
#include <utility>

#include "models/traffic/traffic_generators.hpp"
#include "models/traffic/traffic_pairs_file.hpp"

namespace lockstep {
namespace {

std::int32_t hosts_or_all(const std::optional<std::int64_t>& hosts, std::int32_t endpoints) {
  return hosts ? static_cast<std::int32_t>(*hosts) : endpoints;
}

// Generated flows come after `offset` others; their `after` links shift with them.
void append(std::vector<FlowSpec>& all, std::vector<FlowSpec> generated) {
  const auto offset = static_cast<std::int64_t>(all.size());
  for (FlowSpec& f : generated) {
    if (f.after) *f.after += offset;
    all.push_back(f);
  }
}

}  // namespace

std::vector<TrafficProblem> traffic_problems(const TrafficConfig& config, std::int32_t endpoints,
                                             std::int64_t memory_bytes) {
  std::vector<TrafficProblem> problems;
  const std::string beyond = ", but the network has " + std::to_string(endpoints) + " endpoints";
  // Counted in doubles: the products of absurd inputs overflow 64 bits.
  auto check_memory = [&](const std::string& key, double flows) {
    const double bytes = flows * static_cast<double>(kBytesPerFlow);
    if (bytes <= static_cast<double>(memory_bytes)) return;
    char line[256];
    std::snprintf(line, sizeof line,
                  "%.3g flows would need about %.3g GB, more than the %.3g GB of memory allowed "
                  "(this machine's, or simulation.memory_limit)",
                  flows, bytes * 1e-9, static_cast<double>(memory_bytes) * 1e-9);
    problems.push_back({key, line});
  };
  auto check_hosts = [&](const std::string& key, const std::optional<std::int64_t>& hosts) {
    if (hosts && *hosts > endpoints) {
      problems.push_back({key, std::to_string(*hosts) + " hosts" + beyond});
      return false;
    }
    return true;
  };
  if (const auto& p = config.permutation) check_hosts("permutation.hosts", p->hosts);
  if (const auto& i = config.incast) {
    for (const auto& [key, host] : {std::pair{"incast.first_source", i->first_source},
                                    std::pair{"incast.last_source", i->last_source},
                                    std::pair{"incast.destination", i->destination}}) {
      if (host >= endpoints) {
        problems.push_back({key, "endpoint " + std::to_string(host) + beyond});
      }
    }
  }
  if (const auto& a = config.all_to_all; a && check_hosts("all_to_all.hosts", a->hosts)) {
    const double hosts = static_cast<double>(a->hosts.value_or(endpoints));
    check_memory("all_to_all", hosts * (hosts - 1));
  }
  if (const auto& r = config.rings) {
    const double needed = static_cast<double>(r->rings) * static_cast<double>(r->ring_size);
    if (needed > endpoints) {
      problems.push_back({"rings", std::to_string(r->rings) + " rings of " +
                                       std::to_string(r->ring_size) + " endpoints" + beyond});
    } else {
      check_memory("rings", needed * (2 * static_cast<double>(r->ring_size) - 1));
    }
  }
  if (const auto& r = config.random_arrivals; r && check_hosts("random_arrivals.hosts", r->hosts)) {
    check_memory("random_arrivals.flows", static_cast<double>(r->flows));
  }
  return problems;
}

std::vector<FlowSpec> expand_traffic(const TrafficConfig& config, std::int32_t endpoints,
                                     std::uint64_t seed,
                                     const std::filesystem::path& scenario_directory) {
  std::vector<FlowSpec> all = config.flows;
  if (const auto& p = config.permutation) {
    append(all, traffic::permutation(hosts_or_all(p->hosts, endpoints), p->size,
                                     p->seed.value_or(seed)));
  }
  if (const auto& i = config.incast) {
    append(all, traffic::incast(traffic::host_range(static_cast<std::int32_t>(i->first_source),
                                                    static_cast<std::int32_t>(i->last_source)),
                                static_cast<std::int32_t>(i->destination), i->size));
  }
  if (const auto& a = config.all_to_all) {
    append(all, traffic::all_to_all(hosts_or_all(a->hosts, endpoints), a->size));
  }
  if (const auto& f = config.pairs_file) {
    append(all, traffic::from_pairs_file(scenario_directory / f->path, f->size));
  }
  if (const auto& r = config.rings) {
    append(all, traffic::ring_all_reduce_chains(
                    traffic::strided_rings(static_cast<std::int32_t>(r->rings),
                                           static_cast<std::int32_t>(r->ring_size)),
                    r->chunk));
  }
  if (const auto& r = config.random_arrivals) {
    append(all,
           traffic::random_arrivals(hosts_or_all(r->hosts, endpoints), r->flows, r->mean_interval,
                                    r->mean_size, r->shape, r->seed.value_or(seed)));
  }
  return all;
}

}  // namespace lockstep
