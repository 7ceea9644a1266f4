#include "qsweep/ldp/poisson.hpp"

#include <cmath>
#include <limits>

namespace qsweep::ldp {

namespace {
constexpr double relative_tolerance = 1e-17;
constexpr int max_terms = 100'000'000;
}  // namespace

double log_poisson_tail(std::int64_t k, double mu) {
  if (k <= 0) return 0.0;
  if (mu <= 0.0) return -std::numeric_limits<double>::infinity();
  const double a = static_cast<double>(k);
  // log of mu^k e^-mu / k!, the first term of both expansions below.
  const double log_front = a * std::log(mu) - mu - std::lgamma(a + 1.0);
  if (mu < a + 1.0) {
    // P(Poisson >= k) = front * sum_i mu^i / ((k+1)...(k+i)); the ratios mu/(k+i) are < 1.
    double term = 1.0;
    double sum = 1.0;
    for (int i = 1; i < max_terms; ++i) {
      term *= mu / (a + i);
      sum += term;
      if (term < sum * relative_tolerance) break;
    }
    return log_front + std::log(sum);
  }
  // P(Poisson <= k - 1) = Q(k, mu) by the continued fraction of the upper incomplete gamma
  // (modified Lentz), which converges fast for mu > k + 1; the tail is log1p(-Q).
  constexpr double tiny = 1e-300;
  double b = mu + 1.0 - a;
  double c = 1.0 / tiny;
  double d = 1.0 / b;
  double h = d;
  for (int i = 1; i < max_terms; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < 1e-16) break;
  }
  // Q = mu^k e^-mu / Gamma(k) * h = front * k * h.
  const double log_q = log_front + std::log(a) + std::log(h);
  return std::log1p(-std::exp(log_q));
}

double log_poisson_tail_bound(std::int64_t k, double mu) {
  const double a = static_cast<double>(k);
  if (a <= mu) return 0.0;
  if (mu <= 0.0) return -std::numeric_limits<double>::infinity();
  return -(a * std::log(a / mu) - a + mu);
}

}  // namespace qsweep::ldp

namespace qsweep::ldp {

std::int64_t sample_poisson(double mean, Rng& rng) {
  if (mean < 10.0) {
    // inversion by sequential search
    const double u = rng.uniform();
    double probability = std::exp(-mean);
    double cumulative = probability;
    std::int64_t k = 0;
    while (u >= cumulative && probability > 0.0) {
      ++k;
      probability *= mean / static_cast<double>(k);
      cumulative += probability;
    }
    return k;
  }
  // W. Hormann, "The transformed rejection method for generating Poisson random variables",
  // Insurance: Mathematics and Economics 12 (1993), algorithm PTRS.
  const double root = std::sqrt(mean);
  const double log_mean = std::log(mean);
  const double b = 0.931 + 2.53 * root;
  const double a = -0.059 + 0.02483 * b;
  const double inverse_alpha = 1.1239 + 1.1328 / (b - 3.4);
  const double v_r = 0.9277 - 3.6224 / (b - 2);
  while (true) {
    const double u = rng.uniform() - 0.5;
    const double v = rng.uniform();
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + mean + 0.43);
    if (us >= 0.07 && v <= v_r) return static_cast<std::int64_t>(k);
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inverse_alpha) - std::log(a / (us * us) + b) <=
        -mean + k * log_mean - std::lgamma(k + 1))
      return static_cast<std::int64_t>(k);
  }
}

}  // namespace qsweep::ldp
