#include "startup.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "qsweep/common/printable.hpp"
#include "qsweep/run/plan_results.hpp"
#include "qsweep/store/companions.hpp"
#include "qsweep/store/results_reader.hpp"
#include "qsweep/store/verify.hpp"
#include "qsweep/sweep/select.hpp"

namespace qsweep::run {

std::string output_path(const sweep::Plan& plan, const RunOptions& options) {
  if (!options.output.empty()) {
    // The sweep file's `output:` was checked where it was read, with its location.
    const std::string problem = sweep::output_path_problem(options.output);
    if (!problem.empty()) throw InputError("-o: the results file path " + problem);
    return options.output;
  }
  if (!plan.output.empty()) return plan.output;
  throw InputError("no results file: give -o FILE or `output:` in " + plan.source);
}

// Rank 0: checks that `path` (the real_results_path of `given`, the name the user gave, which
// messages quote) can be a results file, with the files beside it (before anything is written),
// creating its directory if needed. It must not be the sweep file (the same device and inode:
// also through a symlink or a hard link), which --force would replace. A path from the sweep's
// `output:` is refused with the place of that line.
void check_output_location(const sweep::Plan& plan, const std::string& given,
                           const std::string& path, bool from_sweep) {
  namespace fs = std::filesystem;
  const std::string where = (from_sweep ? plan.output_location + ": output " : "") + given;
  store::check_companions(path);
  std::error_code error;
  if (fs::equivalent(path, plan.source, error)) {
    throw InputError(where + " is the sweep file " + plan.source +
                     "; expected the name of a results file");
  }
  if (fs::is_directory(path, error)) {
    throw InputError(where + " is a directory; expected the name of a results file (e.g. " +
                     (fs::path(given) / "results.h5").string() + ")");
  }
  if (fs::exists(path, error) && !fs::is_regular_file(path, error)) {
    throw InputError(where + " exists and is not a regular file; expected a results file");
  }
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, error);
    if (error) {
      throw InputError(where + ": cannot create its directory " + parent.string() + " (" +
                       error.message() + ")");
    }
  }
  const std::string directory = parent.empty() ? "." : parent.string();
  if (access(directory.c_str(), W_OK | X_OK) != 0) {
    throw InputError(where + ": cannot write into its directory " + directory + " (" +
                     std::strerror(errno) + ")");
  }
}

// Rank 0: the tasks this run may run (--shard, --select), or none for the whole plan; says how
// many on stderr.
std::vector<bool> part_of_plan(const sweep::Plan& plan, const RunOptions& options) {
  if (options.shard.count == 0 && options.select.empty()) return {};
  const sweep::TaskSelection selection(options.select);
  std::vector<std::uint32_t> shards;
  if (options.shard.count > 0) shards = shard_of_tasks(plan, options.shard.count);
  std::vector<bool> chosen(plan.tasks.size(), true);
  std::uint64_t count = 0;
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) {
    if (!shards.empty() && shards[id] != options.shard.index - 1) chosen[id] = false;
    if (chosen[id] && !selection.empty() && !selection.matches(plan.tasks[id])) chosen[id] = false;
    count += chosen[id] ? 1 : 0;
  }
  std::string what;
  if (options.shard.count > 0)
    what = fmt::format("shard {}/{}", options.shard.index, options.shard.count);
  if (!selection.empty())
    what += (what.empty() ? "" : " and ") + fmt::format("--select {}", selection.text());
  if (count == 0)
    throw InputError(
        fmt::format("{}: no task of {} is in it; expected a part with tasks "
                    "(`qsweep plan --tasks` lists them)",
                    what, plan.source));
  std::fprintf(stderr, "qsweep: %s: %llu of the %llu tasks of %s (the others stay as they are)\n",
               what.c_str(), static_cast<unsigned long long>(count),
               static_cast<unsigned long long>(plan.tasks.size()), plan.source.c_str());
  return chosen;
}

// Rank 0: what to run, from an existing file (resume, after verifying every row) or from
// scratch; only the tasks `chosen` (all if empty) are counted and run.
StartState read_start(const sweep::Plan& plan, const store::Layout& layout, const std::string& path,
                      bool create, const std::vector<bool>& chosen) {
  StartState start;
  const auto in_part = [&chosen](std::uint64_t id) { return chosen.empty() || chosen[id]; };
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) start.counts.total += in_part(id);
  if (create) {
    for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) {
      start.attempts.push_back(0);
      if (in_part(id)) start.todo.push_back(id);
    }
    return start;
  }
  const store::ResultsReader reader(path);
  const std::string file_hash = reader.attribute("plan_hash");
  if (!sweep::is_plan_hash(plan, file_hash)) {
    throw InputError(path + " holds the results of a different plan (plan hash " +
                     file_hash.substr(0, 12) + ", " + plan.source + " expands to " +
                     plan.hash.substr(0, 12) +
                     "); use --force to start it again or -o for another file");
  }
  const store::Verification verified = verify_results(path, plan, layout);
  const std::vector<std::int32_t> attempts = reader.attempts();
  if (attempts.size() != plan.tasks.size()) {
    throw InputError(path + " has " + std::to_string(attempts.size()) + " tasks, the plan " +
                     std::to_string(plan.tasks.size()));
  }
  for (const std::int32_t count : attempts) start.attempts.push_back(std::max(count, 0));
  if (!verified.damaged.empty()) {
    std::string first;
    for (const std::string& what : verified.damage) first += "\n  " + what;
    std::fprintf(
        stderr, "qsweep: %s: %zu of %llu rows failed verification; running them again:%s%s\n",
        path.c_str(), verified.damaged.size(), static_cast<unsigned long long>(plan.tasks.size()),
        first.c_str(), verified.damaged.size() > verified.damage.size() ? "\n  ..." : "");
  }
  if (verified.interrupted > 0) {
    std::fprintf(stderr,
                 "qsweep: %s: %llu rows were being written when a run was killed; "
                 "running them again\n",
                 path.c_str(), static_cast<unsigned long long>(verified.interrupted));
  }
  // Done and unstable are results; pending, failed, interrupted and damaged tasks run (again).
  for (std::uint64_t id = 0; id < verified.statuses.size(); ++id) {
    if (!in_part(id)) continue;
    switch (verified.statuses[id]) {
      case TaskStatus::done:
        ++start.counts.done;
        break;
      case TaskStatus::unstable:
        ++start.counts.unstable;
        break;
      default:
        start.todo.push_back(id);
        break;
    }
  }
  return start;
}

// Rank 0, on --resume: the sweep's name is part of a study's identity (merge joins only files of
// one name), so a renamed sweep does not continue a file that keeps the old name.
void check_same_study(const sweep::Plan& plan, const std::string& path) {
  const std::string name = store::ResultsReader(path).attribute("sweep_name");
  if (name == plan.name) return;
  throw InputError(fmt::format(
      "{} holds the study '{}', {} names it '{}': a study keeps its name (qsweep merge joins "
      "only files of one name); put back `name: {}` to continue it, or use --force to start it "
      "again or -o for another file",
      path, printable(name), plan.source, printable(plan.name), printable(name)));
}

// Rank 0: the results files of --reuse, each verified (combine.hpp). None may be `path`, the
// file this run writes.
std::vector<ResultsSource> open_reused(const std::vector<std::string>& files,
                                       const std::string& path) {
  std::vector<ResultsSource> reused;
  reused.reserve(files.size());
  for (const std::string& file : files) {
    std::error_code error;
    if (std::filesystem::equivalent(file, path, error))
      throw InputError("--reuse " + file +
                       " is the results file of this run; --resume continues it");
    reused.push_back(open_reuse_source(file));
  }
  return reused;
}

namespace {

// Rank 0: says how many rows each file of --reuse gave (write_combined's counts after the first
// `own` sources, those of this study), and why when a file shares no task with the plan whose
// keys are `keys`.
void report_reused(const std::vector<std::string>& keys, const std::vector<ResultsSource>& reused,
                   const std::vector<std::uint64_t>& copied, std::size_t own) {
  const std::unordered_set<std::string_view> plan_keys(keys.begin(), keys.end());
  for (std::size_t r = 0; r < reused.size(); ++r) {
    const ResultsSource& source = reused[r];
    const bool shares = std::any_of(
        source.finished_keys.begin(), source.finished_keys.end(),
        [&](const std::string& key) { return !key.empty() && plan_keys.contains(key); });
    std::fprintf(stderr, "qsweep: %llu finished rows reused from %s%s\n",
                 static_cast<unsigned long long>(copied.at(own + r)), source.path.c_str(),
                 shares ? ""
                        : " (none of its finished tasks has a key of this plan: keys include "
                          "the seed and every parameter)");
  }
}

// Rank 0: writes the file of `plan` (whose keys are `keys`) at `path` with the finished rows of
// `sources` (`own` files of this study, then those of --reuse, `reused`) copied (write_combined),
// and says how many rows each file of --reuse gave. The counts of each source; none when a
// stop-now signal ended the copy (nothing was written; `stopped` says so, "qsweep: stopped by a
// signal while " first). `lock` is the writer lock of `path`.
std::optional<std::vector<std::uint64_t>> combine_into(
    const sweep::Plan& plan, const std::vector<std::string>& keys, const std::string& path,
    const RunOptions& options, int ranks, const SignalWatch& signals, store::WriterLock& lock,
    const std::vector<const ResultsSource*>& own, const std::vector<ResultsSource>& reused,
    const std::string& stopped) {
  std::vector<const ResultsSource*> sources = own;
  sources.reserve(own.size() + reused.size());
  for (const ResultsSource& source : reused) sources.push_back(&source);
  std::vector<std::uint64_t> copied;
  try {
    copied = write_combined(path, plan, keys, sources,
                            store::Provenance::now(options.command_line, ranks), lock,
                            [&] { return signals.requested() == StopMode::now; });
  } catch (const CombineStopped&) {
    std::fprintf(stderr, "qsweep: stopped by a signal while %s\n", stopped.c_str());
    return std::nullopt;
  }
  report_reused(keys, reused, copied, own.size());
  return copied;
}

}  // namespace

// Rank 0, on a new file with --reuse: writes the file of `plan` at `path` with the finished rows
// of `reused` copied to the tasks of the same key. False when a stop-now signal ended the copy:
// nothing was written. `lock` is the writer lock of `path`.
bool create_reusing(const sweep::Plan& plan, const std::string& path, const RunOptions& options,
                    int ranks, const SignalWatch& signals, store::WriterLock& lock,
                    const std::vector<ResultsSource>& reused) {
  return combine_into(plan, task_keys(plan), path, options, ranks, signals, lock, {}, reused,
                      "copying rows of --reuse: " + path + " was not written")
      .has_value();
}

// Rank 0, on --resume: when the file at `path` holds another plan, is of an earlier format
// version or rows of `reused` are to be copied into it, replaces it by the file of `plan` with
// its finished rows (and those of `reused` for the tasks it has not finished) copied to the tasks
// of the same key (combine.hpp), so that only the new tasks (and those not finished) run.
// InputError when a finished task of the file is not in `plan`, or the file's rows cannot be
// matched. False when a stop-now signal ended the growth: `path` is as it was. `lock` is its
// writer lock.
bool grow_results(const sweep::Plan& plan, const std::string& path, const RunOptions& options,
                  int ranks, const SignalWatch& signals, store::WriterLock& lock,
                  const std::vector<ResultsSource>& reused) {
  const store::ResultsReader reader(path);
  const std::string file_hash = reader.attribute("plan_hash");
  const std::string version = reader.attribute("format_version");
  const bool current = version == std::to_string(store::kFormatVersion);
  const bool same_plan = sweep::is_plan_hash(plan, file_hash);
  const bool same_file = same_plan && current;
  if (same_file && reused.empty()) return true;
  const std::string different =
      same_file ? path + " cannot take rows of --reuse"
      : same_plan
          ? path + " is of format version " + version + " (this qsweep writes " +
                std::to_string(store::kFormatVersion) + ") and cannot grow"
          : path + " holds the results of a different plan (plan hash " + file_hash.substr(0, 12) +
                ", " + plan.source + " expands to " + plan.hash.substr(0, 12) + ")";
  ResultsSource source;
  try {
    source = open_source(path);
    check_numbers_kept(source);
  } catch (const InputError& e) {
    throw InputError(different + (same_file || !current ? ": " : " and cannot grow: ") + e.what() +
                     (current ? "; use --force to start it again or -o for another file" : ""));
  }
  key_finished(source);
  const std::vector<std::string> keys = task_keys(plan);  // once for the check and the copy
  try {
    check_kept(keys, plan.source, source);
  } catch (const InputError& e) {
    throw InputError(different + ": " + e.what());
  }
  if (!source.verified.damaged.empty()) {
    std::fprintf(stderr, "qsweep: %s: %zu rows failed verification and are not kept\n",
                 path.c_str(), source.verified.damaged.size());
  }
  const std::optional<std::vector<std::uint64_t>> copied =
      combine_into(plan, keys, path, options, ranks, signals, lock, {&source}, reused,
                   "growing " + path + ": it is as it was; run again with --resume to grow it");
  if (!copied) return false;
  const std::uint64_t kept = copied->front();
  if (same_file) {
    std::fprintf(stderr,
                 "qsweep: %s rewritten with the rows of --reuse (%llu finished rows kept)\n",
                 path.c_str(), static_cast<unsigned long long>(kept));
  } else if (same_plan || (!current && source.plan.yaml_text == plan.yaml_text)) {
    // The same sweep, of another plan hash: a version 2 file has a row for each task its sweep
    // repeats in a later block, which the plan now holds once (sweep::BlockDuplicates).
    const std::size_t joined = source.plan.tasks.size() > plan.tasks.size()
                                   ? source.plan.tasks.size() - plan.tasks.size()
                                   : 0;
    std::fprintf(
        stderr,
        "qsweep: %s rewritten from format version %s to %d (%llu finished rows kept%s); "
        "running the others\n",
        path.c_str(), version.c_str(), store::kFormatVersion, static_cast<unsigned long long>(kept),
        joined == 0
            ? ""
            : fmt::format(", {} rows of tasks an earlier block has left out", joined).c_str());
  } else {
    std::fprintf(stderr,
                 "qsweep: %s grown from %zu to %zu tasks of %s (%llu finished rows kept); "
                 "running the others\n",
                 path.c_str(), source.plan.tasks.size(), plan.tasks.size(), plan.source.c_str(),
                 static_cast<unsigned long long>(kept));
  }
  return true;
}

}  // namespace qsweep::run
