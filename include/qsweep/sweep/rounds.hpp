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

class Rounds {
 public:
  // Round 0 of `plan`: the curves of each of its refinements at their initial points.
  explicit Rounds(const Plan& plan);
  int round() const { return round_; }
  std::uint64_t curve_count() const { return curves_.size(); }
  // The next round's points, curve by curve, from the values of every point so far; empty: every
  // curve is done. nullopt when a point has no value yet (the round is not over).
  std::optional<std::vector<NewPoint>> propose(const PointValue& value) const;
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
  std::vector<Curve> curves_;
  std::unordered_map<std::string, std::uint64_t> ids_;  // task key -> id, every task of the plan
  int round_ = 0;
};

// The points of a round as text, one "curve x" line each (x as a hex float: exact), to send
// between ranks; points_from_text reads it back (std::invalid_argument for other text).
std::string points_text(const std::vector<NewPoint>& points);
std::vector<NewPoint> points_from_text(const std::string& text);

}  // namespace qsweep::sweep
