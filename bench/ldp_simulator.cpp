// Events per second of the occupancy simulator at n = 10^6 (continuous time, one core).
#include <benchmark/benchmark.h>

#include "qsweep/ldp/occupancy.hpp"

namespace {

using qsweep::ldp::OccupancySimulator;
using qsweep::ldp::Policy;

// Runs from all queues at length 1 for `horizon` time units (about 2 n horizon events at
// lambda = 1) without stopping at any level. Rates are per CPU second.
void simulate(benchmark::State& state, Policy policy, int d, double lambda) {
  const std::int64_t n = state.range(0);
  const double horizon = 5.0;
  std::uint64_t replication = 0;
  double events = 0;
  double steps = 0;
  for (auto _ : state) {
    qsweep::Rng rng(1, 2, replication++);
    OccupancySimulator sim(policy, d, n, lambda);
    sim.run_for(horizon, 1 << 30, rng);
    events += static_cast<double>(sim.events());
    steps += static_cast<double>(sim.steps());
    benchmark::DoNotOptimize(sim.max_length());
  }
  state.counters["events_per_second"] = benchmark::Counter(events, benchmark::Counter::kIsRate);
  state.counters["steps_per_event"] = steps / events;  // idle steps of the uniformized chain
}

}  // namespace

BENCHMARK_CAPTURE(simulate, jsq_lambda1, Policy::jsq, 1, 1.0)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate, jiq_lambda1, Policy::jiq, 1, 1.0)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate, jiq_lambda0_9, Policy::jiq, 1, 0.9)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate, power_of_2_lambda0_9, Policy::power_of_d, 2, 0.9)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate, jsq_lambda1_small_n, Policy::jsq, 1, 1.0)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
