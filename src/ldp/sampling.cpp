// Monte Carlo and importance sampling of p = P(E_j^n(T)) on the occupancy simulator.
#include <algorithm>
#include <cmath>
#include <limits>

#include "estimators.hpp"
#include "qsweep/ldp/occupancy.hpp"
#include "qsweep/ldp/poisson.hpp"
#include "qsweep/ldp/theory.hpp"  // optimal_tilt

namespace qsweep::ldp::detail {

namespace {

constexpr double minus_infinity = -std::numeric_limits<double>::infinity();

// Whether a target relative error stops sampling now; re-checked every `check_every` paths,
// never before `min_paths` (the error estimate itself is noisy on few paths).
constexpr std::uint64_t check_every = 16;
constexpr std::uint64_t min_paths = 100;

std::uint64_t path_budget(const Options& options) {
  return static_cast<std::uint64_t>(std::floor(options.samples));
}

}  // namespace

Result monte_carlo(const Options& options, std::uint64_t seed, std::uint64_t task_id) {
  const auto counts = initial_counts(options);
  const std::uint64_t budget = path_budget(options);
  std::uint64_t paths = 0;
  std::uint64_t hits = 0;
  double events = 0.0;
  auto relative_error = [&] {
    const double p = static_cast<double>(hits) / static_cast<double>(paths);
    return hits == 0 ? std::numeric_limits<double>::infinity()
                     : std::sqrt((1.0 - p) / (static_cast<double>(paths) * p));
  };
  while (paths < budget) {
    Rng rng(seed, task_id, paths);
    OccupancySimulator sim(options.policy, options.policy_d, options.n, options.lambda, counts);
    if (sim.run_for(options.T, options.j, rng)) ++hits;
    events += static_cast<double>(sim.events());
    ++paths;
    if (options.target_rel_error > 0.0 && paths >= min_paths && paths % check_every == 0 &&
        relative_error() <= options.target_rel_error)
      break;
  }

  // Wilson score interval: sensible also with few or no hits.
  const double N = static_cast<double>(paths);
  const double p = static_cast<double>(hits) / N;
  const double z2 = z95 * z95;
  const double centre = (p + z2 / (2 * N)) / (1 + z2 / N);
  const double half = z95 * std::sqrt(p * (1 - p) / N + z2 / (4 * N * N)) / (1 + z2 / N);
  Result result;
  // With no hit the lower end is 0 exactly (centre - half only rounds to about 1e-18).
  set_from_logs(result, std::log(p), std::log(hits == 0 ? 0.0 : std::max(centre - half, 0.0)),
                std::log(std::min(centre + half, 1.0)), options.n);
  result.relative_error = relative_error();
  result.samples = N;
  result.hits = static_cast<double>(hits);
  result.effective_samples = result.hits;  // weights 0 or 1
  result.events = events;
  return result;
}

namespace {

double log_add(double a, double b) {
  if (a == minus_infinity) return b;
  if (b == minus_infinity) return a;
  const double high = std::max(a, b);
  return high + std::log1p(std::exp(-std::fabs(a - b)));
}

// Mean and relative standard error of positive values given by their logs (the values can be
// far below the smallest double, e.g. 1e-172, and their squares below 1e-344).
class LogMoments {
 public:
  void add(double log_value) {
    ++count_;
    log_sum_ = log_add(log_sum_, log_value);
    log_sum_squares_ = log_add(log_sum_squares_, 2 * log_value);
  }
  double count() const { return static_cast<double>(count_); }
  double log_mean() const { return log_sum_ - std::log(count()); }
  // (sum of values)^2 / sum of squares: how many equal values would give the same spread.
  double effective_count() const {
    return log_sum_ == minus_infinity ? 0.0 : std::exp(2 * log_sum_ - log_sum_squares_);
  }
  double relative_error() const {
    if (log_sum_ == minus_infinity) return std::numeric_limits<double>::infinity();
    if (count_ < 2) return std::numeric_limits<double>::infinity();
    // E[X^2] / E[X]^2 - 1 is the relative variance of one value.
    const double ratio = std::exp(log_sum_squares_ + std::log(count()) - 2 * log_sum_);
    return std::sqrt(std::max(ratio - 1.0, 0.0) / (count() - 1.0));
  }

 private:
  std::uint64_t count_ = 0;
  double log_sum_ = minus_infinity;
  double log_sum_squares_ = minus_infinity;
};

}  // namespace

// The process is the uniformized chain (steps at the times of a Poisson clock of rate
// n (1 + lambda): an arrival with probability lambda / (1 + lambda), else the end of service at a
// uniformly chosen server, which does nothing if that server is idle) observed through an
// independent clock. So p = E[G(K)] with K the step at which the chain first makes a queue of
// length j and G(k) = P(Poisson(n (1 + lambda) T) >= k): the clock is integrated out exactly.
// The chain is simulated under the optimal-path tilt (arrivals x u, service x 1/u, i.e. arrival
// steps with probability lambda u / (lambda u + 1/u)) and weighted by its likelihood ratio
// r_a^A r_s^S (A arrival steps, S server steps); the estimate per path is G(K) r_a^A r_s^S.
Result importance(const Options& options, std::uint64_t seed, std::uint64_t task_id) {
  const auto counts = initial_counts(options);
  const double lambda = options.lambda;
  const double u = optimal_tilt(options.j, options.T, lambda);
  const double arrival_p = lambda / (1 + lambda);
  const double arrival_q = lambda * u / (lambda * u + 1 / u);
  const double log_ratio_arrival = std::log(arrival_p / arrival_q);
  const double log_ratio_server = std::log((1 - arrival_p) / (1 - arrival_q));
  const double clock_mean = static_cast<double>(options.n) * (1 + lambda) * options.T;

  // A path whose best possible remaining contribution, G(k) r_a^A r_s^S (the likelihood ratio
  // is a martingale and G decreases), falls below e^-40 times a lower bound of p is abandoned,
  // which biases p by less than e^-40 p. The bound: the chain makes the D arrivals jsq needs
  // (every queue up to j - 1, then one more) in its first D steps, and the clock rings D times.
  std::int64_t needed_arrivals = 1;
  for (std::size_t length = 0; length < counts.size(); ++length)
    needed_arrivals += counts[length] * (options.j - 1 - static_cast<std::int64_t>(length));
  const double log_floor = log_poisson_tail(needed_arrivals, clock_mean) +
                           static_cast<double>(needed_arrivals) * std::log(arrival_p) - 40;
  constexpr std::uint64_t abandon_check_every = 64;

  const std::uint64_t budget = path_budget(options);
  LogMoments moments;
  std::uint64_t hits = 0;
  double events = 0.0;
  while (moments.count() < static_cast<double>(budget)) {
    Rng rng(seed, task_id, static_cast<std::uint64_t>(moments.count()));
    OccupancySimulator sim(Policy::jsq, 1, options.n, lambda, counts);
    std::uint64_t arrivals = 0;
    std::uint64_t services = 0;
    // A tilt so strong that arrival_q rounds to 1 makes log_ratio_server infinite; the tilted
    // chain then never serves, and a path without services has the exact weight r_a^A.
    auto log_weight = [&] {
      return static_cast<double>(arrivals) * log_ratio_arrival +
             (services == 0 ? 0.0 : static_cast<double>(services) * log_ratio_server);
    };
    double log_value = minus_infinity;
    while (true) {
      if (sim.step(arrival_q, rng) == OccupancySimulator::Step::arrival) {
        ++arrivals;
        if (sim.max_length() >= options.j) {
          const auto steps = static_cast<std::int64_t>(arrivals + services);
          log_value = log_poisson_tail(steps, clock_mean) + log_weight();
          ++hits;
          break;
        }
      } else {
        ++services;
      }
      const std::uint64_t steps = arrivals + services;
      if (steps % abandon_check_every == 0 &&
          log_poisson_tail_bound(static_cast<std::int64_t>(steps), clock_mean) + log_weight() <
              log_floor)
        break;
    }
    moments.add(log_value);
    events += static_cast<double>(sim.steps());
    if (options.target_rel_error > 0.0 && moments.count() >= min_paths &&
        static_cast<std::uint64_t>(moments.count()) % check_every == 0 &&
        moments.relative_error() <= options.target_rel_error)
      break;
  }

  Result result;
  const double log_p = hits == 0 ? minus_infinity : moments.log_mean();
  const double rel = moments.relative_error();
  const double low_factor = 1 - z95 * rel;
  set_from_logs(result, log_p, low_factor > 0 ? log_p + std::log(low_factor) : minus_infinity,
                hits == 0 ? std::numeric_limits<double>::infinity() : log_p + std::log1p(z95 * rel),
                options.n);
  result.relative_error = rel;
  result.samples = moments.count();
  result.hits = static_cast<double>(hits);
  result.effective_samples = moments.effective_count();
  result.events = events;
  result.tilt = u;
  return result;
}

}  // namespace qsweep::ldp::detail
