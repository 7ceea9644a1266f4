// Rate formulas and the fluid limit against closed forms and direct minimisations.
#include "qsweep/ldp/theory.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "qsweep/common/error.hpp"
#include "qsweep/ldp/poisson.hpp"

namespace {

using namespace qsweep::ldp;

double ell(double z) { return z * std::log(z) - z + 1; }

// min over service tilt s of lambda l(a) + l(s) with lambda a - s = b, by golden section on s.
double path_cost_by_minimisation(double b, double lambda) {
  auto cost = [&](double s) { return lambda * ell((b + s) / lambda) + ell(s); };
  double low = std::max(1e-12, -b + 1e-12), high = 50;
  const double ratio = (std::sqrt(5.0) - 1) / 2;
  for (int it = 0; it < 200; ++it) {
    const double x1 = high - ratio * (high - low), x2 = low + ratio * (high - low);
    (cost(x1) < cost(x2) ? high : low) = cost(x1) < cost(x2) ? x2 : x1;
  }
  return cost((low + high) / 2);
}

TEST(Theory, PathCostIsTheCheapestTiltForTheSpeed) {
  for (double lambda : {0.5, 1.0, 1.7})
    for (double b : {0.0, 0.3, 1.0, 2.5})
      EXPECT_NEAR(path_cost(b, lambda), path_cost_by_minimisation(b, lambda), 1e-12)
          << "b " << b << " lambda " << lambda;
}

TEST(Theory, GoldenRatioCase) {
  const double phi = (1 + std::sqrt(5.0)) / 2;
  EXPECT_NEAR(decay_rate(3, 1.0), std::log(phi) + 2 - std::sqrt(5.0), 1e-15);
  EXPECT_NEAR(decay_rate(3, 1.0), 0.2451438, 1e-7);
  EXPECT_NEAR(optimal_tilt(3, 1.0, 1.0), phi, 1e-15);
  // j - 2 = T gives the same rate per unit time for any T
  EXPECT_NEAR(decay_rate(5, 3.0), 3 * decay_rate(3, 1.0), 1e-14);
}

TEST(Theory, LargeTApproximation) {
  // L(b) = b^2/4 - b^4/192 + O(b^6): the ratio tends to 1 from below like 1 - b^2/48, b = c/T.
  for (double T : {10.0, 100.0, 1000.0}) {
    const double b = 2 / T;
    const double ratio = decay_rate(4, T) / decay_rate_large_T(4, T);
    EXPECT_LT(ratio, 1.0);
    EXPECT_NEAR(ratio, 1 - b * b / 48, 0.01 * std::pow(b, 4));
  }
}

TEST(Theory, FixedLambdaRegimes) {
  EXPECT_DOUBLE_EQ(decay_rate_fixed_lambda(4, 2.0, 1.0), decay_rate(4, 2.0));
  // lambda < 1: continuous at T = c / (1 - lambda), constant c log(1 / lambda) beyond
  const double lambda = 0.75, c = 2, boundary = c / (1 - lambda);
  EXPECT_NEAR(decay_rate_fixed_lambda(4, boundary * (1 - 1e-9), lambda), c * std::log(1 / lambda),
              1e-8);
  EXPECT_DOUBLE_EQ(decay_rate_fixed_lambda(4, 3 * boundary, lambda), c * std::log(1 / lambda));
  // ... and below it the rate falls as T grows
  EXPECT_GT(decay_rate_fixed_lambda(4, 0.5 * boundary, lambda),
            decay_rate_fixed_lambda(4, 0.9 * boundary, lambda));
  // lambda > 1: zero once the fluid gets there by itself, continuous at T = c / (lambda - 1)
  EXPECT_EQ(decay_rate_fixed_lambda(4, 10.0, 1.5), 0.0);
  EXPECT_NEAR(decay_rate_fixed_lambda(4, 4.0 * (1 - 1e-6), 1.5), 0.0, 1e-10);
  // tilt: lambda u - 1/u = max(c/T, 1 - lambda); 1 when the rate is 0
  const double u = optimal_tilt(4, 1.0, 0.8);
  EXPECT_NEAR(0.8 * u - 1 / u, 2.0, 1e-14);
  EXPECT_NEAR(optimal_tilt(3, 100.0, 0.8), 1 / 0.8, 1e-14);
  EXPECT_EQ(optimal_tilt(3, 100.0, 1.2), 1.0);
}

TEST(Theory, RejectsMeaninglessArguments) {
  EXPECT_THROW(decay_rate(1, 1.0), qsweep::InputError);
  EXPECT_THROW(decay_rate(3, 0.0), qsweep::InputError);
  EXPECT_THROW(decay_rate_fixed_lambda(3, 1.0, -1.0), qsweep::InputError);
  EXPECT_THROW(fluid_trajectory(Policy::jsq, 2, 1.0, {0.5, 0.7}, {1.0}), qsweep::InputError);
}

TEST(Fluid, JsqClosedForms) {
  // lambda = 1: (1, 0, ...) is a fixed point.
  auto rows = fluid_trajectory(Policy::jsq, 2, 1.0, {1.0}, {0.5, 3.0});
  for (const auto& row : rows) {
    ASSERT_GE(row.size(), 1u);
    EXPECT_NEAR(row[0], 1.0, 1e-12);
    for (std::size_t i = 1; i < row.size(); ++i) EXPECT_NEAR(row[i], 0.0, 1e-12);
  }
  // lambda < 1: idle queues appear at once, X_1 = lambda + (1 - lambda) e^-t.
  rows = fluid_trajectory(Policy::jsq, 2, 0.6, {1.0}, {0.25, 1.0, 4.0});
  const double times[] = {0.25, 1.0, 4.0};
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(rows[static_cast<std::size_t>(k)][0], 0.6 + 0.4 * std::exp(-times[k]), 1e-9);
  // lambda > 1: on the face X_1 = 1, X_2 = (lambda - 1) t until it reaches 1, then X_3 grows.
  rows = fluid_trajectory(Policy::jsq, 2, 1.25, {1.0}, {1.0, 3.0, 6.0});
  EXPECT_NEAR(rows[0][1], 0.25, 1e-9);
  EXPECT_NEAR(rows[1][1], 0.75, 1e-9);
  EXPECT_NEAR(rows[2][1], 1.0, 1e-9);
  EXPECT_NEAR(rows[2][2], 0.5,
              1e-12);  // X_2 reaches 1 at t = 4 (located), then X_3 = (lambda - 1)(t - 4)
}

TEST(Fluid, PowerOfDReachesTheMeanFieldFixedPoint) {
  // X_i = lambda^((d^i - 1) / (d - 1)) (Vvedenskaya et al., Mitzenmacher)
  for (int d : {2, 3}) {
    const double lambda = 0.85;
    const auto rows = fluid_trajectory(Policy::power_of_d, d, lambda, {1.0, 0.5}, {400.0}, 0.01);
    for (int i = 1; i <= 4; ++i) {
      const double expected = std::pow(lambda, (std::pow(d, i) - 1) / (d - 1));
      EXPECT_NEAR(rows[0][static_cast<std::size_t>(i) - 1], expected, 1e-8)
          << "d " << d << " i " << i;
    }
  }
}

TEST(Fluid, JiqKeepsNoIdleQueuesAndSpreadsTheRest) {
  // lambda > 1: X_1 stays 1; the excess lambda - 1 is routed uniformly, so total mass
  // sum_i X_i grows at exactly lambda - 1.
  const auto rows = fluid_trajectory(Policy::jiq, 2, 1.4, {1.0}, {2.0});
  double total = 0;
  for (double x : rows[0]) total += x;
  EXPECT_NEAR(rows[0][0], 1.0, 1e-12);
  EXPECT_NEAR(total, 1 + 0.4 * 2.0, 1e-9);
  EXPECT_GT(rows[0][2], 0.05);  // unlike jsq, longer queues appear before X_2 = 1
}

TEST(Poisson, TailMatchesDirectSummation) {
  for (double mu : {0.5, 7.0, 150.0, 4000.0})
    for (double ratio : {0.0, 0.5, 0.9, 1.0, 1.1, 1.5, 3.0}) {
      const auto k = static_cast<std::int64_t>(std::floor(ratio * mu));
      // log of sum_{i >= k} e^-mu mu^i / i! by log-sum-exp over enough terms
      long double high = -INFINITY;
      std::vector<long double> terms;
      for (std::int64_t i = k; i < k + 200 + static_cast<std::int64_t>(20 * std::sqrt(mu) + mu);
           ++i) {
        const long double term = -mu + i * std::log(static_cast<long double>(mu)) -
                                 std::lgamma(static_cast<long double>(i) + 1);
        terms.push_back(term);
        high = std::max(high, term);
      }
      long double sum = 0;
      for (long double term : terms) sum += std::exp(term - high);
      const double direct = static_cast<double>(high + std::log(sum));
      EXPECT_NEAR(log_poisson_tail(k, mu), std::min(direct, 0.0),
                  1e-10 * std::max(1.0, std::fabs(direct)))
          << "mu " << mu << " k " << k;
      EXPECT_GE(log_poisson_tail_bound(k, mu), log_poisson_tail(k, mu) - 1e-12);
    }
}

TEST(Poisson, SamplerMatchesThePmf) {
  // Fixed seed; for each mean, the frequencies of the values within 3 sd of the mean must be
  // within 5 binomial standard deviations of the pmf, and the sample mean within 5 standard
  // errors.
  for (double mu : {0.3, 4.0, 9.99, 10.0, 57.5, 3000.0}) {
    qsweep::Rng rng(3, static_cast<std::uint64_t>(mu * 100), 0);
    const int draws = 200000;
    std::map<std::int64_t, int> histogram;
    double sum = 0;
    for (int i = 0; i < draws; ++i) {
      const std::int64_t k = sample_poisson(mu, rng);
      ++histogram[k];
      sum += static_cast<double>(k);
    }
    EXPECT_NEAR(sum / draws, mu, 5 * std::sqrt(mu / draws)) << "mu " << mu;
    const auto low = static_cast<std::int64_t>(std::max(0.0, std::floor(mu - 3 * std::sqrt(mu))));
    const auto high = static_cast<std::int64_t>(std::ceil(mu + 3 * std::sqrt(mu)));
    for (std::int64_t k = low; k <= high; ++k) {
      const double pmf = std::exp(-mu + static_cast<double>(k) * std::log(mu) -
                                  std::lgamma(static_cast<double>(k) + 1));
      const double observed = histogram.count(k) ? histogram[k] / static_cast<double>(draws) : 0.0;
      EXPECT_NEAR(observed, pmf, 5 * std::sqrt(pmf * (1 - pmf) / draws) + 1e-9)
          << "mu " << mu << " k " << k;
    }
  }
}

}  // namespace
