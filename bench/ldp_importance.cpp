// Importance sampling of P(E_3^n(1)) at lambda = 1: CPU time to reach 1% relative error, and the
// relative error one CPU second buys (rel_error * sqrt(cpu_seconds), constant for a fixed n).
#include <benchmark/benchmark.h>

#include <cmath>

#include "qsweep/ldp/ldp.hpp"

namespace {

void importance(benchmark::State& state) {
  qsweep::ldp::Options o;
  o.estimator = qsweep::ldp::Estimator::importance;
  o.n = state.range(0);
  o.j = 3;
  o.T = 1.0;
  o.lambda = 1.0;
  o.samples = 1e8;
  o.target_rel_error = 0.01;
  qsweep::ldp::Result result;
  std::uint64_t task = 0;
  for (auto _ : state) result = qsweep::ldp::estimate(o, 2026, task++);
  state.counters["log10_p"] = result.log_probability / std::log(10.0);
  state.counters["rel_error"] = result.relative_error;
  state.counters["cpu_seconds"] = result.cpu_seconds;
  state.counters["paths"] = result.samples;
  state.counters["rel_error_in_1s"] = result.relative_error * std::sqrt(result.cpu_seconds);
  state.counters["rel_variance_per_path"] =
      result.relative_error * result.relative_error * (result.samples - 1);
  state.counters["steps_per_second"] = result.events / result.cpu_seconds;
}

}  // namespace

BENCHMARK(importance)->Arg(100)->Arg(400)->Arg(1600)->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
