#pragma once
// `qsweep run`: rank 0 coordinates (and, by default, also computes on a thread of its own), the
// other ranks work. Dynamic scheduling, biggest estimated cost first, small tasks batched; every
// rank writes the rows of the tasks it ran into the shared results file. See docs/running.md.
#include <stdexcept>
#include <string>
#include <vector>

#include "qsweep/common/error.hpp"
#include "qsweep/run/engine.hpp"
#include "qsweep/run/mpi.hpp"
#include "qsweep/run/progress.hpp"
#include "qsweep/run/scheduler.hpp"
#include "qsweep/run/spans.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::run {

struct RunOptions {
  std::string output;   // results file; "" = the sweep file's `output:`
  bool resume = false;  // continue an existing file (or start it if there is none)
  bool force = false;   // replace an existing file
  // Rank 0 only coordinates instead of also computing (ignored with one rank).
  bool dedicated_coordinator = false;
  // Seconds between progress lines; < 0: no progress output.
  double progress_seconds = 30.0;
  // Also lines at kEarlyLineSeconds (progress.hpp): the default, off when --progress is given.
  bool progress_early_lines = true;
  // Progress as one line redrawn in place twice a second (a terminal) instead of a line every
  // progress_seconds (logs). `qsweep run` decides before MPI starts: see progress_in_place().
  bool progress_in_place = false;
  std::string command_line;  // stored as provenance
  // Memory (bytes; docs/running.md, "Memory"). A task whose estimate plus its rank's baseline
  // exceeds max_task_memory is refused before the run starts (0: the node's memory divided by
  // the ranks that share it). node_memory is what the tasks and ranks on one node may hold
  // together (0: the node's physical memory, or its cgroup limit where lower).
  double max_task_memory = 0.0;
  double node_memory = 0.0;
  // Part of the plan (docs/running.md, "Running part of a plan"): only the tasks of this shard
  // and matching any of these selections run; the file holds the whole plan, the rest pending.
  Shard shard;
  std::vector<std::string> select;
  // Results files of other studies whose finished rows are copied to the tasks of the same key
  // instead of being computed (docs/running.md, "Reusing another study's results").
  std::vector<std::string> reuse;
  // The refinement round this run computes (docs/running.md, "Refinement rounds"), which its
  // progress lines name ("qsweep: round 2: 31/40 tasks ..."); -1: a sweep without refine:.
  int round = -1;
};

struct RunResult {
  int exit_code = 0;          // qsweep::exit_code::{ok, tasks_failed, incomplete}
  ProgressCounts counts;      // over the whole file (rank 0; zeros elsewhere)
  double work_seconds = 0.0;  // from the first task handed out to the last row written (rank 0)
  // A task was still running on this rank when the run stopped (stop-now): end the process with
  // _Exit once MPI is finalized.
  bool left_task_running = false;
};

// Bad input detected on rank 0 and thrown on every rank with the same message, before any
// collective file operation: the job ends with exit code 2, no MPI_Abort needed.
class AgreedInputError : public InputError {
 public:
  using InputError::InputError;
};

// A stop-now signal (SIGTERM, SIGINT) reached a rank while it planned: every rank throws it,
// nothing has been written.
class StoppedWhilePlanning : public std::runtime_error {
 public:
  StoppedWhilePlanning() : std::runtime_error("stopped by a signal while planning") {}
};

// Rank 0 reads the sweep file, every rank parses and validates the text (at the same time).
// Throws AgreedInputError for a bad file (rank 0's message, the same on every rank), and
// StoppedWhilePlanning.
sweep::Plan distribute_plan(const Comm& comm, const std::string& path);

// Collective: runs `plan` (the same on every rank) into the results file. Throws
// AgreedInputError for an output that may not be written (exists without --resume/--force, or
// holds another plan); any other exception means this rank failed and the caller must end the
// job with MpiSession::abort.
// `run_task` runs the tasks of one rank, `run_spanning` those that run on several ranks together.
RunResult run_plan(
    const Comm& comm, const sweep::Plan& plan, const RunOptions& options,
    const TaskFunction& run_task = [](const sweep::Task& task) { return sweep::execute(task); },
    const SpanningTaskFunction& run_spanning = execute_spanning);

}  // namespace qsweep::run
