#pragma once
// Runs one task with its method. Method-agnostic entry point for the runner and `qsweep eval`.
#include <cstdint>
#include <string>
#include <variant>

#include "qsweep/exact/exact.hpp"
#include "qsweep/sweep/task.hpp"

namespace qsweep::sweep {

// Values as stored in /tasks/status.
enum class TaskStatus : std::int8_t { pending = 0, done = 1, failed = 2, unstable = 3 };
std::string_view to_string(TaskStatus status);

struct TaskOutcome {
  TaskStatus status = TaskStatus::pending;
  std::string error;  // failed: the exception message; unstable: the violating server set
  // Method results; sim::Result and ldp::Result join the variant when those layers exist.
  std::variant<std::monostate, exact::Result> result;
  double wall_seconds = 0.0;
};

// Never throws for a task's own errors: they become status failed with the message.
TaskOutcome execute(const Task& task);

}  // namespace qsweep::sweep
