// Parsing and expansion of sweep files: grid order, zip, value generators, family-dependent
// parameters without duplicates, derived values, stable ids, the plan hash, seeds, eval flags.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "qsweep/common/error.hpp"
#include "qsweep/model/stability.hpp"
#include "qsweep/sweep/cost.hpp"
#include "qsweep/sweep/execute.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep {
namespace {

Plan parse(const std::string& yaml) { return parse_plan(yaml, "test.yaml"); }

// Task::operator== is false for every system task: FamilyParams defaults eps and edge_prob to
// NaN. Equal canonical forms (the plan hash of the task alone) and equal costs mean equal tasks.
bool same_task(const Task& a, const Task& b) {
  return plan_hash({a}) == plan_hash({b}) && a.cost == b.cost;
}

std::string error_of(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string error_of_flags(const std::vector<Flag>& flags) {
  try {
    plan_from_flags(flags);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Expand, GridIsTheProductInKeyOrderLastKeyFastest) {
  const Plan plan = parse(R"(
name: grid
blocks:
  - method: exact
    family: [complete, ring]
    N: [4, 5]
    lambda: [0.2, 0.4]
)");
  ASSERT_EQ(plan.tasks.size(), 8u);
  std::size_t i = 0;
  for (auto family : {model::FamilyKind::complete, model::FamilyKind::ring})
    for (int N : {4, 5})
      for (double lambda : {0.2, 0.4}) {
        const Task& t = plan.tasks[i];
        EXPECT_EQ(t.id, i);
        EXPECT_EQ(t.block, 0);
        EXPECT_EQ(t.method(), Method::exact);
        EXPECT_EQ(t.system().family.kind, family);
        EXPECT_EQ(t.system().family.N, N);
        EXPECT_EQ(t.system().lambda, lambda);
        ++i;
      }
}

TEST(Expand, ZipWalksListsTogether) {
  const Plan plan = parse(R"(
name: zip
blocks:
  - method: exact
    family: [ring, complete]
    N: [4, 5, 6]
    lambda: [0.2, 0.3, 0.4]
    zip: [N, lambda]
)");
  ASSERT_EQ(plan.tasks.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    const Task& t = plan.tasks[i];
    EXPECT_EQ(t.system().family.kind,
              i < 3 ? model::FamilyKind::ring : model::FamilyKind::complete);
    EXPECT_EQ(t.system().family.N, 4 + static_cast<int>(i % 3));
    EXPECT_DOUBLE_EQ(t.system().lambda, 0.2 + 0.1 * static_cast<double>(i % 3));
  }
}

TEST(Expand, SeveralZipGroups) {
  const Plan plan = parse(R"(
name: zip2
blocks:
  - method: exact
    family: complete
    N: [4, 6]
    d: [2, 3]
    lambda: [0.2, 0.3, 0.4]
    qmax: [1, 2, 3]
    zip: [[N, d], [lambda, qmax]]
)");
  ASSERT_EQ(plan.tasks.size(), 6u);
  for (const Task& t : plan.tasks) {
    EXPECT_EQ(t.system().family.d, t.system().family.N == 4 ? 2 : 3);
    EXPECT_EQ(t.as<ExactTask>().options.qmax,
              static_cast<int>(std::lround(t.system().lambda * 10)) - 1);
  }
}

TEST(Generators, LinspaceHitsBothEnds) {
  const Plan plan = parse(R"(
name: lin
blocks:
  - {method: exact, family: ring, N: 4, lambda: {linspace: [0.1, 0.5, 5]}}
)");
  ASSERT_EQ(plan.tasks.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i)
    EXPECT_NEAR(plan.tasks[i].system().lambda, 0.1 + 0.1 * static_cast<double>(i), 1e-15);
  EXPECT_EQ(plan.tasks.front().system().lambda, 0.1);
  EXPECT_EQ(plan.tasks.back().system().lambda, 0.5);
}

TEST(Generators, LogspaceIsNumpyStyleWithBase) {
  const Plan plan = parse(R"(
name: log
blocks:
  - {method: exact, family: complete, N: {logspace: [2, 5, 4], base: 2}, lambda: {logspace: [-2, -1, 2]}}
)");
  ASSERT_EQ(plan.tasks.size(), 8u);
  std::vector<int> Ns;
  for (std::size_t i = 0; i < 8; i += 2) Ns.push_back(plan.tasks[i].system().family.N);
  EXPECT_EQ(Ns, (std::vector<int>{4, 8, 16, 32}));
  EXPECT_NEAR(plan.tasks[0].system().lambda, 0.01, 1e-16);
  EXPECT_NEAR(plan.tasks[1].system().lambda, 0.1, 1e-16);
}

TEST(Generators, HeavyTrafficAndRhoScaleWithTheMeanSpeed) {
  const Plan plan = parse(R"(
name: ht
blocks:
  - method: exact
    family: path
    N: 3
    speeds: [1, 2, 3]
    lambda: {heavy_traffic: [1, 2, 3]}
  - method: exact
    family: ring
    N: 4
    speed_profile: two_class
    fast: 3
    rho: 0.5
)");
  ASSERT_EQ(plan.tasks.size(), 4u);
  for (int k = 1; k <= 3; ++k)
    EXPECT_NEAR(plan.tasks[static_cast<std::size_t>(k - 1)].system().lambda,
                2.0 * (1.0 - std::pow(10.0, -k)), 1e-14);
  const Task& profiled = plan.tasks[3];
  EXPECT_EQ(profiled.system().speeds, model::speed_profile("two_class", 4, 3.0));
  EXPECT_DOUBLE_EQ(profiled.system().lambda, 0.5 * (3 + 3 + 1 + 1) / 4.0);
}

TEST(Expand, ParametersOnlyMultiplyTheFamiliesThatUseThem) {
  const Plan plan = parse(R"(
name: dedup
blocks:
  - method: exact
    family: [ring, hetero_ring, complete]
    N: 4
    eps: [0.3, 0.6]
    d: [2, 3]
    lambda: [0.5, 0.5]
)");
  // ring once, hetero_ring per eps, complete per d; the repeated lambda adds nothing.
  ASSERT_EQ(plan.tasks.size(), 5u);
  std::multiset<model::FamilyKind> kinds;
  for (const Task& t : plan.tasks) {
    kinds.insert(t.system().family.kind);
    const auto uses = model::family_uses(t.system().family.kind);
    EXPECT_EQ(uses.eps, !std::isnan(t.system().family.eps));
    if (!uses.d) {
      EXPECT_EQ(t.system().family.d, model::FamilyParams{}.d);
    }
  }
  EXPECT_EQ(kinds.count(model::FamilyKind::ring), 1u);
  EXPECT_EQ(kinds.count(model::FamilyKind::hetero_ring), 2u);
  EXPECT_EQ(kinds.count(model::FamilyKind::complete), 2u);
}

TEST(Expand, DerivedAndStructuredValues) {
  const Plan plan = parse(R"(
name: derived
blocks:
  - {method: exact, family: torus, rows: [3, 4], cols: 3, lambda: 0.5}
  - method: exact
    family: explicit
    N: 3
    types: [{servers: [1, 2], p: 0.25}, {servers: [3], p: 0.75}]
    lambda: 0.3
  - method: exact
    family: tree_singletons
    N: 3
    eps: 0.5
    tree_edges: [[1, 2], [2, 3]]
    lambda: 0.3
)");
  ASSERT_EQ(plan.tasks.size(), 4u);
  EXPECT_EQ(plan.tasks[0].system().family.N, 9);
  EXPECT_EQ(plan.tasks[1].system().family.N, 12);
  const Task explicit_types = plan.tasks[2];
  const auto& types = explicit_types.system().family.types;
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[0].servers, (std::vector<int>{0, 1}));
  EXPECT_EQ(types[1].servers, (std::vector<int>{2}));
  EXPECT_EQ(types[1].p, 0.75);
  EXPECT_EQ(plan.tasks[3].system().family.tree_edges,
            (std::vector<std::pair<int, int>>{{0, 1}, {1, 2}}));
}

TEST(Expand, MethodOptionsReachTheTask) {
  const Plan plan = parse(R"(
name: options
seed: 7
blocks:
  - method: simulate
    family: complete
    N: 5
    d: 4
    lambda: 0.5
    policy: power_of_d
    policy_d: 3
    service: hyperexponential
    cv2: 4
    horizon: 1.0e4
    warmup: 100
    replications: 4
    qmax: 6
  - method: ldp
    policy: jsq
    n: 50
    j: 3
    T: 2
    lambda: 0.99
    estimator: monte_carlo
    samples: 1.0e4
)");
  ASSERT_EQ(plan.tasks.size(), 2u);
  const Task simulate_task = plan.tasks[0];
  const auto& s = simulate_task.as<SimulateTask>().options;
  EXPECT_EQ(s.policy, sim::Policy::power_of_d);
  EXPECT_EQ(s.policy_d, 3);
  EXPECT_EQ(s.service.kind, sim::ServiceKind::hyperexponential);
  EXPECT_EQ(s.service.cv2, 4.0);
  EXPECT_EQ(s.horizon, 1e4);
  EXPECT_EQ(s.warmup, 100.0);
  EXPECT_EQ(s.replications, 4);
  EXPECT_EQ(s.qmax, 6);
  const Task ldp_task = plan.tasks[1];
  const auto& l = ldp_task.as<LdpTask>().options;
  EXPECT_EQ(l.n, 50);
  EXPECT_EQ(l.j, 3);
  EXPECT_EQ(l.T, 2.0);
  EXPECT_EQ(l.lambda, 0.99);
  EXPECT_EQ(l.estimator, ldp::Estimator::monte_carlo);
  EXPECT_EQ(l.samples, 1e4);
  for (const Task& t : plan.tasks) EXPECT_EQ(t.seed, 7u);
}

TEST(Expand, AliasesRepeatValues) {
  const Plan plan = parse(R"(
name: alias
blocks:
  - {method: exact, family: ring, N: &sizes [4, 6], lambda: 0.5}
  - {method: exact, family: star, N: *sizes, lambda: 0.5}
)");
  ASSERT_EQ(plan.tasks.size(), 4u);
  EXPECT_EQ(plan.tasks[3].system().family.N, 6);
  EXPECT_EQ(plan.tasks[3].system().family.kind, model::FamilyKind::star);
}

TEST(Plan, TopLevelKeys) {
  const Plan plan = parse(R"(
name: top.level-1
seed: 18446744073709551615
output: results/x.h5
on_unstable: store
max_tasks: 10
blocks:
  - {method: exact, family: ring, N: 4, lambda: 0.5}
)");
  EXPECT_EQ(plan.name, "top.level-1");
  EXPECT_EQ(plan.seed, 18446744073709551615ULL);
  EXPECT_EQ(plan.output, "results/x.h5");
  EXPECT_FALSE(plan.on_unstable_error);
  EXPECT_EQ(plan.source, "test.yaml");
  EXPECT_EQ(parse("name: a\nblocks: [{method: exact, family: ring, N: 4, lambda: 0.5}]").seed, 0u);
}

TEST(Plan, IdsOfEarlierBlocksDoNotChangeWhenBlocksAreAppended) {
  const std::string first = R"(
name: ids
blocks:
  - {method: exact, family: [ring, complete], N: [4, 6], lambda: [0.3, 0.6]}
)";
  const Plan a = parse(first);
  const Plan b = parse(first + "  - {method: exact, family: star, N: 5, lambda: 0.2}\n");
  ASSERT_EQ(b.tasks.size(), a.tasks.size() + 1);
  for (std::size_t i = 0; i < a.tasks.size(); ++i)
    EXPECT_TRUE(same_task(a.tasks[i], b.tasks[i])) << i;
  EXPECT_EQ(b.tasks.back().id, a.tasks.size());
  EXPECT_EQ(b.tasks.back().block, 1);
  EXPECT_NE(a.hash, b.hash);
}

// `refine:` (docs/sweep-format.md, "Refinement"): the block's tasks are its initial grid, and the
// plan records what each refining block refines and its budget.
TEST(Refine, ThePlanHoldsTheInitialGridAndTheSpec) {
  const std::string grid = R"(
name: refine
blocks:
  - method: exact
    family: [ring, complete]
    N: [4, 6]
    lambda: {linspace: [0.05, 0.95, 5]}
)";
  const Plan plain = parse(grid);
  const Plan refined = parse(grid +
                             "    refine: {axis: lambda, quantity: ET, tolerance: 0.005, "
                             "max_points: 40}\n");
  EXPECT_TRUE(plain.refinements.empty());
  ASSERT_EQ(refined.tasks.size(), plain.tasks.size());
  for (std::size_t i = 0; i < plain.tasks.size(); ++i)
    EXPECT_TRUE(same_task(plain.tasks[i], refined.tasks[i])) << i;
  ASSERT_EQ(refined.refinements.size(), 1u);
  const Refinement& r = refined.refinements[0];
  EXPECT_EQ(r.block, 0);
  EXPECT_EQ(r.where, "test.yaml:8:5");
  EXPECT_EQ(r.axis, "lambda");
  EXPECT_EQ(r.quantity, "ET");
  EXPECT_EQ(r.half_width, "");  // exact values
  EXPECT_EQ(r.spec.criterion, refine::Criterion::interpolation);
  EXPECT_EQ(r.spec.tolerance, 0.005);
  EXPECT_EQ(r.spec.max_points, 40u);
  EXPECT_FALSE(r.spec.integer_axis);
  EXPECT_EQ(r.curves, 4u);  // family x N
  EXPECT_EQ(r.initial_points, 5u);
  EXPECT_EQ(r.most_tasks(), 160u);

  // A crossing on an integer axis of simulate; max_points defaults to 100, or the initial count.
  const Plan crossing = parse(R"(
name: refine
seed: 3
blocks:
  - method: simulate
    family: ring
    N: [4, 8, 16]
    lambda: [0.5, 0.9]
    refine: {axis: N, quantity: ET, crossing: 3.5, tolerance: 1}
)");
  ASSERT_EQ(crossing.refinements.size(), 1u);
  const Refinement& c = crossing.refinements[0];
  EXPECT_EQ(c.spec.criterion, refine::Criterion::crossing);
  EXPECT_EQ(c.spec.crossing, 3.5);
  EXPECT_TRUE(c.spec.integer_axis);
  EXPECT_EQ(c.half_width, "ET_hw");
  EXPECT_EQ(c.curves, 2u);
  EXPECT_EQ(c.initial_points, 3u);
  EXPECT_EQ(c.spec.max_points, kDefaultRefinePoints);
}

// A refining block counts against max_tasks with what it may grow to, before any block expands:
// a later block that fits the initial grids does not fit beside the refinement's budget.
TEST(Refine, TheBudgetCountsAgainstMaxTasks) {
  const std::string head = R"(
name: refine
max_tasks: 50
blocks:
  - method: exact
    family: ring
    N: 6
    lambda: {linspace: [0.05, 0.95, 5]}
    refine: {axis: lambda, quantity: ET, tolerance: 0.005, max_points: 40}
)";
  EXPECT_EQ(parse(head).tasks.size(), 5u);
  EXPECT_EQ(parse(head + "  - {method: exact, family: star, N: 5, lambda: {linspace: [0.1, 0.5, "
                         "10]}}\n")
                .tasks.size(),
            15u);
  const std::string error =
      error_of(head +
               "  - {method: exact, family: star, N: 5, lambda: {linspace: [0.1, 0.5, "
               "11]}}\n");
  EXPECT_NE(error.find("max_tasks"), std::string::npos) << error;
}

TEST(Plan, HashDependsOnTheTasksOnly) {
  const Plan a = parse(R"(
name: hash
seed: 5
blocks:
  - method: exact
    family: [ring, complete]
    N: [4, 6]
    lambda: [0.3, 0.6]
)");
  // Same tasks written differently (comments, flow style, spacing): same plan hash.
  const Plan same = parse(R"(# another layout
name:   hash
seed: 5
blocks: [{method: exact, family: [ring, complete], N: [4, 6], lambda: [0.3, 0.6]}]   # flow
)");
  EXPECT_EQ(a.hash, same.hash);
  EXPECT_NE(a.yaml_sha256, same.yaml_sha256);
  EXPECT_EQ(a.hash.size(), 64u);
  EXPECT_EQ(a.hash, plan_hash(a.tasks));

  const Plan other_lambda = parse(R"(
name: hash
seed: 5
blocks: [{method: exact, family: [ring, complete], N: [4, 6], lambda: [0.3, 0.61]}]
)");
  const Plan other_seed = parse(R"(
name: hash
seed: 6
blocks: [{method: exact, family: [ring, complete], N: [4, 6], lambda: [0.3, 0.6]}]
)");
  const Plan other_order = parse(R"(
name: hash
seed: 5
blocks: [{method: exact, family: [complete, ring], N: [4, 6], lambda: [0.3, 0.6]}]
)");
  EXPECT_NE(a.hash, other_lambda.hash);
  EXPECT_NE(a.hash, other_seed.hash);
  EXPECT_NE(a.hash, other_order.hash);

  // Cost estimates are not part of the hash (a better cost model must not block --resume).
  std::vector<Task> recosted(a.tasks.begin(), a.tasks.end());
  for (Task& t : recosted) t.cost *= 3.0;
  EXPECT_EQ(plan_hash(recosted), a.hash);
  std::vector<Task> changed(a.tasks.begin(), a.tasks.end());
  changed[2].as<ExactTask>().options.qmax = 1;
  EXPECT_NE(plan_hash(changed), a.hash);
}

TEST(Plan, UnstableTasksAreListedAndMatchAnIndependentCheck) {
  const Plan plan = parse(R"(
name: unstable
blocks:
  - method: exact
    family: [ring, complete, star]
    N: [4, 6]
    lambda: {linspace: [0.5, 1.5, 11]}
  - method: exact
    family: independent
    N: 3
    speeds: [0.2, 1, 1]
    lambda: [0.1, 0.19, 0.21, 0.5]
)");
  std::vector<std::uint64_t> expected;
  for (const Task& t : plan.tasks) {
    const model::System system(model::Family(t.system().family), t.system().speeds,
                               t.system().lambda);
    if (!model::check_stability(system).ok) expected.push_back(t.id);
  }
  EXPECT_FALSE(expected.empty());
  EXPECT_EQ(plan.unstable_tasks, expected);
  for (auto id : plan.unstable_tasks) EXPECT_EQ(plan.tasks[id].cost, 0.0);
}

// A system with many loads: after a few checks expansion probes above the loads (check_stable
// in src/sweep/method_system.cpp); every verdict must still be the task's own check's. Loads
// upwards across the boundary (not at 1 for hetero_ring and the slow server), and in no order.
TEST(Plan, ProbedStabilityMatchesAnIndependentCheckPerTask) {
  const Plan plan = parse(R"(
name: probed
seed: 3
blocks:
  - method: exact
    family: [hetero_ring, ring]
    N: 6
    eps: 0.7
    lambda: {linspace: [0.05, 1.3, 300]}
  - method: exact
    family: independent
    N: 3
    speeds: [0.2, 1, 1]
    lambda: [0.1, 0.9, 0.15, 0.19, 0.3, 0.199, 0.05, 0.2, 0.12, 0.21, 0.18, 0.1999, 0.17, 0.2001]
  - method: simulate
    family: ring
    N: 12
    policy: jsq
    speeds: [0.5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    lambda: {logspace: [-2, 0.1, 200]}
)");
  std::vector<std::uint64_t> expected;
  for (const Task& t : plan.tasks) {
    const model::System system(model::Family(t.system().family), t.system().speeds,
                               t.system().lambda);
    if (!model::check_stability(system).ok) expected.push_back(t.id);
  }
  EXPECT_GT(expected.size(), 100u);
  EXPECT_LT(expected.size(), plan.tasks.size() / 2);
  EXPECT_EQ(plan.unstable_tasks, expected);
}

// Expansion copies the text of a task's part (options, family) that is unchanged from the
// previous task: a 0.0 after a -0.0 (equal by ==, another text) must still give its own task and
// text. The plan's hash, made at expansion, equals the hash of the same tasks made by id and
// written whole (plan_hash of a list of Tasks).
TEST(Plan, HashAtExpansionEqualsTheTasksWrittenWhole) {
  const Plan plan = parse(R"(
name: parts
seed: 1
blocks:
  - method: simulate
    family: [ring, complete]
    d: 2
    N: 4
    policy: [jsq, power_of_d]
    lambda: [0.5, 0.6]
    warmup: [0.0, -0.0, 0.0, 10, -0.0]
    horizon: 100
  - method: exact
    family: ring
    N: [3, 4]
    lambda: [0.5, 0.7]
)");
  const std::vector<Task> tasks(plan.tasks.begin(), plan.tasks.end());
  ASSERT_EQ(tasks.size(), 2u * 2 * 2 * 3 + 2 * 2);  // the second 0.0 and -0.0 are duplicates
  EXPECT_FALSE(std::signbit(tasks[0].as<SimulateTask>().options.warmup));
  EXPECT_TRUE(std::signbit(tasks[1].as<SimulateTask>().options.warmup));
  EXPECT_EQ(plan.hash, plan_hash(tasks));
}

// `qsweep plan` counts tasks by the kind the plan keeps for each, without making them.
TEST(Plan, KeepsEachTasksKind) {
  const Plan plan = parse(R"(
name: kinds
seed: 1
blocks:
  - method: simulate
    family: [ring, complete]
    d: 2
    N: 4
    policy: [jsq, power_of_d]
    lambda: [0.5, 0.6]
  - method: exact
    family: [complete, ring]
    N: 4
    lambda: [0.5, 0.6]
)");
  std::set<std::pair<Method, std::string>> seen;
  for (const Task& t : plan.tasks) {
    const TaskKind& kind = plan.tasks.kinds().at(plan.tasks.estimate(t.id).kind);
    EXPECT_EQ(kind.method, t.method());
    EXPECT_EQ(kind.category, category(t));
    seen.insert({kind.method, kind.category});
  }
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_EQ(plan.tasks.kinds().size(), 6u);  // each once
}

// heavy_traffic k = 12..15 (lambda = 1 - 10^-k, within 1e-12 of the boundary and closer) is
// stable for every family whose critical set is the whole system (stability is decided exactly,
// model::check_stability); the exact tasks run, and their rows say how much rounding near the
// boundary limits the results.
TEST(Plan, HeavyTrafficCloseToTheBoundaryIsStable) {
  const Plan plan = parse(R"(
name: heavy
seed: 1
blocks:
  - method: exact
    family: [complete, ring, singletons_full]
    N: [4, 20]
    d: 2
    eps: 0.5
    lambda: {heavy_traffic: [12, 13, 14, 15]}
  - method: exact
    family: hetero_ring
    N: [6, 14]
    eps: [0.5, 0.9]
    lambda: {heavy_traffic: [12, 15]}
  - method: simulate
    family: ring
    N: 20
    policy: [random, jsq]
    rho: {heavy_traffic: 12}
)");
  EXPECT_EQ(plan.tasks.size(), 34u);
  EXPECT_TRUE(plan.unstable_tasks.empty());
  for (const Task& t : plan.tasks) {
    if (t.method() != Method::exact || std::fabs(t.system().lambda - (1.0 - 1e-12)) > 1e-15)
      continue;
    const TaskOutcome outcome = execute(t);
    SCOPED_TRACE(describe(t));
    EXPECT_EQ(outcome.status, TaskStatus::done) << outcome.error;
    EXPECT_NE(outcome.warning.find("near the stability boundary"), std::string::npos)
        << outcome.warning;
  }
}

TEST(Plan, OnUnstableErrorNamesTheBlockAndTheSet) {
  const std::string message = error_of(R"(name: u
on_unstable: error
blocks:
  - {method: exact, family: ring, N: 4, lambda: 0.5}
  - method: exact
    family: independent
    N: 3
    speeds: [0.2, 1, 1]
    lambda: 0.3
)");
  EXPECT_EQ(message.rfind("test.yaml:5:5: ", 0), 0u) << message;
  EXPECT_NE(message.find("servers {1}"), std::string::npos) << message;
}

TEST(Plan, CostsFollowTheEngines) {
  const Plan plan = parse(R"(
name: costs
blocks:
  - {method: exact, family: ring, N: [6, 12], lambda: 0.5, qmax: 10}
  - {method: exact, family: complete, N: 200, lambda: 0.5, qmax: 10}
)");
  ASSERT_EQ(plan.tasks.size(), 3u);
  EXPECT_GT(plan.tasks[1].cost, 10 * plan.tasks[0].cost);  // 2^N-like growth
  EXPECT_NE(estimate_cost(plan.tasks[2]).formula.find("symmetric"), std::string::npos);
  EXPECT_NE(estimate_cost(plan.tasks[1]).formula.find("unions"), std::string::npos);
  for (const Task& t : plan.tasks) EXPECT_DOUBLE_EQ(estimate_cost(t).seconds, t.cost);
}

// A simulation on complete does O(d) work per event (an arrival draws its d servers and places a
// replica at each, a departure cancels them): its estimate grows with d as the measured time
// does (N = 4000: 3.3 s at d = 2000, 2 ms estimated before), and on a ring it is as before.
TEST(Plan, SimulateCostGrowsWithTheServersOfAType) {
  const Plan plan = parse(R"(
name: costs
seed: 1
blocks:
  - {method: simulate, family: complete, N: 4000, d: [20, 2000], lambda: 0.5, horizon: 10}
  - {method: simulate, family: [ring, complete], N: 4000, lambda: 0.5, horizon: 10}
)");
  ASSERT_EQ(plan.tasks.size(), 4u);
  EXPECT_GT(plan.tasks[1].cost, 50 * plan.tasks[0].cost);
  EXPECT_DOUBLE_EQ(plan.tasks[2].cost, plan.tasks[3].cost);  // two servers per type: no extra
  EXPECT_NE(estimate_cost(plan.tasks[1]).formula.find("2e+03 servers per type"), std::string::npos)
      << estimate_cost(plan.tasks[1]).formula;
}

// The joint pmf's options reach the task, and exact::validate()'s objections point at the value
// of the key at fault (joint_qmax for too many types or bins, joint_bin out of its range), also
// when the key is a list and only one value is wrong.
TEST(Expand, JointPmfOptionsAreCheckedWhereTheyAreWritten) {
  const std::string wedge = R"(name: joint
blocks:
  - method: exact
    family: explicit
    N: 3
    types: [{servers: [1, 2], p: 0.6}, {servers: [2, 3], p: 0.4}]
    lambda: 0.5
)";
  const Plan plan = parse(wedge + "    joint_qmax: [10, 99]\n    joint_bin: 5\n");
  ASSERT_EQ(plan.tasks.size(), 2u);
  EXPECT_EQ(plan.tasks[1].as<ExactTask>().options.joint_qmax, 99);
  EXPECT_EQ(plan.tasks[1].as<ExactTask>().options.joint_bin, 5);
  EXPECT_EQ(parse(wedge).tasks[0].as<ExactTask>().options.joint_qmax, -1);  // off by default
  EXPECT_EQ(error_of(wedge + "    joint_qmax: [10, 2000]\n")
                .rfind("test.yaml:8:22: joint_qmax = 2000 "
                       "with joint_bin = 1 gives 4e+06 bins",
                       0),
            0u)
      << error_of(wedge + "    joint_qmax: [10, 2000]\n");
  EXPECT_EQ(error_of(wedge + "    joint_qmax: 10\n    joint_bin: 12\n")
                .rfind("test.yaml:9:16: joint_bin = 12 is out of range (", 0),
            0u);
  const std::string ring =
      "name: r\nblocks:\n  - {method: exact, family: ring, N: [3, 4], "
      "lambda: 0.5, joint_qmax: 7}\n";
  const std::string message = error_of(ring);
  EXPECT_EQ(message.rfind("test.yaml:3:71: the joint pmf has one axis per job type and family ring "
                          "with N = 4 has 4 types ('exact ring N=4 lambda=0.5 qmax=0 joint_qmax=7 "
                          "joint_bin=1'); expected a family with at most 3 job types",
                          0),
            0u)
      << message;
}

TEST(Plan, EveryErrorIsOneLocatedLine) {
  const std::string message =
      error_of("name: x\nblocks:\n  - method: exact\n    family: ring\n    N: 4\n    lamda: 0.5\n");
  EXPECT_EQ(message.rfind("test.yaml:6:5: unknown key 'lamda'", 0), 0u) << message;
  EXPECT_NE(message.find("did you mean 'lambda'?"), std::string::npos);
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(Flags, EvalBuildsTheSameTaskAsASweepBlock) {
  const Plan from_flags =
      plan_from_flags({{"family", "explicit"},
                       {"N", "3"},
                       {"types", "[{servers: [1, 2], p: 0.5}, {servers: [3], p: 0.5}]"},
                       {"speeds", "[1, 2, 3]"},
                       {"lambda", "0.7"},
                       {"qmax", "12"}});
  const Plan from_file = parse(R"(
name: same
blocks:
  - method: exact
    family: explicit
    N: 3
    types: [{servers: [1, 2], p: 0.5}, {servers: [3], p: 0.5}]
    speeds: [1, 2, 3]
    lambda: 0.7
    qmax: 12
)");
  ASSERT_EQ(from_flags.tasks.size(), 1u);
  EXPECT_TRUE(same_task(from_flags.tasks[0], from_file.tasks[0]));

  const Plan ldp = plan_from_flags(
      {{"method", "ldp"}, {"seed", "3"}, {"n", "10"}, {"j", "3"}, {"T", "1"}, {"lambda", "0.9"}});
  EXPECT_EQ(ldp.tasks[0].method(), Method::ldp);
  EXPECT_EQ(ldp.tasks[0].seed, 3u);
}

TEST(Flags, ErrorsNameTheFlag) {
  EXPECT_EQ(
      error_of_flags({{"family", "ring"}, {"N", "4"}, {"lambda", "-1"}}).rfind("--lambda: ", 0),
      0u);
  EXPECT_EQ(error_of_flags({{"family", "ring"}, {"N", "4"}, {"lambda", "0.5"}, {"qmax", "-2"}})
                .rfind("--qmax: qmax = -2 is out of range", 0),
            0u);
  EXPECT_NE(error_of_flags({{"family", "ring"}, {"N", "4"}, {"lambda", "[0.5, 0.6]"}})
                .find("--lambda gives 2 values"),
            std::string::npos);
  EXPECT_NE(error_of_flags({{"family", "ring"}, {"N", "4"}}).find("--lambda is missing"),
            std::string::npos);
  EXPECT_EQ(error_of_flags({{"family", "ring"}, {"N", "4"}, {"lambda", "[0.5"}})
                .rfind("--lambda: cannot read", 0),
            0u);
}

TEST(Keys, TableIsConsistentWithTheModel) {
  const auto keys = block_keys();
  auto find = [&](const std::string& name) {
    for (const auto& k : keys)
      if (k.name == name) return k;
    ADD_FAILURE() << name;
    return KeyInfo{};
  };
  EXPECT_EQ(find("lambda").methods, "exact, simulate, ldp, meanfield");
  EXPECT_EQ(find("policy").methods, "exact, simulate, ldp, meanfield");
  std::set<std::string> names;
  for (const auto& k : keys) EXPECT_TRUE(names.insert(k.name).second) << k.name;
  // The speed profiles offered by the sweep file are the model's.
  for (const char* profile : {"two_class", "linear"})
    EXPECT_NO_THROW(model::speed_profile(profile, 4, 2.0)) << profile;
  EXPECT_NE(error_of("name: x\nblocks: [{method: exact, family: ring, N: 4, lambda: 0.5, "
                     "speed_profile: fastest, fast: 2}]")
                .find("expected one of: two_class, linear"),
            std::string::npos);
}

// policy in exact blocks: the cancel-on-start engine, its refusals located at the key at fault;
// longest_idle in simulate blocks only with redundancy_cos.
TEST(Expand, CancelOnStartKeys) {
  const Plan plan = parse(R"(
name: c
seed: 1
blocks:
  - {method: exact, family: ring, N: 4, lambda: 0.5, policy: [redundancy_coc, redundancy_cos]}
  - {method: simulate, family: ring, N: 4, lambda: 0.5, policy: redundancy_cos, longest_idle: true}
)");
  ASSERT_EQ(plan.tasks.size(), 3u);
  EXPECT_EQ(plan.tasks[0].as<ExactTask>().options.policy, exact::Policy::redundancy_coc);
  EXPECT_EQ(plan.tasks[1].as<ExactTask>().options.policy, exact::Policy::redundancy_cos);
  EXPECT_NE(plan_hash({plan.tasks[0]}), plan_hash({plan.tasks[1]}));
  EXPECT_TRUE(plan.tasks[2].as<SimulateTask>().options.longest_idle);
  EXPECT_EQ(describe(plan.tasks[1]), "exact redundancy_cos ring N=4 lambda=0.5 qmax=0");
  EXPECT_EQ(describe(plan.tasks[2]).rfind("simulate redundancy_cos(longest_idle) ring N=4", 0), 0u);
  EXPECT_EQ(error_of("name: c\nblocks:\n  - {method: exact, family: ring, N: 4, lambda: 0.5, "
                     "policy: jsq}\n")
                .rfind("test.yaml:3:62: unknown policy 'jsq'", 0),
            0u);
  const std::string joint = error_of(
      "name: c\nblocks:\n  - {method: exact, family: complete, N: 3, lambda: 0.5, policy: "
      "redundancy_cos, joint_qmax: 5}\n");
  EXPECT_NE(joint.find("the joint pmf of the per-type counts is computed for policy "
                       "redundancy_coc only"),
            std::string::npos)
      << joint;
  EXPECT_EQ(joint.rfind("test.yaml:3:94:", 0), 0u) << joint;
  const std::string idle = error_of(
      "name: c\nseed: 1\nblocks:\n  - {method: simulate, family: ring, N: 4, lambda: 0.5, "
      "policy: jsq, longest_idle: true}\n");
  EXPECT_NE(idle.find("longest_idle"), std::string::npos) << idle;
  EXPECT_NE(idle.find("policy redundancy_cos"), std::string::npos) << idle;
}

TEST(Describe, NamesMethodAndParameters) {
  const Plan plan = parse(R"(
name: d
blocks:
  - {method: exact, family: hetero_ring, N: 4, eps: 0.3, lambda: 0.5, qmax: 3}
)");
  EXPECT_EQ(describe(plan.tasks[0]), "exact hetero_ring N=4 eps=0.3 lambda=0.5 qmax=3");
  EXPECT_EQ(category(plan.tasks[0]), "hetero_ring");
}

}  // namespace
}  // namespace qsweep::sweep
