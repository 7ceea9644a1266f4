#pragma once
// The results file of a plan: the sweep layer's tables (sweep/columns.hpp) handed to the store,
// which knows tables and rows, not tasks. Everything the job, `qsweep verify` and the tests do
// with a plan's file goes through here.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "qsweep/store/layout.hpp"
#include "qsweep/store/results_file.hpp"
#include "qsweep/store/verify.hpp"
#include "qsweep/sweep/execute.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::run {

// A task that ran, with the rank that ran it.
struct FinishedTask {
  std::uint64_t id = 0;
  sweep::TaskOutcome outcome;
  int rank = 0;
};

// /tasks, then one group per method present in the plan, in Method order; as a file of
// `format_version` has them (version 2, before /tasks/key, is read and verified). With a `team`
// (every rank of a run, each with the same plan), each member makes the tasks of its share of the
// rows for their planned lengths and they exchange them.
store::Layout results_layout(const sweep::Plan& plan, int format_version = store::kFormatVersion,
                             const sweep::PlanTeam* team = nullptr);

// Task `id`'s row of its method group as this version stores it, from `stored`, the row a file
// of `format_version` holds: the columns that version lacks as a task not yet run has them.
Row current_group_row(const sweep::Plan& plan, std::uint64_t id, int format_version, Row stored);

// Collective: creates the results file of `plan` (store::ResultsFile::create).
void create_results_file(const std::string& path, const sweep::Plan& plan,
                         const store::Layout& layout, const store::Provenance& provenance,
                         MPI_Comm comm, store::WriterLock* lock = nullptr);

// Writes the rows of finished tasks. An outcome whose results do not fit the planned sizes is
// turned into a failure (in place) with a message saying so.
void write_finished(store::ResultsFile& file, const sweep::Plan& plan,
                    std::vector<FinishedTask>& finished);

// Verifies the file at `path` against `plan` (store::verify_results): a file of
// `format_version`, whose layout is results_layout(plan, format_version).
store::Verification verify_results(const std::string& path, const sweep::Plan& plan,
                                   const store::Layout& layout,
                                   int format_version = store::kFormatVersion);

}  // namespace qsweep::run
