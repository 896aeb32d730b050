// The float64 reference of the trainer (train.hpp): the reference GPT-2's
// forward and backward (reference.hpp) and AdamW in double, with the
// optimizer's clipping and weight-decay groups (optimizer.hpp), on one batch
// (the model's tokens and targets) step after step. For the tiny self-check.
#pragma once

#include "optimizer.hpp"
#include "reference.hpp"
#include "train.hpp"

#include <vector>

namespace gpt2 {

// The mean loss before each of schedule.steps steps, then after the last
// (steps + 1 values).
std::vector<double> reference_training(ReferenceModel model, const OptimizerSettings& settings,
                                       const Schedule& schedule);

}  // namespace gpt2
