// `qsweep plan FILE` (task counts and estimated costs, no MPI) and `qsweep validate FILE`.
// Both only read the sweep file.
#include "qsweep/sweep/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "qsweep/common/exit_codes.hpp"
#include "qsweep/sweep/cost.hpp"

namespace qsweep::cli {
namespace {

std::string duration_text(double seconds) {
  if (seconds < 1e-3) return fmt::format("{:.2g} ms", seconds * 1e3);
  if (seconds < 1.0) return fmt::format("{:.0f} ms", seconds * 1e3);
  if (seconds < 120.0) return fmt::format("{:.1f} s", seconds);
  if (seconds < 7200.0) return fmt::format("{:.1f} min", seconds / 60.0);
  if (seconds < 172800.0) return fmt::format("{:.1f} h", seconds / 3600.0);
  return fmt::format("{:.1f} days", seconds / 86400.0);
}

struct Group {
  std::size_t tasks = 0, unstable = 0;
  double seconds = 0.0;
};

struct PlanArgs {
  std::string file;
  std::size_t top = 5;
  bool all_tasks = false;
  bool json = false;
};

void print_plan(const sweep::Plan& plan, const PlanArgs& args) {
  std::map<std::pair<int, std::string>, Group> groups;
  double total = 0.0;
  std::vector<bool> unstable(plan.tasks.size(), false);
  for (auto id : plan.unstable_tasks) unstable[id] = true;
  for (const auto& task : plan.tasks) {
    Group& g = groups[{static_cast<int>(task.method), sweep::category(task)}];
    ++g.tasks;
    g.unstable += unstable[task.id] ? 1 : 0;
    g.seconds += task.cost;
    total += task.cost;
  }
  std::vector<const sweep::Task*> biggest;
  for (const auto& task : plan.tasks) biggest.push_back(&task);
  const std::size_t top = std::min(args.top, biggest.size());
  std::partial_sort(biggest.begin(), biggest.begin() + static_cast<std::ptrdiff_t>(top),
                    biggest.end(), [](const auto* a, const auto* b) { return a->cost > b->cost; });
  biggest.resize(top);

  if (args.json) {
    nlohmann::ordered_json out;
    out["name"] = plan.name;
    out["source"] = plan.source;
    out["tasks"] = plan.tasks.size();
    out["unstable_tasks"] = plan.unstable_tasks.size();
    out["plan_hash"] = plan.hash;
    out["sweep_sha256"] = plan.yaml_sha256;
    out["seed"] = plan.seed;
    out["output"] = plan.output;
    out["total_cost_seconds"] = total;
    out["groups"] = nlohmann::ordered_json::array();
    for (const auto& [key, g] : groups)
      out["groups"].push_back(
          {{"method", std::string(sweep::to_string(static_cast<sweep::Method>(key.first)))},
           {"kind", key.second},
           {"tasks", g.tasks},
           {"unstable_tasks", g.unstable},
           {"cost_seconds", g.seconds}});
    out["biggest"] = nlohmann::ordered_json::array();
    for (const auto* task : biggest)
      out["biggest"].push_back({{"id", task->id},
                                {"task", sweep::describe(*task)},
                                {"cost_seconds", task->cost},
                                {"estimate", sweep::estimate_cost(*task).formula}});
    if (args.all_tasks) {
      out["task_list"] = nlohmann::ordered_json::array();
      for (const auto& task : plan.tasks)
        out["task_list"].push_back({{"id", task.id},
                                    {"task", sweep::describe(task)},
                                    {"unstable", static_cast<bool>(unstable[task.id])},
                                    {"cost_seconds", task.cost}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("sweep %s (%s): %zu tasks", plan.name.c_str(), plan.source.c_str(),
              plan.tasks.size());
  if (!plan.unstable_tasks.empty())
    std::printf(", %zu outside the stability region (stored as unstable, not run)",
                plan.unstable_tasks.size());
  std::printf("\nplan hash %s\n", plan.hash.c_str());
  if (!plan.output.empty()) std::printf("output %s\n", plan.output.c_str());
  std::printf("\n%-9s %-28s %9s %9s %14s\n", "method", "kind", "tasks", "unstable", "est. cost");
  for (const auto& [key, g] : groups)
    std::printf("%-9s %-28s %9zu %9zu %14s\n",
                std::string(sweep::to_string(static_cast<sweep::Method>(key.first))).c_str(),
                key.second.c_str(), g.tasks, g.unstable, duration_text(g.seconds).c_str());
  std::printf("%-38s %9zu %9zu %14s\n", "total", plan.tasks.size(), plan.unstable_tasks.size(),
              duration_text(total).c_str());
  std::printf("(costs: rough single-core estimates, docs/sweep-format.md)\n");
  if (args.all_tasks) {
    std::printf("\ntasks:\n");
    for (const auto& task : plan.tasks)
      std::printf("  %8llu %12s  %s%s\n", static_cast<unsigned long long>(task.id),
                  duration_text(task.cost).c_str(), sweep::describe(task).c_str(),
                  unstable[task.id] ? "  (unstable)" : "");
  }
  if (!biggest.empty()) {
    std::printf("\nbiggest tasks:\n");
    for (const auto* task : biggest)
      std::printf("  %8llu %12s  %s  [%s]\n", static_cast<unsigned long long>(task->id),
                  duration_text(task->cost).c_str(), sweep::describe(*task).c_str(),
                  sweep::estimate_cost(*task).formula.c_str());
  }
}

int plan_command(const PlanArgs& args) {
  print_plan(sweep::load_plan(args.file), args);
  return exit_code::ok;
}

struct ValidateArgs {
  std::string file;
};

int validate_command(const ValidateArgs& args) {
  const sweep::Plan plan = sweep::load_plan(args.file);
  std::printf("%s: valid, %zu tasks (%zu outside the stability region)\n", args.file.c_str(),
              plan.tasks.size(), plan.unstable_tasks.size());
  return exit_code::ok;
}

const CommandRegistration kPlan(10, [](CLI::App& app, int& exit_code) {
  const auto [plan, args] = add_file_command(
      app, exit_code, "plan",
      "Show a sweep's task count per method and family, estimated costs and biggest tasks",
      "sweep file (YAML)", plan_command);
  plan->add_option("--top", args->top, "how many of the biggest tasks to list")
      ->capture_default_str();
  plan->add_flag("--tasks", args->all_tasks, "also list every task with its estimated cost");
  plan->add_flag("--json", args->json, "print the summary as JSON");

  add_file_command(app, exit_code, "validate",
                   "Check a sweep file (keys, types, values, stability); exit 0 if it is valid",
                   "sweep file (YAML)", validate_command);
});

}  // namespace
}  // namespace qsweep::cli
