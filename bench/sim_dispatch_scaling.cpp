// Dispatching on the complete family at N = 10 ... 1e6 (issue 14, goal 1; docs/sim.md, "Pooled
// dispatching"): qsweep's pooled kernel (Kernel::automatic), its general Markov kernel
// (Kernel::markov) and a plain hand-written simulator, side by side in one binary.
//   qsweep_bench_sim_dispatch_scaling [--benchmark_filter='/1000000$']
// Policies: jsq and jiq on complete d = 2 (JSQ(2), JIQ among 2), power_of_d with policy_d = 2
// on complete d = 3 (the same law as JSQ(2) through another code path); lambda = 0.9, about
// 2e7 events per run from empty. Counters: events_per_s (per CPU second) and bytes_per_server
// (the peak of heap bytes allocated during the run, over N, counted by the operator new below).
#include <benchmark/benchmark.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

#include "qsweep/common/rng.hpp"
#include "qsweep/sim/kernel.hpp"

namespace {

std::atomic<std::size_t> g_heap_bytes{0}, g_heap_peak{0};

}  // namespace

// Every allocation of the process is counted (its size stored in front of the block).
void* operator new(std::size_t size) {
  auto* block = static_cast<std::size_t*>(std::malloc(size + 16));
  if (block == nullptr) throw std::bad_alloc();
  *block = size;
  const std::size_t now = g_heap_bytes += size;
  std::size_t peak = g_heap_peak.load();
  while (now > peak && !g_heap_peak.compare_exchange_weak(peak, now)) {
  }
  return block + 2;
}
void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  auto* block = static_cast<std::size_t*>(p) - 2;
  g_heap_bytes -= *block;
  std::free(block);
}
void operator delete(void* p, std::size_t /*size*/) noexcept { operator delete(p); }

namespace {

using namespace qsweep;

constexpr double kLambda = 0.9;
constexpr double kEvents = 2e7;

// The hand baseline: queue lengths, the servers ordered by length with where each length starts
// (bucket lists, O(1) moves), one Philox stream, sampled exponential holding times. Two servers
// sampled per arrival; returns the time average of the number of jobs.
class Hand {
 public:
  explicit Hand(int N) : N_(N), length_(N, 0), order_(N), position_(N), start_{0, N} {
    for (int n = 0; n < N; ++n) order_[n] = position_[n] = n;
  }
  template <bool Jiq>
  double run(Rng& rng, double horizon, std::uint64_t& events) {
    const double arrival_rate = kLambda * N_;
    double t = 0.0, area = 0.0, jobs = 0.0;
    while (true) {
      const double rate = arrival_rate + (N_ - start_[1]);  // speed 1: one per busy server
      const double dt = -std::log(rng.uniform_pos()) / rate;
      if (t + dt > horizon) break;
      area += jobs * dt;
      t += dt;
      ++events;
      if (rng.uniform() * rate < arrival_rate) {
        const int a = static_cast<int>(rng.below(N_));
        int b = static_cast<int>(rng.below(N_ - 1));
        b += b >= a ? 1 : 0;
        const bool take_b = Jiq ? length_[a] > 0 && length_[b] == 0 : length_[b] < length_[a];
        increment(take_b ? b : a);
        jobs += 1.0;
      } else {
        decrement(order_[start_[1] + rng.below(N_ - start_[1])]);
        jobs -= 1.0;
      }
    }
    return (area + jobs * (horizon - t)) / horizon;
  }

 private:
  void increment(int n) {  // n moves from the end of its length's group to the next one's start
    const int k = length_[n]++;
    if (static_cast<int>(start_.size()) < k + 3) start_.push_back(N_);
    swap_positions(position_[n], --start_[k + 1]);
  }
  void decrement(int n) {  // n moves from the start of its group to the end of the previous
    swap_positions(position_[n], start_[length_[n]--]++);
  }
  void swap_positions(int i, int j) {
    std::swap(order_[i], order_[j]);
    position_[order_[i]] = i;
    position_[order_[j]] = j;
  }
  int N_;
  std::vector<int> length_, order_, position_, start_;  // start_[k]: servers shorter than k
};

model::System complete(int N, int d) {
  model::FamilyParams p;
  p.kind = model::FamilyKind::complete;
  p.N = N;
  p.d = d;
  return model::System(model::Family(p), {}, kLambda);
}

double horizon_of(int N) { return kEvents / (2.0 * kLambda * N); }

// Runs `body(replication, events)` per iteration and sets the counters; the heap peak is taken
// over the iterations from the bytes allocated before them.
template <class Body>
void measure(benchmark::State& state, int N, Body&& body) {
  std::uint64_t events = 0, replication = 0;
  const std::size_t before = g_heap_bytes.load();
  g_heap_peak = before;
  for (auto _ : state) body(replication++, events);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["bytes_per_server"] = static_cast<double>(g_heap_peak.load() - before) / N;
}

template <bool Jiq>
void HandRun(benchmark::State& state) {
  const int N = static_cast<int>(state.range(0));
  measure(state, N, [&](std::uint64_t replication, std::uint64_t& events) {
    Rng rng(1, 1, replication);
    Hand hand(N);
    benchmark::DoNotOptimize(hand.run<Jiq>(rng, horizon_of(N), events));
  });
}
void Hand_Jsq2(benchmark::State& state) { HandRun<false>(state); }
void Hand_Jiq2(benchmark::State& state) { HandRun<true>(state); }

void QsweepRun(benchmark::State& state, sim::Policy policy, int family_d, sim::Kernel kernel) {
  const int N = static_cast<int>(state.range(0));
  const model::System system = complete(N, family_d);
  sim::Options options;
  options.policy = policy;
  options.policy_d = 2;
  measure(state, N, [&](std::uint64_t replication, std::uint64_t& events) {
    const auto stats =
        sim::run_replication(system, options, 1, 1, replication, {0.0, horizon_of(N), 0}, kernel);
    events += stats.events;
    benchmark::DoNotOptimize(stats.mean_Q);
  });
}
void Pooled_Jsq(benchmark::State& s) { QsweepRun(s, sim::Policy::jsq, 2, sim::Kernel::automatic); }
void Pooled_Jiq(benchmark::State& s) { QsweepRun(s, sim::Policy::jiq, 2, sim::Kernel::automatic); }
void Pooled_PowerOf2(benchmark::State& s) {
  QsweepRun(s, sim::Policy::power_of_d, 3, sim::Kernel::automatic);
}
void General_Jsq(benchmark::State& s) { QsweepRun(s, sim::Policy::jsq, 2, sim::Kernel::markov); }
void General_Jiq(benchmark::State& s) { QsweepRun(s, sim::Policy::jiq, 2, sim::Kernel::markov); }
void General_PowerOf2(benchmark::State& s) {
  QsweepRun(s, sim::Policy::power_of_d, 3, sim::Kernel::markov);
}

}  // namespace

// Side by side: for each N, the hand baseline, then the pooled and the general kernel, per policy
// (power_of_d is JSQ(2)'s law: its baseline is Hand_Jsq2 of the same N). One run each.
int main(int argc, char** argv) {
  using Fn = void (*)(benchmark::State&);
  const std::vector<std::pair<const char*, Fn>> runs = {{"Hand_Jsq2", Hand_Jsq2},
                                                        {"Pooled_Jsq", Pooled_Jsq},
                                                        {"General_Jsq", General_Jsq},
                                                        {"Hand_Jiq2", Hand_Jiq2},
                                                        {"Pooled_Jiq", Pooled_Jiq},
                                                        {"General_Jiq", General_Jiq},
                                                        {"Pooled_PowerOf2", Pooled_PowerOf2},
                                                        {"General_PowerOf2", General_PowerOf2}};
  for (int N = 10; N <= 1'000'000; N *= 10)
    for (const auto& [name, fn] : runs)
      benchmark::RegisterBenchmark(name, fn)->Arg(N)->Iterations(1)->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
