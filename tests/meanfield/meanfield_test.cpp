// The mean-field limit (src/meanfield) against closed forms, the stationarity equations of the
// fluid ODE written out independently here, the fluid trajectory for large t, and the simulator
// at large N (fixed seeds; intervals stated at each check).
#include "qsweep/meanfield/meanfield.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "qsweep/common/error.hpp"
#include "qsweep/model/model.hpp"
#include "qsweep/sim/simulate.hpp"
#include "simulate_complete.hpp"

namespace qsweep::meanfield {
namespace {

Options options(Policy policy, double lambda, int d = 2) {
  Options o;
  o.policy = policy;
  o.policy_d = d;
  o.lambda = lambda;
  return o;
}

// JSQ(d)'s closed form x_i = lambda^((d^i - 1) / (d - 1)) (docs/meanfield.md, "Formulas"),
// written with pow here.
TEST(MeanFieldFixedPoint, PowerOfDMatchesTheClosedForm) {
  for (int d : {2, 3, 5})
    for (double lambda : {0.3, 0.7, 0.9, 0.99}) {
      const Result r = solve(options(Policy::power_of_d, lambda, d));
      ASSERT_GE(r.occupancy.size(), 2u);
      double sum = 0.0;
      for (std::size_t i = 1; i <= r.occupancy.size(); ++i) {
        const double expected =
            std::pow(lambda, (std::pow(double(d), double(i)) - 1.0) / (d - 1.0));
        EXPECT_NEAR(r.occupancy[i - 1], expected, 1e-12 * expected + 1e-300)
            << "d = " << d << " lambda = " << lambda << " i = " << i;
        sum += expected;
      }
      EXPECT_LT(r.occupancy.back(), 1.0) << "truncation stops at a level below tolerance";
      EXPECT_GE(r.occupancy.back(), 1e-15);
      EXPECT_LT(r.tail, 1e-15);
      EXPECT_NEAR(r.EQ, sum, 1e-12 * sum);  // what the truncation leaves out is < 1e-15
      EXPECT_DOUBLE_EQ(r.ET, r.EQ / lambda);
    }
  // JSQ(2) at lambda = 0.9, by hand: 0.9, 0.9^3, 0.9^7, 0.9^15.
  const Result r = solve(options(Policy::power_of_d, 0.9, 2));
  EXPECT_NEAR(r.occupancy[1], 0.729, 1e-15);
  EXPECT_NEAR(r.occupancy[2], 0.4782969, 1e-15);
  EXPECT_NEAR(r.occupancy[3], std::pow(0.9, 15), 1e-15);
}

// Near lambda = 1 the levels are lambda^e with e up to 1e12: the reference raises lambda (a
// double, exact in __float128) to the integer e = (d^i - 1) / (d - 1) by repeated squaring in
// __float128 (113-bit significand; the relative error grows like e 2^-113 < 1e-21 here), and sums
// E[Q] there. The kernel must agree to 1e-13 relative at every level (it lost 2.2e-7 at
// 1 - 1e-10 when it multiplied up x_{i+1} = lambda x_i^d), and E[Q], E[T] too.
__float128 power(__float128 base, unsigned long long exponent) {
  __float128 result = 1;
  for (; exponent != 0; exponent >>= 1U) {
    if ((exponent & 1U) != 0) result *= base;
    base *= base;
  }
  return result;
}

TEST(MeanFieldFixedPoint, PowerOfDNearOneAgainstQuadPrecision) {
  for (int d : {1, 2, 3, 10})
    for (double lambda : {0.999, 1.0 - 1e-6, 1.0 - 1e-8, 1.0 - 1e-10}) {
      if (d == 1 && lambda > 0.9999) continue;  // lambda^i: 1e10 levels at 1 - 1e-6
      const Result r = solve(options(Policy::power_of_d, lambda, d));
      ASSERT_GE(r.occupancy.size(), 2u);
      __float128 sum = 0;
      unsigned long long exponent = 1;  // (d^i - 1) / (d - 1)
      for (std::size_t i = 1; i <= 200'000; ++i) {
        const __float128 x = power(lambda, exponent);
        if (x < 1e-300) break;
        if (i <= r.occupancy.size()) {
          const auto expected = static_cast<double>(x);
          EXPECT_NEAR(r.occupancy[i - 1], expected, 1e-13 * expected)
              << "d = " << d << " lambda = " << lambda << " i = " << i;
        }
        sum += x;
        exponent = static_cast<unsigned long long>(d) * exponent + 1;
      }
      EXPECT_NEAR(r.EQ, static_cast<double>(sum), 1e-13 * static_cast<double>(sum))
          << "d = " << d << " lambda = " << lambda;
      const auto ET = static_cast<double>(sum / lambda);
      EXPECT_NEAR(r.ET, ET, 1e-13 * ET) << "d = " << d << " lambda = " << lambda;
    }
}

TEST(MeanFieldFixedPoint, RandomIsIndependentMM1Queues) {
  for (const Options& o : {options(Policy::random, 0.8), options(Policy::power_of_d, 0.8, 1)}) {
    const Result r = solve(o);
    for (std::size_t i = 1; i <= r.occupancy.size(); ++i)
      EXPECT_NEAR(r.occupancy[i - 1], std::pow(0.8, double(i)), 1e-13);
    EXPECT_NEAR(r.EQ, 0.8 / 0.2, 1e-12);  // M/M/1: rho / (1 - rho)
    EXPECT_NEAR(r.ET, 1.0 / 0.2, 1e-12);
    EXPECT_EQ(r.occupancy.size(), 154u);  // 0.8^154 = 1.2e-15 >= 1e-15 > 0.8^155 = 9.5e-16
  }
}

TEST(MeanFieldFixedPoint, JsqAndJiqHaveNoQueueing) {
  for (Policy p : {Policy::jsq, Policy::jiq}) {
    const Result r = solve(options(p, 0.95));
    ASSERT_EQ(r.occupancy.size(), 1u);
    EXPECT_DOUBLE_EQ(r.occupancy[0], 0.95);
    EXPECT_EQ(r.tail, 0.0);
    EXPECT_DOUBLE_EQ(r.EQ, 0.95);
    EXPECT_DOUBLE_EQ(r.ET, 1.0);
  }
}

// The fixed point makes the drift of the supermarket ODE vanish:
// dx_i/dt = lambda (x_{i-1}^d - x_i^d) - (x_i - x_{i+1}), x_0 = 1 (Mitzenmacher; Vvedenskaya et
// al.). Written here independently of the kernel's recursion.
TEST(MeanFieldFixedPoint, SolvesTheStationarityEquations) {
  for (int d : {1, 2, 4})
    for (double lambda : {0.5, 0.9}) {
      Options o = options(Policy::power_of_d, lambda, d);
      o.occupancy_max = 400;
      const Result r = solve(o);
      std::vector<double> x{1.0};
      x.insert(x.end(), r.occupancy.begin(), r.occupancy.end());
      x.push_back(r.tail);
      for (std::size_t i = 1; i + 1 < x.size(); ++i) {
        const double drift =
            lambda * (std::pow(x[i - 1], d) - std::pow(x[i], d)) - (x[i] - x[i + 1]);
        EXPECT_NEAR(drift, 0.0, 1e-14) << "d = " << d << " lambda = " << lambda << " i = " << i;
      }
    }
}

TEST(MeanFieldTruncation, LevelsFollowToleranceOccupancyMaxAndTheStart) {
  Options o = options(Policy::power_of_d, 0.9, 2);
  EXPECT_EQ(levels(o), 8);  // x_8 = 0.9^255 = 2.1e-12, x_9 = 0.9^511 = 4.1e-24
  o.tolerance = 1e-5;
  EXPECT_EQ(levels(o), 6);  // x_6 = 1.3e-3, x_7 = 1.5e-6
  o.occupancy_max = 3;
  EXPECT_EQ(levels(o), 3);
  EXPECT_EQ(solve(o).occupancy.size(), 3u);
  EXPECT_NEAR(solve(o).tail, std::pow(0.9, 15), 1e-15);
  o.occupancy_max = 0;
  o.horizon = 1.0;
  o.initial_counts = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  EXPECT_EQ(levels(o), 10);
  EXPECT_EQ(trajectory_size(o), 11u * 10u);
  EXPECT_EQ(solve(o).trajectory.size(), 110u);
}

TEST(MeanFieldTrajectory, StartsAtTheInitialCountsAndConvergesToTheFixedPoint) {
  for (Policy p : {Policy::power_of_d, Policy::random, Policy::jsq, Policy::jiq}) {
    for (const std::vector<double>& start :
         {std::vector<double>{}, std::vector<double>{1, 1, 1, 1, 0, 6}}) {
      // Random (independent M/M/1 queues) relaxes at rate (1 - sqrt(lambda))^2: 0.2 at 0.3.
      Options o = options(p, p == Policy::random ? 0.3 : 0.7, 3);
      o.horizon = 80.0;
      o.time_points = 5;
      o.initial_counts = start;
      o.occupancy_max = 12;
      const Result r = solve(o);
      ASSERT_EQ(r.times.size(), 5u);
      EXPECT_DOUBLE_EQ(r.times[4], o.horizon);
      ASSERT_EQ(r.trajectory.size(), 5u * 12u);
      // t = 0: 10 queues, weights 1, 1, 1, 1, 0, 6 at lengths 0..5: x_1 = 0.9, x_2..x_4 ...
      const std::vector<double> x0 =
          start.empty() ? std::vector<double>(12, 0.0)
                        : std::vector<double>{0.9, 0.8, 0.7, 0.6, 0.6, 0, 0, 0, 0, 0, 0, 0};
      for (std::size_t i = 0; i < 12; ++i) EXPECT_NEAR(r.trajectory[i], x0[i], 1e-15);
      for (std::size_t i = 0; i < 12; ++i)
        EXPECT_NEAR(r.trajectory[4 * 12 + i], r.occupancy[i] * (i < r.occupancy.size()), 1e-6)
            << name_of(p) << " i = " << i + 1;
    }
  }
}

// Trajectories across the face x_1 = 1 (docs/meanfield.md, "Fluid trajectory"), against
// references computed here in long double, independently of the kernel's integrator.
//
// jsq from x = (x10, x20, 0, ...) with x10 < 1: off the face x_1 = lambda + (x10 - lambda) e^-t
// + x20 t e^-t, x_2 = x20 e^-t, x_3 = 0 (the linear ODE solved by hand), until x_1 = 1 at t1
// (Newton's method here); on the face x_2 falls by (1 - lambda) t until 1 - x_2 = lambda at t2;
// then x_1 = lambda + (1 - lambda)(1 + s) e^-s, x_2 = (1 - lambda) e^-s, s = t - t2. From
// x10 = x20 = 1 the first phase is empty. Before the kernel located the face (fixed RK4 steps
// with a projection) it was 3.2e-4 absolute off on the face for (0.9, 0.9) at lambda = 0.9.
struct JsqReference {
  long double lambda, x10, x20, t1 = 0, t2 = 0;
  JsqReference(long double lam, long double a, long double b) : lambda(lam), x10(a), x20(b) {
    if (x10 < 1) {
      long double t = 0.1L;
      for (int i = 0; i < 100; ++i) {  // x_1(t) = 1
        const long double e = std::exp(-t);
        const long double f = lambda + (x10 - lambda) * e + x20 * t * e - 1;
        const long double df = -(x10 - lambda) * e + x20 * (1 - t) * e;
        t -= f / df;
      }
      t1 = t;
    }
    t2 = t1 + (x20 * std::exp(-t1) - (1 - lambda)) / (1 - lambda);
  }
  std::array<long double, 2> at(long double t) const {
    if (t < t1)
      return {lambda + (x10 - lambda) * std::exp(-t) + x20 * t * std::exp(-t), x20 * std::exp(-t)};
    if (t < t2) return {1.0L, x20 * std::exp(-t1) - (1 - lambda) * (t - t1)};
    const long double s = t - t2;
    return {lambda + (1 - lambda) * (1 + s) * std::exp(-s), (1 - lambda) * std::exp(-s)};
  }
};

TEST(MeanFieldTrajectory, JsqAcrossTheFaceMatchesThePiecewiseClosedForm) {
  struct Case {
    double lambda;
    std::vector<double> counts;  // weights of lengths 0, 1, 2
    long double x10, x20;
  };
  for (const Case& c : {Case{0.9, {0.1, 0.0, 0.9}, 0.9L, 0.9L}, Case{0.9, {0, 0, 1}, 1, 1},
                        Case{0.7, {0.2, 0.0, 0.8}, 0.8L, 0.8L}}) {
    Options o = options(Policy::jsq, c.lambda);
    o.horizon = 12.0;
    o.time_points = 241;
    o.initial_counts = c.counts;
    o.occupancy_max = 3;
    const Result r = solve(o);
    const JsqReference ref(c.lambda, c.x10, c.x20);
    ASSERT_GT(ref.t2, ref.t1);
    ASSERT_LT(ref.t2, 11.0L) << "the trajectory leaves the face within the horizon";
    for (std::size_t j = 0; j < r.times.size(); ++j) {
      const auto x = ref.at(r.times[j]);
      for (std::size_t i = 0; i < 2; ++i) {
        const auto expected = static_cast<double>(x[i]);
        EXPECT_NEAR(r.trajectory[j * 3 + i], expected, 1e-13 * expected)
            << "lambda = " << c.lambda << " t = " << r.times[j] << " x_" << i + 1;
      }
      EXPECT_EQ(r.trajectory[j * 3 + 2], 0.0);
    }
  }
}

// jiq: off the face as jsq (every arrival to an idle server); on the face x_1 = 1 the idle
// servers are refilled first and the rest of the arrivals, rate lambda - (1 - x_2), join the
// busy servers uniformly: x_k' = (lambda - 1 + x_2)(x_{k-1} - x_k) - (x_k - x_{k+1}) for k >= 2,
// until 1 - x_2 = lambda; then off the face again. The reference integrates this here in long
// double with classical RK4 in equal steps of at most 1e-4 between output times (doubling the
// step changed the reference by < 1e-16), the entry time from the closed form of the first phase,
// the exit located by bisection of the step, 40 levels. The kernel was 5e-13 off on x_3 while it
// kept only two empty levels above the occupied ones (the mass that climbs past them in the first
// step on the face was lost), and 3e-3 on the face before it located the faces. Also: on the face
// the total sum_i x_i falls at exactly 1 - lambda (departures 1, arrivals lambda).
std::vector<std::vector<long double>> jiq_reference(long double lambda, long double x10,
                                                    long double x20,
                                                    const std::vector<double>& times,
                                                    long double* exit_time) {
  constexpr std::size_t kLevels = 40;
  const JsqReference first(lambda, x10, x20);          // the same first phase and entry time t1
  using State = std::array<long double, kLevels + 2>;  // x_0 = 1 .. x_40, x_41 = 0
  auto field = [&](const State& x, bool face) {
    State dx{};
    const long double busy = face ? lambda - 1 + x[2] : 0;  // arrivals to busy servers
    for (std::size_t k = 2; k <= kLevels; ++k)
      dx[k] = (face ? busy * (x[k - 1] - x[k]) : 0) - (x[k] - x[k + 1]);
    if (!face) dx[1] = lambda - (x[1] - x[2]);
    return dx;
  };
  auto rk4 = [&](const State& x, long double h, bool face) {
    auto add = [](State a, const State& b, long double f) {
      for (std::size_t i = 0; i < a.size(); ++i) a[i] += f * b[i];
      return a;
    };
    const State k1 = field(x, face), k2 = field(add(x, k1, h / 2), face);
    const State k3 = field(add(x, k2, h / 2), face), k4 = field(add(x, k3, h), face);
    State y = x;
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    return y;
  };
  std::vector<std::vector<long double>> rows;
  State x{};
  x[0] = 1;
  const auto start = first.at(first.t1);
  x[1] = 1;
  x[2] = start[1];
  long double t = first.t1;
  bool face = true;
  *exit_time = -1;
  const long double h = 1e-4L;
  for (double target : times) {
    if (target < first.t1) {
      const auto y = first.at(target);
      rows.push_back({y[0], y[1], 0});
      continue;
    }
    // Equal steps of at most h from t to the target (t is not summed step by step).
    const auto pieces = static_cast<long>(std::ceil((target - t) / h));
    const long double from = t, span = target - t;
    for (long n = 1; n <= pieces && t < target; ++n) {
      long double step = from + span * n / pieces - t;
      State y = rk4(x, step, face);
      if (face && 1 - y[2] > lambda) {  // leaves the face within this step
        long double lo = 0, hi = step;
        for (int i = 0; i < 80; ++i) {
          const long double mid = (lo + hi) / 2;
          (1 - rk4(x, mid, face)[2] > lambda ? hi : lo) = mid;
        }
        step = hi;
        y = rk4(x, step, face);
        face = false;
        *exit_time = t + step;
      }
      x = y;
      if (face) x[1] = 1;
      t += step;
      if (n == pieces) t = target;
    }
    rows.push_back({x[1], x[2], x[3]});
  }
  return rows;
}

TEST(MeanFieldTrajectory, JiqAcrossTheFaceMatchesAHighPrecisionReference) {
  for (const double lambda : {0.9, 0.8}) {
    Options o = options(Policy::jiq, lambda);
    o.horizon = 12.0;
    o.time_points = 121;
    o.initial_counts = {1 - lambda, 0.0, lambda};  // x_1 = x_2 = lambda < 1
    o.occupancy_max = 3;
    const Result r = solve(o);
    long double exit_time = 0;
    const auto ref = jiq_reference(lambda, lambda, lambda, r.times, &exit_time);
    ASSERT_GT(exit_time, 1.0L) << "the trajectory leaves the face within the horizon";
    ASSERT_LT(exit_time, 11.0L);
    for (std::size_t j = 0; j < r.times.size(); ++j)
      for (std::size_t i = 0; i < 3; ++i) {
        const auto expected = static_cast<double>(ref[j][i]);
        EXPECT_NEAR(r.trajectory[j * 3 + i], expected, 1e-13 * expected)
            << "lambda = " << lambda << " t = " << r.times[j] << " x_" << i + 1;
      }
  }
}

TEST(MeanFieldValidation, RefusesOptionsOutsideTheirRanges) {
  EXPECT_THROW(solve(options(Policy::jsq, 1.0)), InputError);
  EXPECT_THROW(solve(options(Policy::jsq, 0.0)), InputError);
  EXPECT_THROW(solve(options(Policy::power_of_d, 0.5, 0)), InputError);
  Options o = options(Policy::jsq, 0.5);
  o.horizon = 1.0;
  o.initial_counts = {0, 0};
  EXPECT_THROW(solve(o), InputError);
  o.initial_counts = {1, -1};
  EXPECT_THROW(solve(o), InputError);
}

// The simulator (sim::simulate, jsq on the complete family of 2-subsets = JSQ(2) over all N
// servers) at N = 100, 1000 and 10000 against the limit, lambda = 0.9. Per-server E[Q] of the
// limit is 2.35265. Measured while writing this test (2e6 events per N, 8 replications each):
// 2.3858 +- 0.0127 (N = 100), 2.3582 +- 0.0126 (N = 1000), 2.3513 +- 0.0104 (N = 10000): the
// finite-N excess is about 3.3 / N, below the statistical resolution from N = 1000 on. So:
// N = 1000 and 10000 must be within 2 x (95% half-width) + 5 / N of the limit (about 4 standard
// errors plus the O(1/N) bias), the tolerance must shrink from N = 1000 to N = 10000 (more
// events at the larger N), and the N = 100 excess, about 5 standard errors, must exceed the
// N = 10000 difference. Fixed seeds: the outcome is deterministic. About 7 s of CPU in Release.
sim::Result simulate_jsq2(int N, double events) {
  return testing::simulate_complete2(sim::Policy::jsq, N, events, 3, 12);
}

TEST(MeanFieldAgainstSimulation, Jsq2PerServerQueueApproachesTheLimitAsNGrows) {
  const Result limit = solve(options(Policy::power_of_d, 0.9, 2));
  double previous_tolerance = 1e300, difference_100 = 0.0, difference_10000 = 0.0;
  for (const auto& [N, events] : {std::pair{100, 1.5e7}, {1000, 2e7}, {10000, 8e7}}) {
    const sim::Result r = simulate_jsq2(N, events);
    const double eq = r.EQ / N, hw = r.EQ_hw / N;
    const double difference = eq - limit.EQ;
    const double tolerance = 2.0 * hw + 5.0 / N;
    std::printf(
        "N = %5d: EQ per server %.5f +- %.5f (95%%), limit %.5f, difference %+.5f, "
        "tolerance %.5f\n",
        N, eq, hw, limit.EQ, difference, tolerance);
    if (N == 100) difference_100 = difference;
    if (N == 10000) difference_10000 = difference;
    if (N == 100) continue;
    EXPECT_LE(std::abs(difference), tolerance) << "N = " << N;
    EXPECT_LT(tolerance, previous_tolerance) << "N = " << N;
    previous_tolerance = tolerance;
    for (std::size_t i = 0; i < 3; ++i)
      EXPECT_LE(std::abs(r.occupancy[i] - limit.occupancy[i]), 2.0 * r.occupancy_hw[i] + 5.0 / N)
          << "N = " << N << " x_" << i + 1;
  }
  EXPECT_GT(difference_100, std::abs(difference_10000));
}

}  // namespace
}  // namespace qsweep::meanfield
