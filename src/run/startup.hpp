#pragma once
// Rank 0 before a run starts: where the results go, what the file there holds (created,
// resumed after verifying every row, grown to an edited sweep, filled from other studies' files
// by --reuse) and which tasks this run takes (--shard, --select). Internal to run/.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "qsweep/run/combine.hpp"
#include "qsweep/run/progress.hpp"
#include "qsweep/run/runner.hpp"
#include "qsweep/run/signals.hpp"
#include "qsweep/run/spans.hpp"
#include "qsweep/store/layout.hpp"
#include "qsweep/store/writer_lock.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::run {

// What a run starts from: the tasks to run and what the file held before.
// Both sequences compact: a run of 10^6 tasks holds a few runs here, not 12 MB.
struct StartState {
  store::CompactSequence todo;          // ascending
  store::CompactSequence attempts;      // per task, before this run
  ProgressCounts counts;                // before this run
  std::map<std::uint64_t, Span> spans;  // the tasks that run on several ranks (spans.hpp)
};

// The results file of the run: -o, else the sweep's `output:`; InputError if neither.
std::string output_path(const sweep::Plan& plan, const RunOptions& options);

// Checks that `path` (the real_results_path of `given`, the name the user gave, which messages
// quote) can be a results file, with the files beside it, creating its directory if needed.
// `from_sweep`: the path is the sweep's `output:` (messages give the place of that line).
void check_output_location(const sweep::Plan& plan, const std::string& given,
                           const std::string& path, bool from_sweep);

// The tasks this run may run (--shard, --select), or none for the whole plan; says how many on
// stderr.
std::vector<bool> part_of_plan(const sweep::Plan& plan, const RunOptions& options);

// What to run, from an existing file (resume, after verifying every row) or from scratch; only
// the tasks `chosen` (all if empty) are counted and run.
StartState read_start(const sweep::Plan& plan, const store::Layout& layout, const std::string& path,
                      bool create, const std::vector<bool>& chosen);

// On --resume: a renamed sweep does not continue a file that keeps the old name.
void check_same_study(const sweep::Plan& plan, const std::string& path);

// The results files of --reuse, each verified. None may be `path`, the file this run writes.
std::vector<ResultsSource> open_reused(const std::vector<std::string>& files,
                                       const std::string& path);

// On a new file with --reuse: writes the file of `plan` at `path` with the finished rows of
// `reused` copied. False when a stop-now signal ended the copy: nothing was written.
bool create_reusing(const sweep::Plan& plan, const std::string& path, const RunOptions& options,
                    int ranks, const SignalWatch& signals, store::WriterLock& lock,
                    const std::vector<ResultsSource>& reused);

// On --resume: replaces a file of another plan or an older format version, or one that takes
// rows of `reused`, by the file of `plan` with its finished rows kept. False when a stop-now
// signal ended the growth: `path` is as it was.
bool grow_results(const sweep::Plan& plan, const std::string& path, const RunOptions& options,
                  int ranks, const SignalWatch& signals, store::WriterLock& lock,
                  const std::vector<ResultsSource>& reused);

}  // namespace qsweep::run
