// A sweep planned by a team (sweep::PlanTeam: the ranks of `qsweep run`, each making the tasks of
// its share of every block's points) gives the plan and the errors of one process. The members
// are threads here and their exchange goes through shared memory; over MPI it runs in every
// integration test of several ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "qsweep/common/error.hpp"
#include "qsweep/sweep/plan.hpp"
#include "thread_team.hpp"

namespace qsweep::sweep {
namespace {

namespace fs = std::filesystem;

// What one member ends with: its plan, or the message of what it threw.
struct Outcome {
  std::optional<Plan> plan;
  std::string error;  // "stopped" for PlanStopped
};

// Plans `text` with a team of `members` threads (`stopped`: asked by each member, by its rank).
std::vector<Outcome> plan_as_team(const std::string& text, const std::string& source, int members,
                                  const std::function<bool(int member)>& stopped = {}) {
  std::vector<Outcome> outcomes(static_cast<std::size_t>(members));
  testing::run_as_team(members, [&](const PlanTeam& team) {
    Outcome& outcome = outcomes[static_cast<std::size_t>(team.rank)];
    try {
      std::function<bool()> ask;
      if (stopped) ask = [&stopped, rank = team.rank] { return stopped(rank); };
      outcome.plan = parse_plan(text, source, ask, BlockDuplicates::left_out, &team);
    } catch (const PlanStopped&) {
      outcome.error = "stopped";
    } catch (const InputError& e) {
      outcome.error = e.what();
    }
  });
  return outcomes;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every field the plan keeps, task by task, equal.
void expect_same_plan(const Plan& team, const Plan& alone, const std::string& what) {
  ASSERT_EQ(team.tasks.size(), alone.tasks.size()) << what;
  EXPECT_EQ(team.hash, alone.hash) << what;
  EXPECT_EQ(team.duplicates, alone.duplicates) << what;
  EXPECT_EQ(team.unstable_tasks, alone.unstable_tasks) << what;
  EXPECT_EQ(team.refinements.size(), alone.refinements.size()) << what;
  ASSERT_EQ(team.tasks.kinds().size(), alone.tasks.kinds().size()) << what;
  for (std::size_t k = 0; k < alone.tasks.kinds().size(); ++k) {
    EXPECT_EQ(team.tasks.kinds()[k].method, alone.tasks.kinds()[k].method) << what;
    EXPECT_EQ(team.tasks.kinds()[k].category, alone.tasks.kinds()[k].category) << what;
  }
  for (std::uint64_t id = 0; id < alone.tasks.size(); ++id) {
    const TaskEstimate& a = alone.tasks.estimate(id);
    const TaskEstimate& t = team.tasks.estimate(id);
    ASSERT_EQ(std::memcmp(&a, &t, sizeof a), 0) << what << ": estimate of task " << id;
    ASSERT_EQ(team.tasks.key_bits(id), alone.tasks.key_bits(id)) << what << ": task " << id;
  }
  // The tasks themselves (made again from the grid point each keeps), at a few ids.
  for (const std::uint64_t id :
       {std::uint64_t{0}, alone.tasks.size() / 2, alone.tasks.size() - 1}) {
    if (id < alone.tasks.size()) {
      EXPECT_EQ(task_key(team.tasks.at(id)), alone.tasks.key(id)) << what << ": task " << id;
    }
  }
}

std::vector<fs::path> sweep_files() {
  std::vector<fs::path> files;
  for (const char* dir : {"sweeps", "tests/integration", "bench/sweeps"})
    for (const auto& entry : fs::directory_iterator(fs::path(QSWEEP_SOURCE_DIR) / dir))
      if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(PlanTeam, EveryExampleSweepPlansAsByOneProcess) {
  std::size_t compared = 0;
  for (const fs::path& file : sweep_files()) {
    const std::string text = read_text(file);
    std::optional<Plan> alone;
    try {
      alone = parse_plan(text, file.string());
    } catch (const InputError&) {
      continue;  // an integration test's bad sweep: the bad files below
    }
    if (alone->tasks.size() > 200000) continue;  // bench/sweeps at 10^6: the next test
    for (const int members : {2, 3, 5}) {
      for (const Outcome& outcome : plan_as_team(text, file.string(), members)) {
        ASSERT_TRUE(outcome.plan) << file << ": " << outcome.error;
        expect_same_plan(*outcome.plan, *alone, file.string() + " by " + std::to_string(members));
      }
    }
    ++compared;
  }
  EXPECT_GE(compared, 20U);
}

// Duplicates within a block and of an earlier block, in points that fall to different members,
// unstable tasks and several kinds, at a size where every member has thousands of points.
TEST(PlanTeam, DuplicatesAndUnstableTasksAcrossShares) {
  const std::string text = R"(name: team
seed: 7
blocks:
  - method: exact
    family: [ring, complete]
    N: [3, 4]
    lambda: {linspace: [0.05, 1.6, 3000]}
    qmax: 6
  - method: exact
    family: ring
    N: 4
    lambda: {linspace: [0.05, 1.6, 3000]}
    qmax: [6, 7]
  - method: simulate
    family: complete
    d: 3
    N: 4
    policy: [redundancy_cos, jsq, power_of_d]
    policy_d: [2, 3]
    lambda: {linspace: [0.1, 0.9, 500]}
    replications: 2
    horizon: 100
)";
  const Plan alone = parse_plan(text, "team.yaml");
  ASSERT_GT(alone.duplicates, 0U);
  ASSERT_FALSE(alone.unstable_tasks.empty());
  ASSERT_GE(alone.tasks.kinds().size(), 3U);
  for (const int members : {2, 3, 7})
    for (const Outcome& outcome : plan_as_team(text, "team.yaml", members)) {
      ASSERT_TRUE(outcome.plan) << outcome.error;
      expect_same_plan(*outcome.plan, alone, "team.yaml by " + std::to_string(members));
    }
}

// Every bad sweep fails with the message one process gives, on every member.
TEST(PlanTeam, EveryBadSweepFailsAsForOneProcess) {
  std::size_t compared = 0;
  for (const auto& entry :
       fs::directory_iterator(fs::path(QSWEEP_SOURCE_DIR) / "tests/sweep/bad")) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string text = read_text(entry.path());
    std::string alone;
    try {
      parse_plan(text, entry.path().string());
    } catch (const InputError& e) {
      alone = e.what();
    }
    ASSERT_FALSE(alone.empty()) << entry.path();
    for (const int members : {2, 3})
      for (const Outcome& outcome : plan_as_team(text, entry.path().string(), members))
        EXPECT_EQ(outcome.error, alone) << entry.path() << " by " << members;
    ++compared;
  }
  EXPECT_GE(compared, 100U);
}

// The first bad task in point order is the one reported, whichever member made it: here every
// point from 2000 on is unstable with on_unstable: error, and the members' shares start at other
// points.
TEST(PlanTeam, TheFirstBadPointIsReportedWhicheverMemberMetIt) {
  const std::string text = R"(name: team
on_unstable: error
blocks:
  - method: exact
    family: ring
    N: 4
    lambda: {linspace: [0.0004, 1.6, 4000]}
    qmax: 6
)";
  std::string alone;
  try {
    parse_plan(text, "team.yaml");
  } catch (const InputError& e) {
    alone = e.what();
  }
  ASSERT_NE(alone.find("lambda"), std::string::npos) << alone;
  for (const int members : {2, 3, 4})
    for (const Outcome& outcome : plan_as_team(text, "team.yaml", members))
      EXPECT_EQ(outcome.error, alone) << members;
}

// A stop asked of one member only ends the planning of every member.
TEST(PlanTeam, AStopAskedOfOneMemberStopsAll) {
  const std::string text = R"(name: team
blocks:
  - method: exact
    family: ring
    N: 4
    lambda: {linspace: [0.05, 0.95, 5000]}
    qmax: 6
)";
  std::atomic<int> asked{0};
  const auto stopped = [&asked](int member) { return member == 1 && ++asked > 100; };
  for (const Outcome& outcome : plan_as_team(text, "team.yaml", 3, stopped))
    EXPECT_EQ(outcome.error, "stopped");
}

}  // namespace
}  // namespace qsweep::sweep
