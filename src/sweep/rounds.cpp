#include "qsweep/sweep/rounds.hpp"

#include <fmt/format.h>

#include <sstream>
#include <stdexcept>

namespace qsweep::sweep {

Rounds::Rounds(const Plan& plan) {
  for (const Task& task : plan.tasks) ids_.emplace(task_key(task), task.id);
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
    for (const double x : refine::propose(curve.spec, points).points) out.push_back({c, x});
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
