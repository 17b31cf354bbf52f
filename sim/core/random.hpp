// Seeded random streams. Each stream is named by (master seed, stream name, component id) and owns
// its generator, so adding a stream or drawing more from one never shifts another's draws: a
// what-if that adds a fault does not reshuffle every other random choice in the run. The generator
// is xoshiro256** (Blackman and Vigna, "Scrambled linear pseudorandom number generators", 2021),
// seeded through splitmix64. Distributions are written here because the standard library's differ
// between implementations, which would make results depend on the compiler.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace lockstep {

class RandomStream {
 public:
  explicit RandomStream(std::uint64_t seed);
  RandomStream(std::uint64_t master_seed, std::string_view name, std::uint64_t component_id);

  [[nodiscard]] std::uint64_t next_u64();
  // Uniform on [0, 1) with 53 random bits.
  [[nodiscard]] double uniform();
  // Uniform integer on [0, bound), without modulo bias (Lemire, ACM TOMACS 2019). bound > 0.
  [[nodiscard]] std::uint64_t below(std::uint64_t bound);
  [[nodiscard]] double exponential(double mean);
  // Standard normal by the Marsaglia polar method (one spare value is kept).
  [[nodiscard]] double normal();
  // Log-normal with the given mean and coefficient of variation (stddev / mean), the usual shape of
  // per-step compute-time noise; cv = 0 returns the mean exactly.
  [[nodiscard]] double lognormal_mean_cv(double mean, double cv);

 private:
  std::array<std::uint64_t, 4> state_{};
  double spare_normal_ = 0.0;
  bool has_spare_normal_ = false;
};

}  // namespace lockstep
