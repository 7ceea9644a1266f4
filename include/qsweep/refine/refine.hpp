#pragma once
// Adaptive refinement of one curve (issue 33, docs/sweep-format.md "Refinement"): given the
// finished points of a curve y(x) (x along one numeric axis, y a result of the method, with its
// 95% half-width, 0 for exact methods), the points to compute in the next round. Pure: no MPI,
// no files, no clock; the same points give the same proposal on every rank and in every run, so
// the set of points a refining sweep ends with depends on its sweep alone.
//
// Two criteria:
// - interpolation: the points where the curve bends. The error of the chord between two
//   neighbours x_i < x_{i+1} is estimated by the quadratic through three neighbouring points,
//   which differs from the chord by y[x_a, x_b, x_c] (x - x_i)(x - x_{i+1}) on the interval (the
//   second divided difference; the leading term of the chord's error), at most
//   |y[x_a, x_b, x_c]| h^2 / 4 at its midpoint. Each interval has two such triples (its left
//   neighbour with it, it with its right neighbour; one at the ends of the curve), and the larger
//   estimate counts, so that an interval next to where the curvature grows is not trusted on the
//   flatter side's word. An interval is split at its midpoint when that estimate exceeds
//   `tolerance` times the smaller |y| of its ends and (noisy values) the largest half-width of the
//   points of its triples: below the noise a finer grid resolves nothing, so noise never drives
//   endless refinement.
// - crossing: where y crosses a value c. Each pair of neighbours with y - c of opposite signs is
//   a bracket, bisected (its midpoint; integer axes: the integer below it) until it is at most
//   `tolerance` wide (integer axes: two neighbouring integers). The threshold is the chord's zero
//   in the last bracket. A bracket whose end is within its half-width of c cannot be trusted
//   further: it stops, not converged.
// The number of points of a curve, the initial ones included, never exceeds `max_points`; when a
// round would exceed it, the intervals of largest estimated error (crossing: the widest brackets)
// are split first, ties by position. Points whose value is NaN (a failed or unstable task) are
// left out of the curve.
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace qsweep::refine {

enum class Criterion { interpolation, crossing };

struct Spec {
  Criterion criterion = Criterion::interpolation;
  // interpolation: relative error of the chord; crossing: width of the final bracket, in the
  // axis' units (integer axes: a bracket of two neighbouring integers is final whatever it is).
  double tolerance = 0.005;
  std::uint64_t max_points = 400;  // points of one curve, the initial ones included
  double crossing = 0.0;           // crossing: the value crossed
  bool integer_axis = false;       // the axis takes integers (N, d, ...): points are integers
};

// A finished point of the curve.
struct Point {
  double x = 0.0;
  double y = 0.0;
  double half_width = 0.0;  // 95% half-width of y; 0 for exact values
};

// Where the interpolation criterion stands on one interval.
struct Interval {
  double lo = 0.0, hi = 0.0;
  double error = 0.0;     // estimated largest error of the chord (absolute)
  double allowed = 0.0;   // the error accepted there: max(tolerance |y|, noise)
  bool resolved = false;  // error <= allowed, or the interval cannot be split (integers)
};

// A threshold: where y crosses Spec::crossing between two neighbouring points.
struct Threshold {
  double value = 0.0;  // the zero of the chord in [lo, hi] (lo = hi: a point on c)
  double lo = 0.0, hi = 0.0;
  double y_lo = 0.0, y_hi = 0.0;
  bool converged = false;  // hi - lo <= tolerance (integers: hi - lo <= 1), or a point on c
  bool noisy = false;      // stopped because an end is within its half-width of c
  // Not converged: the point that splits the bracket (NaN for a converged or noisy one), and
  // whether the proposal holds it (false when the budget left it out).
  double next = std::numeric_limits<double>::quiet_NaN();
  bool refining = false;
};

// The state of one curve after its finished points: what the next round computes, and why.
struct Proposal {
  std::vector<double> points;  // the next round's x values, ascending; empty: the curve is done
  std::vector<Interval> intervals;    // interpolation criterion: every interval
  std::vector<Threshold> thresholds;  // crossing criterion: every bracket found, ascending
  bool budget_exhausted = false;      // points were wanted beyond max_points
};

// Throws std::invalid_argument for a spec that cannot be used (tolerance <= 0 or not finite,
// max_points < 2, a crossing that is not finite). `points` may come in
// any order; a repeated x keeps its first value.
Proposal propose(const Spec& spec, std::span<const Point> points);

// The points of the curve sorted by x, NaN values and repeated x left out (what propose uses).
std::vector<Point> curve(std::span<const Point> points);

// Piecewise-linear interpolation of a curve (sorted, as curve() returns) at x within its range.
double interpolate(std::span<const Point> sorted, double x);

}  // namespace qsweep::refine
