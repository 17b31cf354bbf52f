#include "models/traffic/traffic_config.hpp"

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
