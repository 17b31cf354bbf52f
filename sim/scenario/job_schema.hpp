// The `job` section: the synchronous data-parallel job of models/workload.
#pragma once

#include "models/workload/data_parallel_job_config.hpp"
#include "sim/scenario/schema.hpp"

namespace lockstep {

[[nodiscard]] Schema<DataParallelJobConfig> job_schema();

}  // namespace lockstep
