// DIR/index.h5: the study as one table, `points`, one row per point with its parameters, whether
// it ran, and its headline figures, so that `load_table(DIR/index.h5, "points")` is the DataFrame a
// notebook starts from. Written from the points' files alone, in point order, so that every way of
// running the sweep (one process, -j N, MPI, a Slurm array, resumed) writes the same bytes.
#pragma once

#include <filesystem>

#include "sim/sweep/sweep_directory.hpp"
#include "sim/sweep/sweep_plan.hpp"

namespace lockstep {

// Every point must be done or failed. Throws OutputError if the file cannot be written.
void write_sweep_index(const SweepPlan& plan, const SweepDirectory& directory,
                       const std::filesystem::path& sweep_file);

}  // namespace lockstep
