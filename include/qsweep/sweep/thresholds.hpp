#pragma once
// The thresholds of a refining plan as a table (docs/results-layout.md, "/thresholds"): one row
// per threshold of each curve of a crossing refinement (`refine: {..., crossing: C}`), and one
// row for a curve whose quantity does not cross C, so that no curve is silently missing. The
// rows come from the finished points alone (sweep::Rounds::crossings), so a file's thresholds
// are a function of its rows: the same for any number of ranks, resumed or not.
#include <string>
#include <vector>

#include "qsweep/common/table.hpp"
#include "qsweep/sweep/plan.hpp"
#include "qsweep/sweep/rounds.hpp"

namespace qsweep::sweep {

// The name of the group, and the width of its `note` column.
inline constexpr const char* kThresholdsGroup = "thresholds";
inline constexpr std::size_t kThresholdNoteWidth = 192;

// What a row says of its threshold (the `state` column).
inline constexpr const char* kThresholdConverged = "converged";
inline constexpr const char* kThresholdRefining = "refining";   // the next round narrows it
inline constexpr const char* kThresholdBudget = "budget";       // max_points left it wide
inline constexpr const char* kThresholdNoisy = "noisy";         // an end within its half-width
inline constexpr const char* kThresholdStalled = "stalled";     // its next point gave no value
inline constexpr const char* kThresholdNotFound = "not_found";  // no crossing in the range

// Whether the plan refines a curve to a crossing (it then has a /thresholds group).
bool has_crossings(const Plan& plan);

struct ThresholdTable {
  std::vector<ColumnSpec> columns;
  std::vector<Row> rows;
  // For each row that is final and not converged (budget, noisy, stalled, not_found), one line
  // saying so, for the run's stderr ("" for the others).
  std::vector<std::string> warnings;
};

// The table of `curves` (Rounds::crossings of `plan`'s rounds): identifying columns (block,
// method, and the parameter columns of the curves' method groups; those that vary along a curve,
// its axis among them, hold "not applicable": NaN, -1 or ""), the refinement (axis, quantity,
// crossing, tolerance, max_points), then the threshold's columns. Columns are those of the plan
// (its crossing refinements' methods), whatever the rows.
ThresholdTable threshold_table(const Plan& plan, const std::vector<CurveCrossings>& curves);

}  // namespace qsweep::sweep
