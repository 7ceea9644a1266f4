#pragma once
// A refining sweep's rounds against its results file (docs/running.md, "Refinement rounds"):
// the next round's points from the file's rows, and the plan of a file found again from them.
// Internal to run/.
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "qsweep/store/derived_table.hpp"
#include "qsweep/store/writer_lock.hpp"
#include "qsweep/sweep/plan.hpp"
#include "qsweep/sweep/rounds.hpp"

namespace qsweep::run {

// The next round's points of `rounds` from the rows of the results file at `path`, which holds
// `plan`: nullopt while a point of the rounds so far is not finished (pending or failed).
std::optional<std::vector<sweep::NewPoint>> propose_from_file(const sweep::Rounds& rounds,
                                                              const sweep::Plan& plan,
                                                              const std::string& path);

// Adds to `plan` (with `rounds` of it) the rounds that the rows of the results file at `path`
// give, one after the other, until the plan's hash is the file's; stops earlier where the rows
// give no further round (the file then holds another plan). Each round's points are appended to
// `added`, if given.
void replay_rounds(sweep::Plan& plan, sweep::Rounds& rounds, const std::string& path,
                   std::vector<std::vector<sweep::NewPoint>>* added = nullptr);

// The thresholds of the crossing refinements of `plan` (with `rounds` of it; none:
// sweep::has_crossings is false) from the finished rows of the results file at `path`, as the
// /thresholds table (sweep/thresholds.hpp; docs/results-layout.md). Only rows of tasks whose round
// is below `below_round` count (all: the default).
struct Thresholds {
  store::DerivedTable table;
  std::vector<std::string> warnings;  // final rows not converged, one line each
};
Thresholds thresholds_from_file(const sweep::Rounds& rounds, const sweep::Plan& plan,
                                const std::string& path,
                                int below_round = std::numeric_limits<int>::max());

// Writes /thresholds into `path`, a file of `plan` being made (grown or merged: not renamed yet),
// when the plan refines to a crossing: its rounds found again from the file's rows
// (replay_rounds from the plan's sweep). Nothing when they do not give the plan (a merge that
// joined other blocks to a refining sweep).
void write_thresholds(const sweep::Plan& plan, const std::string& path);

// At the end of a refining run (no round proposes a point), with the writer lock `lock` of
// `path` held: the thresholds from every row; when the file holds other ones (those of the rows
// before the last round), it is copied to "<path>.combined", the table written there, and the
// copy renamed over `path`, so that a kill at any moment leaves one of the two whole. Says on
// stderr how many thresholds there are and warns of each not converged.
void seal_thresholds(const sweep::Rounds& rounds, const sweep::Plan& plan, const std::string& path,
                     store::WriterLock& lock);

}  // namespace qsweep::run
