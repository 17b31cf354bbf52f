#include "sim/core/random.hpp"

#include <cassert>
#include <cmath>

#include "sim/core/hash.hpp"

namespace lockstep {
namespace {

constexpr std::uint64_t rotate_left(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

RandomStream::RandomStream(std::uint64_t seed) {
  // The splitmix64 sequence from `seed`: distinct, well-mixed words even for seeds 0, 1, 2, ...
  constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;
  for (std::size_t i = 0; i < state_.size(); ++i) state_[i] = mix64(seed + kGolden * i);
}

RandomStream::RandomStream(std::uint64_t master_seed, std::string_view name,
                           std::uint64_t component_id)
    : RandomStream(hash_combine(hash_combine(master_seed, hash_bytes(name)), component_id)) {}

std::uint64_t RandomStream::next_u64() {
  const std::uint64_t result = rotate_left(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotate_left(state_[3], 45);
  return result;
}

double RandomStream::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

std::uint64_t RandomStream::below(std::uint64_t bound) {
  assert(bound > 0);
  __extension__ using Wide = unsigned __int128;
  Wide product = static_cast<Wide>(next_u64()) * bound;
  auto low = static_cast<std::uint64_t>(product);
  if (low < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      product = static_cast<Wide>(next_u64()) * bound;
      low = static_cast<std::uint64_t>(product);
    }
  }
  return static_cast<std::uint64_t>(product >> 64);
}

double RandomStream::exponential(double mean) {
  // 1 - u lies in (0, 1], so the logarithm is finite.
  return -mean * std::log(1.0 - uniform());
}

double RandomStream::normal() {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  double u = 0;
  double v = 0;
  double s = 0;
  do {
    u = 2.0 * uniform() - 1.0;
    v = 2.0 * uniform() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double factor = std::sqrt(-2.0 * std::log(s) / s);
  spare_normal_ = v * factor;
  has_spare_normal_ = true;
  return u * factor;
}

double RandomStream::lognormal_mean_cv(double mean, double cv) {
  if (cv == 0.0) return mean;
  // For log X ~ N(mu, sigma^2): E[X] = exp(mu + sigma^2/2), CV^2 = exp(sigma^2) - 1.
  const double sigma2 = std::log1p(cv * cv);
  const double mu = std::log(mean) - sigma2 / 2.0;
  return std::exp(mu + std::sqrt(sigma2) * normal());
}

}  // namespace lockstep
