#pragma once
// Private to the sweep layer: cost estimate with the task's system already built.
#include "qsweep/model/model.hpp"
#include "qsweep/sweep/cost.hpp"

namespace qsweep::sweep::detail {

// `system` is the task's system for exact and simulate tasks, nullptr for ldp.
CostEstimate estimate_cost(const Task& task, const model::System* system);

}  // namespace qsweep::sweep::detail
