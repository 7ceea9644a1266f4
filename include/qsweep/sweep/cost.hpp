#pragma once
// Rough cost of a task, for `qsweep plan` and for scheduling the biggest tasks first.
#include <string>

#include "qsweep/sweep/task.hpp"

namespace qsweep::sweep {

struct CostEstimate {
  double seconds = 0.0;  // estimated single-core seconds (order of magnitude, not a promise)
  std::string formula;   // what it counts: "2^12 unions x 12 types x 23"
};

// Exact general ~ 2^N unions x types x (qmax + 3); exact symmetric ~ N x (d + 1) x (qmax + 3);
// simulate ~ events = 2 N lambda (horizon + warm-up) x replications; ldp ~ samples x n (1 +
// lambda) T events, or for the exact estimator the lumped chain's states x uniformization steps.
// Throws InputError if the task's family cannot be built.
CostEstimate estimate_cost(const Task& task);

}  // namespace qsweep::sweep
