// Dispatch throughput of the runner: no-op tasks through the coordinator, rows written to the
// results file as in a real run (one batch = one write per column). An MPI program:
//   bench/run_dispatch.sh                       (runs the configurations side by side)
//   mpirun -n 3 qsweep_bench_run_dispatch [TASKS] [REPEATS] [--dedicated-coordinator]
// Per repeat (one run_plan call) it prints the tasks per second of the work phase (first task
// handed out to last row written), the load average before the repeat, and per rank the CPU
// seconds and context switches of the whole call; then the median, min and max over the repeats.
// The work phase's CLOCK_MONOTONIC window is printed too, for `perf report --time` of a
// `perf record -k mono` run.

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <boost/serialization/vector.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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

double load_average() {
  std::ifstream in("/proc/loadavg");
  double one_minute = -1.0;
  in >> one_minute;
  return one_minute;
}

double monotonic_seconds() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// What this process used: CPU seconds (user + system), voluntary and involuntary context
// switches.
std::vector<double> usage() {
  rusage self{};
  getrusage(RUSAGE_SELF, &self);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  return {seconds(self.ru_utime) + seconds(self.ru_stime), static_cast<double>(self.ru_nvcsw),
          static_cast<double>(self.ru_nivcsw)};
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  run::MpiSession mpi;
  try {
    const std::size_t tasks = argc > 1 ? std::stoul(argv[1]) : 200000;
    const int repeats = argc > 2 ? std::stoi(argv[2]) : 5;
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
    const int workers = options.dedicated_coordinator ? mpi.size() - 1 : mpi.size();
    char label[96];
    std::snprintf(label, sizeof label, "%d ranks, %d workers%s", mpi.size(), workers,
                  options.dedicated_coordinator ? " (dedicated coordinator)" : "");
    std::vector<double> rates, loads;
    for (int r = 0; r < repeats; ++r) {
      const double load = mpi.rank() == 0 ? load_average() : 0.0;
      world.barrier();
      const std::vector<double> before = usage();
      const auto start = std::chrono::steady_clock::now();
      const run::RunResult result = run::run_plan(world, plan, options, no_op);
      const double total =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double end = monotonic_seconds();
      std::vector<double> used = usage();
      for (std::size_t i = 0; i < used.size(); ++i) used[i] -= before[i];
      const std::vector<std::vector<double>> per_rank = world.gather(used, 0);
      if (mpi.rank() != 0) continue;
      const double rate = static_cast<double>(tasks) / result.work_seconds;
      rates.push_back(rate);
      loads.push_back(load);
      std::string cpu, switches;
      for (const std::vector<double>& rank : per_rank) {
        char text[64];
        std::snprintf(text, sizeof text, " %.2f", rank[0]);
        cpu += text;
        std::snprintf(text, sizeof text, " %.0f/%.0f", rank[1], rank[2]);
        switches += text;
      }
      std::printf(
          "%s: repeat %d: work %.3f s = %.3g tasks/s (load %.2f); whole run %.3f s; per rank: "
          "CPU s%s, context switches voluntary/involuntary%s; work window %.6f,%.6f\n",
          label, r + 1, result.work_seconds, rate, load, total, cpu.c_str(), switches.c_str(),
          end - result.work_seconds, end);
    }
    if (mpi.rank() == 0) {
      std::printf(
          "%s: %zu no-op tasks, %d repeats: median %.3g tasks/s (min %.3g, max %.3g), "
          "load %.2f-%.2f\n",
          label, tasks, repeats, median(rates), *std::min_element(rates.begin(), rates.end()),
          *std::max_element(rates.begin(), rates.end()),
          *std::min_element(loads.begin(), loads.end()),
          *std::max_element(loads.begin(), loads.end()));
      std::filesystem::remove(options.output);
    }
  } catch (const std::exception& e) {
    run::MpiSession::abort(e.what(), 1);
  }
  mpi.finalize();
  return 0;
}
