#pragma once
// Progress of a run on rank 0's stderr: tasks finished / total, failed, rate, ETA. On a terminal
// one line is redrawn in place; otherwise (logs, launchers) a plain line every interval.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "qsweep/run/launch.hpp"

namespace qsweep::run {

struct ProgressCounts {
  std::uint64_t total = 0;
  std::uint64_t done = 0, failed = 0, unstable = 0;  // over the whole file, earlier runs included
  std::uint64_t warned = 0;                          // finished in this run with a warning
  std::uint64_t finished() const { return done + failed + unstable; }
};

// "2h05m", "3m07s", "12s", "?" for an unknown or infinite duration.
std::string format_duration(double seconds);

// "1234/5000 tasks (24.7%), 3 failed, 12 unstable, 2 with warnings, 812 tasks/s, ETA 4m38s"
std::string format_progress(const ProgressCounts& counts, double tasks_per_second,
                            double eta_seconds);

// Whether progress should be one line redrawn in place: stderr is a terminal that can erase a
// line (TERM set and not "dumb") and no MPI launcher started this process. Under a launcher the
// output goes through it, usually into a log, where redraws would be carriage-return noise (Open
// MPI's mpirun even gives every rank a terminal as stdout). Call it before MPI_Init, which sets
// launcher variables in an MPI singleton's own environment.
bool progress_in_place(const Environment& env = process_environment);
// The same decision for a given answer to "is stderr a terminal" (tests).
bool progress_in_place(bool stderr_is_terminal, const Environment& env);

// Plain lines with the default interval come early at first, at 2, 5, 10 and 20 s, so that a short
// run, or the start of a long one under mpirun or in a log, shows its rate and ETA soon.
inline constexpr double kEarlyLineSeconds[] = {2.0, 5.0, 10.0, 20.0};

// The part of a running batch's estimated cost to count as done for the ETA: its cost times the
// fraction of its expected time (cost x measured seconds per cost) that has passed, at most
// kRunningCreditCap of it. Without it the ETA grows while one big task runs and drops when it
// ends; with it the ETA falls steadily while the task takes about as long as expected.
inline constexpr double kRunningCreditCap = 0.9;
double running_credit(double cost, double seconds_running, double seconds_per_cost);

class Progress {
 public:
  using Clock = std::chrono::steady_clock;

  // `cost_todo`: estimated cost of the tasks this run has to do; the ETA scales the elapsed time
  // by the cost still to do over the cost done (so big-first scheduling does not skew it).
  // `early_lines`: plain lines also at kEarlyLineSeconds after the start (the default interval;
  // an interval the user chose is kept as it is).
  // `label` begins every progress line after "qsweep: " ("round 2: " in a refinement round).
  Progress(std::FILE* out, bool terminal, double interval_seconds, double cost_todo,
           Clock::time_point start, bool early_lines = false, std::string label = "");

  // Prints when the interval has passed since the last line.
  void update(const ProgressCounts& counts, std::uint64_t finished_this_run, double cost_done,
              Clock::time_point now);
  // The last line, always printed, ending the in-place line on a terminal.
  void finish(const ProgressCounts& counts, std::uint64_t finished_this_run, double cost_done,
              Clock::time_point now);
  // A message on its own line (the in-place line is redrawn after it).
  void message(const std::string& text);

 private:
  std::string line(const ProgressCounts& counts, std::uint64_t finished_this_run, double cost_done,
                   Clock::time_point now) const;
  bool due(Clock::time_point now) const;
  std::FILE* out_;
  bool terminal_;
  double interval_seconds_;
  double cost_todo_;
  Clock::time_point start_;
  Clock::time_point last_print_;
  bool early_lines_;
  std::string label_;
  std::size_t early_printed_ = 0;  // early lines printed so far
  bool line_open_ = false;         // terminal: an unterminated line is on screen
};

}  // namespace qsweep::run
