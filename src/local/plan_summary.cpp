#include "qsweep/local/plan_summary.hpp"

#include <algorithm>

#include "qsweep/local/cell_json.hpp"
#include "qsweep/sweep/columns.hpp"
#include "qsweep/sweep/execute.hpp"

namespace qsweep::local {
namespace {

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

}  // namespace

PlanCounts count_plan(const sweep::Plan& plan) {
  PlanCounts counts;
  std::vector<GroupCount> of_kind(plan.tasks.kinds().size());
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) {
    const sweep::TaskEstimate& e = plan.tasks.estimate(id);
    GroupCount& g = of_kind[e.kind];
    ++g.tasks;
    g.seconds += e.cost;
    g.memory = std::max(g.memory, double{e.memory});
    counts.total_seconds += e.cost;
    counts.largest_memory = std::max(counts.largest_memory, double{e.memory});
  }
  counts.unstable.assign(plan.tasks.size(), false);
  for (auto id : plan.unstable_tasks) {
    counts.unstable[id] = true;
    ++of_kind[plan.tasks.estimate(id).kind].unstable;
  }
  for (std::size_t k = 0; k < of_kind.size(); ++k) {
    const sweep::TaskKind& kind = plan.tasks.kinds()[k];
    counts.groups[{static_cast<int>(kind.method), kind.category}] = of_kind[k];
  }
  return counts;
}

std::vector<sweep::Task> biggest_tasks(const sweep::Plan& plan, std::size_t count) {
  return largest(plan, count, [](const sweep::TaskEstimate& e) { return e.cost; });
}

std::vector<sweep::Task> most_memory_tasks(const sweep::Plan& plan, std::size_t count) {
  return largest(plan, count, [](const sweep::TaskEstimate& e) { return e.memory; });
}

nlohmann::ordered_json plan_json(const sweep::Plan& plan, const sweep::MemoryLimit& limit,
                                 std::size_t top, bool all_tasks) {
  const PlanCounts counts = count_plan(plan);
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
  out["total_cost_seconds"] = counts.total_seconds;
  out["max_memory_bytes"] = counts.largest_memory;
  out["max_task_memory_bytes"] = limit.bytes;
  out["baseline_memory_bytes"] = limit.baseline_bytes;
  out["refinements"] = nlohmann::ordered_json::array();
  for (const sweep::Refinement& r : plan.refinements)
    out["refinements"].push_back(refinement_json(r));
  out["groups"] = nlohmann::ordered_json::array();
  for (const auto& [key, g] : counts.groups)
    out["groups"].push_back(
        {{"method", std::string(qsweep::name_of(static_cast<sweep::Method>(key.first)))},
         {"kind", key.second},
         {"tasks", g.tasks},
         {"unstable_tasks", g.unstable},
         {"cost_seconds", g.seconds},
         {"max_memory_bytes", g.memory}});
  out["biggest"] = nlohmann::ordered_json::array();
  for (const auto& task : biggest_tasks(plan, top)) out["biggest"].push_back(task_json(task));
  out["most_memory"] = nlohmann::ordered_json::array();
  for (const auto& task : most_memory_tasks(plan, top))
    out["most_memory"].push_back(task_json(task));
  if (all_tasks) {
    out["task_list"] = nlohmann::ordered_json::array();
    for (const auto& task : plan.tasks)
      out["task_list"].push_back({{"id", task.id},
                                  {"task", sweep::describe(task)},
                                  {"unstable", static_cast<bool>(counts.unstable[task.id])},
                                  {"cost_seconds", task.cost},
                                  {"memory_bytes", task.memory},
                                  {"parameters", parameters_json(task)}});
  }
  return out;
}

}  // namespace qsweep::local
