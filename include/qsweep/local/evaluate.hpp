#pragma once
// One task evaluated in this process, outside MPI: what `qsweep eval` prints and the Python
// module's qsweep.eval returns are built here, once, so that the two give the same numbers.
#include <string>
#include <utility>
#include <vector>

#include "qsweep/common/table.hpp"
#include "qsweep/sweep/cost.hpp"
#include "qsweep/sweep/execute.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::local {

// The limit of a task run in this process (plan, validate, eval): `text` ("4G", "512M") if not
// empty, else this machine's memory or the address-space limit (ulimit -v) where lower; above
// what this process holds now. `option` names where `text` came from in messages.
sweep::MemoryLimit memory_limit(const std::string& text,
                                const std::string& option = "--max-task-memory");

// A task validated from flags named like the keys of a sweep block (sweep::plan_from_flags).
// Throws InputError for bad flags, for a task that spans ranks and for one that does not fit
// the memory limit.
struct Prepared {
  sweep::Plan plan;  // of one task
  sweep::Task task;  // that task
  sweep::MemoryLimit limit;
};
Prepared prepare(const std::vector<sweep::Flag>& flags, const std::string& max_task_memory);

// The task's memory: estimated (beyond the process before it) and the process's measured peak.
struct Memory {
  double estimated = 0.0, baseline = 0.0, peak = 0.0;
};

// Runs the prepared task here (sweep::execute); what it gives, with the memory measured after.
struct Evaluation {
  sweep::TaskOutcome outcome;
  Memory memory;
};
Evaluation run(const Prepared& prepared);

// The result as named values, in the order `eval --json` prints them: method, status, error,
// warning, wall_seconds, the three memory values, then the columns of the method's group.
std::vector<std::pair<std::string, CellValue>> result_fields(const sweep::Task& task,
                                                             const Evaluation& evaluation);

}  // namespace qsweep::local
