#pragma once
// The rounds of a refining plan (docs/sweep-format.md, "Refinement"): round 0 is the plan as
// expanded; each next round's points come from the finished values of every point so far
// (refine::propose, curve by curve), and are appended to the plan as tasks. Deterministic: the
// points depend on the values alone, so every rank that adds the same points holds the same plan,
// and a results file's plan is found again from its rows.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "qsweep/refine/refine.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep {

// A point a round adds: on curve `curve` (of Rounds, in their order), at axis value x.
struct NewPoint {
  std::uint64_t curve = 0;
  double x = 0.0;
  friend bool operator==(const NewPoint&, const NewPoint&) = default;
};

// The value of task `id` of the plan at axis value `x` for its refinement `refinement` (in
// Plan::refinements: the quantity followed), as refine::propose reads it; nullopt while the task
// is not finished (pending or failed).
using PointValue =
    std::function<std::optional<refine::Point>(std::size_t refinement, std::uint64_t id, double x)>;

// A threshold of a crossing curve (refine: with `crossing`), with the tasks at its ends.
struct CurveThreshold {
  refine::Threshold bracket;
  std::uint64_t task_lo = 0, task_hi = 0;  // the tasks at bracket.lo and bracket.hi
  // Not converged, and the point that splits it holds a finished task already, which gave no
  // value (an unstable or NaN row): no round can narrow it. (A task not finished yet there: the
  // bracket is refining.)
  bool stalled = false;
};

// What the finished points of a curve of a crossing refinement say (Rounds::crossings).
struct CurveCrossings {
  std::size_t refinement = 0;  // in Plan::refinements
  std::uint64_t curve = 0;     // of Rounds
  // Every task of the curve, finished or not, in the order they were added (its initial points
  // first, ascending).
  std::vector<std::uint64_t> tasks;
  std::uint64_t points = 0;  // the finished points with a value, which the thresholds come from
  int round = 0;             // the last round that added one of them
  // The range of those points (NaN without any).
  double x_min = 0.0, x_max = 0.0, y_min = 0.0, y_max = 0.0;
  std::vector<CurveThreshold> thresholds;  // ascending; empty: no crossing among the points
  bool budget_exhausted = false;           // the curve has max_points points
};

class Rounds {
 public:
  // Round 0 of `plan`: the curves of each of its refinements at their initial points.
  explicit Rounds(const Plan& plan);
  int round() const { return round_; }
  std::uint64_t curve_count() const { return curves_.size(); }
  // The next round's points, curve by curve, from the values of every point so far; empty: every
  // curve is done. nullopt when a point has no value yet (the round is not over).
  // A point a curve holds already (its task gave no value: unstable, or NaN) is not proposed
  // again.
  std::optional<std::vector<NewPoint>> propose(const PointValue& value) const;
  // The thresholds of every curve of a crossing refinement, in curve order, from the values of
  // its finished points (a point without a value yet is left out): after a round, the state the
  // next round starts from. `round_of` gives the round that added a task.
  std::vector<CurveCrossings> crossings(const PointValue& value,
                                        const std::function<int(std::uint64_t id)>& round_of) const;
  // Adds the next round's `points` to `plan` (the plan Rounds was made from, with the rounds added
  // so far) as tasks of that round, and sets its hash; a point whose task the plan holds already
  // is that task. std::out_of_range for a curve that does not exist.
  void add(Plan& plan, const std::vector<NewPoint>& points);

 private:
  struct Curve {
    std::size_t refinement = 0;                           // in Plan::refinements
    refine::Spec spec;                                    // the refinement's
    RefinedPoint first;                                   // the curve's first initial point
    std::vector<std::pair<double, std::uint64_t>> tasks;  // x and task id of each point
  };
  // Whether the curve has a point at x.
  static bool holds(const Curve& curve, double x);
  std::vector<Curve> curves_;
  std::unordered_map<std::string, std::uint64_t> ids_;  // task key -> id, every task of the plan
  int round_ = 0;
};

// The points of a round as text, one "curve x" line each (x as a hex float: exact), to send
// between ranks; points_from_text reads it back (std::invalid_argument for other text).
std::string points_text(const std::vector<NewPoint>& points);
std::vector<NewPoint> points_from_text(const std::string& text);

}  // namespace qsweep::sweep
