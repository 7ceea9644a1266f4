// The decay rate formula (theory.hpp; docs/ldp.md, "Theory") against a direct numerical
// minimisation of the JSQ paper's control problem (its eq. (2.8); docs/references.md): minimise
//   int_0^tau [ lambda l(phi_0) + sum_i (x_i - x_{i+1}) l(phi_i) ] dt,   l(z) = z log z - z + 1,
// over arrival controls phi_0 and service controls phi_i (queues of length i) and over the time
// tau <= T at which the controlled JSQ fluid x reaches x_{j-1} = 1 (every queue at j - 1). The
// fluid is stepped explicitly: departures, then the arrival mass fills the shortest queues first
// (water-filling, which is JSQ's reflection at the faces x_i = 1). Controls are piecewise
// constant on K intervals and start far from the optimal path; nothing about the optimal path
// (constant tilt, staying on the face x_1 = 1) is built in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "qsweep/ldp/theory.hpp"

namespace {

double ell(double z) { return z * std::log(z) - z + 1; }

struct ControlProblem {
  int j = 3;
  double T = 1;
  double lambda = 1;
  int intervals = 6;
  int substeps = 10;

  int controls() const { return j; }                            // phi_0 .. phi_{j-1}
  int variables() const { return intervals * controls() + 1; }  // log-controls, then rho

  // The horizon tau = T exp(-rho^2) <= T: smooth, and rho = 0 (tau = T) is an ordinary point.
  double horizon(const std::vector<double>& v) const { return T * std::exp(-v.back() * v.back()); }

  // Runs the controlled fluid with arrivals scaled by e^s until x_{j-1} reaches 1 or time tau;
  // returns the cost until then (the last substep pro rata, so the cost is continuous in s) and
  // sets reached.
  double run(const std::vector<double>& v, double s, bool& reached) const {
    std::vector<double> x(static_cast<std::size_t>(j), 0.0);  // x[i] = X_i, x[0] = 1
    x[0] = 1;
    x[1] = 1;  // all queues of length 1
    const auto top = static_cast<std::size_t>(j) - 1;
    const double dt = horizon(v) / (intervals * substeps);
    double cost = 0;
    for (int k = 0; k < intervals; ++k) {
      const double* theta = v.data() + k * controls();
      const double arrival = std::exp(theta[0] + s);
      for (int step = 0; step < substeps; ++step) {
        double step_cost = lambda * ell(arrival) * dt;
        std::vector<double> out(x.size(), 0.0);
        for (std::size_t i = 1; i < x.size(); ++i) {
          const double phi = std::exp(theta[i]);
          const double weight = x[i] - (i + 1 < x.size() ? x[i + 1] : 0.0);
          step_cost += weight * ell(phi) * dt;
          out[i] = std::min(weight * phi * dt, weight);
        }
        const double before = x[top];
        for (std::size_t i = 1; i < x.size(); ++i) x[i] -= out[i];
        double mass = lambda * arrival * dt;  // fills the shortest queues first
        double beyond = 0;                    // arrival mass that overflows level j - 1
        for (std::size_t i = 1; i < x.size(); ++i) {
          const double fill = std::min(mass, x[i - 1] - x[i]);
          x[i] += fill;
          mass -= fill;
        }
        beyond = mass;
        // x_{j-1} + overflow runs continuously from `before`; the event is where it reaches 1.
        const double after = x[top] + beyond;
        if (after >= 1) {
          reached = true;
          return cost + step_cost * (1 - before) / (after - before);
        }
        cost += step_cost;
      }
    }
    reached = false;
    return cost;
  }

  // Cost of the cheapest arrival scaling that reaches x_{j-1} = 1 by tau (more arrivals reach it
  // sooner, so bisection finds it).
  double objective(const std::vector<double>& v) const {
    double low = -8, high = 8;
    bool reached = false;
    for (int it = 0; it < 60; ++it) {
      const double mid = (low + high) / 2;
      run(v, mid, reached);
      (reached ? high : low) = mid;
    }
    return run(v, high, reached);
  }

  std::vector<double> gradient(const std::vector<double>& v) const {
    constexpr double h = 1e-6;
    std::vector<double> g(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::vector<double> plus = v, minus = v;
      plus[i] += h;
      minus[i] -= h;
      g[i] = (objective(plus) - objective(minus)) / (2 * h);
    }
    return g;
  }

  // BFGS on the inverse Hessian with backtracking line search.
  double minimise(std::vector<double> v) const {
    const std::size_t dim = v.size();
    std::vector<double> H(dim * dim, 0.0);
    for (std::size_t i = 0; i < dim; ++i) H[i * dim + i] = 1;
    double value = objective(v);
    std::vector<double> g = gradient(v);
    for (int iteration = 0; iteration < 300; ++iteration) {
      std::vector<double> direction(dim, 0.0);
      double slope = 0;
      for (std::size_t i = 0; i < dim; ++i) {
        for (std::size_t k = 0; k < dim; ++k) direction[i] -= H[i * dim + k] * g[k];
        slope += direction[i] * g[i];
      }
      if (slope >= 0) {  // not a descent direction: restart from the gradient
        std::fill(H.begin(), H.end(), 0.0);
        for (std::size_t i = 0; i < dim; ++i) H[i * dim + i] = 1, direction[i] = -g[i];
        slope = 0;
        for (std::size_t i = 0; i < dim; ++i) slope += direction[i] * g[i];
      }
      if (-slope < 1e-16) break;
      double alpha = 1;
      std::vector<double> trial(dim);
      double candidate = value;
      for (; alpha > 1e-10; alpha /= 2) {
        for (std::size_t i = 0; i < dim; ++i) trial[i] = v[i] + alpha * direction[i];
        candidate = objective(trial);
        if (candidate <= value + 1e-4 * alpha * slope) break;
      }
      if (alpha <= 1e-10) break;
      const std::vector<double> g_new = gradient(trial);
      std::vector<double> s(dim), y(dim), Hy(dim, 0.0);
      double sy = 0;
      for (std::size_t i = 0; i < dim; ++i) {
        s[i] = trial[i] - v[i];
        y[i] = g_new[i] - g[i];
        sy += s[i] * y[i];
      }
      v = trial;
      g = g_new;
      const bool converged = value - candidate < 1e-10;
      value = candidate;
      if (converged) break;
      if (sy <= 1e-16) continue;
      double yHy = 0;
      for (std::size_t i = 0; i < dim; ++i) {
        for (std::size_t k = 0; k < dim; ++k) Hy[i] += H[i * dim + k] * y[k];
        yHy += y[i] * Hy[i];
      }
      for (std::size_t i = 0; i < dim; ++i)
        for (std::size_t k = 0; k < dim; ++k)
          H[i * dim + k] +=
              (sy + yHy) * s[i] * s[k] / (sy * sy) - (Hy[i] * s[k] + s[i] * Hy[k]) / sy;
    }
    return value;
  }
};

double minimised_rate(int j, double T, double lambda) {
  ControlProblem problem;
  problem.j = j;
  problem.T = T;
  problem.lambda = lambda;
  // Start: untilted service, tau = T e^-1/4; the bisection supplies the arrival tilt.
  std::vector<double> start(static_cast<std::size_t>(problem.variables()), 0.0);
  start.back() = 0.5;
  return problem.minimise(start);
}

// The minimiser's discretisation is exact along constant controls on the face x_1 = 1, so it
// lands on the formula to ~1e-10; 1e-6 leaves room for where the optimiser stops.
constexpr double tolerance = 1e-6;

TEST(ControlMinimisation, CriticalRateMatchesFormula) {
  // j = 3, T = 1: log(golden ratio) + 2 - sqrt(5) (docs/ldp.md, "Theory")
  const double formula = qsweep::ldp::decay_rate(3, 1.0);
  EXPECT_NEAR(formula, std::log((1 + std::sqrt(5.0)) / 2) + 2 - std::sqrt(5.0), 1e-15);
  EXPECT_NEAR(formula, 0.2451438, 1e-7);
  EXPECT_NEAR(minimised_rate(3, 1.0, 1.0), formula, tolerance * formula);
}

TEST(ControlMinimisation, LongerHorizonAndHigherLevels) {
  using qsweep::ldp::decay_rate;
  EXPECT_NEAR(minimised_rate(3, 4.0, 1.0), decay_rate(3, 4.0), tolerance * decay_rate(3, 4.0));
  EXPECT_NEAR(minimised_rate(4, 1.5, 1.0), decay_rate(4, 1.5), tolerance * decay_rate(4, 1.5));
}

TEST(ControlMinimisation, FixedLambdaAllRegimes) {
  using qsweep::ldp::decay_rate_fixed_lambda;
  // lambda < 1, T < c / (1 - lambda): the path uses the whole horizon.
  EXPECT_NEAR(minimised_rate(3, 1.0, 0.8), decay_rate_fixed_lambda(3, 1.0, 0.8),
              tolerance * decay_rate_fixed_lambda(3, 1.0, 0.8));
  EXPECT_NEAR(minimised_rate(4, 3.0, 0.9), decay_rate_fixed_lambda(4, 3.0, 0.9),
              tolerance * decay_rate_fixed_lambda(4, 3.0, 0.9));
  // lambda < 1, T > c / (1 - lambda) = 2.5: the level is reached at 2.5 and the rate is
  // c log(1 / lambda); the minimiser has to find the earlier time itself.
  EXPECT_NEAR(decay_rate_fixed_lambda(3, 5.0, 0.6), std::log(1 / 0.6), 1e-15);
  EXPECT_NEAR(minimised_rate(3, 5.0, 0.6), std::log(1 / 0.6), tolerance * std::log(1 / 0.6));
  // lambda > 1 (the fluid itself climbs at rate lambda - 1, too slowly here)
  EXPECT_NEAR(minimised_rate(3, 1.0, 1.3), decay_rate_fixed_lambda(3, 1.0, 1.3),
              tolerance * decay_rate_fixed_lambda(3, 1.0, 1.3));
}

}  // namespace
