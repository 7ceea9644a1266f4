// execute() runs each method as its own API does, rows follow the column schema, and results
// do not depend on the order in which tasks run (per-task random streams).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "qsweep/sweep/columns.hpp"
#include "qsweep/sweep/execute.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep {
namespace {

Plan parse(const std::string& yaml) { return parse_plan(yaml, "test.yaml"); }

std::size_t column_index(Method method, const std::string& name) {
  const auto& columns = group_columns(method);
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i].name == name) return i;
  ADD_FAILURE() << "no column " << name;
  return 0;
}

template <class T>
const T& cell(const Row& row, Method method, const std::string& name) {
  return std::get<T>(row.cells[column_index(method, name)]);
}

std::size_t cell_length(const CellValue& value) {
  if (const auto* v = std::get_if<std::vector<double>>(&value)) return v->size();
  if (const auto* v = std::get_if<std::vector<std::int64_t>>(&value)) return v->size();
  if (const auto* v = std::get_if<Repeated>(&value)) return v->count;
  return 0;
}

TEST(Columns, SchemaIsWellFormed) {
  for (Method m : kMethods) {
    const auto& columns = group_columns(m);
    ASSERT_FALSE(columns.empty());
    EXPECT_EQ(columns.front().name, "task_id");
    EXPECT_EQ(group_name(m), name_of(m));
    std::set<std::string> names;
    for (const auto& c : columns) {
      EXPECT_TRUE(names.insert(c.name).second) << c.name;
      EXPECT_FALSE(c.description.empty()) << c.name;
      EXPECT_LE(c.name.size(), kMaxStringLength);
    }
    // The store adds <name>_offset and <name>_count for ragged columns: no clash allowed.
    for (const auto& c : columns)
      if (c.type == ColumnType::f64_ragged || c.type == ColumnType::i64_ragged) {
        EXPECT_EQ(names.count(c.name + "_offset"), 0u) << c.name;
        EXPECT_EQ(names.count(c.name + "_count"), 0u) << c.name;
      }
  }
}

TEST(Execute, ExactMatchesEvaluateOnSeveralFamilies) {
  const Plan plan = parse(R"(
name: exact-families
blocks:
  - method: exact
    family: [complete, ring, hetero_ring, singletons_full, star, independent]
    N: [4, 6]
    eps: 0.3
    lambda: [0.3, 0.8]
    qmax: 8
  - method: exact
    family: explicit
    N: 3
    types: [{servers: [1, 2], p: 0.6}, {servers: [2, 3], p: 0.4}]
    speeds: [1, 2, 0.5]
    lambda: 0.5
    qmax: 5
    light_traffic: false
)");
  ASSERT_GT(plan.tasks.size(), 20u);
  for (const Task& task : plan.tasks) {
    const TaskOutcome outcome = execute(task);
    ASSERT_EQ(outcome.status, TaskStatus::done) << describe(task) << ": " << outcome.error;
    const model::System system(model::Family(task.system().family), task.system().speeds,
                               task.system().lambda);
    const exact::Result expected = exact::evaluate(system, task.as<ExactTask>().options);
    EXPECT_EQ(std::get<exact::Result>(outcome.result), expected) << describe(task);

    const Row row = make_row(task, outcome);
    const auto& columns = group_columns(Method::exact);
    ASSERT_EQ(row.cells.size(), columns.size());
    EXPECT_EQ(cell<std::int64_t>(row, Method::exact, "task_id"),
              static_cast<std::int64_t>(task.id));
    EXPECT_EQ(cell<double>(row, Method::exact, "C"), expected.C);
    EXPECT_EQ(cell<double>(row, Method::exact, "EQ"), expected.EQ);
    EXPECT_EQ(cell<double>(row, Method::exact, "ET"), expected.ET);
    EXPECT_EQ(cell<std::vector<double>>(row, Method::exact, "pmf"), expected.pmf);
    EXPECT_EQ(cell<std::vector<double>>(row, Method::exact, "EQ_type"), expected.EQ_type);
    EXPECT_EQ(cell<std::string>(row, Method::exact, "engine"), expected.engine);
    // Done tasks fill exactly the planned lengths (small families list every type).
    for (std::size_t i = 0; i < columns.size(); ++i)
      EXPECT_EQ(cell_length(row.cells[i]), planned_length(task, columns[i]))
          << describe(task) << " column " << columns[i].name;
  }
}

// The joint pmf columns: parameters, the result as evaluate() gives it, planned lengths equal to
// the stored ones (two and three types, binned or not), and -1 / NaN / empty where it is off.
TEST(Execute, JointPmfColumnsHoldTheResult) {
  const Plan plan = parse(R"(
name: joint
blocks:
  - method: exact
    family: explicit
    N: 3
    types: [{servers: [1, 2], p: 0.6}, {servers: [2, 3], p: 0.4}]
    lambda: 0.8
    joint_qmax: [30, 100]
    joint_bin: [1, 7]
    zip: [joint_qmax, joint_bin]
  - {method: exact, family: complete, N: 3, d: 2, lambda: 0.5, joint_qmax: 9, joint_bin: 2}
  - {method: exact, family: ring, N: 5, lambda: 0.5}
)");
  ASSERT_EQ(plan.tasks.size(), 4u);
  const std::vector<std::vector<std::int64_t>> shapes{{31, 31}, {15, 15}, {5, 5, 5}, {}};
  const auto& columns = group_columns(Method::exact);
  for (std::size_t i = 0; i < plan.tasks.size(); ++i) {
    const Task& task = plan.tasks[i];
    const TaskOutcome outcome = execute(task);
    ASSERT_EQ(outcome.status, TaskStatus::done) << describe(task) << ": " << outcome.error;
    const model::System system(model::Family(task.system().family), task.system().speeds,
                               task.system().lambda);
    const exact::Result expected = exact::evaluate(system, task.as<ExactTask>().options);
    const Row row = make_row(task, outcome);
    EXPECT_EQ(cell<std::vector<std::int64_t>>(row, Method::exact, "joint_shape"), shapes[i]);
    EXPECT_EQ(cell<std::vector<double>>(row, Method::exact, "joint_pmf"), expected.joint_pmf);
    EXPECT_EQ(cell<std::int64_t>(row, Method::exact, "joint_qmax"),
              task.as<ExactTask>().options.joint_qmax);
    const bool on = !shapes[i].empty();
    EXPECT_EQ(cell<std::int64_t>(row, Method::exact, "joint_bin"),
              on ? task.as<ExactTask>().options.joint_bin : -1);
    if (on) {
      EXPECT_EQ(cell<double>(row, Method::exact, "joint_mass"), expected.joint_mass);
      EXPECT_GT(expected.joint_mass, 0.9);
    } else {
      EXPECT_TRUE(std::isnan(cell<double>(row, Method::exact, "joint_mass")));
    }
    for (std::size_t c = 0; c < columns.size(); ++c)
      EXPECT_EQ(cell_length(row.cells[c]), planned_length(task, columns[c]))
          << describe(task) << " column " << columns[c].name;
  }
}

TEST(Execute, TooManyTypesStoreNoPerTypeValues) {
  const Plan plan =
      parse("name: big\nblocks: [{method: exact, family: complete, N: 200, lambda: 0.5}]");
  const Task& task = plan.tasks[0];
  const auto& columns = group_columns(Method::exact);
  EXPECT_EQ(planned_length(task, columns[column_index(Method::exact, "EQ_type")]), 0u);
  EXPECT_EQ(planned_length(task, columns[column_index(Method::exact, "ER_server")]), 200u);
  const TaskOutcome outcome = execute(task);
  ASSERT_EQ(outcome.status, TaskStatus::done) << outcome.error;
  const Row row = make_row(task, outcome);
  EXPECT_TRUE(cell<std::vector<std::int64_t>>(row, Method::exact, "type_servers").empty());
  EXPECT_EQ(cell<std::vector<double>>(row, Method::exact, "ER_server").size(), 200u);
}

TEST(Execute, UnstableAndFailedTasksCarryParametersAndNoResults) {
  const Plan plan =
      parse("name: u\nblocks: [{method: exact, family: ring, N: 4, lambda: 1.2, qmax: 3}]");
  ASSERT_EQ(plan.unstable_tasks, std::vector<std::uint64_t>{0});
  const TaskOutcome unstable = execute(plan.tasks[0]);
  EXPECT_EQ(unstable.status, TaskStatus::unstable);
  EXPECT_NE(unstable.error.find("servers {1,2,3,4}"), std::string::npos) << unstable.error;
  const Row row = make_row(plan.tasks[0], unstable);
  EXPECT_TRUE(std::isnan(cell<double>(row, Method::exact, "EQ")));
  EXPECT_EQ(cell<std::int64_t>(row, Method::exact, "stable"), 0);
  EXPECT_EQ(cell<std::int64_t>(row, Method::exact, "N"), 4);
  EXPECT_TRUE(cell<std::vector<double>>(row, Method::exact, "pmf").empty());

  Task broken = plan.tasks[0];
  broken.system().lambda = 0.5;
  broken.as<ExactTask>().options.qmax = -5;  // bypasses validation: execute must report, not throw
  const TaskOutcome failed = execute(broken);
  EXPECT_EQ(failed.status, TaskStatus::failed);
  EXPECT_NE(failed.error.find("qmax"), std::string::npos) << failed.error;
  EXPECT_TRUE(std::isnan(cell<double>(make_row(broken, failed), Method::exact, "C")));
}

TEST(Execute, RandomMethodsDoNotDependOnTaskOrder) {
  const Plan plan = parse(R"(
name: order
seed: 99
blocks:
  - method: simulate
    family: ring
    N: 4
    lambda: [0.3, 0.6]
    horizon: 200
    warmup: 10
    replications: 2
  - method: ldp
    n: 8
    j: 3
    T: 1
    lambda: 0.9
    estimator: [monte_carlo, importance]
    samples: 200
)");
  ASSERT_EQ(plan.tasks.size(), 4u);
  std::vector<TaskOutcome> forward, backward(plan.tasks.size());
  for (const Task& t : plan.tasks) forward.push_back(execute(t));
  for (std::size_t i = plan.tasks.size(); i-- > 0;) backward[i] = execute(plan.tasks[i]);
  for (std::size_t i = 0; i < plan.tasks.size(); ++i) {
    ASSERT_EQ(forward[i].status, TaskStatus::done) << forward[i].error;
    if (auto* r = std::get_if<ldp::Result>(&backward[i].result))  // a timing, not a result
      r->cpu_seconds = std::get<ldp::Result>(forward[i].result).cpu_seconds;
    EXPECT_EQ(forward[i].result, backward[i].result) << describe(plan.tasks[i]);
    const auto& columns = group_columns(plan.tasks[i].method());
    const Row row = make_row(plan.tasks[i], forward[i]);
    for (std::size_t c = 0; c < columns.size(); ++c)
      EXPECT_LE(cell_length(row.cells[c]), planned_length(plan.tasks[i], columns[c]))
          << columns[c].name;
  }
  // Different tasks get different streams: the two loads give different estimates.
  EXPECT_NE(std::get<sim::Result>(forward[0].result).EQ,
            std::get<sim::Result>(forward[1].result).EQ);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A simulation's per-server columns: the pooled kernel's one value for all servers stays one
// value in the row (Repeated, N of them in the file); the general kernel's N values are listed.
TEST(Execute, PerServerColumnsOfAPooledResultAreOneValue) {
  const Plan plan = parse(R"(
name: per-server
seed: 1
blocks:
  - method: simulate
    family: [complete, ring]
    d: 2
    N: 6
    lambda: 0.5
    policy: jsq
    horizon: 200
    warmup: 10
    replications: 2
)");
  ASSERT_EQ(plan.tasks.size(), 2u);
  for (const Task& task : plan.tasks) {
    const TaskOutcome outcome = execute(task);
    ASSERT_EQ(outcome.status, TaskStatus::done) << outcome.error;
    const auto& result = std::get<sim::Result>(outcome.result);
    const Row row = make_row(task, outcome);
    const CellValue& er = row.cells[column_index(Method::simulate, "ER_server")];
    const CellValue& hw = row.cells[column_index(Method::simulate, "utilisation_hw")];
    if (task.system().family.kind == model::FamilyKind::complete) {
      ASSERT_TRUE(result.ER_server.one_value());
      EXPECT_EQ(std::get<Repeated>(er), (Repeated{result.ER_server[0], 6}));
      EXPECT_EQ(std::get<Repeated>(hw), (Repeated{result.utilisation_hw[0], 6}));
    } else {
      ASSERT_FALSE(result.ER_server.one_value());
      EXPECT_EQ(std::get<std::vector<double>>(er), result.ER_server.to_vector());
      EXPECT_EQ(std::get<std::vector<double>>(hw), result.utilisation_hw.to_vector());
    }
  }
}

// The issue's cases: star, N = 8, lambda = 0.9. Random routing sends N lambda / 2 = 3.6 jobs per
// unit time to the hub (unstable without running); jiq runs, is overloaded and says so; jsq is
// stable (eq. 2 holds and is jsq's region) and does not warn. Plus an ldp estimate with no hit.
TEST(Execute, WarningsAndPolicyStabilityReachTheOutcome) {
  const Plan plan = parse(R"(
name: warnings
seed: 5
blocks:
  - method: simulate
    family: star
    N: 8
    lambda: 0.9
    policy: [random, jiq, jsq]
    horizon: 2000
  - method: ldp
    estimator: monte_carlo
    n: 50
    j: 3
    T: 1
    lambda: 1
    samples: 100
)");
  ASSERT_EQ(plan.tasks.size(), 4u);
  const TaskOutcome random = execute(plan.tasks[0]);
  EXPECT_EQ(random.status, TaskStatus::unstable);
  EXPECT_EQ(random.error, "random routing: server 1 gets jobs at rate 3.6 >= its service rate 1");
  EXPECT_EQ(random.warning, "");

  const TaskOutcome jiq = execute(plan.tasks[1]);
  ASSERT_EQ(jiq.status, TaskStatus::done) << jiq.error;
  EXPECT_EQ(jiq.warning.rfind("jiq may be unstable", 0), 0u) << jiq.warning;
  EXPECT_EQ(jiq.warning, std::string("jiq may be unstable: random routing (jiq's rule when S is "
                                     "busy) gives server 1 rate 3.6 >= 1; ") +
                             std::get<sim::Result>(jiq.result).warning);
  EXPECT_TRUE(contains(jiq.warning, "server 1 never idle")) << jiq.warning;

  const TaskOutcome jsq = execute(plan.tasks[2]);
  ASSERT_EQ(jsq.status, TaskStatus::done) << jsq.error;
  EXPECT_EQ(jsq.warning, "");

  const TaskOutcome ldp = execute(plan.tasks[3]);
  ASSERT_EQ(ldp.status, TaskStatus::done) << ldp.error;
  EXPECT_TRUE(contains(ldp.warning, "no path reached the event")) << ldp.warning;
  EXPECT_EQ(ldp.warning, std::get<ldp::Result>(ldp.result).warning);
}

// The kind of tasks the paper sweeps run give no warning: M/M/1 at load 0.5 with a long
// horizon, the simulations of paper-redundancy-fig4-occupancy, and the exact and importance
// estimates of paper-jsq-fig2 (up to n = 200, to keep the test short). Its Monte Carlo block is
// left out: at n >= 50 its 20000 paths rarely hit, and warn for it.
TEST(Execute, PaperSweepTasksGiveNoWarning) {
  const Plan mm1 = parse(R"(
name: mm1
seed: 5
blocks:
  - {method: simulate, family: independent, N: 1, lambda: 0.5, horizon: 1.0e5}
)");
  const TaskOutcome outcome = execute(mm1.tasks[0]);
  ASSERT_EQ(outcome.status, TaskStatus::done);
  EXPECT_EQ(outcome.warning, "");

  std::size_t checked = 0;
  const std::string sweeps = std::string(QSWEEP_SOURCE_DIR) + "/sweeps/";
  for (const Task& t : load_plan(sweeps + "paper-redundancy-fig4-occupancy.yaml").tasks) {
    if (t.method() != Method::simulate) continue;
    const TaskOutcome o = execute(t);
    ASSERT_EQ(o.status, TaskStatus::done) << describe(t);
    EXPECT_EQ(o.warning, "") << describe(t);
    ++checked;
  }
  for (const Task& t : load_plan(sweeps + "paper-jsq-fig2.yaml").tasks) {
    if (t.as<LdpTask>().options.estimator == ldp::Estimator::monte_carlo ||
        t.as<LdpTask>().options.n > 200)
      continue;
    const TaskOutcome o = execute(t);
    ASSERT_EQ(o.status, TaskStatus::done) << describe(t);
    EXPECT_EQ(o.warning, "") << describe(t);
    ++checked;
  }
  EXPECT_GE(checked, 20u);
}

}  // namespace
}  // namespace qsweep::sweep
