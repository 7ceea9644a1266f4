// Exact engine benchmarks (docs/exact.md has the figures). Peak memory: run one configuration per
// process (--benchmark_filter) and read the peak_rss_MiB counter (getrusage: the process maximum).
//   qsweep_bench_exact_engines --benchmark_filter='General/20/100'
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cmath>

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

// Joint pmf of the per-type counts at lambda = 1 - 10^-k; args: k, types, joint_qmax, joint_bin.
// Two types: the wedge of the redundancy paper's Fig. 2 (servers {1,2} p = 7/12, {2,3} p = 5/12);
// three: uniform complete N = 3, d = 2. qmax = 0, no per-type means: the joint pass alone (plus
// the lattice means, microseconds here).
void Joint(benchmark::State& state) {
  model::FamilyParams params;
  params.N = 3;
  if (state.range(1) == 2) {
    params.kind = model::FamilyKind::explicit_types;
    params.types = {{{0, 1}, 7.0 / 12}, {{1, 2}, 5.0 / 12}};
  } else {
    params.kind = model::FamilyKind::complete;
    params.d = 2;
  }
  const double lambda = 1.0 - std::pow(10.0, -static_cast<double>(state.range(0)));
  const model::System system(model::Family(params), {}, lambda);
  exact::Options options;
  options.per_type = false;
  options.light_traffic = false;
  options.joint_qmax = static_cast<int>(state.range(2));
  options.joint_bin = static_cast<int>(state.range(3));
  exact::Result r;
  for (auto _ : state) r = exact::evaluate(system, options);
  const double cells = std::pow(options.joint_qmax + 1.0, static_cast<double>(state.range(1)));
  state.counters["cells"] = cells;
  state.counters["ns_per_cell"] = benchmark::Counter(
      cells * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["bins"] = static_cast<double>(r.joint_pmf.size());
  state.counters["joint_mass"] = r.joint_mass;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(Joint)
    ->Args({1, 2, 199, 1})      // Fig. 2(c): lambda = 0.9, every count up to 199
    ->Args({4, 2, 29999, 300})  // Fig. 2(d): lambda = 0.9999, 100 x 100 bins of 300
    ->Args({2, 3, 999, 10})     // three types, 1e9 cells
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3);

}  // namespace

BENCHMARK_MAIN();
