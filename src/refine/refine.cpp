#include "qsweep/refine/refine.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace qsweep::refine {
namespace {

void check(const Spec& spec) {
  if (!(spec.tolerance > 0.0) || !std::isfinite(spec.tolerance)) {
    throw std::invalid_argument("refine: tolerance must be a finite number > 0");
  }
  if (spec.max_points < 2) throw std::invalid_argument("refine: max_points must be at least 2");
  if (spec.criterion == Criterion::crossing && !std::isfinite(spec.crossing)) {
    throw std::invalid_argument("refine: the crossing value must be finite");
  }
}

// The point strictly inside (lo, hi) that splits it: its midpoint, on an integer axis the
// integer at or below it. lo itself if there is none (neighbouring integers or doubles).
double split_point(double lo, double hi, bool integer_axis) {
  if (integer_axis) {
    const double mid = std::floor(lo + (hi - lo) / 2.0);
    return mid > lo && mid < hi ? mid : lo;
  }
  const double mid = lo + (hi - lo) / 2.0;
  return mid > lo && mid < hi ? mid : lo;
}

// |y[x_t, x_t+1, x_t+2]|, the second divided difference of the triple starting at t.
double divided_difference(const std::vector<Point>& c, std::size_t t) {
  const double s1 = (c[t + 1].y - c[t].y) / (c[t + 1].x - c[t].x);
  const double s2 = (c[t + 2].y - c[t + 1].y) / (c[t + 2].x - c[t + 1].x);
  return std::abs((s2 - s1) / (c[t + 2].x - c[t].x));
}

struct Candidate {
  double x = 0.0;
  double priority = 0.0;  // larger first
  double lo = 0.0;        // ties: left first
};

// The candidates that fit the budget, ascending in x.
std::vector<double> within_budget(std::vector<Candidate> candidates, std::uint64_t have,
                                  std::uint64_t max_points, bool& exhausted) {
  const std::uint64_t room = have >= max_points ? 0 : max_points - have;
  exhausted = candidates.size() > room;
  if (exhausted) {
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) {
                       if (a.priority != b.priority) return a.priority > b.priority;
                       return a.lo < b.lo;
                     });
    candidates.resize(room);
  }
  std::vector<double> xs;
  xs.reserve(candidates.size());
  for (const Candidate& c : candidates) xs.push_back(c.x);
  std::sort(xs.begin(), xs.end());
  return xs;
}

Proposal interpolation(const Spec& spec, const std::vector<Point>& c) {
  Proposal out;
  const std::size_t n = c.size();
  if (n < 2) return out;
  std::vector<Candidate> candidates;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    Interval in;
    in.lo = c[i].x;
    in.hi = c[i + 1].x;
    const double h = in.hi - in.lo;
    double noise = std::max(c[i].half_width, c[i + 1].half_width);
    if (n == 2) {
      // No curvature to estimate from two points: the chord is unknown to be good.
      in.error = std::numeric_limits<double>::infinity();
    } else {
      // The triples that contain the interval: (i-1, i, i+1) and (i, i+1, i+2).
      double dd = 0.0;
      for (std::size_t t = i == 0 ? 0 : i - 1; t <= i && t + 2 < n; ++t) {
        dd = std::max(dd, divided_difference(c, t));
        noise = std::max({noise, c[t].half_width, c[t + 1].half_width, c[t + 2].half_width});
      }
      in.error = dd * h * h / 4.0;
    }
    in.allowed = std::max(spec.tolerance * std::min(std::abs(c[i].y), std::abs(c[i + 1].y)), noise);
    const double x = split_point(in.lo, in.hi, spec.integer_axis);
    in.resolved = in.error <= in.allowed || x == in.lo;
    if (!in.resolved) {
      const double excess =
          in.allowed > 0.0 ? in.error / in.allowed : std::numeric_limits<double>::infinity();
      candidates.push_back({x, excess, in.lo});
    }
    out.intervals.push_back(in);
  }
  out.points = within_budget(std::move(candidates), n, spec.max_points, out.budget_exhausted);
  return out;
}

Proposal crossing(const Spec& spec, const std::vector<Point>& c) {
  Proposal out;
  const std::size_t n = c.size();
  std::vector<Candidate> candidates;
  for (std::size_t i = 0; i < n; ++i) {
    const double f = c[i].y - spec.crossing;
    if (f == 0.0) {
      Threshold t;
      t.value = t.lo = t.hi = c[i].x;
      t.y_lo = t.y_hi = c[i].y;
      t.converged = true;
      out.thresholds.push_back(t);
      continue;
    }
    if (i + 1 == n) break;
    const double g = c[i + 1].y - spec.crossing;
    if (g == 0.0 || (f < 0.0) == (g < 0.0)) continue;
    Threshold t;
    t.lo = c[i].x;
    t.hi = c[i + 1].x;
    t.y_lo = c[i].y;
    t.y_hi = c[i + 1].y;
    const double width = t.hi - t.lo;
    t.value = t.lo + f / (f - g) * width;
    t.value = std::clamp(t.value, t.lo, t.hi);
    t.converged = width <= spec.tolerance || (spec.integer_axis && width <= 1.0);
    t.noisy = std::abs(f) <= c[i].half_width || std::abs(g) <= c[i + 1].half_width;
    const double x = split_point(t.lo, t.hi, spec.integer_axis);
    if (x == t.lo) t.converged = true;  // nothing left between them
    if (!t.converged && !t.noisy) {
      t.next = x;
      candidates.push_back({x, width, t.lo});
    }
    out.thresholds.push_back(t);
  }
  out.points = within_budget(std::move(candidates), n, spec.max_points, out.budget_exhausted);
  for (Threshold& t : out.thresholds)
    t.refining =
        !std::isnan(t.next) && std::binary_search(out.points.begin(), out.points.end(), t.next);
  return out;
}

}  // namespace

std::vector<Point> curve(std::span<const Point> points) {
  std::vector<Point> c;
  c.reserve(points.size());
  for (const Point& p : points) {
    if (!std::isnan(p.y) && !std::isnan(p.x)) c.push_back(p);
  }
  std::stable_sort(c.begin(), c.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
  c.erase(
      std::unique(c.begin(), c.end(), [](const Point& a, const Point& b) { return a.x == b.x; }),
      c.end());
  return c;
}

double interpolate(std::span<const Point> sorted, double x) {
  if (sorted.empty()) throw std::invalid_argument("refine::interpolate: an empty curve");
  if (x <= sorted.front().x) return sorted.front().y;
  if (x >= sorted.back().x) return sorted.back().y;
  const auto hi = std::upper_bound(sorted.begin(), sorted.end(), x,
                                   [](double v, const Point& p) { return v < p.x; });
  const auto lo = hi - 1;
  const double t = (x - lo->x) / (hi->x - lo->x);
  return lo->y + t * (hi->y - lo->y);
}

Proposal propose(const Spec& spec, std::span<const Point> points) {
  check(spec);
  const std::vector<Point> c = curve(points);
  return spec.criterion == Criterion::interpolation ? interpolation(spec, c) : crossing(spec, c);
}

}  // namespace qsweep::refine
