#pragma once
// Results files whose plans differ but share tasks: growing a file on `--resume` with a sweep
// whose plan contains every task of the file's plan, and `qsweep merge` of files of one study
// (docs/running.md, "Growing a study"). Tasks are matched by their key (sweep::task_key), not
// by position; a new file is written in the order of the new plan (row = task id, as always) with
// the finished rows copied, and replaces its target only once complete.
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "qsweep/store/layout.hpp"
#include "qsweep/store/results_file.hpp"
#include "qsweep/store/verify.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::run {

// A results file as a source of finished rows: the plan expanded from the sweep stored in it,
// its layout (that of its format version) and its verified rows.
struct ResultsSource {
  std::string path;
  sweep::Plan plan;
  std::optional<store::Layout> layout;
  store::Verification verified;
  std::uint64_t format_version = 0;
  // Its `history` attribute (one entry per line); for a file made before histories were kept,
  // one entry made from its provenance attributes.
  std::string history;
  // Empty for a file of the study being written (grown or merged); for a file of another study
  // (run --reuse), the text written into /tasks/reused_from of each row copied from it.
  std::string reused_from;
  // By task id, the key (sweep::task_key) of each finished task (done, unstable), empty for the
  // others: made once by key_finished for what matches rows by key (check_kept, write_combined).
  std::vector<std::string> finished_keys;
};

// The key (sweep::task_key) of every task of `plan`, by task id: made once and passed to what
// matches tasks by key (a SHA-256 each).
std::vector<std::string> task_keys(const sweep::Plan& plan);

// Fills source.finished_keys (open_source leaves them out: `qsweep verify` needs none).
void key_finished(ResultsSource& source);

// Expands the sweep stored in the results file at `path` and verifies every row. InputError if
// it is not a results file this qsweep verifies, or its stored sweep does not expand to its plan
// hash.
ResultsSource open_source(const std::string& path);

// Checks that every finished task (done, unstable) of `from` (keyed: key_finished) has a task of
// the same key in `to`, whose keys are `to_keys` (task_keys), the plan of `to_name`: InputError
// naming the first that has none. Unfinished tasks of `from` that `to` lacks hold no results and
// are left out.
void check_kept(const std::vector<std::string>& to_keys, const std::string& to_name,
                const ResultsSource& from);

// Checks that the finished rows of `source` can be matched by content and kept: a file of format
// version 2 keyed the random streams of simulate and ldp tasks by their position, and one of
// version 3 lacks columns of a simulate row, so one with such rows finished is refused
// (InputError ending with `advice`, what to do); its other rows are kept.
void check_numbers_kept(const ResultsSource& source, const std::string& advice =
                                                         "to continue the study, run it again with "
                                                         "--force, or into another file with -o");

// Opens the results file at `path` as a source of rows for another study (run --reuse): every
// row must verify. InputError, one line, for a file that does not verify, whose stored sweep
// does not expand to its plan hash (another qsweep version's numbers), or of format version 2
// with finished simulate or ldp rows.
ResultsSource open_reuse_source(const std::string& path);

// Thrown by write_combined when `stop_now` asked it to stop: the new file was removed and `path`
// is as it was.
class CombineStopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes the results file of `plan` (whose keys are `keys`, task_keys) at `path` with the
// finished rows (done, unstable) of `sources` (keyed: key_finished) copied to the tasks of the same
// content, their attempts, timings and ranks kept; the other tasks are pending. A task finished in
// more than one source must have the same results in each (per_run columns aside): InputError
// naming it otherwise, and the first source's row is kept. The file is made as "<path>.combined"
// and renamed over `path` only when complete: a kill at any moment leaves `path` as it was, or the
// new file whole. `stop_now` is asked between pieces of rows: when it says yes (a stop signal), the
// new file is removed and CombineStopped thrown, so a stopped job ends without waiting for a long
// copy and leaves nothing behind. One process (MPI_COMM_SELF), holding `lock`, the writer lock of
// `path`, which holds the new file too. A row taken from a source with `reused_from` gets that text
// in /tasks/reused_from; other rows keep theirs. The new file's provenance is `now`, and its
// history continues the histories of the sources of its study (those without `reused_from`).
// A plan that refines to a crossing gets its /thresholds from the rows copied, as they stand
// (rounds.hpp, write_thresholds). Returns how many rows were copied from each source (in the
// order of `sources`; a row held by several counts for the first).
std::vector<std::uint64_t> write_combined(const std::string& path, const sweep::Plan& plan,
                                          const std::vector<std::string>& keys,
                                          const std::vector<const ResultsSource*>& sources,
                                          const store::Provenance& now, store::WriterLock& lock,
                                          const std::function<bool()>& stop_now);

// The files a killed job may leave beside the results file `path`: "<path>.partial" (a file
// being created), "<path>.combined" and its ".partial" (a growth or merge). Only the holder of
// the writer lock of `path` makes them, so under that lock any that exists is a left-over. Removes
// each, saying so on stderr; throws Error when one exists and cannot be removed.
void remove_leftovers(const std::string& path);

}  // namespace qsweep::run
