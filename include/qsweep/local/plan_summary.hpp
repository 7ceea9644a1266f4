#pragma once
// A sweep's plan summarised: task counts and estimated costs per method and kind, the biggest
// tasks. `qsweep plan` prints it (as text or --json) and the Python module's qsweep.plan returns
// the same JSON object as a dict.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "qsweep/sweep/cost.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::local {

struct GroupCount {
  std::size_t tasks = 0, unstable = 0;
  double seconds = 0.0;
  double memory = 0.0;  // the largest task's
};

// Counted by the kinds the plan keeps per task, without making the tasks.
struct PlanCounts {
  std::map<std::pair<int, std::string>, GroupCount> groups;  // (method, kind)
  double total_seconds = 0.0, largest_memory = 0.0;
  std::vector<bool> unstable;  // per task id
};
PlanCounts count_plan(const sweep::Plan& plan);

// The `count` tasks with the largest estimated cost (seconds) or memory, largest first.
std::vector<sweep::Task> biggest_tasks(const sweep::Plan& plan, std::size_t count);
std::vector<sweep::Task> most_memory_tasks(const sweep::Plan& plan, std::size_t count);

// The summary of `plan --json` (`top` biggest tasks; every task with its parameters if
// `all_tasks`), for a plan checked against `limit`.
nlohmann::ordered_json plan_json(const sweep::Plan& plan, const sweep::MemoryLimit& limit,
                                 std::size_t top, bool all_tasks);

}  // namespace qsweep::local
