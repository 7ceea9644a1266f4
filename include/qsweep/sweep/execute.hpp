#pragma once
// Runs one task with its method. Method-agnostic entry point for the runner and `qsweep eval`.
#include <array>
#include <cstdint>
#include <string>
#include <variant>

#include "qsweep/common/task_status.hpp"
#include "qsweep/exact/engine.hpp"
#include "qsweep/sweep/task.hpp"

namespace qsweep::sweep {

struct TaskOutcome {
  TaskStatus status = TaskStatus::pending;
  std::string error;  // failed: the exception message; unstable: the violating server set
  // The method's result (exact::Result also for unstable exact tasks: it says which set).
  MethodResult result;
  double wall_seconds = 0.0;
  // done: empty, or "; "-separated sentences saying why the result should not be trusted
  // silently, the most serious first (docs/sim.md, docs/ldp.md, "Warnings"). Last, so that
  // aggregate initialisations of the fields above stay valid.
  std::string warning{};
};

// What a task may use beyond its own rank: a task that spans ranks (Task::ranks) evaluates its
// lattice of unions with the general engine of its ranks' group (the run layer gives exact_mpi's).
struct SharedEngines {
  exact::detail::GeneralEngine exact_general;  // empty: the single-rank engine
};

// Never throws for a task's own errors: they become status failed with the message. Tasks
// outside the stability region (exact: eq. (2); simulate: the policy's, sim::check_stability)
// become status unstable without running.
TaskOutcome execute(const Task& task, const SharedEngines& engines = {});

}  // namespace qsweep::sweep
