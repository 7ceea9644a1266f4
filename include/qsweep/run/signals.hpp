#pragma once
// Stop requests from signals. SIGUSR1 (SLURM's `--signal=USR1@SECONDS` warning; mpirun forwards
// it to every rank) asks to drain: hand out no more work, let running batches finish. SIGTERM and
// SIGINT ask to stop now: running tasks are abandoned and stay pending. A second SIGUSR1 also
// means stop now; SIGTERM or SIGINT after a stop-now ends the process at once (default action).
namespace qsweep::run {

enum class StopMode : int {
  none = 0,
  drain = 1,  // no new work; running batches finish and are written
  now = 2,    // no new work; running tasks are abandoned (pending, run again on --resume)
};

// Installs the handlers for its lifetime and restores the previous ones after. Watches nest:
// `qsweep run` holds one from its first instruction (a signal during start-up is kept, not
// fatal) and run_plan one for the run; the outermost installs the handlers and forgets earlier
// requests, the inner ones see what was requested before them.
class SignalWatch {
 public:
  SignalWatch();
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;
  ~SignalWatch();

  StopMode requested() const;
};

}  // namespace qsweep::run
