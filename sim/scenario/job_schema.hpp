// The `job` section: a transformer training job (models/training).
#pragma once

#include "models/training/training_job_config.hpp"
#include "sim/scenario/schema.hpp"

namespace lockstep {

[[nodiscard]] Schema<TrainingJobConfig> job_schema();

}  // namespace lockstep
