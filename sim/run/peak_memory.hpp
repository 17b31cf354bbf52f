// The most memory a run held resident, as benchmarks quote it.
#pragma once

#include <optional>

#include "sim/core/bytes.hpp"

namespace lockstep {

// The high-water mark of this process's resident memory since it started its program (Linux's
// VmHWM), or nothing where /proc does not say. Not getrusage's ru_maxrss: that is carried across
// exec from the process that forked it, so a run started by a large parent (a Python benchmark
// driver holding h5py and pandas) would report the parent's size.
[[nodiscard]] std::optional<Bytes> peak_resident_memory();

}  // namespace lockstep
