// Exact engine benchmarks (docs/exact.md has the figures). Peak memory: run one configuration per
// process (--benchmark_filter) and read the peak_rss_MiB counter (getrusage: the process maximum).
//   qsweep_bench_exact_engines --benchmark_filter='General/20/100'
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "qsweep/exact/exact.hpp"

namespace {

using namespace qsweep;

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void report(benchmark::State& state, const exact::Result& r) {
  state.counters["unions"] = static_cast<double>(r.unions);
  state.counters["EQ"] = r.EQ;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}

// Random 3-regular graph, uniform edges, identical speeds, rho = 0.9; args: N, qmax.
void General(benchmark::State& state) {
  model::FamilyParams params;
  params.kind = model::FamilyKind::random_regular;
  params.N = static_cast<int>(state.range(0));
  params.degree = 3;
  const model::System system(model::Family(params), {}, 0.9);
  exact::Options options;
  options.qmax = static_cast<int>(state.range(1));
  exact::Result r;
  for (auto _ : state) r = exact::evaluate(system, options);
  report(state, r);
}
BENCHMARK(General)
    ->ArgsProduct({{16, 20, 24}, {0, 100}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3);
BENCHMARK(General)->Args({28, 0})->Unit(benchmark::kSecond)->Iterations(1);

// Uniform complete family on identical servers, rho = 0.9; args: d, N, qmax.
void Symmetric(benchmark::State& state) {
  model::FamilyParams params;
  params.kind = model::FamilyKind::complete;
  params.d = static_cast<int>(state.range(0));
  params.N = static_cast<int>(state.range(1));
  const model::System system(model::Family(params), {}, 0.9);
  exact::Options options;
  options.qmax = static_cast<int>(state.range(2));
  exact::Result r;
  for (auto _ : state) r = exact::evaluate(system, options);
  report(state, r);
}
BENCHMARK(Symmetric)->ArgsProduct({{2, 3}, {1000, 10000}, {0, 100}})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
