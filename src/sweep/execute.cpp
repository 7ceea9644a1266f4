#include "qsweep/sweep/execute.hpp"

#include <fmt/format.h>

#include <chrono>
#include <exception>

#include "method.hpp"
#include "qsweep/sweep/columns.hpp"

namespace qsweep::sweep {
namespace {

// A row longer than planned would not fit the file created at plan time: report it as a failure
// of the task rather than lose or corrupt data.
void check_shape(const Task& task, TaskOutcome& outcome) {
  const Row row = make_row(task, outcome);
  const auto& columns = group_columns(task.method());
  for (std::size_t i = 0; i < columns.size(); ++i) {
    std::size_t length = 0;
    if (const auto* v = std::get_if<std::vector<double>>(&row.cells[i])) length = v->size();
    if (const auto* v = std::get_if<std::vector<std::int64_t>>(&row.cells[i])) length = v->size();
    const std::size_t planned = planned_length(task, columns[i]);
    if (length > planned) {
      outcome.status = TaskStatus::failed;
      outcome.error = fmt::format("internal error: column {} has {} values, {} planned",
                                  columns[i].name, length, planned);
      outcome.result = std::monostate{};
      outcome.warning.clear();
      return;
    }
  }
}

}  // namespace

TaskOutcome execute(const Task& task, const SharedEngines& engines) {
  TaskOutcome outcome;
  const auto start = std::chrono::steady_clock::now();
  try {
    detail::method_adapter(task.method()).run(task, engines, outcome);
    check_shape(task, outcome);
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
