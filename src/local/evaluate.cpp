#include "qsweep/local/evaluate.hpp"

#include <optional>

#include "qsweep/common/error.hpp"
#include "qsweep/run/memory.hpp"
#include "qsweep/sweep/columns.hpp"

namespace qsweep::local {

sweep::MemoryLimit memory_limit(const std::string& text, const std::string& option) {
  sweep::MemoryLimit limit;
  limit.baseline_bytes = run::resident_bytes();
  if (!text.empty()) {
    limit.bytes = sweep::parse_memory_size(text, option);
    limit.source = option + " " + sweep::memory_text(limit.bytes);
    return limit;
  }
  const run::MachineMemory machine = run::machine_memory();
  limit.bytes = machine.bytes;
  std::string source = "this machine's memory (" + machine.source + ")";
  if (const std::optional<run::MachineMemory> address = run::address_space_limit();
      address && address->bytes < limit.bytes) {
    limit.bytes = address->bytes;
    source = address->source;
  }
  limit.source = "the default " + option + " " + sweep::memory_text(limit.bytes) + ", " + source;
  return limit;
}

Prepared prepare(const std::vector<sweep::Flag>& flags, const std::string& max_task_memory) {
  Prepared prepared{sweep::plan_from_flags(flags), {}, {}};
  prepared.task = prepared.plan.tasks.front();
  if (prepared.task.ranks != 1)
    throw InputError(
        "--ranks: qsweep eval runs a task in this one process; tasks that span "
        "ranks run with `qsweep run` under mpirun (docs/running.md, \"Tasks that "
        "span ranks\"); expected --ranks 1 or no --ranks");
  prepared.limit = memory_limit(max_task_memory);
  sweep::check_task_memory(prepared.plan, prepared.limit);
  return prepared;
}

Evaluation run(const Prepared& prepared) {
  Evaluation evaluation{sweep::execute(prepared.task), {}};
  evaluation.memory = {prepared.task.memory, prepared.limit.baseline_bytes,
                       run::peak_resident_bytes()};
  return evaluation;
}

std::vector<std::pair<std::string, CellValue>> result_fields(const sweep::Task& task,
                                                             const Evaluation& evaluation) {
  const sweep::TaskOutcome& outcome = evaluation.outcome;
  std::vector<std::pair<std::string, CellValue>> fields = {
      {"method", std::string(name_of(task.method()))},
      {"status", std::string(name_of(outcome.status))},
      {"error", outcome.error},
      {"warning", outcome.warning},
      {"wall_seconds", outcome.wall_seconds},
      {"estimated_memory_bytes", evaluation.memory.estimated},
      {"baseline_memory_bytes", evaluation.memory.baseline},
      {"peak_memory_bytes", evaluation.memory.peak}};
  const auto& columns = sweep::group_columns(task.method());
  Row row = sweep::make_row(task, outcome);
  for (std::size_t i = 0; i < columns.size(); ++i)
    fields.emplace_back(columns[i].name, std::move(row.cells[i]));
  return fields;
}

}  // namespace qsweep::local
