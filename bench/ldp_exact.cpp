// The exact lumped chain for jsq, j = 3, T = 1, lambda = 1: time and memory against n.
#include <benchmark/benchmark.h>

#include <cmath>

#include "qsweep/ldp/ldp.hpp"

namespace {

void exact_chain(benchmark::State& state) {
  qsweep::ldp::Options o;
  o.estimator = qsweep::ldp::Estimator::exact;
  o.n = state.range(0);
  o.j = 3;
  o.T = 1.0;
  o.lambda = 1.0;
  qsweep::ldp::Result result;
  for (auto _ : state) result = qsweep::ldp::estimate(o, 0, 0);
  state.counters["log10_p"] = result.log_probability / std::log(10.0);
  state.counters["bound_rel_width"] = result.relative_error;
  state.counters["states"] = result.states;
  state.counters["steps"] = result.events;
  // two probability vectors dominate the memory (the rows and moves are O(n))
  state.counters["vectors_MB"] = 2 * 8 * result.states / 1e6;
  state.counters["ns_per_state_step"] = 1e9 * result.cpu_seconds / (result.states * result.events);
}

}  // namespace

BENCHMARK(exact_chain)->Arg(500)->Arg(1000)->Arg(2000)->Iterations(1)->Unit(benchmark::kSecond);

BENCHMARK_MAIN();
