#pragma once
// Tasks that run on several ranks together (sweep key `ranks`; docs/running.md, "Tasks that span
// ranks"): how many ranks each gets, and how a member of such a group runs it.
#include <cstdint>
#include <functional>
#include <map>

#include "qsweep/exact_mpi/general.hpp"
#include "qsweep/run/mpi.hpp"
#include "qsweep/sweep/cost.hpp"
#include "qsweep/sweep/execute.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::run {

// A task's ranks and what each of them holds for it.
struct Span {
  int ranks = 1;
  double memory = 0.0;         // per rank (sweep/cost.hpp), the result included
  double result_memory = 0.0;  // per rank
};

// Rank 0, before the run: the ranks of every task with Task::ranks != 1, by task id. `auto`
// becomes the fewest ranks (at most `available`) whose share fits `limit` beside a rank's
// baseline, and 1 for a task that cannot span ranks. Throws InputError located at the task's
// block for a task that asks for more than `available` ranks or whose share does not fit on
// as many as it may have.
std::map<std::uint64_t, Span> choose_spans(const sweep::Plan& plan, const sweep::MemoryLimit& limit,
                                           int available);

// What runs a task on the ranks of `group` (each member calls it; every member returns the same
// outcome): sweep::execute with the distributed engine, or a stand-in in tests. Every member
// calls `stop` at the same points (it answers the rank's messages and sends its heartbeats); the
// function throws exact_mpi::Stopped on every member once it returned true on one of them.
using SpanningTaskFunction = std::function<sweep::TaskOutcome(const sweep::Task&, const Comm& group,
                                                              const exact_mpi::StopCheck& stop)>;

// sweep::execute with exact_mpi's general engine on `group`. A member that runs out of memory
// ends the job (the others would wait for it forever); --resume runs the task again.
sweep::TaskOutcome execute_spanning(const sweep::Task& task, const Comm& group,
                                    const exact_mpi::StopCheck& stop);

}  // namespace qsweep::run
