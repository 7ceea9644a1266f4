// Plan expansion speed: parse + validate + expand a sweep of K tasks (family construction and
// stability checks cached per system), the plan hash, and SHA-256 throughput.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <vector>

#include "qsweep/sweep/plan.hpp"
#include "qsweep/sweep/sha256.hpp"

namespace {

// Two families, 10 sizes, `loads` loads up to 1.2 (about a sixth unstable): 20 x loads tasks.
std::string sweep_text(std::int64_t loads) {
  return fmt::format(R"(
name: bench
blocks:
  - method: exact
    family: [ring, complete]
    N: {{linspace: [4, 13, 10]}}
    lambda: {{linspace: [0.001, 1.2, {}]}}
    qmax: 10
)",
                     loads);
}

void BM_ParsePlan(benchmark::State& state) {
  const std::string text = sweep_text(state.range(0) / 20);
  std::size_t tasks = 0;
  for (auto _ : state) {
    const auto plan = qsweep::sweep::parse_plan(text, "bench.yaml");
    tasks = plan.tasks.size();
    benchmark::DoNotOptimize(plan.hash.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * tasks));
}
BENCHMARK(BM_ParsePlan)->Arg(10'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_PlanHash(benchmark::State& state) {
  const auto plan = qsweep::sweep::parse_plan(sweep_text(state.range(0) / 20), "bench.yaml");
  for (auto _ : state) benchmark::DoNotOptimize(qsweep::sweep::plan_hash(plan.tasks));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * plan.tasks.size()));
}
BENCHMARK(BM_PlanHash)->Arg(100'000)->Unit(benchmark::kMillisecond);

// A task made again from its block by id (PlanTasks::at, what a worker and the results file do
// per task) beside a copy of a stored Task (what the plan held before it was lazy).
void BM_TaskAt(benchmark::State& state) {
  const auto plan = qsweep::sweep::parse_plan(sweep_text(state.range(0) / 20), "bench.yaml");
  std::uint64_t id = 0;
  for (auto _ : state) {
    const qsweep::sweep::Task& task = plan.tasks.at(id);
    benchmark::DoNotOptimize(&task);
    id = id + 1 == plan.tasks.size() ? 0 : id + 1;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_TaskAt)->Arg(100'000);

void BM_TaskCopy(benchmark::State& state) {
  const auto plan = qsweep::sweep::parse_plan(sweep_text(state.range(0) / 20), "bench.yaml");
  const std::vector<qsweep::sweep::Task> tasks(plan.tasks.begin(), plan.tasks.end());
  std::size_t id = 0;
  for (auto _ : state) {
    const qsweep::sweep::Task task = tasks[id];
    benchmark::DoNotOptimize(&task);
    id = id + 1 == tasks.size() ? 0 : id + 1;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_TaskCopy)->Arg(100'000);

void BM_Sha256(benchmark::State& state) {
  const std::string data(static_cast<std::size_t>(state.range(0)), 'q');
  for (auto _ : state) benchmark::DoNotOptimize(qsweep::sweep::sha256_hex(data));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * data.size()));
}
BENCHMARK(BM_Sha256)->Arg(1 << 20);

}  // namespace

BENCHMARK_MAIN();
