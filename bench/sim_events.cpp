// Events per second of one simulation replication (single core), docs/sim.md.
//   qsweep_bench_sim_events --benchmark_repetitions=3
// Counters: events_per_s (arrivals + departures per CPU second), maxrss_MiB (peak resident set of
// the process so far: it must not grow with the simulated horizon, see the Horizon benchmarks).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "qsweep/sim/kernel.hpp"

namespace {

using namespace qsweep;

model::System make(model::FamilyKind kind, int N, double lambda, int d = 2) {
  model::FamilyParams p;
  p.kind = kind;
  p.N = N;
  if (kind == model::FamilyKind::complete) p.d = d;
  if (kind == model::FamilyKind::random_regular) p.degree = 3;
  return model::System(model::Family(p), {}, lambda);
}

// The system of a benchmark with arguments (N, load in percent).
model::System from_args(const benchmark::State& state, model::FamilyKind kind, int d = 2) {
  return make(kind, static_cast<int>(state.range(0)), static_cast<double>(state.range(1)) / 100.0,
              d);
}

double maxrss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// One replication of about `target_events` events per iteration (horizon from the event rate
// N (lambda + lambda) of a stable system).
void run(benchmark::State& state, const model::System& system, sim::Policy policy,
         sim::ServiceKind service, double target_events) {
  sim::Options options;
  options.policy = policy;
  options.service.kind = service;
  const double horizon = target_events / (2.0 * system.total_arrival_rate());
  std::uint64_t events = 0, replication = 0;
  for (auto _ : state) {
    const auto stats =
        sim::run_replication(system, options, 1, 1, replication++, {0.0, horizon, 0});
    events += stats.events;
    benchmark::DoNotOptimize(stats.mean_Q);
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["maxrss_MiB"] = maxrss_mib();
}

// Arguments: N, load in percent.
void Coc_Ring(benchmark::State& state) {
  run(state, from_args(state, model::FamilyKind::ring), sim::Policy::redundancy_coc,
      sim::ServiceKind::exponential, 4e6);
}
void Coc_RandomRegular(benchmark::State& state) {
  run(state, from_args(state, model::FamilyKind::random_regular), sim::Policy::redundancy_coc,
      sim::ServiceKind::exponential, 4e6);
}
// The general kernel on the same systems, for the cost of residual sizes and the event heap
// (deterministic replicas waste capacity: redundancy is stable only at lower loads).
void Coc_Ring_Deterministic(benchmark::State& state) {
  run(state, from_args(state, model::FamilyKind::ring), sim::Policy::redundancy_coc,
      sim::ServiceKind::deterministic, 4e6);
}
// JSQ(2): pairs sampled from the complete family, the shorter queue of the two.
void Jsq_Complete(benchmark::State& state) {
  run(state, from_args(state, model::FamilyKind::complete), sim::Policy::jsq,
      sim::ServiceKind::exponential, 1e7);
}
// Full JSQ: the complete family with d = N has one type, all servers (length buckets).
void Jsq_CompleteAll(benchmark::State& state) {
  run(state, from_args(state, model::FamilyKind::complete, static_cast<int>(state.range(0))),
      sim::Policy::jsq, sim::ServiceKind::exponential, 1e7);
}
void PowerOfD_Complete(benchmark::State& state) {
  run(state, from_args(state, model::FamilyKind::complete, 3), sim::Policy::power_of_d,
      sim::ServiceKind::exponential, 1e7);
}
void Cos_Ring(benchmark::State& state) {
  run(state, from_args(state, model::FamilyKind::ring), sim::Policy::redundancy_cos,
      sim::ServiceKind::exponential, 4e6);
}
// Memory against simulated time: the same system with horizons growing 16-fold.
void Coc_Ring_Horizon(benchmark::State& state) {
  run(state, make(model::FamilyKind::ring, 100, 0.95), sim::Policy::redundancy_coc,
      sim::ServiceKind::exponential, static_cast<double>(state.range(0)));
}

BENCHMARK(Coc_Ring)->Args({10, 70})->Args({10, 95})->Args({100, 70})->Args({100, 95})->Unit(
    benchmark::kMillisecond);
BENCHMARK(Coc_RandomRegular)
    ->Args({10, 70})
    ->Args({10, 95})
    ->Args({100, 70})
    ->Args({100, 95})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(Coc_Ring_Deterministic)->Args({10, 50})->Args({10, 70})->Unit(benchmark::kMillisecond);
BENCHMARK(Jsq_Complete)->Args({1000, 70})->Args({1000, 95})->Unit(benchmark::kMillisecond);
BENCHMARK(Jsq_CompleteAll)->Args({1000, 70})->Args({1000, 95})->Unit(benchmark::kMillisecond);
BENCHMARK(PowerOfD_Complete)->Args({1000, 90})->Unit(benchmark::kMillisecond);
BENCHMARK(Cos_Ring)->Args({10, 90})->Unit(benchmark::kMillisecond);
BENCHMARK(Coc_Ring_Horizon)
    ->Arg(2'000'000)
    ->Arg(8'000'000)
    ->Arg(32'000'000)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
