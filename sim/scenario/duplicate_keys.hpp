// YAML 1.2 allows each key of a mapping once, but yaml-cpp keeps a repeated key and answers lookups
// with the first: an override appended at the bottom of a file would be lost without a word. This
// finds every repeated key of a document, in document order.
#pragma once

#include <yaml-cpp/yaml.h>

#include "sim/scenario/decode_context.hpp"

namespace lockstep {

// Reports each key that repeats one before it in the same mapping, at the repeat, naming the
// first's line and column.
void report_duplicate_keys(const YAML::Node& root, DecodeContext& context);

}  // namespace lockstep
