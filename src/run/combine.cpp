#include "qsweep/run/combine.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "qsweep/common/error.hpp"
#include "qsweep/run/plan_results.hpp"
#include "qsweep/run/test_hold.hpp"
#include "qsweep/store/companions.hpp"
#include "qsweep/store/results_reader.hpp"
#include "qsweep/store/stored_rows.hpp"
#include "qsweep/sweep/columns.hpp"
#include "rounds.hpp"

namespace qsweep::run {
namespace {

// Tasks of the new plan handled per step (bounds the rows held in memory).
constexpr std::uint64_t kChunkTasks = 4096;

bool finished(TaskStatus status) {
  return status == TaskStatus::done || status == TaskStatus::unstable;
}

}  // namespace

ResultsSource open_source(const std::string& path) {
  ResultsSource source;
  source.path = path;
  const store::ResultsReader reader(path);
  const std::string version = reader.attribute("format_version");
  source.format_version = std::stoull(version);  // the reader checked it is a version it reads
  source.history = reader.attribute("history");
  if (source.history.empty()) {
    source.history =
        store::history_entry(reader.attribute("created"), reader.attribute("command_line"),
                             reader.attribute("hostname"), reader.attribute("mpi_ranks"),
                             reader.attribute("qsweep_version"), reader.attribute("git_commit"));
  }
  // The plan comes from the sweep file stored in the results: the file verifies itself. A
  // version 2 file has a row for each task its sweep repeats in another block.
  try {
    source.plan =
        sweep::parse_plan(reader.attribute("sweep_yaml"), reader.attribute("sweep_source"), {},
                          source.format_version < 3 ? sweep::BlockDuplicates::kept
                                                    : sweep::BlockDuplicates::left_out);
  } catch (const InputError& e) {
    throw InputError(path + ": the sweep file stored in it does not expand (" + e.what() +
                     "); damaged, or made by another qsweep version");
  }
  if (!source.plan.refinements.empty()) {
    // A refining sweep's file holds the points of its rounds too, which its rows give again.
    sweep::Rounds rounds(source.plan);
    replay_rounds(source.plan, rounds, path);
  }
  if (!sweep::is_plan_hash(source.plan, reader.attribute("plan_hash"))) {
    throw InputError(path + ": the sweep file stored in it expands to plan hash " +
                     source.plan.hash.substr(0, 12) + ", the file says " +
                     reader.attribute("plan_hash").substr(0, 12) +
                     "; damaged, or made by a qsweep version whose methods give other numbers for "
                     "its tasks (docs/sweep-format.md, \"Plan hash and file digest\")");
  }
  const auto format_version = static_cast<int>(source.format_version);
  source.layout.emplace(results_layout(source.plan, format_version));
  source.verified = verify_results(path, source.plan, *source.layout, format_version);
  return source;
}

void check_numbers_kept(const ResultsSource& source, const std::string& advice) {
  if (source.format_version >= 4) return;
  if (source.format_version == 3) {
    // Its /simulate rows lack the columns of format version 4 (start, common_random_numbers,
    // EQ_replications, ET_replications), which a row of this version must hold.
    for (std::uint64_t id = 0; id < source.plan.tasks.size(); ++id) {
      if (source.plan.tasks.method(id) != sweep::Method::simulate ||
          !finished(source.verified.statuses[id]))
        continue;
      throw InputError(fmt::format(
          "{} is of format version 3, whose finished simulate rows (the first: task {}, {}) lack "
          "what this qsweep stores with each (start, common_random_numbers, EQ_replications, "
          "ET_replications); the file still reads, verifies and exports: {}",
          source.path, id, sweep::describe(source.plan.tasks[id]), advice));
    }
    return;
  }
  std::uint64_t random = 0;
  std::uint64_t first = 0;
  for (std::uint64_t id = 0; id < source.plan.tasks.size(); ++id) {
    const sweep::Method method = source.plan.tasks.method(id);
    if (!finished(source.verified.statuses[id]) ||
        !sweep::methods()[static_cast<std::size_t>(method)].needs_seed)
      continue;
    if (random++ == 0) first = id;
  }
  if (random == 0) return;
  throw InputError(fmt::format(
      "{} was made by a qsweep that keyed random streams by a task's position in the plan (format "
      "version {}), so its {} finished simulate and ldp rows (the first: task {}, {}) cannot be "
      "matched by content; the file still reads, verifies and exports: {}",
      source.path, source.format_version, random, first, sweep::describe(source.plan.tasks[first]),
      advice));
}

ResultsSource open_reuse_source(const std::string& path) {
  ResultsSource source;
  try {
    source = open_source(path);
    check_numbers_kept(source, "reuse a file made since, or run these tasks here");
  } catch (const InputError& e) {
    throw InputError(std::string("--reuse ") + e.what());
  }
  const store::Verification& verified = source.verified;
  if (!verified.damaged.empty()) {
    throw InputError(fmt::format(
        "--reuse {}: {} rows fail verification (the first: {}); a file to reuse must verify: "
        "`qsweep verify {}` lists them, qsweep run --resume of its own sweep runs them again",
        path, verified.damaged.size(), verified.damage.front(), path));
  }
  const store::ResultsReader reader(path);
  key_finished(source);
  source.reused_from =
      store::fit_text(fmt::format("{} (study '{}', created {})", path,
                                  reader.attribute("sweep_name"), reader.attribute("created")),
                      sweep::kReusedFromWidth - 1);
  return source;
}

std::vector<std::string> task_keys(const sweep::Plan& plan) {
  std::vector<std::string> keys;
  keys.reserve(plan.tasks.size());
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) keys.push_back(plan.tasks.key(id));
  return keys;
}

void key_finished(ResultsSource& source) {
  source.finished_keys.assign(source.plan.tasks.size(), std::string());
  for (std::uint64_t id = 0; id < source.plan.tasks.size(); ++id)
    if (finished(source.verified.statuses.at(id)))
      source.finished_keys[id] = source.plan.tasks.key(id);
}

namespace {

// The keys of `source`'s finished tasks, checked to have been made.
const std::vector<std::string>& keys_of_finished(const ResultsSource& source) {
  if (source.finished_keys.size() != source.plan.tasks.size())
    throw std::logic_error(source.path + ": its finished tasks have no keys (key_finished)");
  return source.finished_keys;
}

}  // namespace

void check_kept(const std::vector<std::string>& to_keys, const std::string& to_name,
                const ResultsSource& from) {
  const std::unordered_set<std::string_view> keys(to_keys.begin(), to_keys.end());
  const std::vector<std::string>& from_keys = keys_of_finished(from);
  for (std::uint64_t id = 0; id < from_keys.size(); ++id) {
    if (from_keys[id].empty() || keys.contains(from_keys[id])) continue;
    throw InputError(fmt::format(
        "task {} of {} ({}) holds results and is not in {} (key {}); --resume keeps every "
        "finished row: put the value back (anywhere in the sweep), or run {} into another file "
        "with -o",
        id, from.path, sweep::describe(from.plan.tasks[id]), to_name, from_keys[id], to_name));
  }
}

std::vector<std::uint64_t> write_combined(const std::string& path, const sweep::Plan& plan,
                                          const std::vector<std::string>& keys,
                                          const std::vector<const ResultsSource*>& sources,
                                          const store::Provenance& now, store::WriterLock& lock,
                                          const std::function<bool()>& stop_now) {
  if (keys.size() != plan.tasks.size())
    throw std::logic_error("write_combined: the keys are not those of the plan");
  // The new file's history continues those of the files of its study (not of files whose rows
  // are reused: each such row names its source); an entry two parts share is kept once.
  store::Provenance provenance = now;
  std::unordered_set<std::string> entries;
  for (const ResultsSource* source : sources) {
    if (!source->reused_from.empty()) continue;
    std::size_t begin = 0;
    while (begin < source->history.size()) {
      std::size_t end = source->history.find('\n', begin);
      end = end == std::string::npos ? source->history.size() : end + 1;
      std::string entry = source->history.substr(begin, end - begin);
      if (entry.back() != '\n') entry += '\n';
      if (entries.insert(entry).second) provenance.history += entry;
      begin = end;
    }
  }
  // Each source's finished rows by task content (the first row of a content).
  std::vector<std::unordered_map<std::string_view, std::uint64_t>> rows_of(sources.size());
  for (std::size_t s = 0; s < sources.size(); ++s) {
    const std::vector<std::string>& source_keys = keys_of_finished(*sources[s]);
    for (std::uint64_t id = 0; id < source_keys.size(); ++id)
      if (!source_keys[id].empty()) rows_of[s].emplace(source_keys[id], id);
  }

  const store::Layout layout = results_layout(plan);
  const std::string temporary = path + std::string(store::kCombinedSuffix);
  create_results_file(temporary, plan, layout, provenance, MPI_COMM_SELF, &lock);
  std::vector<std::uint64_t> copied(sources.size(), 0);
  const std::vector<store::ColumnLayout>& task_columns = layout.task_columns();
  const auto reused_from_column = static_cast<std::size_t>(
      std::find_if(task_columns.begin(), task_columns.end(),
                   [](const store::ColumnLayout& c) { return c.spec.name == "reused_from"; }) -
      task_columns.begin());
  try {
    store::ResultsFile file(temporary, layout, MPI_COMM_SELF);
    std::vector<std::unique_ptr<store::StoredRows>> readers;
    readers.reserve(sources.size());
    for (const ResultsSource* source : sources)
      readers.push_back(std::make_unique<store::StoredRows>(source->path, *source->layout));

    struct Holder {
      std::size_t source;
      std::uint64_t id;
    };
    for (std::uint64_t first = 0; first < plan.tasks.size(); first += kChunkTasks) {
      const std::uint64_t end = std::min<std::uint64_t>(first + kChunkTasks, plan.tasks.size());
      std::vector<std::vector<Holder>> holders(end - first);
      std::vector<std::vector<std::uint64_t>> wanted(sources.size());
      for (std::uint64_t t = first; t < end; ++t) {
        const std::string& key = keys[t];
        for (std::size_t s = 0; s < sources.size(); ++s) {
          const auto it = rows_of[s].find(key);
          if (it == rows_of[s].end()) continue;
          holders[t - first].push_back({s, it->second});
          wanted[s].push_back(it->second);
        }
      }
      std::vector<std::unordered_map<std::uint64_t, store::StoredRow>> stored(sources.size());
      for (std::size_t s = 0; s < sources.size(); ++s) {
        std::sort(wanted[s].begin(), wanted[s].end());
        wanted[s].erase(std::unique(wanted[s].begin(), wanted[s].end()), wanted[s].end());
        for (store::StoredRow& row : readers[s]->read(wanted[s])) {
          // An older file's row lacks the last cells: its key and round (parameters, from the
          // plan) and reused_from (empty: computed in that file's study).
          row.rows.task.cells.resize(task_columns.size(), std::string());
          // and its group row the columns of later versions (as a task not yet run has them).
          row.rows.group =
              current_group_row(sources[s]->plan, row.id,
                                static_cast<int>(sources[s]->format_version), row.rows.group);
          stored[s].emplace(row.id, row);
        }
      }

      std::vector<store::FinishedRow> rows;
      std::vector<std::uint64_t> ids;
      std::vector<std::int32_t> attempts;
      for (std::uint64_t t = first; t < end; ++t) {
        const std::vector<Holder>& held = holders[t - first];
        if (held.empty()) continue;
        const sweep::Task& task = plan.tasks[t];
        const std::vector<store::ColumnLayout>& group = layout.groups()[layout.group_of(t)].columns;
        const store::StoredRow& kept = stored[held[0].source].at(held[0].id);
        for (std::size_t h = 1; h < held.size(); ++h) {
          const store::StoredRow& other = stored[held[h].source].at(held[h].id);
          // The first column that differs, with its table.
          std::string table = "tasks";
          std::string column =
              store::differing_result(layout.task_columns(), kept.rows.task, other.rows.task);
          if (column.empty()) {
            table = sweep::group_name(task.method());
            column = store::differing_result(group, kept.rows.group, other.rows.group);
          }
          if (!column.empty())
            throw InputError(fmt::format(
                "task {} ({}; key {}) has other results in {} (its task {}) than in {} (its task "
                "{}): /{}/{} differs; a task (a key) has the same results in every file",
                t, sweep::describe(task), keys[t], sources[held[h].source]->path, held[h].id,
                sources[held[0].source]->path, held[0].id, table, column));
        }
        store::FinishedRow& row = rows.emplace_back();
        row.id = t;
        row.rows.task = store::with_parameters(layout.task_columns(), sweep::make_task_row(task),
                                               kept.rows.task);
        if (const std::string& reused_from = sources[held[0].source]->reused_from;
            !reused_from.empty())
          row.rows.task.cells.at(reused_from_column) = reused_from;
        ++copied[held[0].source];
        row.rows.group = store::with_parameters(group, sweep::make_row(task, {}), kept.rows.group);
        if (const std::string misfit = layout.misfit(t, row.rows.group); !misfit.empty())
          throw std::logic_error("a copied row does not fit task " + std::to_string(t) + ": " +
                                 misfit);
        ids.push_back(t);
        attempts.push_back(kept.attempts);
      }
      // Testing hook: a test kills the job here, while the new file is being made.
      for (const std::uint64_t id : ids) TestHold::from_environment().wait_for_release(id);
      if (stop_now()) throw CombineStopped("stopped by a signal while writing " + temporary);
      if (rows.empty()) continue;
      file.write_attempts(ids, attempts);
      file.write_finished(rows);
    }
    file.close();
    // A refining plan's thresholds, from the rows copied (docs/results-layout.md, "/thresholds").
    write_thresholds(plan, temporary);
  } catch (...) {
    std::remove(temporary.c_str());
    throw;
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::remove(temporary.c_str());
    throw Error("cannot rename " + temporary + " to " + path + ": " + error.message());
  }
  return copied;
}

void remove_leftovers(const std::string& path) {
  const std::string combined = path + std::string(store::kCombinedSuffix);
  const std::string partial(store::kPartialSuffix);
  for (const std::string& leftover : {path + partial, combined, combined + partial}) {
    std::error_code error;
    if (std::filesystem::remove(leftover, error)) {
      fmt::print(stderr, "qsweep: removed {}, left by a job that was killed\n", leftover);
    } else if (error) {  // a left-over that stays would be taken for this job's own
      throw Error(fmt::format("cannot remove {}, left by a job that was killed: {}", leftover,
                              error.message()));
    }
  }
}

}  // namespace qsweep::run
