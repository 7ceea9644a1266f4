#pragma once
// A rank other than 0: takes batches and tasks that span ranks from rank 0, runs them, reports
// back, sends heartbeats and stops when told to or on a signal. Internal to run/.
#include "qsweep/exact_mpi/general.hpp"
#include "qsweep/run/mpi.hpp"
#include "qsweep/run/signals.hpp"
#include "qsweep/run/spans.hpp"
#include "qsweep/store/results_file.hpp"
#include "qsweep/sweep/plan.hpp"
#include "workbench.hpp"

namespace qsweep::run {

// What a member of a task that spans ranks needs besides its order.
struct SpanContext {
  const sweep::Plan& plan;
  store::ResultsFile& file;
  const SpanningTaskFunction& run_spanning;
};

// Works until rank 0 says the run is finished.
void work(const Comm& comm, Workbench& bench, const SignalWatch& signals, const SpanContext& spans);

}  // namespace qsweep::run
