// Command-line changes to a scenario: "key.path=value" assignments (list items as
// "job.slow_ranks[0].rank=3"), applied to the YAML document before it is decoded, so an override is
// checked exactly like a value in the file. The value is YAML, so lists and mappings can be given
// too.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "sim/scenario/decode_context.hpp"
#include "sim/scenario/diagnostics.hpp"

namespace lockstep {

struct Override {
  std::string assignment;  // "key.path=value"
  std::string origin;      // what the user typed, for messages: "--set job.ranks=8", "--seed 3"
};

[[nodiscard]] Override set_argument(const std::string& assignment);

// Creates mappings along the path as needed; list items must exist. Problems go to `diagnostics`.
void apply_override(YAML::Node& root, const Override& change, DecodeContext& context,
                    Diagnostics& diagnostics);

}  // namespace lockstep
