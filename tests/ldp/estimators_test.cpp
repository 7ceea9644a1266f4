// Monte Carlo and importance sampling against the exact chain; validation; reproducibility.
// Statistical checks use fixed seeds and accept |estimate - exact| <= 4 standard errors, the
// standard error derived from the number of paths (MC: binomial; importance: the sample
// variance of the weights).
#include <gtest/gtest.h>

#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <cmath>
#include <sstream>
#include <string>

#include "qsweep/common/error.hpp"
#include "qsweep/ldp/ldp.hpp"
#include "qsweep/ldp/theory.hpp"

namespace {

using qsweep::ldp::Estimator;
using qsweep::ldp::Options;
using qsweep::ldp::Policy;
using qsweep::ldp::Result;

Options make(Estimator estimator, Policy policy, std::int64_t n, int j, double T, double lambda) {
  Options o;
  o.estimator = estimator;
  o.policy = policy;
  o.n = n;
  o.j = j;
  o.T = T;
  o.lambda = lambda;
  return o;
}

double exact_probability(Options o) {
  o.estimator = Estimator::exact;
  return qsweep::ldp::estimate(o, 0, 0).probability;
}

TEST(Estimators, MonteCarloAgreesWithExactChain) {
  struct Case {
    Policy policy;
    int d;
    std::int64_t n;
    int j;
    double T, lambda;
  };
  const Case cases[] = {
      {Policy::jsq, 1, 8, 3, 1.0, 1.0},         {Policy::jsq, 1, 20, 3, 3.0, 0.8},
      {Policy::jsq, 1, 1, 4, 2.0, 1.0},         {Policy::jiq, 1, 6, 4, 2.0, 1.1},
      {Policy::jiq, 1, 30, 3, 1.0, 0.9},        {Policy::power_of_d, 2, 10, 3, 1.0, 0.9},
      {Policy::power_of_d, 3, 12, 4, 2.0, 1.2},
  };
  std::uint64_t task = 0;
  for (const Case& c : cases) {
    Options o = make(Estimator::monte_carlo, c.policy, c.n, c.j, c.T, c.lambda);
    o.policy_d = c.d;
    o.samples = 40000;
    const Result mc = qsweep::ldp::estimate(o, 2024, task++);
    const double exact = exact_probability(o);
    const double se = std::sqrt(exact * (1 - exact) / mc.samples);
    SCOPED_TRACE(::testing::Message()
                 << "policy " << static_cast<int>(c.policy) << " n " << c.n << " j " << c.j << " T "
                 << c.T << " lambda " << c.lambda << " exact " << exact);
    EXPECT_GT(exact, 1e-3);  // else 40000 paths say little
    EXPECT_NEAR(mc.probability, exact, 4 * se);
    EXPECT_EQ(mc.samples, 40000);
    EXPECT_LE(mc.ci_low, mc.probability);
    EXPECT_GE(mc.ci_high, mc.probability);
    EXPECT_NEAR(mc.log_rate, std::log(mc.probability) / static_cast<double>(c.n), 1e-15);
  }
}

TEST(Estimators, ImportanceSamplingAgreesWithExactChainDownTo1e34) {
  struct Case {
    std::int64_t n;
    int j;
    double T, lambda;
  };
  const Case cases[] = {
      {300, 3, 1.0, 1.0},  // p ~ 5e-34
      {150, 3, 2.0, 0.9}, {200, 3, 1.0, 1.3},
      {80, 4, 3.0, 1.0},  {250, 3, 5.0, 0.7},  // T beyond c / (1 - lambda): the path finishes early
      {40, 2, 1.0, 0.8},
  };
  std::uint64_t task = 100;
  for (const Case& c : cases) {
    Options o = make(Estimator::importance, Policy::jsq, c.n, c.j, c.T, c.lambda);
    o.samples = 1e6;
    o.target_rel_error = 0.02;
    const Result is = qsweep::ldp::estimate(o, 7, task++);
    const double exact = exact_probability(o);
    SCOPED_TRACE(::testing::Message() << "n " << c.n << " j " << c.j << " T " << c.T << " lambda "
                                      << c.lambda << " exact " << exact);
    EXPECT_LE(is.relative_error, 0.02);
    EXPECT_NEAR(is.probability, exact, 4 * is.relative_error * is.probability);
    EXPECT_NEAR(is.log_rate, std::log(exact) / static_cast<double>(c.n),
                4 * is.relative_error / static_cast<double>(c.n));
    EXPECT_LE(is.ci_low, exact * 1.0001);  // the 95% interval, here holding at each case
    EXPECT_GE(is.ci_high, exact * 0.9999);
    EXPECT_DOUBLE_EQ(is.tilt, qsweep::ldp::optimal_tilt(c.j, c.T, c.lambda));
  }
  Options o = make(Estimator::exact, Policy::jsq, 300, 3, 1.0, 1.0);
  EXPECT_LT(exact_probability(o), 1e-30);
}

TEST(Estimators, ImportanceSamplingIsUnbiasedAtHighPrecision) {
  // Many paths at small n, and from a start that is not the theory's, where the tilt is not
  // optimal: the likelihood ratio keeps the estimator unbiased regardless.
  Options o = make(Estimator::importance, Policy::jsq, 20, 3, 1.0, 1.0);
  o.samples = 150000;
  Result is = qsweep::ldp::estimate(o, 3, 4);
  double exact = exact_probability(o);
  EXPECT_LT(is.relative_error, 0.004);
  EXPECT_NEAR(is.probability, exact, 4 * is.relative_error * exact);

  o.initial_counts = {5, 10, 5};
  o.samples = 60000;
  is = qsweep::ldp::estimate(o, 3, 5);
  exact = exact_probability(o);
  EXPECT_NEAR(is.probability, exact, 4 * is.relative_error * exact);
  EXPECT_TRUE(std::isnan(is.theory_rate));  // the theory is for the all-ones start
}

TEST(Estimators, ImportanceRelativeVarianceDoesNotGrowWithN) {
  // The clock is integrated out, so a path's weight varies only through the step at which it
  // hits, and the relative variance per path stays O(1) (about 0.7 for j = 3, T = 1).
  for (std::int64_t n : {100, 800}) {
    Options o = make(Estimator::importance, Policy::jsq, n, 3, 1.0, 1.0);
    o.samples = 3000;
    const Result is = qsweep::ldp::estimate(o, 1, static_cast<std::uint64_t>(n));
    const double per_path = is.relative_error * is.relative_error * (is.samples - 1);
    EXPECT_GT(per_path, 0.3) << n;
    EXPECT_LT(per_path, 1.3) << n;
  }
}

TEST(Estimators, ImportanceSamplingWorksFarBelowTheDoubleRangeOfSquares) {
  // n = 1600: p ~ 1e-172, so p^2 underflows a double; the moments are kept in log space.
  Options o = make(Estimator::importance, Policy::jsq, 1600, 3, 1.0, 1.0);
  o.samples = 2000;
  const Result is = qsweep::ldp::estimate(o, 1, 1);
  EXPECT_LT(is.relative_error, 0.05);
  EXPECT_GT(is.probability, 1e-175);
  EXPECT_LT(is.probability, 1e-170);
  // p ~ C n^(-1/2) exp(-n rate) with C = e^b, b ~ 0.3 from the exact chain at n <= 800
  const double n = 1600;
  const double b = n * (-is.log_rate - is.theory_rate) - 0.5 * std::log(n);
  EXPECT_GT(b, 0.0);
  EXPECT_LT(b, 1.0);
}

TEST(Estimators, TargetRelativeErrorStopsEarly) {
  Options o = make(Estimator::monte_carlo, Policy::jsq, 5, 3, 1.0, 1.0);
  o.samples = 1e7;
  o.target_rel_error = 0.05;
  const Result mc = qsweep::ldp::estimate(o, 1, 2);
  EXPECT_LE(mc.relative_error, 0.05);
  EXPECT_LT(mc.samples, 1e5);
  EXPECT_GT(mc.events, mc.samples);
  EXPECT_GE(mc.cpu_seconds, 0.0);
}

TEST(Estimators, ReproducibleFromSeedAndTask) {
  for (Estimator estimator : {Estimator::monte_carlo, Estimator::importance}) {
    Options o = make(estimator, Policy::jsq, 30, 3, 1.0, 1.0);
    o.samples = 500;
    Result a = qsweep::ldp::estimate(o, 42, 7);
    Result b = qsweep::ldp::estimate(o, 42, 7);
    Result c = qsweep::ldp::estimate(o, 42, 8);
    a.cpu_seconds = b.cpu_seconds = c.cpu_seconds = 0;
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
  }
}

TEST(Estimators, ValidationGivesOneLineMessages) {
  auto message = [](const Options& o) -> std::string {
    try {
      qsweep::ldp::validate(o);
    } catch (const qsweep::InputError& error) {
      return error.what();
    }
    return "";
  };
  Options good;
  EXPECT_EQ(message(good), "");
  auto expect_bad = [&](Options o, const std::string& fragment) {
    const std::string text = message(o);
    EXPECT_NE(text.find(fragment), std::string::npos) << text;
    EXPECT_EQ(text.find('\n'), std::string::npos) << text;
    EXPECT_THROW(qsweep::ldp::estimate(o, 0, 0), qsweep::InputError);
  };
  Options o = good;
  o.n = 0;
  expect_bad(o, "n must be >= 1");
  o = good;
  o.j = 1;
  expect_bad(o, "j must be >= 2");
  o = good;
  o.T = 0;
  expect_bad(o, "T must be > 0");
  o = good;
  o.lambda = -1;
  expect_bad(o, "lambda must be > 0");
  o = good;
  o.lambda = NAN;
  expect_bad(o, "lambda must be > 0");
  o = good;
  o.policy = Policy::jiq;
  expect_bad(o, "importance sampling is implemented for policy jsq only");
  o = good;
  o.policy = Policy::power_of_d;
  o.estimator = Estimator::monte_carlo;
  o.policy_d = 101;
  expect_bad(o, "power_of_d needs 1 <= d <= n");
  o = good;
  o.samples = 0;
  expect_bad(o, "samples must be");
  o = good;
  o.target_rel_error = -0.1;
  expect_bad(o, "target_rel_error");
  o = good;
  o.estimator = Estimator::exact;
  o.truncation = 0;
  expect_bad(o, "truncation");
  o = good;
  o.estimator = Estimator::exact;
  o.n = 100000;
  expect_bad(o, "exact chain");
  o = good;
  o.initial_counts = {0, 99, 0, 1};
  expect_bad(o, "event holds at time 0");
  o = good;
  o.initial_counts = {0, 99};
  expect_bad(o, "sum to n");
}

// Binary archives, as over MPI (text archives cannot read back NaN, which theory_rate uses).
template <class T>
T round_trip(const T& value) {
  std::stringstream stream;
  {
    boost::archive::binary_oarchive out(stream);
    out << value;
  }
  T copy;
  boost::archive::binary_iarchive in(stream);
  in >> copy;
  return copy;
}

TEST(Estimators, OptionsAndResultSerialize) {
  Options o = make(Estimator::importance, Policy::jsq, 77, 4, 2.5, 0.9);
  o.initial_counts = {1, 70, 6};
  o.target_rel_error = 0.1;
  EXPECT_EQ(round_trip(o), o);
  o.samples = 50;
  Result r = qsweep::ldp::estimate(o, 1, 1);
  EXPECT_TRUE(std::isnan(r.theory_rate));  // NaN != NaN: compare the rest
  r.theory_rate = 0.25;
  EXPECT_EQ(round_trip(r), r);
}

}  // namespace
