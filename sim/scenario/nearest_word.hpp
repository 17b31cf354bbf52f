// "Did you mean" for unknown keys and choices: the closest candidate by edit distance, if close
// enough to be a plausible typo (about a third of the word's length, at least one edit).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep {

[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

[[nodiscard]] std::optional<std::string> nearest_word(std::string_view word,
                                                      const std::vector<std::string>& candidates);

}  // namespace lockstep
