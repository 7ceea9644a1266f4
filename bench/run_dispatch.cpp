// Dispatch throughput of the runner: no-op tasks through the coordinator, rows written to the
// results file as in a real run (one batch = one write per column). An MPI program:
//   bench/run_dispatch.sh                       (runs the configurations below side by side)
//   mpirun -n 3 qsweep_bench_run_dispatch [TASKS] [REPEATS] [--dedicated-coordinator]
// Prints tasks per second of the work phase (first task handed out to last row written) and of
// the whole run_plan call (with plan layout and file creation), best of REPEATS.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "qsweep/run/mpi.hpp"
#include "qsweep/run/runner.hpp"

namespace {

using namespace qsweep;

sweep::Plan no_op_plan(std::size_t n) {
  sweep::Plan plan;
  plan.name = "dispatch";
  plan.source = "bench";
  plan.hash = "dispatch-" + std::to_string(n);
  for (std::size_t i = 0; i < n; ++i) {
    sweep::Task task;
    task.id = i;
    task.system().family.kind = model::FamilyKind::ring;
    task.system().family.N = 4;
    task.system().lambda = 0.5;
    plan.tasks.push_back(task);
  }
  return plan;
}

sweep::TaskOutcome no_op(const sweep::Task&) {
  return sweep::TaskOutcome{TaskStatus::done, "", {}, 0.0, {}};
}

}  // namespace

int main(int argc, char** argv) {
  run::MpiSession mpi;
  try {
    const std::size_t tasks = argc > 1 ? std::stoul(argv[1]) : 200000;
    const int repeats = argc > 2 ? std::stoi(argv[2]) : 3;
    run::RunOptions options;
    options.dedicated_coordinator =
        argc > 3 && std::strcmp(argv[3], "--dedicated-coordinator") == 0;
    options.progress_seconds = -1;
    options.force = true;
    options.output = (std::filesystem::temp_directory_path() /
                      ("qsweep-bench-dispatch-" + std::to_string(getppid()) + ".h5"))
                         .string();
    const run::Comm world = run::Comm::world();
    const sweep::Plan plan = no_op_plan(tasks);
    double best_work = 1e300, best_total = 1e300;
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      const run::RunResult result = run::run_plan(world, plan, options, no_op);
      const double total =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      best_work = std::min(best_work, result.work_seconds);
      best_total = std::min(best_total, total);
    }
    if (mpi.rank() == 0) {
      const int workers = options.dedicated_coordinator ? mpi.size() - 1 : mpi.size();
      std::printf(
          "%d ranks, %d workers%s: %zu no-op tasks, best of %d: work %.3f s = %.0f tasks/s;"
          " whole run (layout, file creation) %.3f s = %.0f tasks/s\n",
          mpi.size(), workers, options.dedicated_coordinator ? " (dedicated coordinator)" : "",
          tasks, repeats, best_work, static_cast<double>(tasks) / best_work, best_total,
          static_cast<double>(tasks) / best_total);
      std::filesystem::remove(options.output);
    }
  } catch (const std::exception& e) {
    run::MpiSession::abort(e.what(), 1);
  }
  mpi.finalize();
  return 0;
}
