// The plan hash is what `qsweep run --resume` compares with the hash stored in a results file:
// a change to it makes every results file written before it refuse to resume, unless the old
// hash is still recognised (legacy_plan_hash, the hash of results files made before 2026-12-08,
// from the tasks' texts). These hashes were
// computed by qsweep built from main at 33e1b4b (`qsweep plan --json FILE`, "plan_hash"), before
// a task held its method's parameters as one variant alternative; a test that fails here means
// the canonical form of a Task (Task::serialize, src/sweep/canonical.hpp) changed. The plans with
// simulate tasks were pinned again when those tasks went to numbers version 3, the exact plan
// when its tasks on the symmetric engine (complete, redundancy_coc) and with a joint pmf went to
// numbers version 2 (their old hashes are kept as `before`).
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "qsweep/sweep/plan.hpp"
#include "qsweep/sweep/sha256.hpp"

namespace qsweep::sweep {
namespace {

struct Pinned {
  const char* name;
  const char* yaml;
  std::size_t tasks;
  const char* hash;
  // The hash before the plan's tasks gave other numbers (simulate's output analysis, numbers
  // version 3; exact's symmetric engine, numbers version 2), which must differ: results files
  // made then must not resume.
  const char* before = nullptr;
};

const Pinned kPinned[] = {
    {"exact", R"(name: pin-exact
blocks:
  - method: exact
    family: [ring, complete, explicit]
    N: 4
    types: [{servers: [1, 2], p: 0.5}, {servers: [2, 3, 4], p: 0.5}]
    rho: [0.3, 0.9, 1.2]
    qmax: 5
    policy: [redundancy_coc, redundancy_cos]
  - method: exact
    family: torus
    rows: 3
    cols: 3
    speed_profile: two_class
    fast: 2
    lambda: {heavy_traffic: [1, 2]}
  - method: exact
    family: explicit
    N: 3
    types: [{servers: [1, 2], p: 0.5}, {servers: [3], p: 0.5}]
    lambda: 0.4
    joint_qmax: 3
    joint_bin: 2
)",
     21, "5377e542ff0c44cba60c90e9957b7c95bc7a796393422a7faa517db9449d0f5b",
     "966d424eba982462624ae6111954d5fb8ba54046f2e5295634fabe33881c2f01"},
    {"simulate", R"(name: pin-simulate
seed: 7
blocks:
  - method: simulate
    family: hetero_ring
    N: 6
    eps: [0.2, 0.4]
    speeds: [1, 2, 1, 2, 1, 2]
    lambda: 0.5
    policy: [redundancy_coc, power_of_d, redundancy_cos]
    policy_d: 2
    service: hyperexponential
    cv2: 4
    horizon: 100
    qmax: 4
    occupancy_max: 2
)",
     6, "44a35592319c251da1f8e0bb79abcd33cb91cc4db25c9e47c4a51754b6201653",
     "5c8af0cd815b4713ce7bed511a384a9cd65e7ad4adab21b3802d1589c8fa538e"},
    {"mixed", R"(name: pin-mixed
seed: 20261130
blocks:
  - method: ldp
    policy: [jsq, power_of_d]
    n: 10
    j: 3
    T: 1
    lambda: 0.9
    estimator: [exact, monte_carlo]
    samples: 2000
    initial_counts: [2, 8]
  - method: exact
    family: path
    N: 5
    lambda: 0.4
  - method: simulate
    family: complete
    N: 5
    d: 3
    rho: 0.7
    service: empirical
    service_values: [1, 2, 3]
    service_weights: [0.5, 0.25, 0.25]
)",
     6, "81c6d68e3fc8f4add8761033448fc13297c95c6d4458a7d3761be9cf8cfa60fa",
     "247eb7e0ebcb0494b87319d127c50cae41c0462e24beaaf555fdb7eeeb19744d"},
};

TEST(PlanHash, EqualsTheHashOfResultsFilesWrittenBefore) {
  for (const Pinned& pinned : kPinned) {
    const Plan plan = parse_plan(pinned.yaml, std::string(pinned.name) + ".yaml");
    EXPECT_EQ(plan.tasks.size(), pinned.tasks) << pinned.name;
    EXPECT_EQ(legacy_plan_hash(plan), pinned.hash)
        << pinned.name << ": resume of older results files breaks";
    EXPECT_TRUE(is_plan_hash(plan, pinned.hash)) << pinned.name;
    if (pinned.before != nullptr) {
      EXPECT_FALSE(is_plan_hash(plan, pinned.before)) << pinned.name;
    }
  }
}

// Since 2026-12-08 the hash is made from the tasks' keys, which expansion computes anyway (the
// text of every task was hashed a second time): the SHA-256 of "qsweep-plan-v2\n" and each
// task's id, block and key words as little-endian 64-bit integers, as documented, made here from
// task_key of each task made again.
TEST(PlanHash, IsTheHashOfEveryTasksIdBlockAndKey) {
  for (const Pinned& pinned : kPinned) {
    const Plan plan = parse_plan(pinned.yaml, std::string(pinned.name) + ".yaml");
    ASSERT_TRUE(plan.refinements.empty());
    std::string lines = "qsweep-plan-v2\n";
    for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) {
      const Task task = plan.tasks[id];
      const std::string key = task_key(task);
      const std::array<std::uint64_t, 4> words{
          task.id, static_cast<std::uint64_t>(task.block),
          static_cast<std::uint64_t>(std::stoull(key.substr(0, 16), nullptr, 16)),
          static_cast<std::uint64_t>(std::stoull(key.substr(16), nullptr, 16))};
      for (const std::uint64_t word : words)
        for (int byte = 0; byte < 8; ++byte) lines += static_cast<char>(word >> (8 * byte));
      EXPECT_EQ(plan.tasks.key(id), task_key(task)) << pinned.name << " task " << id;
    }
    EXPECT_EQ(plan.hash, sha256_hex(lines)) << pinned.name;
    EXPECT_NE(plan.hash, pinned.hash) << pinned.name;
    EXPECT_TRUE(is_plan_hash(plan, plan.hash)) << pinned.name;
  }
}

// Dispatching on complete gives other numbers since the pooled kernel (docs/sim.md): its tasks
// are at numbers version 2, so a results file made before (with this hash, computed by qsweep
// built from main at 950ee97) must not resume. The pinned plans above, none of them such a
// task, keep their hashes.
TEST(PlanHash, ChangesForTasksWhoseNumbersChanged) {
  const Plan plan = parse_plan(R"(name: pin-pooled
seed: 7
blocks:
  - method: simulate
    family: complete
    N: 50
    d: 2
    lambda: 0.9
    policy: [jsq, jiq, power_of_d, random]
    policy_d: 2
    horizon: 100
)",
                               "pin-pooled.yaml");
  ASSERT_EQ(plan.tasks.size(), 4u);
  EXPECT_FALSE(
      is_plan_hash(plan, "d94a2feab8e333dbe766e545596fd1bef2a43c27a1e96b23b6b5acffe9bb6b22"));
}

}  // namespace
}  // namespace qsweep::sweep
