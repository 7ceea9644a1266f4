// qsweep status OUT.h5 and qsweep export OUT.h5 --group G [--csv FILE]: reading a results file
// (serially; safe while a job is still writing it). See docs/running.md.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>

#include "command.hpp"
#include "qsweep/common/exit_codes.hpp"
#include "qsweep/store/results_reader.hpp"
#include "qsweep/store/writer_lock.hpp"

namespace qsweep::cli {
namespace {

// --- status -----------------------------------------------------------------------------------

struct StatusArgs {
  std::string file;
  std::size_t limit = 20;
  bool yaml = false;
};

void print_problems(const store::ResultsReader& reader, sweep::TaskStatus status,
                    std::uint64_t count, std::size_t limit) {
  if (count == 0) return;
  fmt::print("\n{} ({}{}):\n", sweep::to_string(status), count,
             count > limit ? fmt::format(", first {}", limit) : "");
  for (const store::TaskProblem& problem : reader.problems(status, limit)) {
    fmt::print("  task {} ({}): {}\n", problem.id, problem.method, problem.error);
  }
}

int status_command(const StatusArgs& args) {
  const store::ResultsReader reader(args.file);
  if (args.yaml) {
    std::fputs(reader.attribute("sweep_yaml").c_str(), stdout);
    return exit_code::ok;
  }
  fmt::print("file:     {} ({} v{})\n", args.file, reader.attribute("format"),
             reader.attribute("format_version"));
  fmt::print("sweep:    {} from {} (sha256 {})\n", reader.attribute("sweep_name"),
             reader.attribute("sweep_source"), reader.attribute("sweep_sha256").substr(0, 16));
  fmt::print("plan:     {} tasks, hash {}\n", reader.task_count(),
             reader.attribute("plan_hash").substr(0, 16));
  fmt::print("created:  {} on {} by qsweep {} (git {}), {} MPI ranks\n",
             reader.attribute("created"), reader.attribute("hostname"),
             reader.attribute("qsweep_version"), reader.attribute("git_commit"),
             reader.attribute("mpi_ranks"));
  fmt::print("command:  {}\n", reader.attribute("command_line"));
  if (const std::string holder = store::WriterLock::holder(args.file); !holder.empty()) {
    fmt::print("writing:  {}\n", holder);
  }
  fmt::print("\n");

  const std::vector<sweep::TaskStatus> statuses = reader.statuses();
  const std::vector<std::string> methods = reader.methods();
  std::map<std::string, std::vector<sweep::TaskStatus>> by_method;
  for (std::size_t id = 0; id < statuses.size(); ++id)
    by_method[methods[id]].push_back(statuses[id]);
  fmt::print("{:<10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "method", "tasks", "done", "failed",
             "unstable", "pending");
  auto row = [](const std::string& name, const store::StatusCounts& counts) {
    fmt::print("{:<10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", name, counts.total(), counts.done,
               counts.failed, counts.unstable, counts.pending);
  };
  for (const std::string& method : reader.method_groups()) {
    row(method, store::count_statuses(by_method[method]));
  }
  const store::StatusCounts all = store::count_statuses(statuses);
  row("all", all);

  print_problems(reader, sweep::TaskStatus::failed, all.failed, args.limit);
  print_problems(reader, sweep::TaskStatus::unstable, all.unstable, args.limit);
  std::uint64_t warned = 0;
  const std::vector<store::TaskProblem> warnings = reader.warnings(args.limit, warned);
  if (warned > 0) {
    fmt::print("\nwarnings ({}{}):\n", warned,
               warned > args.limit ? fmt::format(", first {}", args.limit) : "");
    for (const store::TaskProblem& problem : warnings) {
      fmt::print("  task {} ({}): {}\n", problem.id, problem.method, problem.error);
    }
  }
  if (all.pending > 0) return exit_code::incomplete;
  if (all.failed > 0) return exit_code::tasks_failed;
  return exit_code::ok;
}

const CommandRegistration status_registration(40, [](CLI::App& app, int& exit_code) {
  const auto [command, args] = add_file_command(
      app, exit_code, "status",
      "Summarise a results file: provenance, tasks by status, failures with messages",
      "results file (HDF5)", status_command);
  command->add_option("--limit", args->limit, "failed / unstable tasks listed at most")
      ->capture_default_str();
  command->add_flag("--yaml", args->yaml, "print the sweep file stored in the results and stop");
  command->footer(
      "Exit codes: 0 every task done or unstable, 3 some failed (none pending), 4 some pending "
      "(resume the run), 2 not a results file.");
});

// --- export -----------------------------------------------------------------------------------

struct ExportArgs {
  std::string file;
  std::string group;
  std::string csv;
};

// RFC 4180 quoting where needed.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos && !text.empty() && text.front() != ' ' &&
      text.back() != ' ') {
    return text;
  }
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string csv_cell(const store::TableColumn& column, std::size_t row) {
  return std::visit(
      [row](const auto& values) -> std::string {
        using T = typename std::decay_t<decltype(values)>::value_type;
        if constexpr (std::is_same_v<T, double>) {
          // Shortest text that reads back to the same double; NaN (not applicable) is empty.
          return std::isnan(values[row]) ? std::string() : fmt::format("{}", values[row]);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return csv_field(values[row]);
        } else {
          return fmt::format("{}", values[row]);
        }
      },
      column.values);
}

// Rows read and written per step: memory stays bounded (about 1 MB for /tasks, whose error
// text is 256 bytes a row) whatever the size of the group.
constexpr std::uint64_t kExportChunkRows = 4096;

void write_csv(const store::ResultsReader& reader, const std::string& group, std::ostream& out) {
  std::string line;
  for (std::uint64_t first = 0;; first += kExportChunkRows) {
    const std::vector<store::TableColumn> table = reader.read_table(group, first, kExportChunkRows);
    std::size_t rows = 0;
    for (std::size_t c = 0; c < table.size(); ++c) {
      if (first == 0) out << (c > 0 ? "," : "") << csv_field(table[c].name);
      rows = std::visit([](const auto& values) { return values.size(); }, table[c].values);
    }
    if (first == 0) out << '\n';
    for (std::size_t r = 0; r < rows; ++r) {
      line.clear();
      for (std::size_t c = 0; c < table.size(); ++c) {
        if (c > 0) line += ',';
        line += csv_cell(table[c], r);
      }
      line += '\n';
      out << line;
    }
    if (rows < kExportChunkRows) return;
  }
}

int export_command(const ExportArgs& args) {
  const store::ResultsReader reader(args.file);
  if (args.csv.empty() || args.csv == "-") {
    write_csv(reader, args.group, std::cout);
    std::cout.flush();
    if (!std::cout) throw Error("cannot write the CSV to standard output");
    return exit_code::ok;
  }
  std::ofstream out(args.csv, std::ios::binary);
  if (!out) throw Error("cannot create " + args.csv);
  write_csv(reader, args.group, out);
  out.close();
  if (!out) throw Error("cannot write " + args.csv);
  return exit_code::ok;
}

const CommandRegistration export_registration(41, [](CLI::App& app, int& exit_code) {
  const auto [command, args] = add_file_command(
      app, exit_code, "export",
      "Write one group of a results file as CSV: one row per task, parameters and scalar results "
      "(distributions and ragged per-type columns stay in the HDF5 file)",
      "results file (HDF5)", export_command);
  command->add_option("--group", args->group, "exact, simulate, ldp or tasks")->required();
  command->add_option("--csv", args->csv, "output file (default: standard output)");
  command->footer(
      "Empty fields are NaN (not applicable or not computed). Rows of tasks that are "
      "not done have a status other than done.");
});

}  // namespace
}  // namespace qsweep::cli
