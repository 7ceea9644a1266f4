#include "qsweep/sweep/rounds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

namespace qsweep::sweep {

Rounds::Rounds(const Plan& plan) {
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) ids_.emplace(plan.tasks.key(id), id);
  for (std::size_t r = 0; r < plan.refinements.size(); ++r) {
    for (std::vector<RefinedPoint>& points : refinement_curves(plan, r)) {
      Curve curve;
      curve.refinement = r;
      curve.spec = plan.refinements[r].spec;
      for (const RefinedPoint& p : points) curve.tasks.emplace_back(p.x, ids_.at(task_key(p.task)));
      curve.first = std::move(points.front());
      curves_.push_back(std::move(curve));
    }
  }
}

std::optional<std::vector<NewPoint>> Rounds::propose(const PointValue& value) const {
  std::vector<NewPoint> out;
  for (std::size_t c = 0; c < curves_.size(); ++c) {
    const Curve& curve = curves_[c];
    std::vector<refine::Point> points;
    points.reserve(curve.tasks.size());
    for (const auto& [x, id] : curve.tasks) {
      const std::optional<refine::Point> point = value(curve.refinement, id, x);
      if (!point) return std::nullopt;
      points.push_back(*point);
    }
    for (const double x : refine::propose(curve.spec, points).points)
      if (!holds(curve, x)) out.push_back({c, x});
  }
  return out;
}

bool Rounds::holds(const Curve& curve, double x) {
  return std::any_of(curve.tasks.begin(), curve.tasks.end(),
                     [x](const auto& point) { return point.first == x; });
}

std::vector<CurveCrossings> Rounds::crossings(
    const PointValue& value, const std::function<int(std::uint64_t id)>& round_of) const {
  std::vector<CurveCrossings> out;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t c = 0; c < curves_.size(); ++c) {
    const Curve& curve = curves_[c];
    if (curve.spec.criterion != refine::Criterion::crossing) continue;
    CurveCrossings& state = out.emplace_back();
    state.refinement = curve.refinement;
    state.curve = c;
    state.x_min = state.x_max = state.y_min = state.y_max = nan;
    std::vector<refine::Point> points;
    std::map<double, std::uint64_t> task_at;  // the first task of each x
    std::vector<double> no_value;             // finished without a value
    for (const auto& [x, id] : curve.tasks) {
      state.tasks.push_back(id);
      task_at.emplace(x, id);
      const std::optional<refine::Point> point = value(curve.refinement, id, x);
      if (!point) continue;  // not finished yet
      if (std::isnan(point->y)) {
        no_value.push_back(x);
        continue;
      }
      points.push_back(*point);
    }
    const std::vector<refine::Point> sorted = refine::curve(points);
    state.points = sorted.size();
    for (const refine::Point& p : sorted) {
      state.round = std::max(state.round, round_of(task_at.at(p.x)));
      state.x_min = std::isnan(state.x_min) ? p.x : std::min(state.x_min, p.x);
      state.x_max = std::isnan(state.x_max) ? p.x : std::max(state.x_max, p.x);
      state.y_min = std::isnan(state.y_min) ? p.y : std::min(state.y_min, p.y);
      state.y_max = std::isnan(state.y_max) ? p.y : std::max(state.y_max, p.y);
    }
    const refine::Proposal proposal = refine::propose(curve.spec, sorted);
    state.budget_exhausted = proposal.budget_exhausted || sorted.size() >= curve.spec.max_points;
    for (const refine::Threshold& t : proposal.thresholds) {
      CurveThreshold& threshold = state.thresholds.emplace_back();
      threshold.bracket = t;
      threshold.task_lo = task_at.at(t.lo);
      threshold.task_hi = task_at.at(t.hi);
      if (t.refining && std::find(no_value.begin(), no_value.end(), t.next) != no_value.end()) {
        threshold.bracket.refining = false;
        threshold.stalled = true;
      }
    }
  }
  return out;
}

void Rounds::add(Plan& plan, const std::vector<NewPoint>& points) {
  ++round_;
  for (const NewPoint& point : points) {
    Curve& curve = curves_.at(point.curve);
    RefinedPoint p = refined_point(plan, curve.refinement, curve.first, point.x, round_);
    const auto [at, added] = ids_.emplace(task_key(p.task), plan.tasks.size());
    if (added) {
      p.task.id = at->second;
      plan.tasks.push_back(std::move(p.task));
    }
    curve.tasks.emplace_back(point.x, at->second);
  }
  plan.hash = hash_with_refinements(plan_hash(plan.tasks), plan.refinements);
}

std::string points_text(const std::vector<NewPoint>& points) {
  std::string text;
  for (const NewPoint& p : points) text += fmt::format("{} {:a}\n", p.curve, p.x);
  return text;
}

std::vector<NewPoint> points_from_text(const std::string& text) {
  std::vector<NewPoint> points;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    NewPoint p;
    std::size_t end = 0;
    p.curve = std::stoull(line, &end);
    const std::string x = line.substr(end);
    p.x = std::strtod(x.c_str(), nullptr);  // reads hex floats, as std::stod does not everywhere
    if (end == 0 || x.empty()) throw std::invalid_argument("points_from_text: " + line);
    points.push_back(p);
  }
  return points;
}

}  // namespace qsweep::sweep
