#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "kernels.hpp"
#include "qsweep/common/error.hpp"

namespace qsweep::sim {

Kernel resolve_kernel(const Options& options) {
  const bool exponential_independent =
      options.service.kind == ServiceKind::exponential && !options.identical_replicas;
  return exponential_independent && options.policy != Policy::redundancy_cos ? Kernel::markov
                                                                             : Kernel::event_driven;
}

double SojournHistogram::lower_edge(int bin) {
  const int exponent = (bin >> kMantissaBits) + kMinExponent;
  const int mantissa = bin & ((1 << kMantissaBits) - 1);
  return std::ldexp(1.0 + std::ldexp(mantissa, -kMantissaBits), exponent);
}

void SojournHistogram::merge(const SojournHistogram& other) {
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  total_ += other.total_;
}

double SojournHistogram::quantile(double p) const {
  if (total_ == 0) return std::numeric_limits<double>::quiet_NaN();
  // The smallest x with F(x) >= p, F linear inside each bin.
  const double target = p * static_cast<double>(total_);
  double below = 0.0;
  for (int b = 0; b < kBins; ++b) {
    const auto c = static_cast<double>(counts_[static_cast<std::size_t>(b)]);
    if (c > 0.0 && below + c >= target) {
      const double lo = lower_edge(b), hi = lower_edge(b + 1);
      return lo + (hi - lo) * std::clamp((target - below) / c, 0.0, 1.0);
    }
    below += c;
  }
  return lower_edge(kBins);
}

ReplicationStats run_replication(const model::System& system, const Options& options,
                                 std::uint64_t seed, std::uint64_t task_id,
                                 std::uint64_t replication, const ReplicationPlan& plan,
                                 Kernel kernel) {
  if (kernel == Kernel::automatic) kernel = resolve_kernel(options);
  if (kernel == Kernel::markov && resolve_kernel(options) != Kernel::markov)
    throw InputError(
        "the markov kernel needs exponential service, independent replica sizes "
        "and a policy other than redundancy_cos");
  Rng rng(seed, task_id, replication);
  const JobTypes types(system.family);
  Observer observer(system.N(), types.tracked().size(), options.qmax, options.occupancy_max,
                    plan.trace_window);
  const KernelContext context{system, options, types, rng, observer};
  const std::uint64_t events = options.policy == Policy::redundancy_coc
                                   ? run_redundancy(context, kernel, plan)
                                   : run_dispatch(context, kernel, plan);
  ReplicationStats stats = observer.finish(plan.warmup + plan.horizon);
  stats.events = events;
  return stats;
}

double mser5_warmup(const std::vector<double>& window_means, double window) {
  constexpr std::size_t kBatch = 5;
  const std::size_t m = window_means.size() / kBatch;
  if (m < 2) return 0.0;
  std::vector<double> batch(m, 0.0);
  for (std::size_t i = 0; i < m * kBatch; ++i) batch[i / kBatch] += window_means[i] / kBatch;
  // Suffix sums give the mean and squared deviation of batch[d..m) for every d.
  double sum = 0.0, sum_sq = 0.0, best = std::numeric_limits<double>::infinity();
  std::size_t best_d = 0;
  for (std::size_t d = m; d-- > 0;) {
    sum += batch[d];
    sum_sq += batch[d] * batch[d];
    if (d > m / 2) continue;
    const auto count = static_cast<double>(m - d);
    const double squared_deviation = std::max(sum_sq - sum * sum / count, 0.0);
    const double statistic = squared_deviation / (count * count);
    if (statistic <= best) {  // ties: the earlier start, i.e. the shorter warm-up
      best = statistic;
      best_d = d;
    }
  }
  return static_cast<double>(best_d * kBatch) * window;
}

}  // namespace qsweep::sim
