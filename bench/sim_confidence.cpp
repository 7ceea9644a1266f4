// Cost per unit of confidence: CPU seconds for simulate() to reach a 1% relative half-width (95%)
// on E[T] at load 0.9, the horizon doubled from the argument until valid and precise (docs/sim.md,
// "Output analysis").
//   qsweep_bench_sim_confidence
// Counters: replications, events (all rounds), rel_hw reached, warmup detected.
#include <benchmark/benchmark.h>

#include "qsweep/sim/simulate.hpp"

namespace {

using namespace qsweep;

void to_one_percent(benchmark::State& state, model::FamilyParams family, sim::Policy policy,
                    double horizon) {
  const model::System system(model::Family(std::move(family)), {}, 0.9);
  sim::Options options;
  options.policy = policy;
  options.horizon = horizon;
  options.warmup = -1.0;
  options.replications = 8;
  options.target_rel_half_width = 0.01;
  sim::Result result;
  for (auto _ : state) result = sim::simulate(system, options, 2026, 1);
  state.counters["replications"] = result.replications;
  state.counters["events"] = static_cast<double>(result.events);
  state.counters["rel_hw"] = result.ET_hw / result.ET;
  state.counters["warmup"] = result.warmup;
}

model::FamilyParams family(model::FamilyKind kind, int N) {
  model::FamilyParams p;
  p.kind = kind;
  p.N = N;
  return p;
}

void Coc_Ring10(benchmark::State& state) {
  to_one_percent(state, family(model::FamilyKind::ring, 10), sim::Policy::redundancy_coc,
                 static_cast<double>(state.range(0)));
}
void Coc_RandomRegular100(benchmark::State& state) {
  to_one_percent(state, family(model::FamilyKind::random_regular, 100), sim::Policy::redundancy_coc,
                 static_cast<double>(state.range(0)));
}
void Jsq_Complete1000(benchmark::State& state) {
  to_one_percent(state, family(model::FamilyKind::complete, 1000), sim::Policy::jsq,
                 static_cast<double>(state.range(0)));
}
void Cos_Ring10(benchmark::State& state) {
  to_one_percent(state, family(model::FamilyKind::ring, 10), sim::Policy::redundancy_cos,
                 static_cast<double>(state.range(0)));
}

// Argument: simulated time per replication (after warm-up).
BENCHMARK(Coc_Ring10)->Arg(2'000)->Arg(20'000)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(Coc_RandomRegular100)->Arg(200)->Arg(2'000)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(Jsq_Complete1000)->Arg(20)->Arg(200)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(Cos_Ring10)->Arg(2'000)->Arg(20'000)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
