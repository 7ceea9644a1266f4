// Refining blocks (docs/sweep-format.md, "Refinement") driven round by round in one process, as
// the coordinator is to drive them: the curves of a refining block, the task of a curve at a new
// axis value (made, derived and checked like the block's own), and each point's value read from
// its method group's row. The rows come from sweep::execute, the checks from independent
// computations (the exact engine evaluated densely; a root of the mean-field E[T] by bisection).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "qsweep/exact/exact.hpp"
#include "qsweep/meanfield/meanfield.hpp"
#include "qsweep/model/family.hpp"
#include "qsweep/model/model.hpp"
#include "qsweep/sweep/columns.hpp"
#include "qsweep/sweep/execute.hpp"
#include "qsweep/sweep/plan.hpp"
#include "qsweep/sweep/rounds.hpp"

namespace qsweep::sweep {
namespace {

struct HandRounds {
  std::vector<std::vector<RefinedPoint>> curves;
  std::vector<std::vector<refine::Point>> values;  // per curve, as propose reads them
  std::vector<refine::Proposal> last;              // per curve, the final proposal
  int rounds = 0;
};

// Every round: each curve's points without a value run (sweep::execute), their rows give the
// values, refine::propose gives the next points, made with refined_point.
HandRounds run_rounds(const Plan& plan, std::size_t r) {
  const Refinement& refinement = plan.refinements.at(r);
  HandRounds out;
  out.curves = refinement_curves(plan, r);
  out.values.resize(out.curves.size());
  out.last.resize(out.curves.size());
  for (int round = 1;; ++round) {
    bool more = false;
    for (std::size_t c = 0; c < out.curves.size(); ++c) {
      auto& curve = out.curves[c];
      for (std::size_t i = out.values[c].size(); i < curve.size(); ++i) {
        const TaskOutcome outcome = execute(curve[i].task);
        out.values[c].push_back(
            curve_point(refinement, curve[i].x, make_row(curve[i].task, outcome)));
      }
      out.last[c] = refine::propose(refinement.spec, out.values[c]);
      for (double x : out.last[c].points) {
        curve.push_back(refined_point(plan, r, curve.front(), x, round));
        more = true;
      }
    }
    if (!more) break;
    out.rounds = round;
    EXPECT_LT(round, 100) << "refinement does not end";
    if (round >= 100) break;
  }
  return out;
}

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

// The curves of a block are the combinations of its other values; their initial points are the
// plan's tasks, in axis order, and a refined point is the block's task at the new value.
TEST(RefineRounds, CurvesHoldThePlansTasksAndRefinedPointsAreTheBlocksTasks) {
  const Plan plan = parse_plan(R"(
name: curves
blocks:
  - method: exact
    family: [ring, complete]
    N: [4, 6]
    lambda: [0.7, 0.1, 0.4]
    refine: {axis: lambda, quantity: ET, tolerance: 0.01, max_points: 20}
)",
                               "test.yaml");
  const auto curves = refinement_curves(plan, 0);
  ASSERT_EQ(curves.size(), 4u);
  std::set<std::string> keys;
  for (const auto& curve : curves) {
    ASSERT_EQ(curve.size(), 3u);
    EXPECT_EQ(curve[0].x, 0.1);
    EXPECT_EQ(curve[1].x, 0.4);
    EXPECT_EQ(curve[2].x, 0.7);
    for (const RefinedPoint& p : curve) {
      EXPECT_EQ(p.round, 0);
      EXPECT_EQ(p.task.as<ExactTask>().system.lambda, p.x);
      keys.insert(task_key(p.task));
    }
    // A new point: the same task as a plan listing that value would hold.
    const RefinedPoint extra = refined_point(plan, 0, curve[1], 0.55, 3);
    EXPECT_EQ(extra.round, 3);
    EXPECT_EQ(extra.x, 0.55);
    Task expected = curve[1].task;
    expected.as<ExactTask>().system.lambda = 0.55;
    EXPECT_EQ(task_key(extra.task), task_key(expected));
    EXPECT_GT(extra.task.cost, 0.0);
  }
  std::set<std::string> plan_keys;
  for (const Task& t : plan.tasks) plan_keys.insert(task_key(t));
  EXPECT_EQ(keys, plan_keys);
}

// Acceptance (issue 33): ring N = 6 E[T] over lambda in [0.05, 0.995], tolerance 0.005: the
// refined curve interpolates the exact curve within 0.5% at 1000 points of the range, with at
// most a tenth of the points of the coarsest uniform grid that does as well (searched here).
TEST(RefineRounds, RingExactCurveFromTheSweepWithinToleranceWithATenthOfTheUniformGrid) {
  const Plan plan = parse_plan(R"(
name: ring
blocks:
  - method: exact
    family: ring
    N: 6
    lambda: {linspace: [0.05, 0.995, 5]}
    refine: {axis: lambda, quantity: ET, tolerance: 0.005, max_points: 400}
)",
                               "test.yaml");
  const HandRounds rounds = run_rounds(plan, 0);
  ASSERT_EQ(rounds.curves.size(), 1u);
  const auto sorted = refine::curve(rounds.values[0]);
  EXPECT_FALSE(rounds.last[0].budget_exhausted);
  EXPECT_GE(rounds.rounds, 2);
  std::vector<double> xs(1000), exact(1000);
  for (int i = 0; i < 1000; ++i) {
    xs[static_cast<std::size_t>(i)] = 0.05 + (0.995 - 0.05) * i / 999.0;
    exact[static_cast<std::size_t>(i)] = ring_ET(6, xs[static_cast<std::size_t>(i)]);
  }
  const auto worst = [&](const std::vector<refine::Point>& c) {
    double w = 0.0;
    for (std::size_t i = 0; i < xs.size(); ++i)
      w = std::max(w, std::abs(refine::interpolate(c, xs[i]) - exact[i]) / exact[i]);
    return w;
  };
  EXPECT_LE(worst(sorted), 0.005) << sorted.size() << " points";
  // The coarsest uniform grid within 0.5%: the error falls with n, so bisect on n.
  const auto uniform = [&](int n) {
    std::vector<refine::Point> c;
    for (int i = 0; i < n; ++i) {
      const double x = i + 1 == n ? 0.995 : 0.05 + (0.995 - 0.05) * i / (n - 1);
      c.push_back({x, ring_ET(6, x), 0.0});
    }
    return worst(c);
  };
  int lo = sorted.size() > 2 ? static_cast<int>(sorted.size()) : 2, hi = 4000;
  ASSERT_LE(uniform(hi), 0.005);
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (uniform(mid) <= 0.005 ? hi : lo) = mid;
  }
  EXPECT_LE(10 * sorted.size(), static_cast<std::size_t>(hi))
      << sorted.size() << " refined points, uniform needs " << hi;
  std::printf("ring N=6 E[T] from the sweep: %zu refined points in %d rounds, uniform grid %d\n",
              sorted.size(), rounds.rounds, hi);
}

// Acceptance (issue 33): the lambda where meanfield power_of_d d = 2 has E[T] = 5, to 1e-6,
// against a root found here by bisection on meanfield::solve.
TEST(RefineRounds, MeanfieldThresholdFromTheSweepToOneInAMillion) {
  const Plan plan = parse_plan(R"(
name: threshold
blocks:
  - method: meanfield
    policy: power_of_d
    policy_d: 2
    lambda: {linspace: [0.5, 0.99, 5]}
    refine: {axis: lambda, quantity: ET, crossing: 5.0, tolerance: 1e-6}
)",
                               "test.yaml");
  const HandRounds rounds = run_rounds(plan, 0);
  ASSERT_EQ(rounds.last.at(0).thresholds.size(), 1u);
  const refine::Threshold& t = rounds.last[0].thresholds[0];
  EXPECT_TRUE(t.converged);
  EXPECT_LE(t.hi - t.lo, 1e-6);
  const auto f = [](double lambda) {
    meanfield::Options options;
    options.policy = meanfield::Policy::power_of_d;
    options.policy_d = 2;
    options.lambda = lambda;
    return meanfield::solve(options).ET - 5.0;
  };
  double a = 0.5, b = 0.99;
  ASSERT_LT(f(a), 0.0);
  ASSERT_GT(f(b), 0.0);
  for (int i = 0; i < 60; ++i) {
    const double m = a + (b - a) / 2;
    (f(m) < 0 ? a : b) = m;
  }
  EXPECT_NEAR(t.value, a, 1e-6);
  EXPECT_LE(t.lo, a + 1e-12);
  EXPECT_GE(t.hi, a - 1e-12);
}

// The points a block ends with depend on its sweep alone: the curves' points come in any order
// (as rows finish on several ranks) and the rounds give the same points.
TEST(RefineRounds, TheRefinedPointsAreTheSameWhateverTheOrderOfTheRows) {
  const Plan plan = parse_plan(R"(
name: order
blocks:
  - method: exact
    family: [ring, path]
    N: 5
    lambda: {linspace: [0.1, 0.9, 4]}
    refine: {axis: lambda, quantity: ET, tolerance: 0.01, max_points: 30}
)",
                               "test.yaml");
  const HandRounds a = run_rounds(plan, 0);
  ASSERT_EQ(a.curves.size(), 2u);
  for (std::size_t c = 0; c < a.curves.size(); ++c) {
    std::vector<refine::Point> reversed(a.values[c].rbegin(), a.values[c].rend());
    const auto p1 = refine::propose(plan.refinements[0].spec, a.values[c]);
    const auto p2 = refine::propose(plan.refinements[0].spec, reversed);
    EXPECT_EQ(p1.points, p2.points);
    EXPECT_TRUE(p1.points.empty());
    EXPECT_GT(a.curves[c].size(), 4u);
  }
}

// sweep::Rounds, as `qsweep run` drives it: each round's points are appended to the plan as
// tasks of that round, and the plan ends with the points run_rounds (above, refined_point by
// hand) gives, curve by curve.
TEST(RefineRounds, RoundsAppendEachRoundsPointsToThePlanAsTasksOfThatRound) {
  Plan plan = parse_plan(R"(
name: rounds
blocks:
  - method: exact
    family: [ring, path]
    N: 5
    lambda: {linspace: [0.1, 0.9, 4]}
    refine: {axis: lambda, quantity: ET, tolerance: 0.01, max_points: 30}
)",
                         "test.yaml");
  const HandRounds by_hand = run_rounds(plan, 0);
  const std::uint64_t initial = plan.tasks.size();
  Rounds rounds(plan);
  ASSERT_EQ(rounds.curve_count(), 2u);
  std::vector<refine::Point> values;  // by task id
  for (;;) {
    for (std::uint64_t id = values.size(); id < plan.tasks.size(); ++id) {
      const Task task = plan.tasks[id];
      values.push_back(curve_point(plan.refinements[0], 0.0, make_row(task, execute(task))));
    }
    const auto points = rounds.propose([&](std::size_t r, std::uint64_t id, double x) {
      EXPECT_EQ(r, 0u);
      refine::Point p = values.at(id);
      p.x = x;
      return std::optional<refine::Point>(p);
    });
    ASSERT_TRUE(points.has_value());
    if (points->empty()) break;
    // Sent between ranks as text, exactly.
    EXPECT_EQ(points_from_text(points_text(*points)), *points);
    const std::string before = plan.hash;
    rounds.add(plan, *points);
    EXPECT_NE(plan.hash, before);
    EXPECT_EQ(plan.hash, hash_with_refinements(plan_hash(plan.tasks), plan.refinements));
    ASSERT_LT(rounds.round(), 100);
  }
  EXPECT_EQ(rounds.round(), by_hand.rounds);
  std::set<std::string> expected;
  for (const auto& curve : by_hand.curves)
    for (const RefinedPoint& p : curve) expected.insert(task_key(p.task));
  std::set<std::string> got;
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) {
    const Task task = plan.tasks[id];
    EXPECT_EQ(task.id, id);
    got.insert(task_key(task));
    if (id < initial) {
      EXPECT_EQ(task.round, 0);
    }
  }
  EXPECT_EQ(got, expected);
  EXPECT_EQ(got.size(), plan.tasks.size());
  // Every added task carries the round that added it, as run_rounds numbered them.
  for (const auto& curve : by_hand.curves)
    for (const RefinedPoint& p : curve)
      for (std::uint64_t id = 0; id < plan.tasks.size(); ++id)
        if (task_key(plan.tasks[id]) == task_key(p.task)) {
          EXPECT_EQ(plan.tasks[id].round, p.round);
        }
  // Unfinished points: no round yet.
  Plan again = parse_plan(plan.yaml_text, "test.yaml");
  const Rounds fresh(again);
  EXPECT_FALSE(fresh
                   .propose([](std::size_t, std::uint64_t, double) {
                     return std::optional<refine::Point>();
                   })
                   .has_value());
}

// The plan hash of a refining sweep covers its refine key: a file refined to one tolerance is not
// continued with another. The same grid without refine keeps the hash of its tasks alone.
TEST(RefineRounds, ThePlanHashCoversTheRefineKey) {
  const auto hash = [](const std::string& refine) {
    return parse_plan(
               "name: h\nblocks:\n  - method: exact\n    family: ring\n    N: 5\n"
               "    lambda: [0.2, 0.5, 0.8]\n" +
                   refine,
               "test.yaml")
        .hash;
  };
  const std::string plain = hash("");
  const std::string a = hash("    refine: {axis: lambda, quantity: ET, tolerance: 0.01}\n");
  const std::string b = hash("    refine: {axis: lambda, quantity: ET, tolerance: 0.02}\n");
  const std::string c =
      hash("    refine: {axis: lambda, quantity: ET, tolerance: 0.01, max_points: 50}\n");
  EXPECT_NE(plain, a);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a, hash("    refine: {axis: lambda, quantity: ET, tolerance: 0.01}\n"));
  const Plan p = parse_plan(
      "name: h\nblocks:\n  - method: exact\n    family: ring\n    N: 5\n    lambda: [0.2, 0.5, "
      "0.8]\n",
      "test.yaml");
  EXPECT_EQ(plain, plan_hash(p.tasks));
}

}  // namespace
}  // namespace qsweep::sweep
