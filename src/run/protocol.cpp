#include "protocol.hpp"

#include "qsweep/store/layout.hpp"
#include "qsweep/sweep/columns.hpp"

namespace qsweep::run {

Report empty_report(std::uint64_t seq, std::uint64_t tasks) {
  Report report;
  report.seq = seq;
  report.tasks = tasks;
  return report;
}

Report not_run(const WorkOrder& order) { return empty_report(order.seq, order.batch.ids.size()); }

void tally(Report& report, const FinishedTask& task) {
  report.wall_seconds += task.outcome.wall_seconds;
  if (!task.outcome.warning.empty()) ++report.warned;
  switch (task.outcome.status) {
    case TaskStatus::done:
      ++report.done;
      break;
    case TaskStatus::unstable:
      ++report.unstable;
      break;
    case TaskStatus::failed:
      ++report.failed;
      if (report.failures.size() < kFailuresPerReport) {
        report.failures.emplace_back(task.id,
                                     store::fit_text(task.outcome.error, sweep::kErrorWidth - 1));
      }
      break;
    case TaskStatus::pending:
      break;
  }
}

}  // namespace qsweep::run
