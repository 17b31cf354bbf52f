#include "sim/scenario/traffic_schema.hpp"

namespace lockstep {
namespace {

Schema<FlowSpec> flow_schema() {
  Schema<FlowSpec> s;
  s.value("source", &FlowSpec::source, std::nullopt, "sending endpoint", at_least<std::int32_t>(0))
      .value("destination", &FlowSpec::destination, std::nullopt, "receiving endpoint",
             at_least<std::int32_t>(0))
      .value("size", &FlowSpec::size, std::nullopt, "bytes to send", above(Bytes()))
      .value("start", &FlowSpec::start, "0s",
             "when to start; with `after`, the delay after that flow completes")
      .value("after", &FlowSpec::after, std::nullopt,
             "index of the flow (in this list) whose completion starts this one",
             at_least<std::int64_t>(0))
      .value("queue_pair", &FlowSpec::queue_pair, "0",
             "which queue pair between the two endpoints (flows on one run in order)");
  return s;
}

Schema<PermutationConfig> permutation_schema() {
  Schema<PermutationConfig> s;
  s.value("size", &PermutationConfig::size, std::nullopt, "bytes per flow", above(Bytes()))
      .value("hosts", &PermutationConfig::hosts, std::nullopt,
             "permute endpoints 0..hosts-1 (default: all)", at_least<std::int64_t>(2))
      .value("seed", &PermutationConfig::seed, std::nullopt,
             "seed of the permutation (default: simulation.seed)");
  return s;
}

Schema<IncastConfig> incast_schema() {
  Schema<IncastConfig> s;
  s.value("first_source", &IncastConfig::first_source, "1", "first sender",
          at_least<std::int64_t>(0))
      .value("last_source", &IncastConfig::last_source, std::nullopt, "last sender (inclusive)",
             at_least<std::int64_t>(0))
      .value("destination", &IncastConfig::destination, "0", "the receiver",
             at_least<std::int64_t>(0))
      .value("size", &IncastConfig::size, std::nullopt, "bytes per sender", above(Bytes()));
  return s;
}

Schema<AllToAllConfig> all_to_all_schema() {
  Schema<AllToAllConfig> s;
  s.value("size", &AllToAllConfig::size, std::nullopt, "bytes per pair", above(Bytes()))
      .value("hosts", &AllToAllConfig::hosts, std::nullopt,
             "endpoints 0..hosts-1 take part (default: all)", at_least<std::int64_t>(2));
  return s;
}

Schema<PairsFileConfig> pairs_file_schema() {
  Schema<PairsFileConfig> s;
  s.value("path", &PairsFileConfig::path, std::nullopt,
          "file of `source->destination` lines, relative to the scenario file")
      .value("size", &PairsFileConfig::size, std::nullopt, "bytes per flow", above(Bytes()));
  return s;
}

Schema<RingsConfig> rings_schema() {
  Schema<RingsConfig> s;
  s.value("rings", &RingsConfig::rings, "1", "concurrent rings; ring r visits r, r+rings, ...",
          at_least<std::int64_t>(1))
      .value("ring_size", &RingsConfig::ring_size, std::nullopt, "endpoints per ring",
             at_least<std::int64_t>(2))
      .value("chunk", &RingsConfig::chunk, std::nullopt,
             "bytes per transfer; each chunk makes 2 x ring_size - 1 chained transfers",
             above(Bytes()));
  return s;
}

Schema<RandomArrivalsConfig> random_arrivals_schema() {
  using R = RandomArrivalsConfig;
  Schema<R> s;
  s.value("flows", &R::flows, std::nullopt, "how many flows arrive", at_least<std::int64_t>(1))
      .value("mean_interval", &R::mean_interval, std::nullopt,
             "mean gap between arrivals, network-wide (Poisson arrivals)", above(Duration()))
      .value("mean_size", &R::mean_size, std::nullopt, "mean flow size", above(Bytes()))
      .value("shape", &R::shape, "1.5", "Pareto shape of the sizes: lower is heavier-tailed",
             above(1.0))
      .value("hosts", &R::hosts, std::nullopt, "endpoints 0..hosts-1 take part (default: all)",
             at_least<std::int64_t>(2))
      .value("seed", &R::seed, std::nullopt, "seed of the draws (default: simulation.seed)");
  return s;
}

}  // namespace

Schema<TrafficConfig> traffic_schema() {
  Schema<TrafficConfig> s;
  s.list("flows", &TrafficConfig::flows, flow_schema(), "flows given one by one")
      .optional_section("permutation", &TrafficConfig::permutation, permutation_schema(),
                        "every endpoint sends one flow to another, none to itself")
      .optional_section("incast", &TrafficConfig::incast, incast_schema(),
                        "N:1: senders first_source..last_source to one destination")
      .optional_section("all_to_all", &TrafficConfig::all_to_all, all_to_all_schema(),
                        "every endpoint to every other")
      .optional_section("pairs_file", &TrafficConfig::pairs_file, pairs_file_schema(),
                        "flows from a file of pairs (the shared benchmarks' permutations)")
      .optional_section("rings", &TrafficConfig::rings, rings_schema(),
                        "chained transfers of ring all-reduces (benchmarks.md Rings-N)")
      .optional_section("random_arrivals", &TrafficConfig::random_arrivals,
                        random_arrivals_schema(),
                        "open-loop flows: Poisson arrivals, random pairs, Pareto sizes");
  return s;
}

}  // namespace lockstep
