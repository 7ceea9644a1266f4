#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>

#include "kernels.hpp"
#include "qsweep/common/error.hpp"

namespace qsweep::sim {

Kernel resolve_kernel(const Options& options) {
  const bool exponential_independent =
      options.service.kind == ServiceKind::exponential && !options.identical_replicas;
  return exponential_independent && options.policy != Policy::redundancy_cos ? Kernel::markov
                                                                             : Kernel::event_driven;
}

Kernel resolve_kernel(const model::System& system, const Options& options) {
  return resolve_kernel(system, options, system.identical_speeds());
}

Kernel resolve_kernel(const model::System& system, const Options& options, bool identical_speeds) {
  const Kernel kernel = resolve_kernel(options);
  const model::Family& family = system.family;
  // Coupled streams need the uniformized race of the general markov kernel (docs/sim.md).
  const bool pooled =
      kernel == Kernel::markov && !options.coupled_streams() &&
      options.policy != Policy::redundancy_coc && family.kind() == model::FamilyKind::complete &&
      family.num_types() > 1 && identical_speeds &&
      (family.samples_in_random_order() ||
       (!JobTypes::tracks(family) && pooled_draw_size(options, family) <= kMaxPooledDraw));
  return pooled ? Kernel::pooled : kernel;
}

double SojournHistogram::lower_edge(int bin) {
  const int exponent = (bin >> kMantissaBits) + kMinExponent;
  const int mantissa = bin & ((1 << kMantissaBits) - 1);
  return std::ldexp(1.0 + std::ldexp(mantissa, -kMantissaBits), exponent);
}

// sum over k >= 1 of weight[k] P(Erlang(k, 1) <= y) = weight[k] P(Poisson(y) >= k), with
// prefix[k] = weight[1] + ... + weight[k-1] (p: scratch). The Poisson probabilities are computed
// outwards from the mode over mode +- (10 sqrt(y) + 10), beyond which they are below 1e-20:
// O(sqrt(y)), no underflow for any y.
double erlang_mixture_cdf(double y, const std::vector<double>& weight,
                          const std::vector<double>& prefix, std::vector<double>& p) {
  if (!(y > 0.0)) return 0.0;
  const std::size_t K = weight.size() - 1;
  const double reach = 10.0 * std::sqrt(y) + 10.0;
  const auto lo = static_cast<std::size_t>(std::max(0.0, std::floor(y - reach)));
  if (lo >= K) return prefix[K] + weight[K];  // P(Poisson(y) >= k) = 1 for every k <= K
  const auto hi = static_cast<std::size_t>(std::ceil(y + reach));
  // p[j - lo] = P(Poisson(y) = j) for j = lo..hi, from the mode.
  p.resize(hi - lo + 1);
  const auto mode = std::max(static_cast<std::size_t>(y), lo);
  const auto m = static_cast<double>(mode);
  p[mode - lo] = std::exp(m * std::log(y) - y - std::lgamma(m + 1.0));
  for (std::size_t j = mode; j > lo; --j) p[j - 1 - lo] = p[j - lo] * static_cast<double>(j) / y;
  for (std::size_t j = mode; j < hi; ++j)
    p[j + 1 - lo] = p[j - lo] * y / static_cast<double>(j + 1);
  // Weights up to lo count fully; from lo + 1 on by the tail P(Poisson(y) >= k).
  double cdf = prefix[lo] + (lo >= 1 ? weight[lo] : 0.0);
  double tail = 0.0;
  for (std::size_t k = hi; k > lo; --k) {
    tail += p[k - lo];
    if (k <= K) cdf += weight[k] * tail;
  }
  return cdf;
}

void SojournHistogram::add_erlang(double rate, const std::vector<double>& weight) {
  if (weight.size() < 2) return;
  std::vector<double> prefix(weight.size(), 0.0);  // prefix[k] = weight[1] + ... + weight[k-1]
  for (std::size_t k = 2; k < weight.size(); ++k) prefix[k] = prefix[k - 1] + weight[k - 1];
  const double total = prefix.back() + weight.back();
  // Expected count of a bin: the mixture's CDF at its upper edge minus at its lower edge (the
  // first and the last bin also take what lies beyond them).
  double below = 0.0;
  std::vector<double> scratch;
  for (int b = 0; b < kBins && below < total; ++b) {
    const double upper = b + 1 < kBins
                             ? erlang_mixture_cdf(rate * lower_edge(b + 1), weight, prefix, scratch)
                             : total;
    counts_[static_cast<std::size_t>(b)] += upper - below;
    below = upper;
  }
  total_ += total;
}

void SojournHistogram::merge(const SojournHistogram& other, double weight) {
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += weight * other.counts_[i];
  total_ += weight * other.total_;
}

std::vector<double> SojournHistogram::quantiles(const std::vector<double>& levels) const {
  std::vector<double> out;
  out.reserve(levels.size());
  if (!(total_ > 0.0)) {
    out.assign(levels.size(), std::numeric_limits<double>::quiet_NaN());
    return out;
  }
  // As quantile(), the bins walked once for all the levels (increasing).
  double below = 0.0;
  int b = 0;
  for (const double p : levels) {
    const double target = p * total_;
    for (; b < kBins; ++b) {
      const double c = counts_[static_cast<std::size_t>(b)];
      if (c > 0.0 && below + c >= target) break;
      below += c;
    }
    if (b == kBins) {
      out.push_back(lower_edge(kBins));
      continue;
    }
    const double c = counts_[static_cast<std::size_t>(b)];
    const double lo = lower_edge(b), hi = lower_edge(b + 1);
    out.push_back(lo + (hi - lo) * std::clamp((target - below) / c, 0.0, 1.0));
  }
  return out;
}

double SojournHistogram::quantile(double p) const {
  if (!(total_ > 0.0)) return std::numeric_limits<double>::quiet_NaN();
  // The smallest x with F(x) >= p, F linear inside each bin.
  const double target = p * total_;
  double below = 0.0;
  for (int b = 0; b < kBins; ++b) {
    const double c = counts_[static_cast<std::size_t>(b)];
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
  const Kernel automatic = resolve_kernel(system, options);
  if (kernel == Kernel::automatic) kernel = automatic;
  if (kernel == Kernel::markov && resolve_kernel(options) != Kernel::markov)
    throw InputError(
        "the markov kernel needs exponential service, independent replica sizes "
        "and a policy other than redundancy_cos");
  if (kernel == Kernel::pooled && automatic != Kernel::pooled)
    throw InputError(
        "the pooled kernel needs jsq, random, jiq or power_of_d on the complete family with "
        "d < N, identical speeds, exponential service and no common_random_numbers");
  const bool pooled = kernel == Kernel::pooled;
  Rng rng(seed, task_id, replication);
  Rng policy_stream(seed, task_id, replication, kPolicySubstream);
  Rng service_stream(seed, task_id, replication, kServiceSubstream);
  const bool coupled = options.coupled_streams();
  const JobTypes types(system.family);
  Observer observer(system.speeds, types.tracked().size(), options.qmax, options.occupancy_max,
                    plan.horizon, plan.batches, pooled, options.tail_times, options.observe_times);
  const std::vector<std::uint32_t> start = start_lengths(system, options);
  const KernelContext context{system,
                              options,
                              types,
                              rng,
                              observer,
                              coupled ? policy_stream : rng,
                              coupled ? service_stream : rng,
                              start};
  std::uint64_t events = 0;
  if (pooled) {
    events = run_pooled_dispatch(context, plan);
  } else if (options.policy == Policy::redundancy_coc) {
    events = run_redundancy(context, kernel, plan);
  } else {
    events = run_dispatch(context, kernel, plan);
  }
  ReplicationStats stats = observer.finish(plan.warmup + plan.horizon);
  // Exchangeable types too (every d-subset equally likely): E[Q_t] = p_t E[Q].
  const auto pool_types = [&](ReplicationStats& s) {
    for (std::size_t t = 0; t < s.mean_Q_type.size(); ++t)
      s.mean_Q_type[t] = types.tracked()[t].p * s.mean_Q;
  };
  if (pooled) {
    pool_types(stats);
    for (ReplicationStats& window : stats.truncated) pool_types(window);
  }
  stats.events = events;
  return stats;
}

namespace {
constexpr std::size_t kMserBatch = 5;
}  // namespace

double mser5_max_warmup(std::size_t windows, double window) {
  const std::size_t m = windows / kMserBatch;
  const std::size_t cut_batches = m / 2;  // MSER cuts at most half of the batches
  return m < 2 ? 0.0 : static_cast<double>(cut_batches * kMserBatch) * window;
}

double mser5_warmup(const std::vector<double>& window_means, double window, bool from_empty) {
  constexpr std::size_t kBatch = kMserBatch;
  const std::size_t m = window_means.size() / kBatch;
  if (m < 2) return 0.0;
  std::vector<double> batch(m, 0.0);
  for (std::size_t i = 0; i < m * kBatch; ++i) batch[i / kBatch] += window_means[i] / kBatch;
  const double total = std::accumulate(batch.begin(), batch.end(), 0.0);
  // Suffix sums give the mean and squared deviation of batch[d..m) for every d.
  double sum = 0.0, sum_sq = 0.0, best = std::numeric_limits<double>::infinity();
  std::size_t best_d = 0;
  for (std::size_t d = m; d-- > 0;) {
    sum += batch[d];
    sum_sq += batch[d] * batch[d];
    if (d > m / 2) continue;
    const auto count = static_cast<double>(m - d);
    // From empty the initialisation bias is downwards: a start that is not lower than the rest
    // is a random excursion (a burst), and cutting it would only waste time.
    if (from_empty && d > 0 && (total - sum) / static_cast<double>(d) >= sum / count) continue;
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
