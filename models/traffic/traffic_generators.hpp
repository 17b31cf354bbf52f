// Generators of common traffic patterns as flow lists (traffic.hpp): random permutation, incast,
// all-to-all and chained ring all-reduces, including the shared benchmarks' Perm-N, Incast-128 and
// Rings-128 (/work/shared/benchmarks.md, "Traffic"). Each is a pure function of its arguments: it
// schedules nothing and reads no files (traffic_pairs_file.hpp does), and it rejects bad arguments
// with std::invalid_argument naming the generator and the argument. Left out: empirical flow size
// distributions (measured CDFs). Units: Bytes and Duration; every flow generated here starts at a
// fixed offset or right when its predecessor completes.
#pragma once

#include <cstdint>
#include <vector>

#include "models/traffic/traffic.hpp"

namespace lockstep::traffic {

// Hosts first, first + 1, ..., last: both ends included, as in "hosts 1..127". first <= last.
[[nodiscard]] std::vector<std::int32_t> host_range(std::int32_t first, std::int32_t last);

// Every host sends `size` bytes to another, every host receives exactly one flow, and none sends to
// itself: flow i goes from host i to host p(i), where p is a uniformly random derangement of
// 0..hosts-1. p is drawn with RandomStream(seed, "traffic.permutation", 0) by rejection: a
// Fisher-Yates shuffle (for i = hosts-1 down to 1, swap p[i] with p[below(i + 1)]) is redrawn until
// it has no fixed point, which takes e = 2.718... shuffles on average. Rejection keeps every
// derangement equally likely; Sattolo's variant would never draw one with more than one cycle.
// hosts >= 2. (The benchmarks' Perm-N pairs come from CPython's generator instead and are shipped
// as files: scenarios/bench/perm_N.pairs.)
[[nodiscard]] std::vector<FlowSpec> permutation(std::int32_t hosts, Bytes size, std::uint64_t seed);

// Every source sends `size` bytes to `destination`, in the order given, all at once. Sources are
// distinct, non-negative and exclude the destination. Incast-128 is
// incast(host_range(1, 127), 0, Bytes(2'000'000)).
[[nodiscard]] std::vector<FlowSpec> incast(const std::vector<std::int32_t>& sources,
                                           std::int32_t destination, Bytes size);

// Every host sends `size` bytes to every other host, all at once: hosts * (hosts - 1) flows. They
// are listed in rounds: round k = 1..hosts-1 has host i send to (i + k) mod hosts, so each round is
// a permutation and a network that starts messages in posting order does not aim every host at
// host 0 first. hosts >= 2.
[[nodiscard]] std::vector<FlowSpec> all_to_all(std::int32_t hosts, Bytes size);

// `ring_count` rings of `ring_size` hosts striding across the hosts: ring r visits r,
// r + ring_count, r + 2 ring_count, ... Rings-128 is strided_rings(8, 16): ring 1 is 1, 9, ...,
// 121.
[[nodiscard]] std::vector<std::vector<std::int32_t>> strided_rings(std::int32_t ring_count,
                                                                   std::int32_t ring_size);

// How many hops a chunk makes around its ring of m hosts.
enum class RingHops {
  // 2m - 1, as in the shared Rings-128 benchmark (31 for 16 hosts), so that lockstep's runs do the
  // same work as the peer simulators' figures.
  kBenchmark,
  // 2(m - 1): m - 1 reduce-scatter steps then m - 1 all-gather steps, the textbook ring.
  kReduceScatterAllGather,
};

// Chained ring all-reduces, one per ring, all starting at once. A ring of m hosts cuts its data
// into m chunks of `chunk_size` bytes; chunk s travels around the ring on its own, its transfer d =
// 1, 2, ... going from ring[(s + d - 1) mod m] to ring[(s + d) mod m] and starting the picosecond
// the previous one is fully acknowledged (`after`). Flows are listed ring by ring, chunk by chunk,
// transfer by transfer, so transfer d of chunk s of ring r (rings of equal size m, H hops per
// chunk) is flow (r m + s) H + d - 1.
//
// Every chunk has a queue pair of its own (numbered across all rings: chunk s of ring r is queue
// pair r m + s when rings have equal size). Chunks are not synchronized, so a fast chunk can catch
// up with a slow one on the same pair of hosts; on one queue pair its message would then wait
// behind the other's, an ordering the benchmark does not have (each chunk is its own chain) and
// which would turn one slow chunk into a convoy. Separate queue pairs share the link instead, each
// with its own congestion control state and, for per-flow ECMP, its own path, as a peer simulator's
// independent flows would. Numbering across rings keeps this true when rings share hosts.
//
// Each ring has at least two hosts and no host twice; chunk_size > 0.
[[nodiscard]] std::vector<FlowSpec> ring_all_reduce_chains(
    const std::vector<std::vector<std::int32_t>>& rings, Bytes chunk_size,
    RingHops hops = RingHops::kBenchmark);

// Open-loop traffic: `flows` flows arriving as a Poisson process (exponential gaps of mean
// `mean_interval` between consecutive starts, network-wide), each from a uniformly random host to a
// uniformly random other one among 0..hosts-1, with a Pareto size of mean `mean_size` and shape
// `shape` (heavy-tailed; shapes of 1.1 to 1.5 are typical of data-centre flow sizes), rounded up to
// whole bytes: x = x_m U^(-1/shape) with x_m = mean_size (shape - 1) / shape and U uniform on
// (0, 1]. Starts are rounded to the picosecond. Flow i uses queue pair i, so that flows between the
// same two hosts run side by side instead of queueing behind each other. Draws come from
// RandomStream(seed, "traffic.random_arrivals", 0) in the order gap, source, destination, size.
// hosts >= 2, flows >= 1, mean_interval > 0, mean_size > 0, shape > 1.
[[nodiscard]] std::vector<FlowSpec> random_arrivals(std::int32_t hosts, std::int64_t flows,
                                                    Duration mean_interval, Bytes mean_size,
                                                    double shape, std::uint64_t seed);

}  // namespace lockstep::traffic
