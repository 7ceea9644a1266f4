#include "qsweep/run/runner.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <unordered_set>

#include "coordinator.hpp"
#include "memory_policy.hpp"
#include "qsweep/common/exit_codes.hpp"
#include "qsweep/run/combine.hpp"
#include "qsweep/run/memory.hpp"
#include "qsweep/run/mpi.hpp"
#include "qsweep/run/plan_results.hpp"
#include "qsweep/run/signals.hpp"
#include "qsweep/store/companions.hpp"
#include "qsweep/store/hdf5.hpp"
#include "qsweep/store/layout.hpp"
#include "qsweep/store/results_file.hpp"
#include "qsweep/store/results_reader.hpp"
#include "qsweep/store/writer_lock.hpp"
#include "qsweep/sweep/rounds.hpp"
#include "rounds.hpp"
#include "startup.hpp"
#include "workbench.hpp"
#include "worker.hpp"

namespace qsweep::run {
namespace {

// Runs `check` on rank 0. An InputError it throws is rethrown on every rank, the same message.
template <class Check>
void agree_on_rank0(const Comm& comm, Check&& check) {
  std::string error;
  if (comm.rank() == 0) {
    try {
      check();
    } catch (const InputError& e) {
      error = e.what();
      if (error.empty()) error = "bad input";
    }
  }
  comm.broadcast(error, 0);
  if (!error.empty()) throw AgreedInputError(error);
}

// Runs the plan's remaining tasks (`start`, on rank 0) into the results file at `path`.
RunResult run_file(const Comm& comm, const sweep::Plan& plan, const store::Layout& layout,
                   const std::string& path, const RunOptions& options, StartState start,
                   NodeMap nodes, const SignalWatch& signals, const TaskFunction& run_task,
                   const SpanningTaskFunction& run_spanning) {
  store::ResultsFile file(path, layout, comm.handle());
  // The ranks' baselines again, with the results file open (HDF5's buffers).
  const std::vector<double> resident = comm.gather(resident_bytes(), 0);
  if (comm.rank() == 0) nodes.baseline = resident;
  RunResult result;
  const bool computes = comm.rank() != 0 || comm.size() == 1 || !options.dedicated_coordinator;
  std::optional<Workbench> bench;
  if (computes) bench.emplace(plan, file, run_task, comm.rank());
  try {
    if (comm.rank() == 0) {
      result = coordinate(comm, plan, path, options, std::move(start), bench ? &*bench : nullptr,
                          signals, std::move(nodes));
    } else {
      work(comm, *bench, signals, SpanContext{plan, file, run_spanning});
    }
  } catch (const MpiError& e) {
    // The message names the MPI call; add which rank of which communicator.
    throw Error(std::string(e.what()) + " (rank " + std::to_string(comm.rank()) + " of " +
                std::to_string(comm.size()) + ", the run's communicator)");
  }
  result.left_task_running = bench && bench->left_task_running();
  bench.reset();  // joins the compute thread (or leaves an abandoned task behind)
  file.close();
  comm.broadcast(result.exit_code, 0);
  return result;
}

// The ranks of `comm` as a team that shares the making of the plan's tasks.
sweep::PlanTeam plan_team(const Comm& comm) {
  return {comm.rank(), comm.size(), [&comm](char* data, const std::vector<std::uint64_t>& bytes) {
            comm.gather_parts(data, bytes);
          }};
}

}  // namespace

sweep::Plan distribute_plan(const Comm& comm, const std::string& path) {
  // Rank 0 reads the file and every rank parses the text; each makes the tasks of its share of
  // the points and the ranks exchange them (sweep::PlanTeam): planning is most of the start-up of
  // a big sweep, and a parsed plan broadcast instead costs half a parse more (serialising and
  // deserialising it; docs/running.md, "Performance").
  std::string text;
  agree_on_rank0(comm, [&] { text = sweep::read_sweep_text(path); });
  comm.broadcast(text, 0);
  // A stop-now signal ends planning (a big sweep plans for seconds): nothing is written.
  const SignalWatch signals;
  sweep::Plan plan;
  std::string error;
  bool stopped = false;
  const sweep::PlanTeam team = plan_team(comm);
  try {
    plan = sweep::parse_plan(
        text, path, [&signals] { return signals.requested() == StopMode::now; },
        sweep::BlockDuplicates::left_out, &team);
  } catch (const sweep::PlanStopped&) {
    stopped = true;
  } catch (const InputError& e) {
    error = e.what();
    if (error.empty()) error = "bad input";
  }
  if (comm.any(stopped)) throw StoppedWhilePlanning();
  // Every rank parsed the same text; rank 0's verdict is the one reported, once.
  std::string rank0_error = error;
  comm.broadcast(rank0_error, 0);
  if (!rank0_error.empty()) throw AgreedInputError(rank0_error);
  if (!error.empty()) {
    throw Error("rank " + std::to_string(comm.rank()) + " could not parse " + path +
                ", which rank 0 parsed: " + error);
  }
  std::string hash = plan.hash;
  comm.broadcast(hash, 0);
  if (hash != plan.hash) {
    throw Error("rank " + std::to_string(comm.rank()) + " expanded " + path +
                " to a different plan than rank 0");
  }
  return plan;
}

namespace {

// What rank 0 does after a run that ended with every task finished, before the results file's
// writer lock is let go: a refining run's next round, or the end of its rounds.
using AfterRun = std::function<void(const std::string& path, store::WriterLock& lock)>;

// Runs `plan` into its results file once (the whole of a run without refinement rounds).
RunResult run_once(const Comm& world, const sweep::Plan& plan, const RunOptions& options,
                   const TaskFunction& run_task, const SpanningTaskFunction& run_spanning,
                   const AfterRun& after = {}) {
  // The run's own communicator (MPI_ERRORS_RETURN): its messages never meet anyone else's.
  const Comm comm = world.duplicate();
  const SignalWatch signals;

  std::string path;
  bool create = true;
  bool stopped = false;  // by a signal while growing the file
  StartState start;
  const sweep::PlanTeam team = plan_team(comm);
  const store::Layout layout = results_layout(plan, store::kFormatVersion, &team);
  NodeMap nodes = map_nodes(comm, options);
  std::map<std::uint64_t, Span> spans;
  // Rank 0 holds the results file's writer lock from before it looks at the file until the run
  // has closed it.
  std::optional<store::WriterLock> lock;
  agree_on_rank0(comm, [&] {
    if (options.resume && options.force)
      throw InputError("--resume and --force exclude each other");
    spans = check_memory(plan, nodes, options, comm.size() == 1 || !options.dedicated_coordinator);
    const std::string given = output_path(plan, options);
    path = store::real_results_path(given);
    check_output_location(plan, given, path, options.output.empty());
    lock.emplace(path, options.command_line);
    remove_leftovers(path);
    const bool exists = std::filesystem::exists(path);
    if (exists && !options.resume && !options.force) {
      throw InputError(path +
                       " already exists: use --resume to continue it or --force to "
                       "replace it");
    }
    create = !exists || options.force;
    if (options.resume && !exists) {
      std::fprintf(stderr, "qsweep: %s does not exist yet: starting it\n", path.c_str());
    }
    const std::vector<ResultsSource> reused = open_reused(options.reuse, path);
    if (!create) {
      check_same_study(plan, path);
      stopped = !grow_results(plan, path, options, comm.size(), signals, *lock, reused);
    } else if (!reused.empty()) {
      stopped = !create_reusing(plan, path, options, comm.size(), signals, *lock, reused);
      create = false;  // made by create_reusing
    }
    if (stopped) return;
    start = read_start(plan, layout, path, create, part_of_plan(plan, options));
    start.spans = std::move(spans);
  });
  comm.broadcast(stopped, 0);
  if (stopped) {
    RunResult result;
    result.exit_code = exit_code::incomplete;
    return result;
  }
  comm.broadcast(path, 0);
  comm.broadcast(create, 0);

  if (create) {
    try {
      create_results_file(path, plan, layout,
                          store::Provenance::now(options.command_line, comm.size()), comm.handle(),
                          lock ? &*lock : nullptr);
    } catch (const store::StoreError& e) {
      throw store::StoreError(e.what() + store::full_disk_note(path));
    }
  }
  const std::uint64_t part = start.counts.total;  // rank 0's
  RunResult result;
  try {
    result = run_file(comm, plan, layout, path, options, std::move(start), std::move(nodes),
                      signals, run_task, run_spanning);
    if (comm.rank() == 0 && result.exit_code == exit_code::ok && part < plan.tasks.size()) {
      std::fprintf(stderr,
                   "qsweep: the part is finished; the plan's other %llu tasks are not in it "
                   "(qsweep status shows the file; --resume without --shard or --select runs "
                   "what is left, qsweep merge joins the files of parts)\n",
                   static_cast<unsigned long long>(plan.tasks.size() - part));
    }
  } catch (const std::exception& e) {
    // Rows are written whole and sealed last, so the file is consistent whatever failed.
    throw Error(e.what() + store::full_disk_note(path) + " (" + path +
                " is consistent: continue it with --resume once the cause is fixed)");
  }
  // The file is closed on every rank; rank 0 still holds its writer lock.
  if (after && result.exit_code == exit_code::ok) agree_on_rank0(comm, [&] { after(path, *lock); });
  return result;
}

// Rank 0 decides, every rank gets the points of `decide` (text: sweep::points_text, an empty
// list of rounds, or a list of lines "round" before each round's points); an InputError on rank
// 0 is thrown on every rank.
std::vector<std::vector<sweep::NewPoint>> agree_on_rounds(
    const Comm& comm, const std::function<std::vector<std::vector<sweep::NewPoint>>()>& decide) {
  std::string text;
  agree_on_rank0(comm, [&] {
    for (const std::vector<sweep::NewPoint>& points : decide())
      text += "round\n" + sweep::points_text(points);
  });
  comm.broadcast(text, 0);
  std::vector<std::vector<sweep::NewPoint>> rounds;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t next = text.find("round\n", at + 1);
    const std::size_t end = next == std::string::npos ? text.size() : next;
    rounds.push_back(sweep::points_from_text(text.substr(at + 6, end - at - 6)));
    at = end;
  }
  return rounds;
}

// Rank 0, on --resume of a refining sweep: the file at `path` must hold no finished row that the
// rounds of `replayed` (its rounds from the file's rows) leave out. An edited refine: key or
// refining block decides its rounds anew, and they need not hold the points of the old ones:
// InputError saying what to do instead.
void check_refined_kept(const sweep::Plan& replayed, const std::string& path,
                        const RunOptions& options) {
  const store::ResultsReader reader(path);
  if (sweep::is_plan_hash(replayed, reader.attribute("plan_hash"))) return;
  const std::vector<std::string> keys = reader.keys();
  const std::vector<TaskStatus> statuses = reader.statuses();
  if (keys.empty()) return;  // a file without keys: growing it says what is wrong
  const std::vector<std::string> planned = task_keys(replayed);
  const std::unordered_set<std::string> kept(planned.begin(), planned.end());
  for (std::uint64_t id = 0; id < keys.size(); ++id) {
    if ((statuses[id] != TaskStatus::done && statuses[id] != TaskStatus::unstable) ||
        kept.contains(keys[id]))
      continue;
    const std::string given = options.output.empty() ? path : options.output;
    throw InputError(fmt::format(
        "{}: refine: {} holds refined points that the rounds of {} do not reach (task {}, key {}, "
        "among {} tasks): an edited refine: key or refining block decides its rounds anew from "
        "the rows, and --resume keeps every finished row; run the sweep into another file and "
        "take the rows of this one, which are then copied instead of computed: qsweep run {} -o "
        "NEW.h5 --reuse {}",
        replayed.refinements.front().where, path, replayed.source, id, keys[id], keys.size(),
        replayed.source, given));
  }
}

// Rank 0: the results file of the run (as run_once finds it), "" if it does not exist.
std::string existing_output(const sweep::Plan& plan, const RunOptions& options) {
  const std::string path = store::real_results_path(output_path(plan, options));
  return std::filesystem::exists(path) ? path : "";
}

}  // namespace

RunResult run_plan(const Comm& world, const sweep::Plan& plan, const RunOptions& options,
                   const TaskFunction& run_task, const SpanningTaskFunction& run_spanning) {
  if (plan.refinements.empty()) return run_once(world, plan, options, run_task, run_spanning);
  // Refinement rounds (docs/running.md, "Refinement rounds"): round 0 is the plan; once every
  // task of a round is finished, the points refine::propose gives from the file's rows are the
  // next round's tasks, and the file grows to them (as a grown sweep) until none is proposed.
  // Rank 0 decides each round from the rows alone and sends it: every rank holds the same plan.
  if (options.shard.count > 0 || !options.select.empty()) {
    throw AgreedInputError(
        plan.refinements.front().where +
        ": refine: each round is decided from the rows of every "
        "curve, so a refining sweep runs whole: run it without " +
        std::string(options.shard.count > 0 ? "--shard" : "--select") +
        " (on more ranks; --resume continues it round by round). To run part of a study apart, "
        "put the refining blocks in a sweep of their own (the same seed): a run of the "
        "whole study then takes its rows with --reuse FILE instead of computing them "
        "(docs/running.md, \"Refinement rounds\")");
  }
  sweep::Plan current = plan;
  sweep::Rounds rounds(current);
  RunOptions each = options;
  if (options.resume) {
    // A file of a killed run: its rounds again from its rows, up to the round it holds.
    for (const auto& points : agree_on_rounds(world, [&] {
           std::vector<std::vector<sweep::NewPoint>> added;
           const std::string path = existing_output(current, options);
           if (!path.empty()) {
             sweep::Plan replayed = current;
             sweep::Rounds replay(replayed);
             replay_rounds(replayed, replay, path, &added);
             check_refined_kept(replayed, path, options);
           }
           return added;
         }))
      rounds.add(current, points);
  }
  for (;;) {
    if (world.rank() == 0 && rounds.round() > 0) {
      std::fprintf(stderr, "qsweep: refinement round %d: %llu tasks\n", rounds.round(),
                   static_cast<unsigned long long>(current.tasks.size()));
    }
    each.round = rounds.round();
    // Rank 0, with the file's lock held: the next round's points from the rows; when there are
    // none, the thresholds of the last rows are stored (/thresholds, rounds.hpp).
    std::vector<sweep::NewPoint> decided;
    const auto after = [&](const std::string& path, store::WriterLock& lock) {
      const auto points = propose_from_file(rounds, current, path);
      if (!points) throw Error("a round ended with tasks not finished");  // run_once said ok
      decided = *points;
      if (decided.empty()) seal_thresholds(rounds, current, path, lock);
    };
    RunResult result = run_once(world, current, each, run_task, run_spanning, after);
    if (result.exit_code != exit_code::ok) return result;
    const auto next =
        agree_on_rounds(world, [&] { return std::vector<std::vector<sweep::NewPoint>>{decided}; });
    if (next.front().empty()) return result;
    rounds.add(current, next.front());
    each.resume = true;  // the file grows to the next round
    each.force = false;
  }
}

}  // namespace qsweep::run
