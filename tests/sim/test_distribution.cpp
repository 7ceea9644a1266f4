// The sojourn-time distribution (docs/sim.md, "Sojourn-time distribution"): quantiles at any
// levels (`quantiles`, half-widths by sectioning over the replications) and P(T > t) at any times
// (`tail_times`, exact counts, a ratio estimator) against M/M/1 (T ~ Exp(mu - lambda)) and M/M/c
// (Erlang C) at several loads, by the kernels that record sojourn times as drawn and as Erlang
// laws. The runs are long enough that the checks are sharper than a histogram bin: a quantile
// read one bin off (0.78% relative) fails them, which SensitiveToOneBin asserts.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "qsweep/common/error.hpp"
#include "qsweep/sim/kernel.hpp"
#include "qsweep/sim/simulate.hpp"
#include "sim_test_util.hpp"

namespace qsweep::sim {
namespace {

using model::FamilyKind;
using testing::close;
using testing::family;
using testing::make_system;
using testing::options;

constexpr std::uint64_t kSeed = 20270114;
// A histogram bin is 2^-7 = 0.78% wide (relative): a quantile read from the neighbouring bin is
// off by about that much.
constexpr double kBinWidth = 0x1.0p-7;
// Linear interpolation inside a bin: for a density with |f'/f| <= theta the quantile errs by
// about theta q (q 2^-7)^2 / 8 relative, below 1e-4 for the laws here (theta q <= 10).
constexpr double kInterpolation = 1e-4;

// The q with survival(q) = 1 - p, survival decreasing, by bisection.
template <class Survival>
double inverse(Survival survival, double p) {
  double lo = 0.0, hi = 1.0;
  while (survival(hi) > 1.0 - p) hi *= 2.0;
  for (int i = 0; i < 200 && hi - lo > 1e-14 * hi; ++i) {
    const double mid = (lo + hi) / 2.0;
    (survival(mid) > 1.0 - p ? lo : hi) = mid;
  }
  return (lo + hi) / 2.0;
}

// M/M/c with unit rates and total arrival rate a = c lambda: P(T > t) = (1 - C) e^-t + C P(W + S
// > t), C the Erlang C probability of waiting, W ~ Exp(c - a) the wait of a job that waits.
struct MMc {
  int c;
  double a;
  double erlang_c() const {
    double sum = 0.0, term = 1.0;
    for (int k = 0; k < c; ++k) {
      sum += term;
      term *= a / (k + 1);
    }
    const double tail = term / (1.0 - a / c);
    return tail / (sum + tail);
  }
  double survival(double t) const {
    const double C = erlang_c(), g = c - a;
    const double waited = std::abs(g - 1.0) < 1e-12
                              ? (1.0 + t) * std::exp(-t)
                              : (g * std::exp(-t) - std::exp(-g * t)) / (g - 1.0);
    return (1.0 - C) * std::exp(-t) + C * waited;
  }
};

// Checks r's quantiles and tails against `survival` (the true P(T > t)), and that every interval
// is narrow enough to tell a quantile one bin off (levels up to max_sensitive).
template <class Survival>
void expect_distribution(const Result& r, const Options& o, Survival survival,
                         double max_sensitive) {
  ASSERT_EQ(r.T_quantile.size(), o.quantiles.size());
  ASSERT_EQ(r.T_tail.size(), o.tail_times.size());
  for (std::size_t i = 0; i < o.quantiles.size(); ++i) {
    const double p = o.quantiles[i];
    const double exact = inverse(survival, p);
    EXPECT_TRUE(close(r.T_quantile[i], r.T_quantile_hw[i], exact, kInterpolation * exact))
        << "level " << p;
    if (p <= max_sensitive) {
      EXPECT_LT(2.0 * r.T_quantile_hw[i] + kInterpolation * exact, kBinWidth * exact)
          << "level " << p << ": the interval cannot tell a bin (ratio "
          << (2.0 * r.T_quantile_hw[i] + kInterpolation * exact) / (kBinWidth * exact) << ")";
    }
  }
  for (std::size_t i = 0; i < o.tail_times.size(); ++i) {
    const double t = o.tail_times[i];
    const double exact = survival(t);
    EXPECT_TRUE(close(r.T_tail[i], r.T_tail_hw[i], exact)) << "t = " << t;
    // Tails are counted, not read off the bins; their intervals tell a 3% error where P(T > t)
    // is at least 0.1.
    if (exact >= 0.1) {
      EXPECT_LT(2.0 * r.T_tail_hw[i], 0.03 * exact) << "t = " << t;
    }
  }
}

// The levels and, at the true quantiles of some of them, the tail times of a law.
template <class Survival>
void ask(Options& o, Survival survival) {
  o.quantiles = {0.1, 0.5, 0.9, 0.99, 0.999};
  o.tail_times.clear();
  for (const double p : {0.5, 0.9, 0.99, 0.999}) o.tail_times.push_back(inverse(survival, p));
}

// M/M/1 by the dispatching Markov kernel (independent family, N = 1), whose sojourn times are
// the Erlang laws of the jobs' waits given what they find: quantiles from the histogram of
// expected counts, tails from the laws.
TEST(Distribution, MM1ErlangLawsAtSeveralLoads) {
  for (const double lambda : {0.3, 0.6, 0.8}) {
    SCOPED_TRACE("lambda = " + std::to_string(lambda));
    const double rate = 1.0 - lambda;
    const auto survival = [rate](double t) { return std::exp(-rate * t); };
    const auto system = make_system(family(FamilyKind::independent, 1), lambda);
    auto o = options(Policy::jsq, 8e4 / (rate * rate), 20.0 / (rate * rate), 20);
    ask(o, survival);
    const Result r = simulate(system, o, kSeed, 1);
    expect_distribution(r, o, survival, 0.9);
  }
}

// The same queue with drawn sojourn times (redundancy on one server: the redundancy Markov
// kernel records each departure's sojourn time).
TEST(Distribution, MM1DrawnSojournTimes) {
  for (const double lambda : {0.3, 0.6}) {
    SCOPED_TRACE("lambda = " + std::to_string(lambda));
    const double rate = 1.0 - lambda;
    const auto survival = [rate](double t) { return std::exp(-rate * t); };
    const auto system = make_system(family(FamilyKind::independent, 1), lambda);
    auto o = options(Policy::redundancy_coc, 3e5 / (rate * rate), 20.0 / (rate * rate), 20);
    ask(o, survival);
    const Result r = simulate(system, o, kSeed, 2);
    expect_distribution(r, o, survival, 0.5);
  }
}

// M/M/c: cancel-on-start to all c servers is one FCFS line (the event-driven kernel, drawn sizes).
TEST(Distribution, MMcByErlangC) {
  for (const auto& [c, lambda] : {std::pair{2, 0.5}, std::pair{3, 0.7}}) {
    SCOPED_TRACE("c = " + std::to_string(c) + ", lambda = " + std::to_string(lambda));
    const MMc law{c, c * lambda};
    const auto survival = [&law](double t) { return law.survival(t); };
    const auto system = make_system(family(FamilyKind::complete, c, c), lambda);
    auto o = options(Policy::redundancy_cos, 2e5, 200.0, 20);
    ask(o, survival);
    const Result r = simulate(system, o, kSeed, 3);
    expect_distribution(r, o, survival, 0.5);
  }
}

// The histogram's quantiles of an exactly known law (Erlang laws added by their expected counts:
// exact at every bin edge) are within the interpolation error, a bin off is 60 times that; and
// quantiles() at several levels equals quantile() at each.
TEST(Distribution, HistogramQuantilesOfAnExactLaw) {
  SojournHistogram h;
  // M/M/1 at lambda = 0.7 as an Erlang mixture: k + 1 phases with probability (1 - rho) rho^k.
  const double rho = 0.7;
  std::vector<double> weight(400, 0.0);
  for (std::size_t k = 1; k < weight.size(); ++k)
    weight[k] = 1e6 * (1.0 - rho) * std::pow(rho, static_cast<double>(k - 1));
  h.add_erlang(1.0, weight);
  const std::vector<double> levels = {0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999};
  const std::vector<double> q = h.quantiles(levels);
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const double exact = -std::log(1.0 - levels[i]) / (1.0 - rho);
    EXPECT_NEAR(q[i], exact, kInterpolation * exact) << "level " << levels[i];
    EXPECT_EQ(q[i], h.quantile(levels[i]));
  }
  EXPECT_TRUE(std::isnan(SojournHistogram().quantiles({0.5})[0]));
}

TEST(Distribution, DefaultsAndValidation) {
  const auto system = make_system(family(FamilyKind::independent, 1), 0.5);
  auto o = options(Policy::jsq, 100.0, 10.0, 4);
  const Result r = simulate(system, o, kSeed, 5);
  EXPECT_EQ(r.T_quantile.size(), 3U);  // 0.5, 0.9, 0.99 by default
  EXPECT_TRUE(r.T_tail.empty());
  const auto refused = [&](Options bad, const std::string& expected) {
    try {
      validate(bad);
      ADD_FAILURE() << "accepted; expected " << expected;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  Options bad = o;
  bad.quantiles = {0.5, 0.5};
  refused(bad, "quantiles: value 2 is 0.5, not above the one before it (0.5)");
  bad.quantiles = {0.0};
  refused(bad, "quantiles: value 1 is 0; expected increasing levels in (0, 1)");
  bad.quantiles = {1.0};
  refused(bad, "quantiles: value 1 is 1");
  bad = o;
  bad.tail_times = {2.0, 1.0};
  refused(bad, "tail_times: value 2 is 1, not above the one before it (2)");
  bad.tail_times = {std::numeric_limits<double>::infinity()};
  refused(bad, "tail_times: value 1 is inf");
  bad.tail_times = std::vector<double>(1001, 1.0);
  refused(bad, "tail_times: 1001 values; expected at most 1000");
}

}  // namespace
}  // namespace qsweep::sim
