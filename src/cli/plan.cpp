// `qsweep plan FILE` (task counts and estimated costs, no MPI) and `qsweep validate FILE`.
// Both only read the sweep file.
#include "qsweep/sweep/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "memory_option.hpp"
#include "qsweep/common/exit_codes.hpp"
#include "qsweep/local/evaluate.hpp"
#include "qsweep/local/plan_summary.hpp"
#include "qsweep/sweep/columns.hpp"
#include "qsweep/sweep/cost.hpp"
#include "qsweep/sweep/execute.hpp"

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

struct PlanArgs {
  std::string file;
  std::size_t top = 5;
  bool all_tasks = false;
  bool json = false;
  std::string max_task_memory;
};

std::string criterion_text(const sweep::Refinement& r) {
  if (r.spec.criterion == refine::Criterion::crossing)
    return fmt::format("where {} crosses {}, bracketed to {} in {}", r.quantity, r.spec.crossing,
                       r.spec.tolerance, r.axis);
  return fmt::format("where interpolating {} errs by more than {} (relative)", r.quantity,
                     r.spec.tolerance);
}

// The blocks that refine: their initial points (the plan's tasks) and their budget.
void print_refinements(const sweep::Plan& plan) {
  if (plan.refinements.empty()) return;
  std::printf(
      "\nrefinement (docs/sweep-format.md, \"Refinement\"; the tasks above are the first "
      "round):\n");
  for (const sweep::Refinement& r : plan.refinements)
    std::printf(
        "  block %d: %s over %s, %s; %llu curve%s of %llu initial points, at most %llu points "
        "each (max_points): at most %llu tasks\n",
        r.block, r.quantity.c_str(), r.axis.c_str(), criterion_text(r).c_str(),
        static_cast<unsigned long long>(r.curves), r.curves == 1 ? "" : "s",
        static_cast<unsigned long long>(r.initial_points),
        static_cast<unsigned long long>(r.spec.max_points),
        static_cast<unsigned long long>(r.most_tasks()));
}

void print_tasks(const char* title, const std::vector<sweep::Task>& tasks) {
  if (tasks.empty()) return;
  std::printf("\n%s:\n", title);
  for (const sweep::Task& task : tasks) {
    const sweep::CostEstimate estimate = sweep::estimate_cost(task);
    std::printf("  %8llu %12s %11s  %s  [%s; %s]\n", static_cast<unsigned long long>(task.id),
                duration_text(task.cost).c_str(), sweep::memory_text(task.memory).c_str(),
                sweep::describe(task).c_str(), estimate.formula.c_str(),
                estimate.memory.formula.c_str());
  }
}

void print_plan(const sweep::Plan& plan, const PlanArgs& args, const sweep::MemoryLimit& limit) {
  if (args.json) {
    const auto out = local::plan_json(plan, limit, args.top, args.all_tasks);
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  const local::PlanCounts counts = local::count_plan(plan);
  const auto& groups = counts.groups;
  const auto& unstable = counts.unstable;
  const double total = counts.total_seconds, largest_memory = counts.largest_memory;
  std::printf("sweep %s (%s): %zu tasks", plan.name.c_str(), plan.source.c_str(),
              plan.tasks.size());
  if (!plan.unstable_tasks.empty())
    std::printf(", %zu outside the stability region (stored as unstable, not run)",
                plan.unstable_tasks.size());
  if (plan.duplicates > 0)
    std::printf(", %llu more left out as duplicates of tasks of earlier blocks (one task per key)",
                static_cast<unsigned long long>(plan.duplicates));
  std::printf("\nplan hash %s\n", plan.hash.c_str());
  if (!plan.output.empty()) std::printf("output %s\n", plan.output.c_str());
  std::printf("\n%-9s %-28s %9s %9s %14s %11s\n", "method", "kind", "tasks", "unstable",
              "est. cost", "max memory");
  for (const auto& [key, g] : groups)
    std::printf("%-9s %-28s %9zu %9zu %14s %11s\n",
                std::string(qsweep::name_of(static_cast<sweep::Method>(key.first))).c_str(),
                key.second.c_str(), g.tasks, g.unstable, duration_text(g.seconds).c_str(),
                sweep::memory_text(g.memory).c_str());
  std::printf("%-38s %9zu %9zu %14s %11s\n", "total", plan.tasks.size(), plan.unstable_tasks.size(),
              duration_text(total).c_str(), sweep::memory_text(largest_memory).c_str());
  std::printf(
      "(costs: rough single-core estimates, docs/sweep-format.md; memory: the largest "
      "estimated peak a task adds to its process, docs/running.md \"Memory\")\n");
  std::uint64_t spanning = 0;
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id)
    spanning += plan.tasks.estimate(id).ranks != 1 ? 1 : 0;
  std::printf("every task%s fits %s with the %s this process holds\n",
              spanning > 0 ? " on one rank" : "", limit.source.c_str(),
              sweep::memory_text(limit.baseline_bytes).c_str());
  if (spanning > 0) {
    std::printf(
        "%llu tasks with `ranks` other than 1: `qsweep run` chooses their ranks and checks "
        "each rank's share (docs/running.md, \"Tasks that span ranks\")\n",
        static_cast<unsigned long long>(spanning));
  }
  print_refinements(plan);
  if (args.all_tasks) {
    std::printf("\ntasks:\n");
    for (const auto& task : plan.tasks)
      std::printf("  %8llu %12s %11s  %s%s\n", static_cast<unsigned long long>(task.id),
                  duration_text(task.cost).c_str(), sweep::memory_text(task.memory).c_str(),
                  sweep::describe(task).c_str(), unstable[task.id] ? "  (unstable)" : "");
  }
  print_tasks("biggest tasks", local::biggest_tasks(plan, args.top));
  print_tasks("most memory", local::most_memory_tasks(plan, args.top));
}

int plan_command(const PlanArgs& args) {
  const sweep::Plan plan = sweep::load_plan(args.file);
  const sweep::MemoryLimit limit = local::memory_limit(args.max_task_memory);
  sweep::check_task_memory(plan, limit);
  print_plan(plan, args, limit);
  return exit_code::ok;
}

struct ValidateArgs {
  std::string file;
  std::string max_task_memory;
};

int validate_command(const ValidateArgs& args) {
  const sweep::Plan plan = sweep::load_plan(args.file);
  sweep::check_task_memory(plan, local::memory_limit(args.max_task_memory));
  std::printf("%s: valid, %zu tasks (%zu outside the stability region", args.file.c_str(),
              plan.tasks.size(), plan.unstable_tasks.size());
  if (plan.duplicates > 0)
    std::printf("; %llu duplicates of tasks of earlier blocks left out",
                static_cast<unsigned long long>(plan.duplicates));
  std::uint64_t most = 0;
  for (const sweep::Refinement& r : plan.refinements) most += r.most_tasks();
  if (!plan.refinements.empty())
    std::printf("; %zu refining block%s, at most %llu tasks after refinement",
                plan.refinements.size(), plan.refinements.size() == 1 ? "" : "s",
                static_cast<unsigned long long>(most));
  std::printf(")\n");
  return exit_code::ok;
}

const char* const kMaxTaskMemoryHelp =
    "refuse a task whose estimated peak memory, with what this process holds, exceeds SIZE "
    "(4G, 512M; default: this machine's memory; qsweep run's default is a rank's share of its "
    "node)";

const CommandRegistration kPlan(10, [](CLI::App& app, int& exit_code) {
  const auto [plan, args] = add_file_command(
      app, exit_code, "plan",
      "Show a sweep's task count per method and family, estimated costs and biggest tasks",
      "sweep file (YAML)", plan_command);
  plan->add_option("--top", args->top, "how many of the biggest tasks to list")
      ->capture_default_str()
      ->check(non_negative_integer("a number of tasks"));
  plan->add_flag("--tasks", args->all_tasks, "also list every task with its estimated cost");
  plan->add_flag("--json", args->json, "print the summary as JSON");
  add_memory_option(plan, "--max-task-memory", args->max_task_memory, kMaxTaskMemoryHelp);
  plan->footer(
      "Exit codes: 0 the plan is shown, 2 the sweep file is invalid or a task does not fit "
      "--max-task-memory (one located message), 1 runtime error.");

  const auto [validate, validate_args] = add_file_command(
      app, exit_code, "validate",
      "Check a sweep file (keys, types, values, stability, memory); exit 0 if it is valid",
      "sweep file (YAML)", validate_command);
  add_memory_option(validate, "--max-task-memory", validate_args->max_task_memory,
                    kMaxTaskMemoryHelp);
  validate->footer(
      "Exit codes: 0 valid, 2 invalid or a task does not fit --max-task-memory (one located "
      "message), 1 runtime error.");
});

}  // namespace
}  // namespace qsweep::cli
