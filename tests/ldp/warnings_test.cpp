// Warnings of ldp::estimate (docs/ldp.md, "Warnings"): each is produced by an input that
// deserves it, and none on healthy inputs. Fixed seeds; where a warning depends on chance, the
// test says how likely the other outcome is.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "qsweep/ldp/ldp.hpp"

namespace {

using qsweep::ldp::estimate;
using qsweep::ldp::Estimator;
using qsweep::ldp::Options;
using qsweep::ldp::Result;

constexpr double z95 = 1.959963984540054;

Options make(Estimator estimator, std::int64_t n, double T, double samples = 1e5) {
  Options o;
  o.estimator = estimator;
  o.n = n;
  o.j = 3;
  o.T = T;
  o.lambda = 1.0;
  o.samples = samples;
  return o;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(LdpWarnings, NoneOnHealthyEstimates) {
  const Result exact = estimate(make(Estimator::exact, 100, 1.0), 1, 0);
  EXPECT_EQ(exact.warning, "");
  const Result is = estimate(make(Estimator::importance, 100, 1.0, 2000), 1, 0);
  EXPECT_EQ(is.warning, "");
  // (sum w)^2 / sum w^2 from the relative error: rel^2 = (samples / ess - 1) / (samples - 1).
  const double n = is.samples, rel = is.relative_error;
  EXPECT_NEAR(is.effective_samples, n / (1 + rel * rel * (n - 1)), 1e-6 * n);
  EXPECT_LE(is.effective_samples, is.hits);
  Options mc = make(Estimator::monte_carlo, 5, 1.0, 4000);
  const Result m = estimate(mc, 1, 0);
  EXPECT_GE(m.hits, 10);
  EXPECT_EQ(m.effective_samples, m.hits);
  EXPECT_EQ(m.warning, "");
  mc.target_rel_error = 0.1;
  EXPECT_EQ(estimate(mc, 1, 0).warning, "");
}

// n = 50: p is about 1e-6 (checked below), so 100 paths hit with probability about 1e-4.
TEST(LdpWarnings, MonteCarloWithoutHitsGivesZeroWithItsBound) {
  const double p = estimate(make(Estimator::exact, 50, 1.0), 0, 0).probability;
  ASSERT_LT(100 * p, 1e-3);
  const Result r = estimate(make(Estimator::monte_carlo, 50, 1.0, 100), 3, 0);
  ASSERT_EQ(r.hits, 0);
  EXPECT_EQ(r.probability, 0.0);
  EXPECT_EQ(r.ci_low, 0.0);
  EXPECT_EQ(r.log_rate_low, -INFINITY);
  const double wilson_upper = z95 * z95 / (100 + z95 * z95);  // for 0 hits of 100
  EXPECT_NEAR(r.ci_high, wilson_upper, 1e-12);
  EXPECT_EQ(r.warning,
            "no path reached the event in 100 paths: probability 0 and log rate -inf are only "
            "the bound p <= 0.037 (95%)");
}

// About 4 expected hits: between 1 and 9 except with probability 0.03 (Poisson(4)).
TEST(LdpWarnings, FewHitsMakeTheRelativeErrorUnreliable) {
  const double p = estimate(make(Estimator::exact, 5, 1.0), 0, 0).probability;
  const double samples = std::round(4 / p);
  const Result r = estimate(make(Estimator::monte_carlo, 5, 1.0, samples), 2, 0);
  ASSERT_GE(r.hits, 1);
  ASSERT_LT(r.hits, 10);
  EXPECT_EQ(r.warning.rfind("only " + std::to_string(static_cast<int>(r.hits)) + " hits in", 0), 0u)
      << r.warning;
  EXPECT_TRUE(contains(r.warning, "is not reliable"));
}

TEST(LdpWarnings, MissedTargetIsReported) {
  Options o = make(Estimator::monte_carlo, 5, 1.0, 200);
  o.target_rel_error = 1e-3;  // would need about 1e6 / p paths
  const Result r = estimate(o, 1, 0);
  EXPECT_EQ(r.samples, 200);
  EXPECT_TRUE(contains(r.warning, "target_rel_error 0.001 not reached")) << r.warning;
}

// T = 1e-30, n = 10: the event needs the 11 arrivals jsq takes to make a queue of 3, in the
// first 11 ticks of a clock of mean mu = n (1 + lambda) T = 2e-29, each an arrival with
// probability 1/2, so p = P(Poisson(mu) >= 11) / 2^11 (1 + O(mu)) = exp(-752.03): below the
// smallest double. Paths with services need two more ticks and weigh mu^2 = 4e-58 less.
TEST(LdpWarnings, ProbabilitiesBelowTheDoubleRange) {
  const double mu = 2e-29;
  const double log_p = 11 * std::log(mu) - std::lgamma(12.0) - 11 * std::log(2.0);
  const Result is = estimate(make(Estimator::importance, 10, 1e-30, 100), 1, 0);
  EXPECT_NEAR(is.log_probability, log_p, 1e-9 * std::abs(log_p));  // the tilt never serves
  EXPECT_EQ(is.probability, 0.0);
  EXPECT_TRUE(contains(is.warning, "underflows a double")) << is.warning;
  EXPECT_TRUE(contains(is.warning, "use log_probability")) << is.warning;

  // The exact chain keeps G(k) and p in logs: the same p, to its truncation, with the same
  // underflow warning and no other.
  const Result exact = estimate(make(Estimator::exact, 10, 1e-30), 0, 0);
  EXPECT_NEAR(exact.log_probability, log_p, 1e-9 * std::abs(log_p));
  EXPECT_LE(exact.relative_error, 1e-12);
  EXPECT_TRUE(contains(exact.warning, "underflows a double")) << exact.warning;
  EXPECT_FALSE(contains(exact.warning, ";")) << exact.warning;  // the only warning
}

}  // namespace
