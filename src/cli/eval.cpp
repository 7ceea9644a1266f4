// `qsweep eval`: one task given by flags named like the keys of a sweep block, validated by the
// same code, run in-process, printed as the columns of its results group (table or JSON).
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "memory_option.hpp"
#include "qsweep/common/exit_codes.hpp"
#include "qsweep/local/cell_json.hpp"
#include "qsweep/local/evaluate.hpp"
#include "qsweep/sweep/columns.hpp"
#include "qsweep/sweep/execute.hpp"

namespace qsweep::cli {
namespace {

struct EvalArgs {
  std::vector<std::pair<std::string, CLI::Option*>> keys;  // flag name -> option
  std::vector<std::string> values;                         // storage, one per key
  bool json = false;
  std::string max_task_memory;
};

std::string mask_text(std::int64_t mask) {
  std::string s = "{";
  for (int n = 0; n < 64; ++n) {
    if (((static_cast<std::uint64_t>(mask) >> n) & 1U) == 0) continue;
    if (s.size() > 1) s += ',';
    s += std::to_string(n + 1);
  }
  s += '}';
  return s;
}

// The table shows what applies: NaN, -1 and empty cells are left out.
std::string table_text(const ColumnSpec& spec, const CellValue& cell) {
  constexpr std::size_t kShown = 12;
  const auto list = [](std::size_t size, const auto& text_of) -> std::string {
    if (size == 0) return "";
    std::string s = "[";
    for (std::size_t i = 0; i < size && i < kShown; ++i) {
      if (i) s += ", ";
      s += text_of(i);
    }
    if (size > kShown) s += fmt::format(", ... ({} values; --json has all)", size);
    s += ']';
    return s;
  };
  return std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, double>) {
          return std::isnan(v) ? "" : fmt::format("{:.10g}", v);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return v == -1 ? "" : std::to_string(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else if constexpr (std::is_same_v<T, std::uint64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, Repeated>) {
          return list(v.count, [&v](std::size_t) { return fmt::format("{:.6g}", v.value); });
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          return list(v.size(), [&v](std::size_t i) { return fmt::format("{:.6g}", v[i]); });
        } else {
          return list(v.size(), [&](std::size_t i) {
            return spec.name == "type_servers" ? mask_text(v[i]) : std::to_string(v[i]);
          });
        }
      },
      cell);
}

// One key per line, each value compact: a per-server column of N = 1e4 is one line, not 1e4, and
// the output stays valid JSON with every value.
void print_one_key_per_line(const nlohmann::ordered_json& object) {
  const auto dump = [](const nlohmann::ordered_json& value) {
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  std::printf("{");
  const char* separator = "\n";
  for (const auto& [key, value] : object.items()) {
    std::printf("%s  %s: %s", separator, dump(key).c_str(), dump(value).c_str());
    separator = ",\n";
  }
  std::printf("\n}\n");
}

void print(const sweep::Task& task, const local::Evaluation& evaluation, bool json) {
  if (json) {
    nlohmann::ordered_json out;
    for (const auto& [name, cell] : local::result_fields(task, evaluation))
      out[name] = local::cell_json(cell);
    print_one_key_per_line(out);
    return;
  }
  const sweep::TaskOutcome& outcome = evaluation.outcome;
  const local::Memory& memory = evaluation.memory;
  const auto& columns = sweep::group_columns(task.method());
  const Row row = sweep::make_row(task, outcome);
  std::vector<std::pair<std::string, std::string>> lines = {
      {"task", sweep::describe(task)}, {"status", std::string(qsweep::name_of(outcome.status))}};
  if (!outcome.error.empty()) lines.emplace_back("error", outcome.error);
  lines.emplace_back("wall_seconds", fmt::format("{:.3g}", outcome.wall_seconds));
  lines.emplace_back(
      "memory", fmt::format("estimated {} beyond the process's {}; measured peak "
                            "of the process {}",
                            sweep::memory_text(memory.estimated),
                            sweep::memory_text(memory.baseline), sweep::memory_text(memory.peak)));
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == "task_id") continue;
    std::string text = table_text(columns[i], row.cells[i]);
    if (text.empty()) continue;
    // The model's unit (jobs, time, ...) rather than the file's "1" (docs/results-layout.md).
    const std::string& unit =
        columns[i].model_units.empty() ? columns[i].units : columns[i].model_units;
    if (!unit.empty() && unit != "1") text += "  " + unit;
    lines.emplace_back(columns[i].name, std::move(text));
  }
  std::size_t width = 0;
  for (const auto& line : lines) width = std::max(width, line.first.size());
  for (const auto& [name, text] : lines)
    std::printf("%-*s  %s\n", static_cast<int>(width), name.c_str(), text.c_str());
}

const CommandRegistration kEval(20, [](CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "eval",
      "Evaluate one point: the flags are the keys of a sweep block (docs/sweep-format.md), each "
      "with one value in YAML syntax, e.g. qsweep eval --family ring --N 8 --lambda 0.9 --qmax 20");
  auto args = std::make_shared<EvalArgs>();
  const auto keys = sweep::block_keys();
  args->values.resize(keys.size() + 2);
  std::size_t slot = 0;
  auto add = [&](const std::string& name, const std::string& value, const std::string& help,
                 const std::string& group) {
    CLI::Option* option = cmd->add_option("--" + name, args->values[slot++], help);
    option->group(group)->type_name(value);
    args->keys.emplace_back(name, option);
  };
  std::string method_help, seeded;
  for (const sweep::MethodInfo& m : sweep::methods()) {
    method_help += fmt::format("{}{}{}: {}", method_help.empty() ? "" : "; ", name_of(m.method),
                               m.method == sweep::Method{} ? " (default)" : "", m.description);
    if (m.needs_seed) seeded += (seeded.empty() ? "" : ", ") + std::string(name_of(m.method));
  }
  add("method", "NAME", method_help, "Task");
  add("seed", "INT",
      fmt::format("sweep seed ({}): part of the task's key, by which its random streams are keyed "
                  "(a sweep's task of the same parameters and seed gives the same numbers)",
                  seeded),
      "Task");
  for (const auto& key : keys)
    add(key.name, key.value, key.help, "Keys of " + key.methods + " blocks");
  cmd->add_flag("--json", args->json, "print the result as JSON (keys: the result columns)");
  add_memory_option(cmd, "--max-task-memory", args->max_task_memory,
                    "refuse the task if its estimated peak memory, with what this process holds, "
                    "exceeds SIZE (4G, 512M; default: this machine's memory)");
  cmd->footer(
      "Values are YAML: a LIST is [a, b, ...], a LOAD a number or {heavy_traffic: k}. Exit codes: "
      "0 done, 2 bad input (the message names the flag), 3 the task failed or is unstable, 1 "
      "runtime error.");
  cmd->callback([args, &exit_code] {
    std::vector<sweep::Flag> flags;
    for (std::size_t i = 0; i < args->keys.size(); ++i)
      if (args->keys[i].second->count() > 0)
        flags.push_back({args->keys[i].first, args->values[i]});
    // InputError (exit code bad_input): bad flags, a task that spans ranks or does not fit.
    const local::Prepared prepared = local::prepare(flags, args->max_task_memory);
    const local::Evaluation evaluation = local::run(prepared);
    const sweep::TaskOutcome& outcome = evaluation.outcome;
    print(prepared.task, evaluation, args->json);
    if (!outcome.warning.empty())
      std::fprintf(stderr, "qsweep: warning: %s\n", outcome.warning.c_str());
    if (outcome.status != TaskStatus::done) {
      std::fprintf(stderr, "qsweep: task %s: %s\n",
                   std::string(qsweep::name_of(outcome.status)).c_str(), outcome.error.c_str());
      exit_code = exit_code::tasks_failed;
    }
  });
});

}  // namespace
}  // namespace qsweep::cli
