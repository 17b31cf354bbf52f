// Which of a wheel's N positions are occupied, and the first occupied one going round from a given
// position, in two bit scans: a word per 64 positions and a summary word with a bit per word. The
// event queue's timing wheels (event_queue.hpp) find their next occupied slot with it.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace lockstep {

template <std::size_t N>
class CircularBitset {
 public:
  static constexpr std::size_t kWordBits = 64;
  static_assert(N % kWordBits == 0 && N <= kWordBits * kWordBits,
                "one summary word covers the occupancy words");

  void set(std::size_t position) {
    words_[position / kWordBits] |= std::uint64_t{1} << (position % kWordBits);
    summary_ |= std::uint64_t{1} << (position / kWordBits);
  }
  void clear(std::size_t position) {
    std::uint64_t& word = words_[position / kWordBits];
    word &= ~(std::uint64_t{1} << (position % kWordBits));
    if (word == 0) summary_ &= ~(std::uint64_t{1} << (position / kWordBits));
  }
  [[nodiscard]] bool any() const { return summary_ != 0; }

  // The first occupied position at or after `from`, wrapping past the last to the first; some
  // position must be occupied.
  [[nodiscard]] std::size_t first_from(std::size_t from) const {
    const std::size_t word = from / kWordBits;
    if (const std::uint64_t here = words_[word] & (~std::uint64_t{0} << (from % kWordBits));
        here != 0) {
      return word * kWordBits + static_cast<std::size_t>(std::countr_zero(here));
    }
    // (The last word has none after it, and a shift by 64 would be undefined.)
    const std::uint64_t later_words =
        word + 1 == kWordBits ? 0 : summary_ & (~std::uint64_t{0} << (word + 1));
    const std::uint64_t words = later_words != 0 ? later_words : summary_;
    const auto w = static_cast<std::size_t>(std::countr_zero(words));
    return w * kWordBits + static_cast<std::size_t>(std::countr_zero(words_[w]));
  }

 private:
  std::array<std::uint64_t, N / kWordBits> words_{};
  std::uint64_t summary_ = 0;  // bit w set when words_[w] != 0
};

}  // namespace lockstep
