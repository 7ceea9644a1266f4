// Cost of writing result rows into the results file (independent MPI-IO on one rank), and the
// file size per task. Rows are those of a real exact task (ring N = 6, qmax = 20, per-type
// results: 34 columns, a 21-wide distribution, ragged per-type and per-server values).
//   qsweep_bench_run_store_write --benchmark_repetitions=3
// Counters: us_per_row (wall time per row written), bytes_per_task (file size / tasks).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "qsweep/run/plan_results.hpp"
#include "qsweep/store/layout.hpp"
#include "qsweep/store/results_file.hpp"
#include "qsweep/sweep/execute.hpp"
#include "qsweep/sweep/plan.hpp"

namespace {

using namespace qsweep;
constexpr std::size_t kTasks = 20000;

struct Fixture {
  sweep::Plan plan;
  std::unique_ptr<store::Layout> layout;
  std::string path;
  sweep::TaskOutcome outcome;  // of task 0, written into every row (same shape)

  Fixture() {
    plan = sweep::parse_plan(
        "name: bench\nblocks:\n  - method: exact\n    family: ring\n    N: 6\n"
        "    lambda: {linspace: [0.01, 0.95, " +
            std::to_string(kTasks) + "]}\n    qmax: 20\n",
        "bench.yaml");
    layout = std::make_unique<store::Layout>(run::results_layout(plan));
    path = (std::filesystem::temp_directory_path() /
            ("qsweep-bench-store-" + std::to_string(getpid()) + ".h5"))
               .string();
    run::create_results_file(path, plan, *layout, store::Provenance::now("bench", 1),
                             MPI_COMM_WORLD);
    outcome = sweep::execute(plan.tasks[0]);
  }
  ~Fixture() { std::filesystem::remove(path); }
};

// Made on first use, destroyed (file removed) before MPI ends.
std::unique_ptr<Fixture> g_fixture;
Fixture& fixture() {
  if (!g_fixture) g_fixture = std::make_unique<Fixture>();
  return *g_fixture;
}

// Batches of `batch` rows: consecutive task ids (stride 1) or scattered (stride 7), as batches
// of similar-cost tasks or of tasks ordered by cost give them.
void BM_WriteRows(benchmark::State& state) {
  Fixture& f = fixture();
  const auto batch = static_cast<std::size_t>(state.range(0));
  const auto stride = static_cast<std::uint64_t>(state.range(1));
  store::ResultsFile file(f.path, *f.layout, MPI_COMM_WORLD);
  std::uint64_t next = 0;
  for (auto _ : state) {
    std::vector<run::FinishedTask> finished;
    for (std::size_t i = 0; i < batch; ++i) {
      finished.push_back({(next * stride) % kTasks, f.outcome, 0});
      ++next;
    }
    run::write_finished(file, f.plan, finished);
  }
  file.close();
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
  state.counters["us_per_row"] =
      benchmark::Counter(static_cast<double>(state.iterations() * batch) * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_WriteRows)
    ->ArgNames({"batch", "stride"})
    ->Args({1, 1})
    ->Args({16, 1})
    ->Args({256, 1})
    ->Args({16, 7})
    ->Args({256, 7})
    ->UseRealTime();

void BM_WriteAttempts(benchmark::State& state) {
  Fixture& f = fixture();
  const auto batch = static_cast<std::size_t>(state.range(0));
  store::ResultsFile file(f.path, *f.layout, MPI_COMM_WORLD);
  std::vector<std::uint64_t> ids(batch);
  std::vector<std::int32_t> attempts(batch, 1);
  std::uint64_t next = 0;
  for (auto _ : state) {
    for (auto& id : ids) id = next++ % kTasks;
    file.write_attempts(ids, attempts);
  }
  file.close();
  state.counters["us_per_row"] =
      benchmark::Counter(static_cast<double>(state.iterations() * batch) * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_WriteAttempts)->Arg(1)->Arg(256)->UseRealTime();

void BM_FileSize(benchmark::State& state) {
  Fixture& f = fixture();
  for (auto _ : state) benchmark::DoNotOptimize(std::filesystem::file_size(f.path));
  state.counters["bytes_per_task"] =
      static_cast<double>(std::filesystem::file_size(f.path)) / static_cast<double>(kTasks);
}
BENCHMARK(BM_FileSize)->Iterations(1);

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  g_fixture.reset();
  MPI_Finalize();
  return 0;
}
