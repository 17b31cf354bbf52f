// Quantiles of a stream of non-negative whole-number samples (wall times of a repeated step, say)
// in fixed memory, however long the run: each sample is counted in a bucket 1/32 of an octave
// wide, so a quantile is known to within 2.2% (the bucket's geometric middle is reported); the
// count and the largest sample are exact. Values below 32 have a bucket each.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

namespace lockstep {

class StreamingQuantiles {
 public:
  void add(std::int64_t value) {
    const auto v = static_cast<std::uint64_t>(value < 0 ? 0 : value);
    ++counts_[bucket_of(v)];
    ++count_;
    if (value > max_) max_ = value;
  }

  [[nodiscard]] std::int64_t count() const { return count_; }
  [[nodiscard]] std::int64_t max() const { return max_; }

  // The sample at `fraction` (0 to 1) of the sorted stream, as the nearest-rank quantile; the
  // largest is exact. 0 for an empty stream.
  [[nodiscard]] double quantile(double fraction) const {
    if (count_ == 0) return 0.0;
    if (fraction >= 1.0) return static_cast<double>(max_);
    const auto rank = static_cast<std::int64_t>(fraction * static_cast<double>(count_ - 1));
    std::int64_t seen = 0;
    for (std::size_t b = 0; b < counts_.size(); ++b) {
      seen += counts_[b];
      if (seen > rank) return middle_of(b);
    }
    return static_cast<double>(max_);
  }

 private:
  static constexpr int kPerOctave = 32;
  static constexpr std::size_t kBuckets = 64 * kPerOctave;

  // Values below kPerOctave are their own bucket; above, the octave (position of the top bit)
  // and the next five bits pick one of its 32 sub-buckets.
  static std::size_t bucket_of(std::uint64_t v) {
    if (v < kPerOctave) return static_cast<std::size_t>(v);
    const int top = 63 - std::countl_zero(v);
    const auto sub = static_cast<std::size_t>((v >> (top - 5)) & (kPerOctave - 1));
    return static_cast<std::size_t>(top - 4) * kPerOctave + sub;
  }

  static double middle_of(std::size_t bucket) {
    if (bucket < kPerOctave) return static_cast<double>(bucket);
    const auto top = static_cast<int>(bucket / kPerOctave) + 4;
    const auto sub = static_cast<double>(bucket % kPerOctave);
    const double low = std::ldexp(1.0 + sub / kPerOctave, top);
    const double high = std::ldexp(1.0 + (sub + 1) / kPerOctave, top);
    return std::sqrt(low * high);
  }

  std::array<std::int64_t, kBuckets> counts_{};
  std::int64_t count_ = 0;
  std::int64_t max_ = 0;
};

}  // namespace lockstep
