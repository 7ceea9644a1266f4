#pragma once
// Rough cost of a task, for `qsweep plan` and for scheduling the biggest tasks first, and its
// peak memory, for refusing a task that cannot fit and for keeping the tasks running at once on
// a node within its memory (docs/running.md, "Memory").
#include <optional>
#include <string>
#include <string_view>

#include "qsweep/sweep/plan.hpp"
#include "qsweep/sweep/task.hpp"

namespace qsweep::sweep {

// The memory a task adds to the process that runs it (bytes), counted from the data structures
// of its kernel (each method's adapter, src/sweep/method_<name>.cpp, derives its formulas). The
// process's own baseline (the plan, MPI, HDF5) is not included: the runner measures it.
struct MemoryEstimate {
  double bytes = 0.0;         // peak, the result included
  double result_bytes = 0.0;  // the result and one copy of it, held until its batch is written
  std::string formula;        // what it counts: "2^24 sets x 16 B"
};

struct CostEstimate {
  double seconds = 0.0;  // estimated single-core seconds (order of magnitude, not a promise)
  std::string formula;   // what it counts: "2^12 unions x 12 types x 23"
  MemoryEstimate memory;
};

// Exact general ~ 2^N unions x types x (qmax + 3); exact symmetric ~ N x (d + 1) x (qmax + 3);
// simulate ~ events = 2 N lambda (horizon + warm-up) x replications; ldp ~ samples x n (1 +
// lambda) T events, or for the exact estimator the lumped chain's states x uniformization steps.
// Memory: exact general 2^(N+4) bytes; exact symmetric 24 bytes per transition of the lumped
// chain (up to twice that while its list grows); the joint pmf its grid of bins and two slabs of
// counts; simulate a few hundred bytes per server; the exact ldp chain 16 bytes per state.
// Throws InputError if the task's family cannot be built.
CostEstimate estimate_cost(const Task& task);

// The estimate for each of `ranks` ranks that run `task` together (Task::ranks; the result on
// every one of them); nullopt if the task cannot run on that many: only exact tasks on the
// general engine span ranks, and those above the single-rank engine's N need more than one.
// Throws InputError as estimate_cost.
std::optional<MemoryEstimate> memory_per_rank(const Task& task, int ranks);

// "512 B", "12.0 KiB", "256 MiB", "4.00 GiB" (binary units, three significant digits).
std::string memory_text(double bytes);

// A size as given on a command line: a number with an optional binary unit K, M, G, T
// (case-insensitive, optionally followed by "iB" or "B": 4G = 4GiB = 4GB = 2^32 bytes); a plain
// number is bytes. Throws InputError "WHAT: 'TEXT' is not a memory size; expected ..." (no
// "WHAT: " if `what` is empty) for anything else, for zero and for more than 2^60 bytes.
double parse_memory_size(std::string_view text, std::string_view what);

// The limit a task must fit in: its estimate plus the baseline of the process that runs it.
struct MemoryLimit {
  double bytes = 0.0;           // per task, baseline included
  double baseline_bytes = 0.0;  // of the process that runs a task, before the task
  std::string source;           // names the limit for messages: "--max-task-memory 4.00 GiB"
};

// Throws InputError located at the task's block (FILE:LINE:COLUMN) for the first task whose
// estimate plus the baseline exceeds the limit, naming the task, the estimate, the limit and how
// many more tasks are over it. Tasks with Task::ranks != 1 are left to the runner, which
// chooses their ranks (run/spans.hpp).
void check_task_memory(const Plan& plan, const MemoryLimit& limit);

}  // namespace qsweep::sweep
