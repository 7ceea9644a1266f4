// qsweep run FILE [-o OUT] [--resume | --force]: the MPI sweep runner (see docs/running.md).
#include <cstdio>
#include <cstdlib>

#include "command.hpp"
#include "memory_option.hpp"
#include "qsweep/common/exit_codes.hpp"
#include "qsweep/run/launch.hpp"
#include "qsweep/run/mpi.hpp"
#include "qsweep/run/runner.hpp"
#include "qsweep/run/signals.hpp"
#include "qsweep/run/test_hold.hpp"

namespace qsweep::cli {
namespace {

struct RunArgs {
  std::string file;  // the sweep file
  run::RunOptions options;
  bool quiet = false;
  std::string max_task_memory, node_memory;  // SIZE texts, checked by the parser
  std::string shard;                         // I/K
};

int run_command(const RunArgs& args) {
  // First: a stop signal during start-up (MPI, the plan, creating the file) is kept for the run,
  // which then starts no task and exits with "incomplete", instead of killing the process.
  const run::SignalWatch signals;
  run::RunOptions options = args.options;
  options.progress_in_place = run::progress_in_place();  // before MPI_Init changes the environment
  if (args.quiet) options.progress_seconds = -1.0;
  if (!args.max_task_memory.empty())
    options.max_task_memory = sweep::parse_memory_size(args.max_task_memory, "--max-task-memory");
  if (!args.node_memory.empty())
    options.node_memory = sweep::parse_memory_size(args.node_memory, "--node-memory");
  if (!args.shard.empty()) options.shard = run::parse_shard(args.shard);
  options.command_line = own_command_line();
  const run::Environment launched = run::launch_environment();  // before MPI_Init changes it
  run::MpiSession mpi;
  int code = exit_code::ok;
  bool left_task_running = false;
  try {
    const std::string mislaunch = run::single_rank_mislaunch(mpi.size(), launched);
    if (!mislaunch.empty()) throw run::AgreedInputError(mislaunch);  // one rank: agreed
    run::TestHold::from_environment();  // a malformed testing hook stops the run before any file
    const run::Comm world = run::Comm::world();
    const sweep::Plan plan = run::distribute_plan(world, args.file);
    const run::RunResult result = run::run_plan(world, plan, options);
    code = result.exit_code;
    left_task_running = result.left_task_running;
  } catch (const run::StoppedWhilePlanning& e) {
    if (mpi.rank() == 0)
      std::fprintf(stderr, "qsweep: %s; nothing written: run it again\n", e.what());
    code = exit_code::incomplete;
  } catch (const run::AgreedInputError& e) {
    // Every rank has the same error and no collective file operation is under way.
    if (mpi.rank() == 0) std::fprintf(stderr, "qsweep: error: %s\n", e.what());
    code = exit_code::bad_input;
  } catch (const std::exception& e) {
    run::MpiSession::abort(e.what(), exit_code::error);
  } catch (...) {
    run::MpiSession::abort("unknown exception", exit_code::error);
  }
  mpi.finalize();
  if (left_task_running) {
    // A stopped task is still computing on its thread: do not run static destructors under it.
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}

const CommandRegistration registration(30, [](CLI::App& app, int& exit_code) {
  const auto [command, args] = add_file_command(
      app, exit_code, "run",
      "Run a sweep under MPI (mpirun -n RANKS qsweep run FILE): rank 0 coordinates, every rank "
      "computes and writes its rows into one HDF5 file",
      "sweep file (YAML)", run_command);
  command
      ->add_option("-o,--output", args->options.output,
                   "results file (default: the sweep file's output:)")
      ->type_name("FILE")
      ->check(non_empty("a results file name"));
  auto* resume = command->add_flag(
      "--resume", args->options.resume,
      "continue an existing results file: run the tasks not done (pending or failed); an edited "
      "sweep grows it, tasks matched by key (docs/running.md, \"Growing a study\"); starts the "
      "file if it does not exist");
  auto* force =
      command->add_flag("--force", args->options.force, "replace an existing results file");
  resume->excludes(force);
  command
      ->add_option("--progress", args->options.progress_seconds,
                   "seconds between progress lines (logs, mpirun, srun; by default also at 2, "
                   "5, 10 and 20 s; run directly in a terminal, one line is redrawn twice a "
                   "second)")
      ->capture_default_str()
      ->check(positive_number("a number of seconds"))
      ->each([options = &args->options](const std::string&) {
        options->progress_early_lines = false;
      });
  command->add_flag("-q,--quiet", args->quiet, "no progress lines");
  command->add_flag("--dedicated-coordinator", args->options.dedicated_coordinator,
                    "rank 0 only coordinates (by default it also computes on a thread)");
  add_memory_option(command, "--max-task-memory", args->max_task_memory,
                    "refuse (exit 2, before anything is written) a sweep with a task whose "
                    "estimated peak memory plus its rank's baseline exceeds SIZE (4G, 512M; "
                    "default: the node's memory divided by the ranks on the node)");
  add_memory_option(command, "--node-memory", args->node_memory,
                    "what the ranks of one node and their tasks may hold together; tasks wait "
                    "rather than exceed it (default: the node's physical memory, or its cgroup "
                    "limit where lower)");
  command
      ->add_option("--shard", args->shard,
                   "run only part I of K cost-balanced parts of the plan (one study over several "
                   "allocations or job-array elements, each into its own file; qsweep merge joins "
                   "them)")
      ->type_name("I/K")
      ->check(non_empty("I/K"));
  command
      ->add_option("--select", args->options.select,
                   "run only the tasks whose parameter columns have these values "
                   "(COLUMN=VALUE[,COLUMN=VALUE...], e.g. block=2 or policy=jsq,N=8; repeated: "
                   "any of them); the file holds the whole plan, the others run later with "
                   "--resume")
      ->type_name("SELECTION")
      ->check(non_empty("a selection"));
  command
      ->add_option("--reuse", args->options.reuse,
                   "copy the finished rows of this results file of another study (any name) to "
                   "the tasks of the same key instead of computing them; its rows must verify "
                   "(repeated: several files, the first that has a task gives it)")
      ->type_name("FILE")
      ->check(non_empty("a results file"));
  command->footer(
      "Exit codes: 0 all tasks done (or unstable; of the part, with --shard or --select), 1 "
      "runtime error (the job ended with MPI_Abort), "
      "2 bad input, a task that does not fit --max-task-memory or a node, or a mis-launch (one MPI "
      "rank where SLURM or the launcher started several processes; nothing written), 3 the "
      "sweep finished but some tasks failed, 4 stopped early (signal): continue with --resume. "
      "SIGUSR1 drains (running tasks finish), SIGTERM/SIGINT stop at once (running tasks stay "
      "pending).");
});

}  // namespace
}  // namespace qsweep::cli
