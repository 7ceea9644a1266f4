#include "qsweep/run/combine.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "qsweep/common/error.hpp"
#include "qsweep/run/plan_results.hpp"
#include "qsweep/run/test_hold.hpp"
#include "qsweep/store/companions.hpp"
#include "qsweep/store/results_reader.hpp"
#include "qsweep/store/stored_rows.hpp"
#include "qsweep/sweep/columns.hpp"

namespace qsweep::run {
namespace {

// Tasks of the new plan handled per step (bounds the rows held in memory).
constexpr std::uint64_t kChunkTasks = 4096;

bool finished(TaskStatus status) {
  return status == TaskStatus::done || status == TaskStatus::unstable;
}

// Why task `task` of `from_name` has no task of the same content in `to`.
std::string why_missing(const sweep::Task& task, const std::string& from_name,
                        const sweep::Plan& to, const std::string& to_name) {
  const std::string head =
      fmt::format("task {} of {} ({})", task.id, from_name, sweep::describe(task));
  const std::string content = sweep::task_content_key(task);
  for (const sweep::Task& other : to.tasks) {
    if (sweep::task_content_key(other) != content) continue;
    return fmt::format(
        "{} would be task {} of {}: its random streams are keyed by its id (Philox(seed, id, "
        "replication)), so its results would not be those of a run of {}; add new values as a "
        "new block at the end, which keeps every earlier id",
        head, other.id, to_name, to_name);
  }
  if (task.id >= to.tasks.size())
    return fmt::format("{} is not in {}, which has {} tasks", head, to_name, to.tasks.size());
  const sweep::Task& there = to.tasks[task.id];
  std::string differs = sweep::describe(there);
  if (there.seed != task.seed) {
    differs += fmt::format(", seed {} instead of {}", there.seed, task.seed);
  } else if (differs == sweep::describe(task)) {
    differs += ", with a parameter this description leaves out changed";
  }
  return fmt::format("{} is not in {} (its task {} is {})", head, to_name, task.id, differs);
}

}  // namespace

ResultsSource open_source(const std::string& path) {
  ResultsSource source;
  source.path = path;
  const store::ResultsReader reader(path);
  // The plan comes from the sweep file stored in the results: the file verifies itself.
  try {
    source.plan =
        sweep::parse_plan(reader.attribute("sweep_yaml"), reader.attribute("sweep_source"));
  } catch (const InputError& e) {
    throw InputError(path + ": the sweep file stored in it does not expand (" + e.what() +
                     "); damaged, or made by another qsweep version");
  }
  if (source.plan.hash != reader.attribute("plan_hash")) {
    throw InputError(path + ": the sweep file stored in it expands to plan hash " +
                     source.plan.hash.substr(0, 12) + ", the file says " +
                     reader.attribute("plan_hash").substr(0, 12) +
                     "; damaged, or made by a qsweep version whose methods give other numbers for "
                     "its tasks (docs/sweep-format.md, \"Plan hash and file digest\")");
  }
  source.layout.emplace(results_layout(source.plan));
  source.verified = verify_results(path, source.plan, *source.layout);
  return source;
}

void check_contains(const sweep::Plan& to, const std::string& to_name, const sweep::Plan& from,
                    const std::string& from_name) {
  std::unordered_map<std::string, std::uint64_t> keys;
  keys.reserve(to.tasks.size());
  for (const sweep::Task& task : to.tasks) keys.emplace(sweep::task_key(task), task.id);
  for (const sweep::Task& task : from.tasks) {
    if (!keys.contains(sweep::task_key(task)))
      throw InputError(why_missing(task, from_name, to, to_name));
  }
}

std::uint64_t write_combined(const std::string& path, const sweep::Plan& plan,
                             const std::vector<const ResultsSource*>& sources,
                             const store::Provenance& provenance, store::WriterLock& lock,
                             const std::function<bool()>& stop_now) {
  // Each source's finished rows by task content (the first row of a content).
  std::vector<std::unordered_map<std::string, std::uint64_t>> rows_of(sources.size());
  for (std::size_t s = 0; s < sources.size(); ++s) {
    const ResultsSource& source = *sources[s];
    for (const sweep::Task& task : source.plan.tasks)
      if (finished(source.verified.statuses.at(task.id)))
        rows_of[s].emplace(sweep::task_key(task), task.id);
  }

  const store::Layout layout = results_layout(plan);
  const std::string temporary = path + std::string(store::kCombinedSuffix);
  create_results_file(temporary, plan, layout, provenance, MPI_COMM_SELF, &lock);
  std::uint64_t copied = 0;
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
        const std::string key = sweep::task_key(plan.tasks[t]);
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
        for (store::StoredRow& row : readers[s]->read(wanted[s])) stored[s].emplace(row.id, row);
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
                "task {} ({}) has other results in {} (its task {}) than in {} (its task {}): "
                "/{}/{} differs; files of one study hold the same results for the same task",
                t, sweep::describe(task), sources[held[h].source]->path, held[h].id,
                sources[held[0].source]->path, held[0].id, table, column));
        }
        store::FinishedRow& row = rows.emplace_back();
        row.id = t;
        row.rows.task = store::with_parameters(layout.task_columns(), sweep::make_task_row(task),
                                               kept.rows.task);
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
      copied += rows.size();
    }
    file.close();
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
