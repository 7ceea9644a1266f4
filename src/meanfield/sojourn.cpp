#include "qsweep/meanfield/sojourn.hpp"

#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

namespace qsweep::meanfield {

SojournLaw::SojournLaw(Policy policy, int d, double lambda) : lambda_(lambda) {
  const bool mm1 = policy == Policy::random ||
                   ((policy == Policy::power_of_d || policy == Policy::redundancy_coc) && d == 1);
  if (policy == Policy::jsq || policy == Policy::jiq) {
    form_ = Form::exponential;
    rate_ = 1.0;
  } else if (mm1) {
    form_ = Form::exponential;
    rate_ = 1.0 - lambda;
  } else if (policy == Policy::redundancy_coc) {
    form_ = Form::redundancy;
    d_ = d;
  } else {
    form_ = Form::erlang_mixture;
    d_ = d;
    // x_j^d = lambda^(d e_j), e_j = (d^j - 1) / (d - 1): e_0 = 0, e_{j+1} = d e_j + 1 (exact in a
    // double up to 2^53), computed as exp(d e_j log1p(lambda - 1)) as the levels are
    // (docs/meanfield.md, "Formulas").
    const double log_lambda = std::log1p(lambda - 1.0);
    double exponent = 0.0;
    for (double a = 1.0; a >= 1e-300 && at_least_.size() < 100'000;
         a = std::exp(d * exponent * log_lambda)) {
      at_least_.push_back(a);
      exponent = d * exponent + 1.0;
    }
  }
}

double SojournLaw::survival(double t) const {
  if (!(t > 0.0)) return 1.0;
  switch (form_) {
    case Form::exponential:
      return std::exp(-rate_ * t);
    case Form::redundancy: {
      // (lambda + (1 - lambda) e^{(d-1)t})^{-d/(d-1)}, its logarithm as
      // -(d/(d-1)) ((d-1)t + log(1 - lambda) + log1p(lambda e^{-(d-1)t} / (1 - lambda))), which
      // neither overflows nor cancels.
      const double k = d_ - 1.0;
      const double inner =
          k * t + std::log1p(-lambda_) + std::log1p(lambda_ * std::exp(-k * t) / (1.0 - lambda_));
      return std::exp(-(d_ / k) * inner);
    }
    case Form::erlang_mixture: {
      // sum_j P(Poisson(t) = j) x_j^d, each term from its logarithm (no underflow of e^-t t^j
      // at large t); the terms are positive.
      const double log_t = std::log(t);
      double sum = 0.0;
      for (std::size_t j = 0; j < at_least_.size(); ++j) {
        const double jd = static_cast<double>(j);
        sum += std::exp(jd * log_t - t - std::lgamma(jd + 1.0) + std::log(at_least_[j]));
      }
      return sum;
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double SojournLaw::quantile(double p) const {
  if (!(p > 0.0 && p < 1.0)) return std::numeric_limits<double>::quiet_NaN();
  const double log_tail = std::log1p(-p);  // log(1 - p)
  switch (form_) {
    case Form::exponential:
      return -log_tail / rate_;
    case Form::redundancy: {
      // lambda + (1 - lambda) e^{(d-1)t} = (1 - p)^{-(d-1)/d}.
      const double k = d_ - 1.0;
      return std::log1p(std::expm1(-(k / d_) * log_tail) / (1.0 - lambda_)) / k;
    }
    case Form::erlang_mixture:
      break;
  }
  // log P(T > t) - log(1 - p) falls from -log(1 - p) > 0 at t = 0; bracket it by doubling.
  const auto f = [this, log_tail](double t) { return std::log(survival(t)) - log_tail; };
  double lo = 0.0, hi = 1.0;
  while (f(hi) > 0.0) {
    lo = hi;
    hi *= 2.0;
  }
  std::uintmax_t iterations = 200;
  const auto [a, b] = boost::math::tools::toms748_solve(
      f, lo, hi, lo == 0.0 ? -log_tail : f(lo), f(hi),
      boost::math::tools::eps_tolerance<double>(std::numeric_limits<double>::digits - 2),
      iterations);
  return (a + b) / 2.0;
}

std::vector<double> sojourn_tail(const Options& o, const std::vector<double>& times) {
  const SojournLaw law(o.policy, o.policy_d, o.lambda);
  std::vector<double> out;
  out.reserve(times.size());
  for (const double t : times) out.push_back(law.survival(t));
  return out;
}

std::vector<double> sojourn_quantiles(const Options& o, const std::vector<double>& levels) {
  const SojournLaw law(o.policy, o.policy_d, o.lambda);
  std::vector<double> out;
  out.reserve(levels.size());
  for (const double p : levels) out.push_back(law.quantile(p));
  return out;
}

}  // namespace qsweep::meanfield
