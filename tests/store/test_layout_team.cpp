// The layout of a results file found by a team (run::results_layout with a sweep::PlanTeam: the
// ranks of a run, each making the tasks of its share of the rows for their planned lengths) is
// the layout one process finds, for every example sweep. The members are threads here; over MPI
// the team lays out the file of every integration test of several ranks.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "../sweep/thread_team.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/run/plan_results.hpp"
#include "qsweep/store/layout.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::store {
namespace {

namespace fs = std::filesystem;

void expect_same_layout(const Layout& team, const Layout& alone, const std::string& what) {
  ASSERT_EQ(team.task_count(), alone.task_count()) << what;
  ASSERT_EQ(team.groups().size(), alone.groups().size()) << what;
  for (std::size_t g = 0; g < alone.groups().size(); ++g) {
    const GroupLayout& a = alone.groups()[g];
    const GroupLayout& t = team.groups()[g];
    EXPECT_EQ(t.name, a.name) << what;
    EXPECT_EQ(t.task_ids.values(), a.task_ids.values()) << what << " /" << a.name;
    ASSERT_EQ(t.columns.size(), a.columns.size()) << what;
    for (std::size_t c = 0; c < a.columns.size(); ++c) {
      EXPECT_EQ(t.columns[c].width, a.columns[c].width) << what << " " << a.columns[c].spec.name;
      EXPECT_EQ(t.columns[c].offsets.values(), a.columns[c].offsets.values())
          << what << " " << a.columns[c].spec.name;
    }
  }
}

TEST(LayoutTeam, EveryExampleSweepIsLaidOutAsByOneProcess) {
  std::size_t compared = 0;
  for (const char* dir : {"sweeps", "tests/integration"}) {
    for (const auto& entry : fs::directory_iterator(fs::path(QSWEEP_SOURCE_DIR) / dir)) {
      if (entry.path().extension() != ".yaml") continue;
      std::optional<sweep::Plan> plan;
      try {
        plan = sweep::load_plan(entry.path().string());
      } catch (const InputError&) {
        continue;  // an integration test's bad sweep
      }
      if (plan->tasks.size() > 200000) continue;
      const Layout alone = run::results_layout(*plan);
      for (const int members : {2, 3, 5}) {
        std::vector<std::optional<Layout>> layouts(static_cast<std::size_t>(members));
        sweep::testing::run_as_team(members, [&](const sweep::PlanTeam& team) {
          layouts[static_cast<std::size_t>(team.rank)].emplace(
              run::results_layout(*plan, kFormatVersion, &team));
        });
        for (const std::optional<Layout>& layout : layouts)
          expect_same_layout(*layout, alone, entry.path().string());
      }
      ++compared;
    }
  }
  EXPECT_GE(compared, 20U);
}

}  // namespace
}  // namespace qsweep::store
