// The mean-field limit of redundancy-d with cancel-on-completion (policy redundancy_coc,
// docs/meanfield.md) against closed forms and series written here, an integral over the age of
// the replica in service computed differently (other variable, other rule), and the finite-N
// exact engine and simulator, whose distance to the limit must shrink as N grows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "qsweep/common/error.hpp"
#include "qsweep/exact/exact.hpp"
#include "qsweep/meanfield/meanfield.hpp"
#include "qsweep/model/model.hpp"
#include "qsweep/sim/simulate.hpp"
#include "simulate_complete.hpp"

namespace qsweep::meanfield {
namespace {

Options coc(int d, double lambda) {
  Options o;
  o.policy = Policy::redundancy_coc;
  o.policy_d = d;
  o.lambda = lambda;
  return o;
}

// E[T] = int_0^inf (lambda + (1 - lambda) e^{(d-1)t})^{-d/(d-1)} dt; for d = 2 it is
// -ln(1 - lambda) / lambda^2 - 1 / lambda (Gardner et al. 2017).
TEST(MeanFieldRedundancyCoc, ResponseTimeOfTwoReplicasMatchesTheClosedForm) {
  for (double lambda : {0.05, 0.3, 0.5, 0.9, 0.99, 0.9999, 1.0 - 1e-9}) {
    const double expected = -std::log1p(-lambda) / (lambda * lambda) - 1.0 / lambda;
    const Result r = solve(coc(2, lambda));
    EXPECT_NEAR(r.ET, expected, 1e-10 * expected) << "lambda = " << lambda;
    EXPECT_NEAR(r.EQ, 2.0 * lambda * r.ET, 1e-14 * r.EQ);
  }
  EXPECT_NEAR(solve(coc(2, 0.9)).ET, 1.731587, 5e-7);
  EXPECT_NEAR(solve(coc(2, 0.5)).ET, 0.772589, 5e-7);
}

// For every d: w^{d-1} / (1 - lambda w^{d-1}) = sum_n lambda^n w^{(n+1)(d-1)}, so
// E[T] = sum_{n >= 1} lambda^{n-1} / ((d - 1) n + 1) (light traffic: 1/d, the least of d Exp(1)).
TEST(MeanFieldRedundancyCoc, ResponseTimeMatchesItsSeries) {
  for (int d : {2, 3, 5, 50})
    for (double lambda : {1e-6, 0.2, 0.7, 0.9, 0.97}) {
      double series = 0.0, term = 1.0;
      for (int n = 1; n < 20'000 && term > 1e-20; ++n) {
        term = std::pow(lambda, n - 1) / ((d - 1.0) * n + 1.0);
        series += term;
      }
      EXPECT_NEAR(solve(coc(d, lambda)).ET, series, 1e-12 * series)
          << "d = " << d << " lambda = " << lambda;
    }
  EXPECT_NEAR(solve(coc(3, 0.9)).ET, 1.018679, 5e-7);
}

// x_1 = P(busy) = lambda; the occupancy falls with i; sum_i x_i (the mean replicas per server,
// from the Poisson law of the replicas behind the one in service) equals d lambda E[T] (Little,
// from the response-time law): two routes to the same number.
TEST(MeanFieldRedundancyCoc, OccupancyStartsAtLambdaAndSumsToLittlesLaw) {
  for (int d : {2, 3, 10})
    for (double lambda : {0.1, 0.5, 0.9, 0.999}) {
      Options o = coc(d, lambda);
      o.tolerance = 1e-300;
      const Result r = solve(o);
      ASSERT_GE(r.occupancy.size(), 3u);
      EXPECT_NEAR(r.occupancy[0], lambda, 1e-14) << "d = " << d << " lambda = " << lambda;
      double sum = 0.0;
      for (std::size_t i = 0; i < r.occupancy.size(); ++i) {
        sum += r.occupancy[i];
        if (i > 0) {
          EXPECT_LT(r.occupancy[i], r.occupancy[i - 1]);
        }
      }
      EXPECT_LT(r.tail, 1e-300);
      EXPECT_NEAR(sum, r.EQ, 1e-12 * r.EQ) << "d = " << d << " lambda = " << lambda;
      EXPECT_NEAR(r.EQ, d * lambda * r.ET, 1e-14 * r.EQ);
    }
}

TEST(MeanFieldRedundancyCoc, OneReplicaIsRandomRouting) {
  const Result r = solve(coc(1, 0.8));
  ASSERT_EQ(r.occupancy.size(), 154u);  // 0.8^154 = 1.2e-15 >= 1e-15 > 0.8^155
  for (std::size_t i = 1; i <= r.occupancy.size(); ++i)
    EXPECT_NEAR(r.occupancy[i - 1], std::pow(0.8, double(i)), 1e-13);
  EXPECT_NEAR(r.EQ, 4.0, 1e-12);
  EXPECT_NEAR(r.ET, 5.0, 1e-12);
}

TEST(MeanFieldRedundancyCoc, RefusesATrajectory) {
  Options o = coc(2, 0.9);
  o.horizon = 10.0;
  try {
    solve(o);
    ADD_FAILURE() << "a trajectory of redundancy_coc was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("redundancy_coc"), std::string::npos) << e.what();
  }
  o.horizon = 0.0;
  o.policy_d = 0;
  EXPECT_THROW(solve(o), InputError);
}

// An independent evaluation of the cavity integral in the age u of the replica in service:
// G(u) = (lambda + (1 - lambda) e^{(d-1)u})^{-1/(d-1)} is the survival of S + Exp(1), S the time
// until the replicas present now have left, so P(U > u) = P(S > u) = G + G' and the density of U
// is -(G' + G''); the replicas behind it are Poisson with mean
// m(u) = d lambda int_0^u G(a)^{d-1} da = d (u - ln(lambda + (1 - lambda) e^{(d-1)u}) / (d-1)).
// Composite Simpson on [0, 40] with G' and G'' differentiated by hand; the Poisson tails by
// summing the mass function from the top.
std::vector<double> occupancy_by_age(int d, double lambda, int levels) {
  const double k = d - 1.0, a = 1.0 - lambda;
  const auto density = [&](double u) {
    const double e = std::exp(k * u), b = lambda + a * e;
    const double g1 = -a * e * std::pow(b, -1.0 / k - 1.0);  // G'
    const double g2 = -a * k * e * std::pow(b, -1.0 / k - 2.0) * (b - (1.0 + 1.0 / k) * a * e);
    return -(g1 + g2);
  };
  const auto behind = [&](double u) {
    return d * (u - std::log(lambda + a * std::exp(k * u)) / k);
  };
  const int steps = 40'000;  // even
  const double h = 40.0 / steps;
  std::vector<double> x(static_cast<std::size_t>(levels), 0.0), tail(levels + 200);
  for (int s = 0; s <= steps; ++s) {
    const double u = s * h;
    const double weight = h / 3.0 * (s == 0 || s == steps ? 1.0 : (s % 2 ? 4.0 : 2.0));
    const double m = behind(u);
    std::vector<double> pmf(tail.size());
    pmf[0] = std::exp(-m);
    for (std::size_t l = 1; l < pmf.size(); ++l) pmf[l] = pmf[l - 1] * m / static_cast<double>(l);
    double above = 0.0;
    for (std::size_t l = pmf.size(); l-- > 0;) tail[l] = above += pmf[l];
    for (int i = 1; i <= levels; ++i) x[i - 1] += weight * density(u) * tail[i - 1];
  }
  return x;
}

TEST(MeanFieldRedundancyCoc, OccupancyMatchesAnIntegralOverTheAgeInService) {
  for (const auto& [d, lambda] : {std::pair{2, 0.9}, {2, 0.99}, {3, 0.7}, {4, 0.95}}) {
    Options o = coc(d, lambda);
    o.occupancy_max = 25;
    const Result r = solve(o);
    const std::vector<double> x = occupancy_by_age(d, lambda, 25);
    double largest = 0.0;  // relative difference
    for (std::size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR(r.occupancy[i], x[i], 1e-11 * x[i] + 1e-300)
          << "d = " << d << " lambda = " << lambda << " i = " << i + 1;
      largest = std::max(largest, std::abs(r.occupancy[i] / x[i] - 1.0));
    }
    std::printf("d = %d, lambda = %g: x_1..x_25 within %.2g relative, x_25 = %.3g\n", d, lambda,
                largest, x[24]);
  }
  // The values of the first derivation (a Riemann sum in Python, d = 2, lambda = 0.9).
  const Result r = solve(coc(2, 0.9));
  const std::vector<double> rough{0.9, 0.7512, 0.5713, 0.3925, 0.2431, 0.136, 0.069, 0.032};
  for (std::size_t i = 0; i < rough.size(); ++i) EXPECT_NEAR(r.occupancy[i], rough[i], 1e-3);
}

// The exact product-form engine on family complete (every pair of the N servers a type, i.e.
// redundancy-2 over N servers) at lambda = 0.9: its E[T] and replicas per server (ER_server, the
// meaning of the meanfield EQ for redundancy_coc) approach the limit from above at about 3.3 / N
// (N x excess measured 3.352, 3.277, 3.269 at N = 100, 1000, 10000). The test requires N x excess
// in [2, 5] at every N, the excess to shrink tenfold from 100 to 1000 and from 1000 to 10000
// within 20%, and ER_server to exceed EQ by d lambda (E[T]_N - E[T]). About 10 ms.
TEST(MeanFieldRedundancyCoc, ExactEngineApproachesTheLimitAsNGrows) {
  const Result limit = solve(coc(2, 0.9));
  double previous = 0.0;
  for (int N : {100, 1000, 10000}) {
    model::FamilyParams family;
    family.kind = model::FamilyKind::complete;
    family.N = N;
    family.d = 2;
    const model::System system(model::Family(family), {}, 0.9);
    exact::Options options;
    options.policy = exact::Policy::redundancy_coc;
    const exact::Result r = exact::evaluate(system, options);
    ASSERT_EQ(r.ER_server.size(), static_cast<std::size_t>(N));
    const double excess = r.ET - limit.ET;
    std::printf(
        "N = %5d: exact E[T] %.6f, limit %.6f, N x excess %.4f; ER_server %.6f, limit EQ "
        "%.6f\n",
        N, r.ET, limit.ET, N * excess, r.ER_server[0], limit.EQ);
    EXPECT_GT(N * excess, 2.0) << "N = " << N;
    EXPECT_LT(N * excess, 5.0) << "N = " << N;
    EXPECT_NEAR(r.ER_server[0] - limit.EQ, 2.0 * 0.9 * excess, 1e-9) << "N = " << N;
    if (previous > 0.0) {
      EXPECT_NEAR(previous / excess, 10.0, 2.0) << "N = " << N;
    }
    previous = excess;
  }
}

// The simulator (sim::simulate, redundancy_coc on family complete with d = 2, Exp(1) replicas)
// at N = 1000 and 10000, lambda = 0.9, 8 replications, fixed seeds: the occupancy x_1..x_6 (the
// law of the replicas at a server, which the exact engine does not report) and E[T]. The finite-N
// bias is O(1/N) (3.3 / N for E[T] above), so the test requires every value within
// 2 x (95% half-width) + 5 / N of the limit (about 4 standard errors plus the bias), a tolerance
// shrinking from N = 1000 to 10000.
sim::Result simulate_coc2(int N, double events) {
  return testing::simulate_complete2(sim::Policy::redundancy_coc, N, events, 6, 21);
}

TEST(MeanFieldRedundancyCoc, SimulatedOccupancyApproachesTheLimitAsNGrows) {
  const Result limit = solve(coc(2, 0.9));
  double previous_tolerance = 1e300;
  for (const auto& [N, events] : {std::pair{1000, 1e7}, {10000, 4e7}}) {
    const sim::Result r = simulate_coc2(N, events);
    ASSERT_EQ(r.occupancy.size(), 6u);
    double tolerance = 2.0 * r.ET_hw + 5.0 / N;
    std::printf("N = %5d: E[T] %.5f +- %.5f (95%%), limit %.5f, difference %+.5f\n", N, r.ET,
                r.ET_hw, limit.ET, r.ET - limit.ET);
    EXPECT_LE(std::abs(r.ET - limit.ET), tolerance) << "N = " << N;
    for (std::size_t i = 0; i < 6; ++i) {
      const double allowed = 2.0 * r.occupancy_hw[i] + 5.0 / N;
      std::printf("  x_%zu %.5f +- %.5f, limit %.5f, difference %+.5f\n", i + 1, r.occupancy[i],
                  r.occupancy_hw[i], limit.occupancy[i], r.occupancy[i] - limit.occupancy[i]);
      EXPECT_LE(std::abs(r.occupancy[i] - limit.occupancy[i]), allowed)
          << "N = " << N << " x_" << i + 1;
      tolerance = std::max(tolerance, allowed);
    }
    EXPECT_LT(tolerance, previous_tolerance) << "N = " << N;
    previous_tolerance = tolerance;
  }
}

}  // namespace
}  // namespace qsweep::meanfield
