#pragma once
// Rank 0 of a run: hands out the remaining tasks to the ranks (batches sized by measured cost,
// tasks that span ranks on groups of them, within each node's memory), collects their reports,
// shows progress, writes the activity file `qsweep status` reads and stops the run on a signal.
// Internal to run/.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "qsweep/run/memory.hpp"
#include "qsweep/run/mpi.hpp"
#include "qsweep/run/progress.hpp"
#include "qsweep/run/runner.hpp"
#include "qsweep/run/signals.hpp"
#include "qsweep/run/spans.hpp"
#include "qsweep/sweep/plan.hpp"
#include "startup.hpp"
#include "workbench.hpp"

namespace qsweep::run {

// Runs until every task of `start` is finished or a stop is complete, with `local` (null when
// rank 0 only coordinates) as rank 0's own work side; the exit code, the counts over the whole
// file and the seconds from the first task handed out to the last row written.
RunResult coordinate(const Comm& comm, const sweep::Plan& plan, const std::string& path,
                     const RunOptions& options, StartState start, Workbench* local,
                     const SignalWatch& signals, NodeMap nodes);

}  // namespace qsweep::run
