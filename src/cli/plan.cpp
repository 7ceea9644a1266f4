// `qsweep plan FILE` (task counts and estimated costs, no MPI) and `qsweep validate FILE`.
// Both only read the sweep file.
#include "qsweep/sweep/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cell_json.hpp"
#include "command.hpp"
#include "memory_option.hpp"
#include "qsweep/common/exit_codes.hpp"
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

struct Group {
  std::size_t tasks = 0, unstable = 0;
  double seconds = 0.0;
  double memory = 0.0;  // the largest task's
};

struct PlanArgs {
  std::string file;
  std::size_t top = 5;
  bool all_tasks = false;
  bool json = false;
  std::string max_task_memory;
};

// The `count` tasks with the largest `key` of their estimates, largest first.
template <class Key>
std::vector<sweep::Task> largest(const sweep::Plan& plan, std::size_t count, Key key) {
  std::vector<std::uint64_t> ids(plan.tasks.size());
  for (std::uint64_t id = 0; id < ids.size(); ++id) ids[id] = id;
  const std::size_t top = std::min<std::size_t>(count, ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(top), ids.end(),
                    [&](std::uint64_t a, std::uint64_t b) {
                      return key(plan.tasks.estimate(a)) > key(plan.tasks.estimate(b));
                    });
  std::vector<sweep::Task> tasks;
  for (std::size_t i = 0; i < top; ++i) tasks.push_back(plan.tasks[ids[i]]);
  return tasks;
}

nlohmann::ordered_json task_json(const sweep::Task& task) {
  const sweep::CostEstimate estimate = sweep::estimate_cost(task);
  return {{"id", task.id},
          {"task", sweep::describe(task)},
          {"cost_seconds", task.cost},
          {"estimate", estimate.formula},
          {"memory_bytes", task.memory},
          {"memory_estimate", estimate.memory.formula}};
}

// The task's parameter columns as its results row will hold them (exact doubles: JSON numbers
// read back to the same value).
nlohmann::ordered_json parameters_json(const sweep::Task& task) {
  const auto& columns = sweep::group_columns(task.method());
  const Row row = sweep::make_row(task, sweep::TaskOutcome{});
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i].parameter && columns[i].name != "task_id")
      out[columns[i].name] = cell_json(row.cells[i]);
  return out;
}

std::string criterion_text(const sweep::Refinement& r) {
  if (r.spec.criterion == refine::Criterion::crossing)
    return fmt::format("where {} crosses {}, bracketed to {} in {}", r.quantity, r.spec.crossing,
                       r.spec.tolerance, r.axis);
  return fmt::format("where interpolating {} errs by more than {} (relative)", r.quantity,
                     r.spec.tolerance);
}

nlohmann::ordered_json refinement_json(const sweep::Refinement& r) {
  nlohmann::ordered_json out = {
      {"block", r.block},
      {"axis", r.axis},
      {"quantity", r.quantity},
      {"criterion",
       std::string(r.spec.criterion == refine::Criterion::crossing ? "crossing" : "interpolation")},
      {"tolerance", r.spec.tolerance}};
  if (r.spec.criterion == refine::Criterion::crossing) out["crossing"] = r.spec.crossing;
  out["integer_axis"] = r.spec.integer_axis;
  out["curves"] = r.curves;
  out["initial_points"] = r.initial_points;
  out["max_points"] = r.spec.max_points;
  out["max_tasks"] = r.most_tasks();
  return out;
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
  // Counted by the kinds the plan keeps per task, without making the tasks.
  double total = 0.0, largest_memory = 0.0;
  std::vector<Group> of_kind(plan.tasks.kinds().size());
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) {
    const sweep::TaskEstimate& e = plan.tasks.estimate(id);
    Group& g = of_kind[e.kind];
    ++g.tasks;
    g.seconds += e.cost;
    g.memory = std::max(g.memory, e.memory);
    total += e.cost;
    largest_memory = std::max(largest_memory, e.memory);
  }
  std::vector<bool> unstable(plan.tasks.size(), false);
  for (auto id : plan.unstable_tasks) {
    unstable[id] = true;
    ++of_kind[plan.tasks.estimate(id).kind].unstable;
  }
  std::map<std::pair<int, std::string>, Group> groups;
  for (std::size_t k = 0; k < of_kind.size(); ++k) {
    const sweep::TaskKind& kind = plan.tasks.kinds()[k];
    groups[{static_cast<int>(kind.method), kind.category}] = of_kind[k];
  }
  const auto biggest = largest(plan, args.top, [](const sweep::TaskEstimate& e) { return e.cost; });
  const auto most_memory =
      largest(plan, args.top, [](const sweep::TaskEstimate& e) { return e.memory; });

  if (args.json) {
    nlohmann::ordered_json out;
    out["name"] = plan.name;
    out["source"] = plan.source;
    out["tasks"] = plan.tasks.size();
    out["unstable_tasks"] = plan.unstable_tasks.size();
    out["duplicate_tasks"] = plan.duplicates;
    out["plan_hash"] = plan.hash;
    out["sweep_sha256"] = plan.yaml_sha256;
    out["seed"] = plan.seed;
    out["output"] = plan.output;
    out["total_cost_seconds"] = total;
    out["max_memory_bytes"] = largest_memory;
    out["max_task_memory_bytes"] = limit.bytes;
    out["baseline_memory_bytes"] = limit.baseline_bytes;
    out["refinements"] = nlohmann::ordered_json::array();
    for (const sweep::Refinement& r : plan.refinements)
      out["refinements"].push_back(refinement_json(r));
    out["groups"] = nlohmann::ordered_json::array();
    for (const auto& [key, g] : groups)
      out["groups"].push_back(
          {{"method", std::string(qsweep::name_of(static_cast<sweep::Method>(key.first)))},
           {"kind", key.second},
           {"tasks", g.tasks},
           {"unstable_tasks", g.unstable},
           {"cost_seconds", g.seconds},
           {"max_memory_bytes", g.memory}});
    out["biggest"] = nlohmann::ordered_json::array();
    for (const auto& task : biggest) out["biggest"].push_back(task_json(task));
    out["most_memory"] = nlohmann::ordered_json::array();
    for (const auto& task : most_memory) out["most_memory"].push_back(task_json(task));
    if (args.all_tasks) {
      out["task_list"] = nlohmann::ordered_json::array();
      for (const auto& task : plan.tasks)
        out["task_list"].push_back({{"id", task.id},
                                    {"task", sweep::describe(task)},
                                    {"unstable", static_cast<bool>(unstable[task.id])},
                                    {"cost_seconds", task.cost},
                                    {"memory_bytes", task.memory},
                                    {"parameters", parameters_json(task)}});
    }
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
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
  print_tasks("biggest tasks", biggest);
  print_tasks("most memory", most_memory);
}

int plan_command(const PlanArgs& args) {
  const sweep::Plan plan = sweep::load_plan(args.file);
  const sweep::MemoryLimit limit = local_memory_limit(args.max_task_memory);
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
  sweep::check_task_memory(plan, local_memory_limit(args.max_task_memory));
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
