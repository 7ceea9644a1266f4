// qsweep status OUT.h5 and qsweep export OUT.h5 [--group G] [--csv FILE | --dir DIR]: reading a
// results file (serially; safe while a job is still writing it). See docs/running.md.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "qsweep/common/closest_match.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/common/exit_codes.hpp"
#include "qsweep/common/printable.hpp"
#include "qsweep/store/activity.hpp"
#include "qsweep/store/results_reader.hpp"
#include "qsweep/store/writer_lock.hpp"
#include "qsweep/sweep/plan.hpp"
#include "qsweep/sweep/task.hpp"
#include "qsweep/sweep/thresholds.hpp"

namespace qsweep::cli {
namespace {

// The entries of a results file's `history` attribute, one per line (none in files made before
// it was kept).
std::vector<std::string> history_lines(const std::string& history) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin < history.size()) {
    const std::size_t end = std::min(history.find('\n', begin), history.size());
    if (end > begin) lines.push_back(history.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

// --- status -----------------------------------------------------------------------------------

struct StatusArgs {
  std::string file;
  std::size_t limit = 20;
  bool yaml = false;
  bool json = false;
};

// A refining block of the file's sweep and the tasks the file holds of it.
struct RefinedBlock {
  int block = 0;
  std::string axis, quantity, criterion;  // criterion: interpolation or crossing
  double crossing = 0.0;                  // crossing only
  double tolerance = 0.0;
  std::uint64_t curves = 0, initial_points = 0, max_points = 0;
  std::uint64_t budget = 0;              // curves x max_points
  std::vector<std::uint64_t> per_round;  // its tasks in the file, by round
  std::uint64_t tasks() const {
    std::uint64_t n = 0;
    for (const std::uint64_t k : per_round) n += k;
    return n;
  }
};

// A row of /thresholds, as status shows it.
struct ThresholdRow {
  int block = 0;
  std::string axis, quantity, state, note;
  double crossing = 0.0, threshold = 0.0, lo = 0.0, hi = 0.0;
  bool found = false, converged = false;
  std::int64_t points = 0, round = 0;
};

// What a refining sweep's file says of its refinement (docs/running.md, "qsweep status").
struct RefinementReport {
  int rounds = 0;  // refinement rounds after the sweep's own points (the largest /tasks/round)
  std::vector<RefinedBlock> blocks;  // empty when the stored sweep does not expand here
  // /thresholds (nullopt without the group: no crossing, or no round ended yet)
  std::optional<std::vector<ThresholdRow>> thresholds;
};

// What `status` reports, read once and printed as text or JSON.
struct StatusReport {
  // Method groups present, in the file's order (exact, simulate, ldp).
  std::vector<std::pair<std::string, store::StatusCounts>> by_method;
  store::StatusCounts all;
  std::vector<store::TaskProblem> failed, unstable, warnings;
  std::uint64_t warned = 0;  // tasks with a warning, all of them
  // A refined file: its tasks per refinement round (round 0 first); empty for any other.
  std::vector<std::uint64_t> per_round;
  // A refining sweep's file: its refinements and thresholds (nullopt for any other).
  std::optional<RefinementReport> refinement;
  std::string writer;                       // holder of the writer lock, "" if none
  std::optional<store::Activity> activity;  // what the writer's ranks do, while it holds the lock
  int exit_status = exit_code::ok;          // what `status` exits with
};

// The rows of /thresholds (none without the group).
std::optional<std::vector<ThresholdRow>> read_thresholds(const store::ResultsReader& reader) {
  const std::vector<std::string> derived = reader.derived_groups();
  if (std::find(derived.begin(), derived.end(), sweep::kThresholdsGroup) == derived.end())
    return std::nullopt;
  const std::vector<store::TableColumn> table = reader.read_table(sweep::kThresholdsGroup);
  const auto column = [&](const std::string& name) -> const store::TableColumn& {
    for (const store::TableColumn& c : table)
      if (c.name == name) return c;
    throw InputError(reader.path() + ": damaged structure: /thresholds has no column " + name);
  };
  const auto numbers = [&](const std::string& name) {
    const auto* v = std::get_if<std::vector<double>>(&column(name).values);
    if (!v) throw InputError(reader.path() + ": /thresholds/" + name + " holds no numbers");
    return *v;
  };
  const auto integers = [&](const std::string& name) {
    const auto* v = std::get_if<std::vector<std::int64_t>>(&column(name).values);
    if (!v) throw InputError(reader.path() + ": /thresholds/" + name + " holds no integers");
    return *v;
  };
  const auto texts = [&](const std::string& name) {
    const auto* v = std::get_if<std::vector<std::string>>(&column(name).values);
    if (!v) throw InputError(reader.path() + ": /thresholds/" + name + " holds no text");
    return *v;
  };
  const auto block = integers("block");
  const auto axis = texts("axis"), quantity = texts("quantity"), state = texts("state"),
             note = texts("note");
  const auto crossing = numbers("crossing"), threshold = numbers("threshold"),
             lo = numbers("bracket_lo"), hi = numbers("bracket_hi");
  const auto found = integers("found"), converged = integers("converged"),
             points = integers("points"), round = integers("round");
  std::vector<ThresholdRow> rows(block.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ThresholdRow& r = rows[i];
    r.block = static_cast<int>(block.at(i));
    r.axis = axis.at(i);
    r.quantity = quantity.at(i);
    r.state = state.at(i);
    r.note = note.at(i);
    r.crossing = crossing.at(i);
    r.threshold = threshold.at(i);
    r.lo = lo.at(i);
    r.hi = hi.at(i);
    r.found = found.at(i) == 1;
    r.converged = converged.at(i) == 1;
    r.points = points.at(i);
    r.round = round.at(i);
  }
  return rows;
}

// A refining sweep's refinement: its refining blocks from the stored sweep (expanded only when
// its text names refine:, so that status of a big sweep stays quick), their tasks by round, and
// the thresholds. nullopt for a file of another sweep.
std::optional<RefinementReport> read_refinement(const store::ResultsReader& reader,
                                                const std::vector<std::uint64_t>& per_round) {
  RefinementReport report;
  report.rounds = per_round.empty() ? 0 : static_cast<int>(per_round.size()) - 1;
  report.thresholds = read_thresholds(reader);
  const std::string yaml = reader.attribute("sweep_yaml");
  if (yaml.find("refine") != std::string::npos) {
    try {
      const sweep::Plan plan = sweep::parse_plan(yaml, reader.attribute("sweep_source"));
      if (!plan.refinements.empty()) {
        const std::vector<std::int32_t> blocks = reader.blocks();
        const std::vector<std::int32_t> rounds = reader.rounds();
        for (const sweep::Refinement& r : plan.refinements) {
          RefinedBlock& b = report.blocks.emplace_back();
          b.block = r.block;
          b.axis = r.axis;
          b.quantity = r.quantity;
          const bool crossing = r.spec.criterion == refine::Criterion::crossing;
          b.criterion = crossing ? "crossing" : "interpolation";
          b.crossing = crossing ? r.spec.crossing : std::nan("");
          b.tolerance = r.spec.tolerance;
          b.curves = r.curves;
          b.initial_points = r.initial_points;
          b.max_points = r.spec.max_points;
          b.budget = r.most_tasks();
          for (std::size_t id = 0; id < blocks.size(); ++id) {
            if (blocks[id] != r.block) continue;
            const auto round =
                static_cast<std::size_t>(std::max(id < rounds.size() ? rounds[id] : 0, 0));
            if (round >= b.per_round.size()) b.per_round.resize(round + 1, 0);
            ++b.per_round[round];
          }
        }
      }
    } catch (const InputError&) {
      // A sweep this qsweep does not expand (another version's): the rounds and thresholds only.
    }
  }
  if (report.blocks.empty() && report.rounds == 0 && !report.thresholds) return std::nullopt;
  return report;
}

StatusReport read_report(const store::ResultsReader& reader, std::size_t limit) {
  StatusReport report;
  const std::vector<TaskStatus> statuses = reader.statuses();
  const std::vector<std::string> methods = reader.methods();
  std::map<std::string, std::vector<TaskStatus>> by_method;
  for (std::size_t id = 0; id < statuses.size(); ++id)
    by_method[methods[id]].push_back(statuses[id]);
  for (const std::string& method : reader.method_groups())
    report.by_method.emplace_back(method, store::count_statuses(by_method[method]));
  report.all = store::count_statuses(statuses);
  if (report.all.failed > 0) report.failed = reader.problems(TaskStatus::failed, limit);
  if (report.all.unstable > 0) report.unstable = reader.problems(TaskStatus::unstable, limit);
  report.warnings = reader.warnings(limit, report.warned);
  for (const std::int32_t round : reader.rounds()) {
    const auto r = static_cast<std::size_t>(std::max(round, 0));
    if (r >= report.per_round.size()) report.per_round.resize(r + 1, 0);
    ++report.per_round[r];
  }
  report.refinement = read_refinement(reader, report.per_round);
  if (report.per_round.size() < 2) report.per_round.clear();  // not refined
  report.writer = store::WriterLock::holder(reader.path());
  // Only while the lock is held: a killed run leaves its last activity file behind.
  if (!report.writer.empty()) report.activity = store::read_activity(reader.path());
  if (report.all.pending > 0)
    report.exit_status = exit_code::incomplete;
  else if (report.all.failed > 0)
    report.exit_status = exit_code::tasks_failed;
  return report;
}

// An integer attribute written as text ("3"); null if it does not read as one.
nlohmann::ordered_json integer_json(const std::string& text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return nullptr;
  return value;
}

nlohmann::ordered_json counts_json(const store::StatusCounts& counts) {
  return {{"tasks", counts.total()},
          {"done", counts.done},
          {"failed", counts.failed},
          {"unstable", counts.unstable},
          {"pending", counts.pending}};
}

nlohmann::ordered_json problems_json(const std::vector<store::TaskProblem>& problems) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const store::TaskProblem& problem : problems)
    list.push_back({{"id", problem.id}, {"method", problem.method}, {"message", problem.error}});
  return list;
}

// UTC "2026-12-02T14:03:05Z" of Unix seconds.
std::string iso_time(double unix_seconds) {
  const auto seconds = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
}

nlohmann::ordered_json activity_json(const std::optional<store::Activity>& activity, double now) {
  if (!activity) return nullptr;
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (const store::RankActivity& rank : activity->ranks) {
    ranks.push_back({{"rank", rank.rank},
                     {"tasks", rank.tasks},
                     {"since", rank.tasks.empty() ? nlohmann::ordered_json()
                                                  : nlohmann::ordered_json(iso_time(rank.since))},
                     {"last_heard", iso_time(rank.heard)},
                     {"seconds_since_heard", std::max(0.0, now - rank.heard)}});
  }
  return {{"written", iso_time(activity->written)},
          {"seconds_since_written", std::max(0.0, now - activity->written)},
          {"ranks", ranks}};
}

// A number, or null for NaN (JSON has no NaN).
nlohmann::ordered_json number_json(double value) {
  if (std::isnan(value)) return nullptr;
  return value;
}

nlohmann::ordered_json refinement_json(const std::optional<RefinementReport>& refinement,
                                       std::size_t limit) {
  if (!refinement) return nullptr;
  nlohmann::ordered_json out;
  out["rounds"] = refinement->rounds;
  nlohmann::ordered_json blocks = nlohmann::ordered_json::array();
  for (const RefinedBlock& b : refinement->blocks) {
    blocks.push_back({{"block", b.block},
                      {"axis", b.axis},
                      {"quantity", b.quantity},
                      {"criterion", b.criterion},
                      {"crossing", number_json(b.crossing)},
                      {"tolerance", b.tolerance},
                      {"curves", b.curves},
                      {"initial_points", b.initial_points},
                      {"max_points", b.max_points},
                      {"budget", b.budget},
                      {"tasks", b.tasks()},
                      {"tasks_per_round", b.per_round}});
  }
  out["blocks"] = blocks;
  if (!refinement->thresholds) {
    out["thresholds"] = nullptr;
    return out;
  }
  const std::vector<ThresholdRow>& rows = *refinement->thresholds;
  std::uint64_t found = 0, converged = 0;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const ThresholdRow& r : rows) {
    found += r.found ? 1 : 0;
    converged += r.converged ? 1 : 0;
    if (list.size() >= limit) continue;
    list.push_back(
        {{"block", r.block},
         {"axis", r.axis},
         {"quantity", r.quantity},
         {"crossing", number_json(r.crossing)},
         {"found", r.found},
         {"threshold", number_json(r.threshold)},
         {"bracket", r.found ? nlohmann::ordered_json::array({number_json(r.lo), number_json(r.hi)})
                             : nlohmann::ordered_json()},
         {"converged", r.converged},
         {"state", r.state},
         {"points", r.points},
         {"round", r.round},
         {"note", r.note}});
  }
  out["thresholds"] = {{"rows", rows.size()},
                       {"found", found},
                       {"converged", converged},
                       {"not_found", rows.size() - found},
                       {"list", list}};
  return out;
}

// `status --json`: one object, documented in docs/running.md ("status --json") and described
// by docs/status.schema.json; tests/integration/status_json.sh validates it against the schema.
void print_json(const store::ResultsReader& reader, const StatusReport& report, std::size_t limit) {
  nlohmann::ordered_json out;
  out["schema"] = "qsweep-status-1";
  out["file"] = reader.path();
  out["format"] = {{"name", reader.attribute("format")},
                   {"version", integer_json(reader.attribute("format_version"))}};
  out["sweep"] = {{"name", reader.attribute("sweep_name")},
                  {"source", reader.attribute("sweep_source")},
                  {"sha256", reader.attribute("sweep_sha256")}};
  out["plan"] = {{"tasks", reader.task_count()}, {"hash", reader.attribute("plan_hash")}};
  out["created"] = {{"time", reader.attribute("created")},
                    {"host", reader.attribute("hostname")},
                    {"qsweep_version", reader.attribute("qsweep_version")},
                    {"git_commit", reader.attribute("git_commit")},
                    {"mpi_ranks", integer_json(reader.attribute("mpi_ranks"))},
                    {"command", reader.attribute("command_line")}};
  out["history"] = history_lines(reader.attribute("history"));
  out["writer"] =
      report.writer.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(report.writer);
  out["activity"] = activity_json(report.activity, store::unix_seconds());
  nlohmann::ordered_json counts = nlohmann::ordered_json::object();
  for (const auto& [method, method_counts] : report.by_method)
    counts[method] = counts_json(method_counts);
  counts["all"] = counts_json(report.all);
  out["counts"] = counts;
  out["failed"] = problems_json(report.failed);
  out["unstable"] = problems_json(report.unstable);
  out["warnings"] = problems_json(report.warnings);
  out["warned_tasks"] = report.warned;
  out["refinement"] = refinement_json(report.refinement, limit);
  out["exit_code"] = report.exit_status;
  std::puts(out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

// The running tasks of each rank and when it was last heard from ("running:" lines).
void print_activity(const store::Activity& activity) {
  const double now = store::unix_seconds();
  std::size_t running = 0, busy = 0;
  for (const store::RankActivity& rank : activity.ranks) {
    running += rank.tasks.size();
    busy += rank.tasks.empty() ? 0 : 1;
  }
  fmt::print("running:  {} tasks on {} of {} ranks (as of {:.0f} s ago)\n", running, busy,
             activity.ranks.size(), std::max(0.0, now - activity.written));
  for (const store::RankActivity& rank : activity.ranks) {
    std::string tasks = "idle";
    if (!rank.tasks.empty()) {
      constexpr std::size_t kShown = 8;
      tasks = rank.tasks.size() == 1 ? "task " : "tasks ";
      for (std::size_t i = 0; i < std::min(kShown, rank.tasks.size()); ++i)
        tasks += (i > 0 ? ", " : "") + std::to_string(rank.tasks[i]);
      if (rank.tasks.size() > kShown)
        tasks += fmt::format(" (+{} more)", rank.tasks.size() - kShown);
      tasks += fmt::format(" for {:.0f} s", std::max(0.0, now - rank.since));
    }
    fmt::print("  rank {}: {}; last heard {:.0f} s ago\n", rank.rank, tasks,
               std::max(0.0, now - rank.heard));
  }
}

// "refine:" lines: each refining block's points against its budget, and the thresholds found.
void print_refinement(const RefinementReport& refinement, std::size_t limit) {
  for (const RefinedBlock& b : refinement.blocks) {
    const std::string what =
        b.criterion == "crossing"
            ? fmt::format("{} = {} to {} on {}", b.quantity, b.crossing, b.tolerance, b.axis)
            : fmt::format("{} over {} to {} relative", b.quantity, b.axis, b.tolerance);
    fmt::print("refine:   block {}: {}: {} tasks of {} curves (budget {}: max_points {} each)\n",
               b.block, printable(what), b.tasks(), b.curves, b.budget, b.max_points);
  }
  if (!refinement.thresholds) return;
  const std::vector<ThresholdRow>& rows = *refinement.thresholds;
  std::size_t found = 0, converged = 0;
  for (const ThresholdRow& r : rows) {
    found += r.found ? 1 : 0;
    converged += r.converged ? 1 : 0;
  }
  fmt::print("thresholds: {} found ({} converged), {} curves without a crossing (/thresholds)\n",
             found, converged, rows.size() - found);
  for (std::size_t i = 0; i < rows.size() && i < limit; ++i) {
    const ThresholdRow& r = rows[i];
    if (r.found) {
      fmt::print("  block {}: {} = {} at {} = {} in [{}, {}], {} ({} points, round {})\n", r.block,
                 printable(r.quantity), r.crossing, printable(r.axis), r.threshold, r.lo, r.hi,
                 printable(r.state), r.points, r.round);
    } else {
      fmt::print("  block {}: {} = {} not found: {}\n", r.block, printable(r.quantity), r.crossing,
                 printable(r.note));
    }
  }
  if (rows.size() > limit) fmt::print("  ...\n");
}

void print_problems(TaskStatus status, const std::vector<store::TaskProblem>& problems,
                    std::uint64_t count, std::size_t limit) {
  if (count == 0) return;
  fmt::print("\n{} ({}{}):\n", qsweep::name_of(status), count,
             count > limit ? fmt::format(", first {}", limit) : "");
  for (const store::TaskProblem& problem : problems) {
    fmt::print("  task {} ({}): {}\n", problem.id, printable(problem.method),
               printable(problem.error));
  }
}

int status_command(const StatusArgs& args) {
  const store::ResultsReader reader(args.file);
  if (args.yaml) {
    std::fputs(reader.attribute("sweep_yaml").c_str(), stdout);
    return exit_code::ok;
  }
  const StatusReport report = read_report(reader, args.limit);
  if (args.json) {
    print_json(reader, report, args.limit);
    return report.exit_status;
  }
  // A root attribute as text a terminal shows as it is (a foreign file's may hold control bytes).
  const auto shown = [&reader](const std::string& name, std::size_t length = std::string::npos) {
    return printable(reader.attribute(name).substr(0, length));
  };
  fmt::print("file:     {} ({} v{})\n", printable(args.file), shown("format"),
             shown("format_version"));
  fmt::print("sweep:    {} from {} (sha256 {})\n", shown("sweep_name"), shown("sweep_source"),
             shown("sweep_sha256", 16));
  fmt::print("plan:     {} tasks, hash {}\n", reader.task_count(), shown("plan_hash", 16));
  if (!report.per_round.empty()) {
    fmt::print("rounds:   {} refinement rounds after the sweep's own points; tasks per round: {}\n",
               report.per_round.size() - 1, fmt::join(report.per_round, ", "));
  }
  if (report.refinement) print_refinement(*report.refinement, args.limit);
  fmt::print("created:  {} on {} by qsweep {} (git {}), {} MPI ranks\n", shown("created"),
             shown("hostname"), shown("qsweep_version"), shown("git_commit"), shown("mpi_ranks"));
  fmt::print("command:  {}\n", shown("command_line"));
  // A grown or merged file: the runs and merges it continues, oldest first.
  if (const std::vector<std::string> history = history_lines(reader.attribute("history"));
      history.size() > 1) {
    for (std::size_t i = 0; i < history.size(); ++i)
      fmt::print("{}{}\n", i == 0 ? "history:  " : "          ", printable(history[i]));
  }
  if (!report.writer.empty()) fmt::print("writing:  {}\n", report.writer);
  if (report.activity) print_activity(*report.activity);
  fmt::print("\n");

  fmt::print("{:<10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "method", "tasks", "done", "failed",
             "unstable", "pending");
  auto row = [](const std::string& name, const store::StatusCounts& counts) {
    fmt::print("{:<10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", printable(name), counts.total(),
               counts.done, counts.failed, counts.unstable, counts.pending);
  };
  for (const auto& [method, counts] : report.by_method) row(method, counts);
  row("all", report.all);

  print_problems(TaskStatus::failed, report.failed, report.all.failed, args.limit);
  print_problems(TaskStatus::unstable, report.unstable, report.all.unstable, args.limit);
  if (report.warned > 0) {
    fmt::print("\nwarnings ({}{}):\n", report.warned,
               report.warned > args.limit ? fmt::format(", first {}", args.limit) : "");
    for (const store::TaskProblem& problem : report.warnings) {
      fmt::print("  task {} ({}): {}\n", problem.id, printable(problem.method),
                 printable(problem.error));
    }
  }
  return report.exit_status;
}

const CommandRegistration status_registration(40, [](CLI::App& app, int& exit_code) {
  const auto [command, args] = add_file_command(
      app, exit_code, "status",
      "Summarise a results file: provenance, tasks by status, failures with messages",
      "results file (HDF5)", status_command);
  command->add_option("--limit", args->limit, "failed / unstable tasks listed at most")
      ->capture_default_str()
      ->check(non_negative_integer("a number of tasks"));
  command->add_flag("--yaml", args->yaml, "print the sweep file stored in the results and stop");
  command->add_flag("--json", args->json,
                    "print the summary as one JSON object (docs/running.md, \"status --json\")");
  command->footer(
      "Exit codes: 0 every task done or unstable, 3 some failed (none pending), 4 some pending "
      "(resume the run), 2 not a results file.");
});

// --- export -----------------------------------------------------------------------------------

struct ExportArgs {
  std::string file;
  std::vector<std::string> groups;   // "all": every group of the file
  std::string csv;                   // one group: a file, or standard output
  std::string dir;                   // several groups: DIR/GROUP.csv each
  std::vector<std::string> columns;  // empty: all, in the file's order
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

// The columns of `table` to write, in the order asked for (all if none were named).
std::vector<std::size_t> chosen_columns(const std::vector<store::TableColumn>& table,
                                        const std::vector<std::string>& names,
                                        const std::string& group) {
  std::vector<std::size_t> chosen;
  if (names.empty()) {
    for (std::size_t c = 0; c < table.size(); ++c) chosen.push_back(c);
    return chosen;
  }
  std::vector<std::string> known;
  known.reserve(table.size());
  for (const auto& column : table) known.push_back(column.name);
  for (const std::string& name : names) {
    const auto found = std::find(known.begin(), known.end(), name);
    if (found == known.end()) {
      const std::string guess = closest_match(name, {known.begin(), known.end()});
      throw InputError(fmt::format(
          "--columns: group {} has no column '{}'{} (its columns: {})", group, name,
          guess.empty() ? "" : fmt::format("; did you mean {}?", guess), fmt::join(known, ", ")));
    }
    chosen.push_back(static_cast<std::size_t>(found - known.begin()));
  }
  return chosen;
}

void write_csv(const store::ResultsReader& reader, const std::string& group,
               const std::vector<std::string>& columns, std::ostream& out) {
  std::string line;
  std::vector<std::size_t> chosen;
  for (std::uint64_t first = 0;; first += kExportChunkRows) {
    const std::vector<store::TableColumn> table = reader.read_table(group, first, kExportChunkRows);
    if (first == 0) chosen = chosen_columns(table, columns, group);
    std::size_t rows = 0;
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      const store::TableColumn& column = table[chosen[i]];
      if (first == 0) out << (i > 0 ? "," : "") << csv_field(column.name);
      rows = std::visit([](const auto& values) { return values.size(); }, column.values);
    }
    if (first == 0) out << '\n';
    for (std::size_t r = 0; r < rows; ++r) {
      line.clear();
      for (std::size_t i = 0; i < chosen.size(); ++i) {
        if (i > 0) line += ',';
        line += csv_cell(table[chosen[i]], r);
      }
      line += '\n';
      out << line;
    }
    if (rows < kExportChunkRows) return;
  }
}

// Why `path` cannot be created, in words a user can act on.
std::string cannot_create(const std::string& path, int error) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
    return "cannot create " + path + ": the directory " + parent.string() + " does not exist";
  return "cannot create " + path + ": " + std::strerror(error);
}

void write_csv_to(const store::ResultsReader& reader, const std::string& group,
                  const std::vector<std::string>& columns, const std::string& file,
                  const std::string& path) {
  errno = 0;
  std::ofstream out(file, std::ios::binary);
  if (!out) throw Error(cannot_create(path, errno));
  write_csv(reader, group, columns, out);
  out.close();
  if (!out) throw Error("cannot write " + path + " (disk full?)");
}

// Removes a temporary file on every way out but a successful rename.
struct TemporaryFile {
  std::string path;
  bool renamed = false;
  ~TemporaryFile() {
    if (!renamed) ::unlink(path.c_str());
  }
};

// The CSV is written to PATH.partial-XXXXXX beside PATH and renamed over it once complete, so a
// failed export (a bad column, a full disk, a PATH that is a directory) leaves PATH as it was.
// A symlink or a device or pipe (/dev/stdout) is written in place: a rename would replace the
// link or the device node instead of writing through it.
void write_csv_file(const store::ResultsReader& reader, const std::string& group,
                    const std::vector<std::string>& columns, const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode)) {
    write_csv_to(reader, group, columns, path, path);
    return;
  }
  std::string name = path + ".partial-XXXXXX";
  const int fd = ::mkstemp(name.data());
  if (fd < 0) throw Error(cannot_create(path, errno));
  TemporaryFile temporary{name};
  // mkstemp makes the file 0600: give the CSV the mode a plain create gives (0666 less umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  const int moded = ::fchmod(fd, 0666 & ~mask);
  const int error = errno;
  ::close(fd);
  if (moded != 0) throw Error("cannot create " + path + ": " + std::strerror(error));
  write_csv_to(reader, group, columns, name, path);
  if (::rename(name.c_str(), path.c_str()) != 0)
    throw Error("cannot replace " + path + ": " + std::strerror(errno));
  temporary.renamed = true;
}

// An output that is the results file itself (the same device and inode: also through a symlink
// or a hard link) is refused before anything is written: writing it destroys what is read.
void refuse_results_file(const std::string& results, const std::string& output,
                         const std::string& option) {
  std::error_code ec;
  if (std::filesystem::equivalent(output, results, ec))
    throw InputError(
        fmt::format("{} {} is the results file {} that is exported; expected "
                    "another file",
                    option, printable(output), printable(results)));
}

int export_command(const ExportArgs& args) {
  const store::ResultsReader reader(args.file);
  std::vector<std::string> groups = args.groups;
  if (groups.empty() || (groups.size() == 1 && groups.front() == "all")) {
    groups = reader.method_groups();
    groups.insert(groups.begin(), "tasks");
    for (std::string& derived : reader.derived_groups()) groups.push_back(std::move(derived));
  }
  if (groups.size() > 1 && args.dir.empty())
    throw InputError("export: " + std::to_string(groups.size()) +
                     " groups need --dir DIR (one DIR/GROUP.csv each); --csv takes one group");
  if (!args.dir.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(args.dir, ec))
      throw InputError("--dir: " + args.dir + " is not a directory");
    std::vector<std::string> paths;
    for (const std::string& group : groups) {
      paths.push_back((std::filesystem::path(args.dir) / (group + ".csv")).string());
      refuse_results_file(args.file, paths.back(), "--dir:");
    }
    for (std::size_t i = 0; i < groups.size(); ++i)
      write_csv_file(reader, groups[i], args.columns, paths[i]);
    return exit_code::ok;
  }
  if (args.csv.empty() || args.csv == "-") {
    write_csv(reader, groups.front(), args.columns, std::cout);
    std::cout.flush();
    if (!std::cout) throw Error("cannot write the CSV to standard output");
    return exit_code::ok;
  }
  refuse_results_file(args.file, args.csv, "--csv");
  write_csv_file(reader, groups.front(), args.columns, args.csv);
  return exit_code::ok;
}

const CommandRegistration export_registration(41, [](CLI::App& app, int& exit_code) {
  const auto [command, args] = add_file_command(
      app, exit_code, "export",
      "Write one group of a results file as CSV: one row per task, parameters and scalar results "
      "(distributions and ragged per-type columns stay in the HDF5 file)",
      "results file (HDF5)", export_command);
  command
      ->add_option("--group", args->groups,
                   fmt::format("{}, tasks, thresholds (a refinement's, when the file has "
                               "them), several of them, or all (the default)",
                               fmt::join(enum_names<sweep::Method>(), ", ")))
      ->delimiter(',')
      ->check(non_empty("a group name"));
  auto* csv = command
                  ->add_option("--csv", args->csv,
                               "output file of one group (default: "
                               "standard output)")
                  ->check(non_empty("a file name, or - for standard output"));
  command->add_option("--dir", args->dir, "write each group to DIR/GROUP.csv")
      ->excludes(csv)
      ->check(non_empty("a directory"));
  command
      ->add_option("--columns", args->columns,
                   "only these columns, in this order (comma-separated)")
      ->delimiter(',')
      ->check(non_empty("a column name"));
  command->footer(
      "Empty fields are NaN (not applicable or not computed). Rows of tasks that are "
      "not done have a status other than done. Exit codes: 0 written, 2 not a results file, "
      "no such group or column, or several groups without --dir, 1 cannot write the output.");
});

}  // namespace
}  // namespace qsweep::cli
