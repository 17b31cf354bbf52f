// Flow lists read from text: one "source->destination" line per flow (endpoint ids in decimal), the
// form the shared benchmarks' Perm-N pairs are committed in (scenarios/bench/perm_N.pairs, written
// by scenarios/bench/make_permutation_pairs.py). Every flow carries the same size and starts at
// offset zero, in file order. Blank lines and lines starting with '#' are skipped; spaces and tabs
// around either number, and a Windows line end, are allowed. Anything else is rejected with
// std::invalid_argument naming the file and line ("perm.pairs:7: ..."), as is a line that pairs a
// host with itself. Endpoint ranges are checked later against the network (flow_list_problems).
#pragma once

#include <filesystem>
#include <istream>
#include <string_view>
#include <vector>

#include "models/traffic/traffic.hpp"

namespace lockstep::traffic {

// Reads a pairs file; an unreadable file is an std::invalid_argument naming its path.
[[nodiscard]] std::vector<FlowSpec> from_pairs_file(const std::filesystem::path& path, Bytes size);

// The same from any stream; `origin` names it in messages (a path, or "<text>" in tests).
[[nodiscard]] std::vector<FlowSpec> from_pairs(std::istream& lines, std::string_view origin,
                                               Bytes size);

}  // namespace lockstep::traffic
