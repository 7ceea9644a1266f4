// The refinement of one curve (include/qsweep/refine/refine.hpp), driven round by round as the
// coordinator does: the "finished rows" of each round are the project's own evaluations (the
// exact engine, the mean-field fixed point), and every check is against an independent
// computation (the curve evaluated densely, a root found by bisection on the closed form).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "qsweep/exact/exact.hpp"
#include "qsweep/meanfield/meanfield.hpp"
#include "qsweep/model/family.hpp"
#include "qsweep/model/model.hpp"
#include "qsweep/refine/refine.hpp"

namespace qsweep::refine {
namespace {

// numpy.linspace's values: a + i * step, the last one b.
std::vector<double> linspace(double a, double b, int n) {
  std::vector<double> v;
  const double step = (b - a) / (n - 1);
  for (int i = 0; i < n; ++i) v.push_back(i + 1 == n ? b : a + i * step);
  return v;
}

// E[T] of the exact product form on the ring (adjacent pairs of servers, d = 2), N servers.
double ring_ET(int N, double lambda) {
  model::FamilyParams p;
  p.kind = model::FamilyKind::ring;
  p.N = N;
  const model::System system(model::Family(p),
                             std::vector<double>(static_cast<std::size_t>(N), 1.0), lambda);
  exact::Options options;
  options.qmax = 0;
  options.light_traffic = false;
  options.per_type = false;
  return exact::evaluate(system, options).ET;
}

double meanfield_ET(int d, double lambda) {
  meanfield::Options options;
  options.policy = meanfield::Policy::power_of_d;
  options.policy_d = d;
  options.lambda = lambda;
  return meanfield::solve(options).ET;
}

struct Refined {
  std::vector<Point> points;
  int rounds = 0;
  Proposal last;
};

// Rounds as the coordinator runs them: propose from the finished points, compute, repeat.
Refined run_rounds(const Spec& spec, const std::vector<double>& initial,
                   const std::function<double(double)>& f) {
  Refined r;
  for (double x : initial) r.points.push_back({x, f(x), 0.0});
  for (;;) {
    r.last = propose(spec, r.points);
    if (r.last.points.empty()) break;
    ++r.rounds;
    for (double x : r.last.points) r.points.push_back({x, f(x), 0.0});
    if (r.rounds > 200) ADD_FAILURE() << "refinement does not end";
    if (r.rounds > 200) break;
  }
  r.points = curve(r.points);
  return r;
}

// The largest relative error of the chords of `sorted` against f at `probes`.
double worst_error(const std::vector<Point>& sorted, const std::vector<double>& probes,
                   const std::vector<double>& exact) {
  double worst = 0.0;
  for (std::size_t j = 0; j < probes.size(); ++j) {
    worst = std::max(worst, std::abs(interpolate(sorted, probes[j]) - exact[j]) / exact[j]);
  }
  return worst;
}

// Acceptance (issue 33): ring N = 6, E[T] over lambda in [0.05, 0.995], tolerance 0.005: the
// refined chords are within 0.5% of the exact curve at 1000 points of the range, with at most a
// tenth of the points of the coarsest uniform grid that achieves the same.
TEST(Refine, RingExactCurveWithinToleranceWithATenthOfTheUniformGrid) {
  const double a = 0.05, b = 0.995, tolerance = 0.005;
  const auto f = [](double lambda) { return ring_ET(6, lambda); };
  Spec spec;
  spec.tolerance = tolerance;
  spec.max_points = 400;
  const Refined refined = run_rounds(spec, linspace(a, b, 5), f);
  EXPECT_FALSE(refined.last.budget_exhausted);
  for (const Interval& in : refined.last.intervals) EXPECT_TRUE(in.resolved) << in.lo;

  const std::vector<double> probes = linspace(a, b, 1000);
  std::vector<double> exact;
  for (double x : probes) exact.push_back(f(x));
  const double refined_error = worst_error(refined.points, probes, exact);
  EXPECT_LE(refined_error, tolerance);

  // The coarsest uniform grid within the tolerance: bisection over the number of points (the
  // error of a uniform grid on this convex curve falls as its points grow), then every grid of
  // the 20 sizes below it is checked to fail, so that the bisection did not step over one.
  const auto uniform_error = [&](int n) {
    std::vector<Point> grid;
    for (double x : linspace(a, b, n)) grid.push_back({x, f(x), 0.0});
    return worst_error(grid, probes, exact);
  };
  int fails = 2, passes = 4;
  while (uniform_error(passes) > tolerance) {
    fails = passes;
    passes *= 2;
    ASSERT_LT(passes, 100000);
  }
  while (passes - fails > 1) {
    const int mid = (fails + passes) / 2;
    (uniform_error(mid) > tolerance ? fails : passes) = mid;
  }
  for (int n = passes - 1; n >= std::max(2, passes - 20); --n) {
    EXPECT_GT(uniform_error(n), tolerance) << n << " uniform points";
  }
  const auto used = static_cast<int>(refined.points.size());
  std::printf(
      "ring N=6 E[T], tolerance %g: %d refined points in %d rounds (worst error %.3g%%),"
      " coarsest uniform grid %d points\n",
      tolerance, used, refined.rounds, 100 * refined_error, passes);
  EXPECT_LE(10 * used, passes);
}

// Acceptance (issue 33): the lambda at which E[T] = 5 for meanfield power_of_d d = 2, to 1e-6,
// against a root found independently: bisection on the closed form
// E[T] = sum_{i >= 1} lambda^((d^i - d) / (d - 1)) (x_i = lambda^((d^i - 1) / (d - 1)),
// docs/meanfield.md, divided by lambda), each power evaluated with pow.
TEST(Refine, MeanfieldPowerOfTwoCrossingToOneInAMillion) {
  const int d = 2;
  const auto closed_form = [d](double lambda) {
    double sum = 0.0;
    for (int i = 1; i < 64; ++i) {
      const double term = std::pow(lambda, (std::pow(d, i) - d) / (d - 1));
      sum += term;
      if (term < 1e-300) break;
    }
    return sum;
  };
  // The closed form is the project's kernel's number (its recursion is another route).
  for (double x : {0.3, 0.9, 0.99})
    EXPECT_NEAR(closed_form(x), meanfield_ET(d, x), 1e-12 * closed_form(x));
  double lo = 0.05, hi = 0.995;
  ASSERT_LT(closed_form(lo), 5.0);
  ASSERT_GT(closed_form(hi), 5.0);
  while (hi - lo > 1e-14) {
    const double mid = (lo + hi) / 2;
    (closed_form(mid) < 5.0 ? lo : hi) = mid;
  }
  const double root = (lo + hi) / 2;

  Spec spec;
  spec.criterion = Criterion::crossing;
  spec.crossing = 5.0;
  spec.tolerance = 1e-6;
  spec.max_points = 400;
  const Refined refined =
      run_rounds(spec, linspace(0.05, 0.995, 5), [d](double x) { return meanfield_ET(d, x); });
  ASSERT_EQ(refined.last.thresholds.size(), 1u);
  const Threshold& t = refined.last.thresholds[0];
  EXPECT_TRUE(t.converged);
  EXPECT_FALSE(t.noisy);
  EXPECT_LE(t.hi - t.lo, 1e-6);
  EXPECT_LE(t.lo, root);
  EXPECT_GE(t.hi, root);
  EXPECT_NEAR(t.value, root, 1e-6);
  std::printf(
      "power_of_d d=2 E[T]=5: lambda %.12f (root %.12f), bracket %.3g wide, %d rounds, "
      "%zu points\n",
      t.value, root, t.hi - t.lo, refined.rounds, refined.points.size());
}

// Integer axes bisect over integers: the smallest N with f(N) >= c for f increasing.
TEST(Refine, IntegerCrossingBisectsOverIntegers) {
  Spec spec;
  spec.criterion = Criterion::crossing;
  spec.crossing = 1000.5;
  spec.tolerance = 1e-9;  // integers stop at neighbours whatever the tolerance
  spec.integer_axis = true;
  const auto f = [](double n) { return n * n; };  // crosses 1000.5 between 31 and 32
  const Refined r = run_rounds(spec, {2, 100, 200}, f);
  for (const Point& p : r.points) EXPECT_EQ(p.x, std::floor(p.x));
  ASSERT_EQ(r.last.thresholds.size(), 1u);
  EXPECT_EQ(r.last.thresholds[0].lo, 31);
  EXPECT_EQ(r.last.thresholds[0].hi, 32);
  EXPECT_TRUE(r.last.thresholds[0].converged);
  EXPECT_LE(r.rounds, 8);  // log2(98) bisection steps
}

TEST(Refine, IntegerInterpolationNeverSplitsNeighbours) {
  Spec spec;
  spec.tolerance = 1e-12;
  spec.integer_axis = true;
  const Refined r = run_rounds(spec, {1, 5, 9}, [](double n) { return std::exp(n); });
  // Every integer of the range ends up computed, nothing between them.
  ASSERT_EQ(r.points.size(), 9u);
  for (std::size_t i = 0; i < r.points.size(); ++i)
    EXPECT_EQ(r.points[i].x, 1.0 + static_cast<double>(i));
}

TEST(Refine, BudgetCapsThePointsAndSplitsTheWorstIntervalsFirst) {
  Spec spec;
  spec.tolerance = 1e-9;
  spec.max_points = 7;
  const auto f = [](double x) { return 1.0 / (1.0 - x); };
  std::vector<Point> pts;
  for (double x : linspace(0.0, 0.9, 5)) pts.push_back({x, f(x), 0.0});
  const Proposal p = propose(spec, pts);
  EXPECT_TRUE(p.budget_exhausted);
  ASSERT_EQ(p.points.size(), 2u);
  // The two intervals nearest the pole bend most.
  EXPECT_DOUBLE_EQ(p.points[0], 0.45 + 0.225 / 2);
  EXPECT_DOUBLE_EQ(p.points[1], 0.675 + 0.225 / 2);
  const Refined r = run_rounds(spec, linspace(0.0, 0.9, 5), f);
  EXPECT_EQ(r.points.size(), 7u);
}

// A noisy curve (simulate): an interval whose estimated error is below the half-widths of its
// points is resolved, so that noise never drives refinement: a flat line with noise of +-1% and
// half-widths of 2% stops at once, whatever the tolerance.
TEST(Refine, NoiseBelowItsHalfWidthsDrivesNoRefinement) {
  Spec spec;
  spec.tolerance = 1e-4;
  std::vector<Point> pts;
  const std::vector<double> noise{0.01, -0.01, 0.01, -0.01, 0.01, -0.01, 0.01};
  const std::vector<double> xs = linspace(0.1, 0.7, 7);
  for (std::size_t i = 0; i < xs.size(); ++i) pts.push_back({xs[i], 1.0 + noise[i], 0.02});
  EXPECT_TRUE(propose(spec, pts).points.empty());
  // The same values as exact ones are refined.
  for (Point& p : pts) p.half_width = 0.0;
  EXPECT_FALSE(propose(spec, pts).points.empty());
}

TEST(Refine, NoisyBracketStopsNotConverged) {
  Spec spec;
  spec.criterion = Criterion::crossing;
  spec.crossing = 2.0;
  spec.tolerance = 1e-6;
  const std::vector<Point> pts{{0.0, 1.0, 0.1}, {0.5, 1.99, 0.05}, {1.0, 3.0, 0.1}};
  const Proposal p = propose(spec, pts);
  EXPECT_TRUE(p.points.empty());
  ASSERT_EQ(p.thresholds.size(), 1u);
  EXPECT_TRUE(p.thresholds[0].noisy);
  EXPECT_FALSE(p.thresholds[0].converged);
}

// The proposal depends on the set of finished points alone: order, NaN rows and repeats aside.
TEST(Refine, ProposalIsAFunctionOfThePointSet) {
  Spec spec;
  spec.tolerance = 1e-3;
  const auto f = [](double x) { return 1.0 / (1.0 - x); };
  std::vector<Point> a;
  for (double x : linspace(0.0, 0.95, 9)) a.push_back({x, f(x), 0.0});
  std::vector<Point> b(a.rbegin(), a.rend());
  b.push_back({0.3, std::nan(""), 0.0});
  b.push_back(a[3]);
  const Proposal pa = propose(spec, a);
  const Proposal pb = propose(spec, b);
  EXPECT_EQ(pa.points, pb.points);
  EXPECT_FALSE(pa.points.empty());
  EXPECT_TRUE(std::is_sorted(pa.points.begin(), pa.points.end()));
}

// Each bracket says the point that would split it and whether the proposal holds it: a budget
// that leaves the narrower of two brackets out says so (refining false), as /thresholds shows.
TEST(Refine, BracketsSayWhetherTheProposalSplitsThem) {
  Spec spec;
  spec.criterion = Criterion::crossing;
  spec.crossing = 0.0;
  spec.tolerance = 1e-6;
  spec.max_points = 4;
  // sin crosses 0 near pi in [2, 4] (2 wide) and near 2 pi in [6, 6.5] (0.5 wide).
  const auto f = [](double x) { return std::sin(x); };
  std::vector<Point> pts;
  for (const double x : {2.0, 4.0, 6.0, 6.5}) pts.push_back({x, f(x), 0.0});
  Proposal p = propose(spec, pts);
  ASSERT_EQ(p.thresholds.size(), 2u);
  EXPECT_TRUE(p.points.empty());  // 4 points: the budget is spent
  EXPECT_TRUE(p.budget_exhausted);
  for (const Threshold& t : p.thresholds) {
    EXPECT_FALSE(t.converged);
    EXPECT_FALSE(t.refining);
    EXPECT_EQ(t.next, t.lo + (t.hi - t.lo) / 2);
  }
  spec.max_points = 5;  // room for one: the wider bracket
  p = propose(spec, pts);
  ASSERT_EQ(p.points, std::vector<double>{3.0});
  EXPECT_TRUE(p.thresholds[0].refining);
  EXPECT_FALSE(p.thresholds[1].refining);
  // Converged and noisy brackets have no next point.
  spec.tolerance = 10.0;
  p = propose(spec, pts);
  for (const Threshold& t : p.thresholds) {
    EXPECT_TRUE(t.converged);
    EXPECT_TRUE(std::isnan(t.next));
  }
}

TEST(Refine, ExactPointOnTheCrossingIsAConvergedThreshold) {
  Spec spec;
  spec.criterion = Criterion::crossing;
  spec.crossing = 2.0;
  const std::vector<Point> pts{{0.0, 1.0, 0.0}, {1.0, 2.0, 0.0}, {2.0, 3.0, 0.0}};
  const Proposal p = propose(spec, pts);
  EXPECT_TRUE(p.points.empty());
  ASSERT_EQ(p.thresholds.size(), 1u);
  EXPECT_EQ(p.thresholds[0].value, 1.0);
  EXPECT_TRUE(p.thresholds[0].converged);
}

TEST(Refine, BadSpecsAreRefused) {
  Spec spec;
  const std::vector<Point> pts{{0.0, 1.0, 0.0}, {1.0, 2.0, 0.0}};
  spec.tolerance = 0.0;
  EXPECT_THROW(propose(spec, pts), std::invalid_argument);
  spec.tolerance = 0.1;
  spec.max_points = 1;
  EXPECT_THROW(propose(spec, pts), std::invalid_argument);
  spec.max_points = 10;
  spec.criterion = Criterion::crossing;
  spec.crossing = std::nan("");
  EXPECT_THROW(propose(spec, pts), std::invalid_argument);
}

}  // namespace
}  // namespace qsweep::refine
