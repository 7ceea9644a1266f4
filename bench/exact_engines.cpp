// Exact engine benchmarks (docs/exact.md has the figures). Peak memory: run one configuration per
// process (--benchmark_filter) and read the peak_rss_MiB counter (getrusage: the process maximum).
//   qsweep_bench_exact_engines --benchmark_filter='General/20/100'
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "qsweep/exact/engine.hpp"
#include "qsweep/exact/exact.hpp"
#include "qsweep/exact/lattice_array.hpp"

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

// The general engine's means (detail::general_engine, qmax = 0) against a skeleton with the same
// memory accesses, side by side in one process: the same block of 2^(N+4) bytes from the same
// allocator, the forward pass pushing two doubles to B | t for every type from every reached
// union B in increasing order, the backward pass reading cell B | t for every type in decreasing
// order and writing one double; one multiply-add per access and nothing else (no lam(B), mu(B),
// division, sums or per-type means). Random 3-regular graph (graph_seed 1), rho = 0.9; args: N,
// per_type (0/1), rounds. Each round runs both (the skeleton first in odd rounds, the engine in
// even ones, so round 0 gives the engine memory no process has touched yet). Counters, CPU time
// (user + system, getrusage) per call: engine_s, skeleton_s (minimum over the rounds), ratio =
// engine_s / skeleton_s, engine_sys_pct (system share of the engine's CPU time in its fastest
// round), engine_sys_pct_round0, engine_minflt (minor page faults of one engine call).
struct CpuSample {
  double user = 0.0, sys = 0.0;
  long minflt = 0;
};

CpuSample cpu_now() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  return {seconds(usage.ru_utime), seconds(usage.ru_stime), usage.ru_minflt};
}

CpuSample cpu_between(const CpuSample& a, const CpuSample& b) {
  return {b.user - a.user, b.sys - a.sys, b.minflt - a.minflt};
}

double skeleton(const std::vector<model::JobType>& types, int N, double total_rate) {
  struct Cell {
    double g, h;
  };
  const std::uint64_t size = std::uint64_t{1} << N;
  std::vector<std::uint32_t> mask;
  std::vector<double> rate;
  for (const auto& type : types) {
    mask.push_back(static_cast<std::uint32_t>(type.servers));
    rate.push_back(total_rate * type.p);
  }
  const std::size_t T = mask.size();
  const double c = 1.0 / total_rate;  // keeps every value in range
  exact::ZeroedMemory memory(size * sizeof(Cell));
  auto* cell = static_cast<Cell*>(memory.data());
  auto push = [&](std::uint32_t B, double g, double g1) {
    for (std::size_t t = 0; t < T; ++t) {
      cell[B | mask[t]].g += rate[t] * g;
      cell[B | mask[t]].h += rate[t] * g1;
    }
  };
  push(0, 1.0, 0.0);
  for (std::uint64_t b = 1; b < size; ++b) {
    const auto B = static_cast<std::uint32_t>(b);
    if (cell[B].g == 0.0) continue;
    const Cell now{cell[B].g * c, cell[B].h * c};
    push(B, now.g, now.h);
    cell[B] = now;
  }
  double total = 0.0;
  for (std::uint64_t b = size; b-- > 1;) {
    const auto B = static_cast<std::uint32_t>(b);
    if (cell[B].g == 0.0) continue;
    double s = 0.0;
    for (std::size_t t = 0; t < T; ++t) s += rate[t] * cell[B | mask[t]].h;
    cell[B].h = 1.0 + c * s;
    total += cell[B].h;
  }
  return total;
}

void GeneralVsSkeleton(benchmark::State& state) {
  model::FamilyParams params;
  params.kind = model::FamilyKind::random_regular;
  params.N = static_cast<int>(state.range(0));
  params.degree = 3;
  const model::System system(model::Family(params), {}, 0.9);
  const bool per_type = state.range(1) != 0;
  const auto rounds = static_cast<int>(state.range(2));
  const auto types = system.family.enumerate();
  double engine_best = 1e300, skeleton_best = 1e300, sys_share = 0.0, sys_share0 = 0.0;
  long faults = 0;
  for (auto _ : state) {
    for (int round = 0; round < rounds; ++round) {
      for (int part = 0; part < 2; ++part) {
        const bool engine = (part == 0) == (round % 2 == 0);
        const CpuSample before = cpu_now();
        if (engine) {
          const auto m = exact::detail::general_engine(types, system.speeds,
                                                       system.total_arrival_rate(), 0, per_type);
          benchmark::DoNotOptimize(m.EQ);
        } else {
          benchmark::DoNotOptimize(skeleton(types, params.N, system.total_arrival_rate()));
        }
        const CpuSample used = cpu_between(before, cpu_now());
        const double cpu = used.user + used.sys;
        if (engine) {
          if (round == 0) sys_share0 = used.sys / cpu;
          if (cpu < engine_best) {
            engine_best = cpu;
            sys_share = used.sys / cpu;
          }
          faults = used.minflt;
        } else {
          skeleton_best = std::min(skeleton_best, cpu);
        }
      }
    }
  }
  state.counters["engine_s"] = engine_best;
  state.counters["skeleton_s"] = skeleton_best;
  state.counters["ratio"] = engine_best / skeleton_best;
  state.counters["engine_sys_pct"] = 100.0 * sys_share;
  state.counters["engine_sys_pct_round0"] = 100.0 * sys_share0;
  state.counters["engine_minflt"] = static_cast<double>(faults);
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(GeneralVsSkeleton)
    ->ArgsProduct({{20, 24}, {0, 1}, {5}})
    ->Args({26, 1, 3})
    ->Args({28, 1, 2})  // 4 GiB, about 1 min of CPU time
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

// Uniform complete family on identical servers, rho = 0.9; args: d, N, qmax.
// The zero fill of the general engine's block for the next task: a fresh mapping written once
// (page faults; on this VM also the host's first touch of memory the guest freed ~2 s before or
// longer) against the block kept from the previous iteration (memset of backed pages), as
// `qsweep run` keeps it (exact/lattice_array.hpp). CPU time per iteration: map (or reuse), write
// one byte per 4 KiB, unmap (or keep); the kept block is mapped and written before the timing.
void touch_and_keep(std::size_t bytes) {
  exact::ZeroedMemory block(bytes);
  auto* data = static_cast<char*>(block.data());
  for (std::size_t i = 0; i < bytes; i += 4096) data[i] = 1;
  benchmark::DoNotOptimize(data);
  exact::keep_zeroed_block(std::move(block));
}

void ZeroedReuse(benchmark::State& state) {
  const std::size_t bytes = std::size_t{1} << state.range(0);
  std::optional<exact::KeepZeroedBlocks> keep;
  if (state.range(1) != 0) {
    keep.emplace();
    touch_and_keep(bytes);
  }
  for (auto _ : state) touch_and_keep(bytes);
}
BENCHMARK(ZeroedReuse)
    ->ArgsProduct({{28, 30}, {0, 1}})
    ->Iterations(6)
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

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
