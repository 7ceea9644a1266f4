#pragma once
// A refining sweep's rounds against its results file (docs/running.md, "Refinement rounds"):
// the next round's points from the file's rows, and the plan of a file found again from them.
// Internal to run/.
#include <optional>
#include <string>
#include <vector>

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

}  // namespace qsweep::run
