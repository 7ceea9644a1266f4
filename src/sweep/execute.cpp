#include "qsweep/sweep/execute.hpp"

#include <chrono>
#include <exception>

#include "method.hpp"

namespace qsweep::sweep {

TaskOutcome execute(const Task& task, const SharedEngines& engines) {
  TaskOutcome outcome;
  const auto start = std::chrono::steady_clock::now();
  try {
    detail::method_adapter(task.method()).run(task, engines, outcome);
  } catch (const std::exception& e) {
    outcome = TaskOutcome{};
    outcome.status = TaskStatus::failed;
    outcome.error = e.what();
  }
  outcome.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

}  // namespace qsweep::sweep
