#pragma once
// `qsweep run --select`: a part of a plan run on its own into the results file of the whole plan,
// the rest following later (docs/running.md, "Running part of a plan").
#include <string>
#include <vector>

#include "qsweep/common/table.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep {

// The tasks whose parameter columns (of /tasks: id, method, block, seed, key, or of their method's
// group: family, N, lambda, policy, ...) have the given values. Each text is
// "COLUMN=VALUE[,COLUMN=VALUE...]": a task matches one when it has every column named with that
// value (numbers within 1e-12 relative, text exactly), and the selection when it matches any.
class TaskSelection {
 public:
  // InputError "--select 'TEXT': what is wrong; expected ..." for an unknown column, one that
  // holds more than one value per row, or a value that is not one of its type.
  explicit TaskSelection(const std::vector<std::string>& texts);
  bool empty() const { return any_of_.empty(); }
  bool matches(const Task& task) const;
  // "lambda=0.5 or block=2", for messages.
  std::string text() const;

 private:
  struct Condition {
    std::string column;
    ColumnType type = ColumnType::f64;
    bool of_tasks = false;  // a column of /tasks, else of the task's method group
    CellValue value;
  };
  std::vector<std::vector<Condition>> any_of_;
  std::vector<std::string> texts_;
};

}  // namespace qsweep::sweep
