// The lumped exact chain against (1) a brute-force chain over individual queue vectors solved by
// a matrix exponential, (2) its own bounds, and (3) the large-deviation rate as n grows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "qsweep/ldp/ldp.hpp"
#include "qsweep/ldp/theory.hpp"
// detail::exact_chain(options, tilt): one run with a chosen tilt, to test both representations
#include "../../src/ldp/estimators.hpp"

namespace {

using qsweep::ldp::Estimator;
using qsweep::ldp::Options;
using qsweep::ldp::Policy;
using Matrix = std::vector<std::vector<long double>>;

Matrix multiply(const Matrix& a, const Matrix& b) {
  const std::size_t size = a.size();
  Matrix c(size, std::vector<long double>(size, 0.0L));
  for (std::size_t i = 0; i < size; ++i)
    for (std::size_t k = 0; k < size; ++k)
      if (a[i][k] != 0.0L)
        for (std::size_t m = 0; m < size; ++m) c[i][m] += a[i][k] * b[k][m];
  return c;
}

// exp(A) by scaling and squaring of a Taylor series.
Matrix exponential(Matrix a) {
  const std::size_t size = a.size();
  long double norm = 0;
  for (const auto& row : a) {
    long double sum = 0;
    for (long double value : row) sum += std::fabs(value);
    norm = std::max(norm, sum);
  }
  int squarings = 0;
  while (norm > 0.25L) norm /= 2, ++squarings;
  for (auto& row : a)
    for (auto& value : row) value = std::ldexp(value, -squarings);
  Matrix result(size, std::vector<long double>(size, 0.0L)), term = result;
  for (std::size_t i = 0; i < size; ++i) result[i][i] = term[i][i] = 1.0L;
  for (int order = 1; order <= 30; ++order) {
    term = multiply(term, a);
    for (auto& row : term)
      for (auto& value : row) value /= order;
    for (std::size_t i = 0; i < size; ++i)
      for (std::size_t m = 0; m < size; ++m) result[i][m] += term[i][m];
  }
  for (int i = 0; i < squarings; ++i) result = multiply(result, result);
  return result;
}

// P(some queue reaches j by T) for n individually tracked queues starting from `start` (default:
// all of length 1), every routing decision spelled out: jsq ties at random, jiq uniform over the
// idle queues (else over all), power_of_d over all d-subsets with ties at random.
double brute_force(Policy policy, int d, int n, int j, double T, double lambda,
                   std::vector<int> start = {}) {
  if (start.empty()) start.assign(static_cast<std::size_t>(n), 1);
  std::map<std::vector<int>, std::size_t> index;
  std::vector<std::vector<int>> states;
  std::vector<int> queue(static_cast<std::size_t>(n), 0);
  while (true) {  // every vector in {0..j-1}^n
    index[queue] = states.size();
    states.push_back(queue);
    std::size_t i = 0;
    while (i < queue.size() && ++queue[i] == j) queue[i++] = 0;
    if (i == queue.size()) break;
  }
  const std::size_t absorbing = states.size();
  Matrix generator(absorbing + 1, std::vector<long double>(absorbing + 1, 0.0L));
  auto add = [&](std::size_t from, std::vector<int> to, long double rate) {
    const std::size_t target =
        *std::max_element(to.begin(), to.end()) >= j ? absorbing : index.at(to);
    generator[from][target] += rate;
    generator[from][from] -= rate;
  };
  for (std::size_t s = 0; s < absorbing; ++s) {
    const auto& q = states[s];
    for (int i = 0; i < n; ++i)
      if (q[static_cast<std::size_t>(i)] > 0) {
        auto next = q;
        --next[static_cast<std::size_t>(i)];
        add(s, next, 1.0L);
      }
    // routing probability of each queue
    std::vector<long double> route(static_cast<std::size_t>(n), 0.0L);
    auto shortest_uniform = [&](const std::vector<int>& members, long double weight) {
      int best = j;
      for (int i : members) best = std::min(best, q[static_cast<std::size_t>(i)]);
      std::vector<int> ties;
      for (int i : members)
        if (q[static_cast<std::size_t>(i)] == best) ties.push_back(i);
      for (int i : ties)
        route[static_cast<std::size_t>(i)] += weight / static_cast<long double>(ties.size());
    };
    std::vector<int> all(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
    if (policy == Policy::jsq) {
      shortest_uniform(all, 1.0L);
    } else if (policy == Policy::jiq) {
      std::vector<int> idle;
      for (int i : all)
        if (q[static_cast<std::size_t>(i)] == 0) idle.push_back(i);
      for (int i : idle.empty() ? all : idle)
        route[static_cast<std::size_t>(i)] +=
            1.0L / static_cast<long double>(idle.empty() ? n : static_cast<int>(idle.size()));
    } else {
      std::vector<std::vector<int>> subsets;
      for (unsigned mask = 0; mask < (1u << n); ++mask)
        if (__builtin_popcount(mask) == d) {
          std::vector<int> members;
          for (int i = 0; i < n; ++i)
            if (mask >> i & 1u) members.push_back(i);
          subsets.push_back(members);
        }
      for (const auto& members : subsets)
        shortest_uniform(members, 1.0L / static_cast<long double>(subsets.size()));
    }
    for (int i = 0; i < n; ++i)
      if (route[static_cast<std::size_t>(i)] > 0) {
        auto next = q;
        ++next[static_cast<std::size_t>(i)];
        add(s, next, n * lambda * route[static_cast<std::size_t>(i)]);
      }
  }
  for (auto& row : generator)
    for (auto& value : row) value *= T;
  const Matrix transition = exponential(generator);
  return static_cast<double>(transition[index.at(start)][absorbing]);
}

Options exact_options(Policy policy, std::int64_t n, int j, double T, double lambda) {
  Options o;
  o.estimator = Estimator::exact;
  o.policy = policy;
  o.n = n;
  o.j = j;
  o.T = T;
  o.lambda = lambda;
  return o;
}

TEST(ExactChain, MatchesBruteForceOverQueueVectors) {
  struct Case {
    Policy policy;
    int d, n, j;
    double T, lambda;
  };
  const Case cases[] = {
      {Policy::jsq, 2, 4, 3, 1.0, 1.0},        {Policy::jsq, 2, 3, 4, 2.0, 0.8},
      {Policy::jsq, 2, 2, 2, 0.7, 1.5},        {Policy::jiq, 2, 4, 3, 1.0, 1.0},
      {Policy::jiq, 2, 3, 4, 1.5, 1.2},        {Policy::power_of_d, 2, 4, 3, 1.0, 1.0},
      {Policy::power_of_d, 3, 4, 3, 2.0, 0.7}, {Policy::power_of_d, 1, 3, 4, 1.0, 1.1},
      {Policy::jsq, 2, 1, 3, 3.0, 0.9},
  };
  for (const Case& c : cases) {
    Options o = exact_options(c.policy, c.n, c.j, c.T, c.lambda);
    o.policy_d = c.d;
    const auto result = qsweep::ldp::estimate(o, 0, 0);
    const double truth = brute_force(c.policy, c.d, c.n, c.j, c.T, c.lambda);
    SCOPED_TRACE(::testing::Message()
                 << "policy " << static_cast<int>(c.policy) << " d " << c.d << " n " << c.n << " j "
                 << c.j << " T " << c.T << " lambda " << c.lambda);
    EXPECT_NEAR(result.probability, truth, 1e-11 * truth);
    EXPECT_LE(result.ci_low, truth * (1 + 1e-13));
    EXPECT_GE(result.ci_high, truth * (1 - 1e-13));
  }
}

// The tilted chain (u = v a^jobs, arrival moves x a, departures x 1/a) is the same chain seen
// through a diagonal similarity: every policy, any a >= 1, gives the brute-force p and bounds
// that hold.
TEST(ExactChain, TiltedChainMatchesBruteForce) {
  struct Case {
    Policy policy;
    int d, n, j;
    double T, lambda;
  };
  const Case cases[] = {
      {Policy::jsq, 2, 4, 3, 1.0, 1.0},        {Policy::jsq, 2, 3, 4, 2.0, 0.8},
      {Policy::jsq, 2, 2, 2, 0.7, 0.5},        {Policy::jiq, 2, 4, 3, 1.0, 1.0},
      {Policy::jiq, 2, 3, 4, 1.5, 0.6},        {Policy::power_of_d, 2, 4, 3, 1.0, 1.0},
      {Policy::power_of_d, 3, 4, 3, 2.0, 0.7}, {Policy::power_of_d, 1, 3, 4, 1.0, 1.1},
  };
  for (const Case& c : cases) {
    Options o = exact_options(c.policy, c.n, c.j, c.T, c.lambda);
    o.policy_d = c.d;
    const double truth = brute_force(c.policy, c.d, c.n, c.j, c.T, c.lambda);
    for (double tilt : {1.7, 6.0, qsweep::ldp::detail::exact_chain_tilt(o)}) {
      SCOPED_TRACE(::testing::Message()
                   << "policy " << static_cast<int>(c.policy) << " d " << c.d << " n " << c.n
                   << " j " << c.j << " T " << c.T << " lambda " << c.lambda << " tilt " << tilt);
      const auto result = qsweep::ldp::detail::exact_chain(o, tilt);
      EXPECT_EQ(result.tilt, tilt);
      EXPECT_NEAR(result.probability, truth, 1e-11 * truth);
      EXPECT_LE(result.ci_low, truth * (1 + 1e-13)) << (result.probability / truth - 1);
      EXPECT_GE(result.ci_high, truth * (1 - 1e-13));
      EXPECT_LE(result.relative_error, 1e-12 + 1e-15);
    }
  }
}

TEST(ExactChain, InitialOccupancyIsHonoured) {
  // Two idle queues, one of length 1, one of length 2 (n = 4).
  for (Policy policy : {Policy::jsq, Policy::jiq}) {
    Options o = exact_options(policy, 4, 3, 1.5, 1.0);
    o.initial_counts = {2, 1, 1};
    const double truth = brute_force(policy, 2, 4, 3, 1.5, 1.0, {0, 0, 1, 2});
    EXPECT_NEAR(qsweep::ldp::estimate(o, 0, 0).probability, truth, 1e-11 * truth);
  }
}

TEST(ExactChain, BoundsHoldAndTighten) {
  Options loose = exact_options(Policy::jsq, 60, 3, 1.0, 1.0);
  loose.truncation = 1e-4;
  Options tight = loose;
  tight.truncation = 1e-13;
  const auto a = qsweep::ldp::estimate(loose, 0, 0);
  const auto b = qsweep::ldp::estimate(tight, 0, 0);
  EXPECT_LE(a.relative_error, 1e-4);
  EXPECT_LE(b.relative_error, 1e-13 + 1e-15);
  EXPECT_LE(a.ci_low, b.probability);
  EXPECT_GE(a.ci_high, b.probability);
  EXPECT_LE(a.events, b.events);  // fewer uniformization steps for the looser bound
}

TEST(ExactChain, ApproachesTheDecayRateLikeHalfLogNOverN) {
  // -(1/n) log p = rate + a log(n) / n + b / n + o(1/n): solve for (rate, a, b) from
  // n = 100, 200, 400. docs/ldp.md ("Theory"): the rate is log(phi) + 2 - sqrt(5) and a = 1/2
  // (p ~ C n^(-1/2) exp(-n rate)); the gap to the rate shrinks like log(n) / n.
  const double rate = qsweep::ldp::decay_rate(3, 1.0);
  double A[3][4];
  const std::int64_t sizes[3] = {100, 200, 400};
  double previous_gap = INFINITY;
  for (int row = 0; row < 3; ++row) {
    const auto result =
        qsweep::ldp::estimate(exact_options(Policy::jsq, sizes[row], 3, 1.0, 1.0), 0, 0);
    const double n = static_cast<double>(sizes[row]);
    EXPECT_DOUBLE_EQ(result.theory_rate, rate);
    const double gap = -result.log_rate - rate;
    EXPECT_GT(gap, 0.0);
    EXPECT_LT(gap, previous_gap);
    previous_gap = gap;
    A[row][0] = 1;
    A[row][1] = std::log(n) / n;
    A[row][2] = 1 / n;
    A[row][3] = -result.log_rate;
  }
  for (int pivot = 0; pivot < 3; ++pivot)  // Gauss-Jordan on the 3x3 system
    for (int row = 0; row < 3; ++row)
      if (row != pivot) {
        const double factor = A[row][pivot] / A[pivot][pivot];
        for (int col = 0; col < 4; ++col) A[row][col] -= factor * A[pivot][col];
      }
  const double fitted_rate = A[0][3] / A[0][0];
  const double fitted_log_coefficient = A[1][3] / A[1][1];
  EXPECT_NEAR(fitted_rate, rate, 3e-4);           // 9e-5 measured
  EXPECT_NEAR(fitted_log_coefficient, 0.5, 0.1);  // 0.46 measured
}

TEST(ExactChain, FixedLambdaRatesAreApproached) {
  // lambda = 0.7, T = 5 > c / (1 - lambda): rate c log(1 / lambda); lambda = 1.3, T = 1:
  // T L_lambda(c / T). At n = 300 the finite-n value sits within a few log(n)/n of the rate.
  for (double lambda : {0.7, 1.3}) {
    const double T = lambda < 1 ? 5.0 : 1.0;
    const auto result = qsweep::ldp::estimate(exact_options(Policy::jsq, 300, 3, T, lambda), 0, 0);
    const double gap = -result.log_rate - qsweep::ldp::decay_rate_fixed_lambda(3, T, lambda);
    EXPECT_LT(std::fabs(gap), 2 * std::log(300.0) / 300) << "lambda " << lambda;
  }
}

// Far below the smallest double (p = e^-927 at n = 400, lambda = 0.1): the rescaled vector and
// the tilted one agree to rounding, and importance sampling (20000 paths, fixed seed) agrees
// within 4 of its standard errors.
TEST(ExactChain, RescaledAndTiltedChainsAgreeFarBelowTheDoubleRange) {
  Options o = exact_options(Policy::jsq, 400, 3, 1.0, 0.1);
  const auto rescaled = qsweep::ldp::detail::exact_chain(o, 1.0);
  const auto tilted = qsweep::ldp::detail::exact_chain(o, qsweep::ldp::detail::exact_chain_tilt(o));
  EXPECT_GT(tilted.tilt, 10.0);
  EXPECT_LT(rescaled.log_probability, -900.0);
  EXPECT_NEAR(tilted.log_probability, rescaled.log_probability, 1e-11 * 927);
  for (const auto& r : {rescaled, tilted}) {
    EXPECT_EQ(r.probability, 0.0);  // below the double range; the logs carry p
    EXPECT_LE(r.relative_error, 1e-12 + 1e-15);
    EXPECT_GE(r.log_rate_high * 400, r.log_probability);
  }
  Options sampled = o;
  sampled.estimator = Estimator::importance;
  sampled.samples = 20000;
  const auto is = qsweep::ldp::estimate(sampled, 3, 0);
  EXPECT_NEAR(is.log_probability, rescaled.log_probability, 4 * is.relative_error);
  // the other policies, where p is not small: both representations give the same p
  for (Policy policy : {Policy::jiq, Policy::power_of_d}) {
    Options other = exact_options(policy, 200, 3, 1.0, 0.7);
    const auto plain = qsweep::ldp::detail::exact_chain(other, 1.0);
    const auto with_tilt = qsweep::ldp::detail::exact_chain(other, 2.5);
    EXPECT_NEAR(with_tilt.probability, plain.probability, 1e-11 * plain.probability)
        << static_cast<int>(policy);
  }
}

// At n = 800, lambda = 0.1 (p = e^-1850) the untilted vector runs out of range (its floor is
// ~e^-1400 of the total mass): it reports an interval far wider than the truncation, and
// estimate() uses the tilt instead, which importance sampling confirms.
TEST(ExactChain, TiltTakesOverWhereTheRescaledVectorRunsOutOfRange) {
  Options o = exact_options(Policy::jsq, 800, 3, 1.0, 0.1);
  const auto rescaled = qsweep::ldp::detail::exact_chain(o, 1.0);
  EXPECT_FALSE(rescaled.relative_error <= 1e-12) << rescaled.relative_error;
  const auto exact = qsweep::ldp::estimate(o, 0, 0);
  EXPECT_GT(exact.tilt, 1.0);
  EXPECT_LE(exact.relative_error, 1e-12 + 1e-15);
  EXPECT_LT(exact.log_probability, -1800.0);
  Options sampled = o;
  sampled.estimator = Estimator::importance;
  sampled.samples = 20000;
  const auto is = qsweep::ldp::estimate(sampled, 4, 0);
  EXPECT_NEAR(is.log_probability, exact.log_probability, 4 * is.relative_error);
}

// The cases at lambda = 1, T = 0.5: p = e^-752 at n = 1600 (the rescaled vector) and
// e^-1500 at n = 3200 (tilted from the start, the theory's rate predicting the range); importance
// sampling (fixed seeds, 4 standard errors) agrees.
void expect_far_tail_matches_importance_sampling(std::int64_t n) {
  Options o = exact_options(Policy::jsq, n, 3, 0.5, 1.0);
  const auto exact = qsweep::ldp::estimate(o, 0, 0);
  Options sampled = o;
  sampled.estimator = Estimator::importance;
  sampled.samples = 4000;
  const auto is = qsweep::ldp::estimate(sampled, 5, 0);
  SCOPED_TRACE(::testing::Message()
               << "n " << n << " exact " << exact.log_probability << " importance "
               << is.log_probability << " +- " << is.relative_error);
  EXPECT_LT(exact.log_probability, -700.0);  // p < 1e-304
  EXPECT_EQ(exact.tilt > 1.0, n == 3200);
  EXPECT_LE(exact.relative_error, 1e-12 + 1e-15);
  EXPECT_LT(is.relative_error, 0.02);
  EXPECT_NEAR(is.log_probability, exact.log_probability, 4 * is.relative_error);
}

TEST(ExactChainFarTail, MatchesImportanceSamplingAtN1600) {
  expect_far_tail_matches_importance_sampling(1600);
}

// About 60 s of CPU in the Release build; the sanitizer build (several times slower) checks the
// tilted chain on the smaller cases above instead.
TEST(ExactChainFarTail, MatchesImportanceSamplingAtN3200) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "minutes under AddressSanitizer; the tilted chain is checked at smaller n";
#endif
  expect_far_tail_matches_importance_sampling(3200);
}

}  // namespace
