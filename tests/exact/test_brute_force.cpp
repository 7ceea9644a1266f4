// The engine against an independent brute force: every job-type sequence up to a length is
// enumerated and eq. (3) summed, on random small instances (random N <= 6, random type sets,
// random speeds, random stable loads). Fixed seed; the instances are the same on every run.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "exact_test_util.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/exact/engine.hpp"

namespace qsweep::exact::test {
namespace {

int max_length_for(std::size_t types) {  // keeps the enumeration near 3e5 sequences
  int len = 1;
  while (std::pow(static_cast<double>(types), len + 1) <= 3e5 && len < 14) ++len;
  return len;
}

// Ratios P(Q = q) / P(Q = 0) (and alpha_q) do not depend on the truncation: 1e-12 relative at
// any stable load.
TEST(ExactBruteForce, RatiosMatchEnumerationAtAnyStableLoad) {
  std::mt19937_64 gen(20240611);
  std::uniform_real_distribution<double> load(0.05, 0.98);
  for (int trial = 0; trial < 60; ++trial) {
    const Instance inst = random_instance(gen);
    model::Family family(inst.params);
    const auto types = family.enumerate();
    const double L = load(gen) * max_stable_rate(types, inst.speeds);
    const int N = inst.params.N;
    const auto system = make_system(inst.params, L / N, inst.speeds);
    const int len = max_length_for(types.size());
    const Result r = run(system, len, Engine::general);
    ASSERT_TRUE(r.stable) << "trial " << trial << ": " << r.unstable_reason;
    const BruteForce bf(types, inst.speeds, L, len);
    const double load_factor = L / system.mean_speed();  // N rho
    for (int q = 1; q <= len; ++q) {
      const double expected = bf.weight[static_cast<std::size_t>(q)].value();
      EXPECT_LT(rel_diff(r.pmf[static_cast<std::size_t>(q)] / r.pmf[0], expected), 1e-12)
          << "trial " << trial << " q " << q;
      EXPECT_LT(rel_diff(r.alpha[static_cast<std::size_t>(q)], expected / std::pow(load_factor, q)),
                1e-12)
          << "trial " << trial << " q " << q;
    }
  }
}

// C, E[Q], Var[Q], E[Q_S] and E[R_n] at loads where the truncated enumeration is accurate. When a
// job is present the departure rate is at least m = min_S mu(S), so Q is stochastically below an
// M/M/1 queue with ratio r = L / m: P(Q >= q) <= r^q. That bounds the truncation error of every
// quantity (derived next to each check).
TEST(ExactBruteForce, MomentsMatchEnumerationWithinTruncationBound) {
  std::mt19937_64 gen(777);
  std::uniform_real_distribution<double> ratio(0.02, 0.2);
  for (int trial = 0; trial < 60; ++trial) {
    const Instance inst = random_instance(gen);
    model::Family family(inst.params);
    const auto types = family.enumerate();
    const int N = inst.params.N;
    double min_mu = std::numeric_limits<double>::infinity();
    const BruteForce probe(types, inst.speeds, 0.0, 0);
    for (const auto& t : types) min_mu = std::min(min_mu, probe.mu(t.servers));
    const double r_dom = ratio(gen);
    const double L = r_dom * min_mu;
    const auto system = make_system(inst.params, L / N, inst.speeds);
    const Result r = run(system, 0, Engine::general);
    ASSERT_TRUE(r.stable);
    const int K = max_length_for(types.size());
    const BruteForce bf(types, inst.speeds, L, K);
    Sum mass, first;
    for (int q = 0; q <= K; ++q) {
      mass.add(bf.weight[static_cast<std::size_t>(q)].value());
      first.add(q * bf.weight[static_cast<std::size_t>(q)].value());
    }
    const double tail = std::pow(r_dom, K + 1);  // >= P(Q > K)
    // E[Q; Q > K] <= sum_{q > K} P(Q >= q) + K P(Q > K); E[Q^2; Q > K] likewise with 2q - 1.
    double tail_first = K * tail, tail_second = static_cast<double>(K) * K * tail;
    for (int q = K + 1; q < K + 2000; ++q) {
      tail_first += std::pow(r_dom, q);
      tail_second += (2.0 * q - 1.0) * std::pow(r_dom, q);
    }
    const double C_bf = 1.0 / mass.value();     // = C / P(Q <= K)
    const double EQ_bf = first.value() * C_bf;  // = E[Q | Q <= K]
    const double EQ2_bf = bf.jobs2.value() * C_bf;
    const double slack = 1e-13;  // rounding, on top of the truncation bounds
    EXPECT_LE(r.C, C_bf * (1 + slack)) << trial;
    EXPECT_GE(r.C, C_bf * (1 - tail) * (1 - slack)) << trial;
    EXPECT_GE(r.EQ, EQ_bf * (1 - slack)) << trial;  // E[Q] >= E[Q | Q <= K]
    EXPECT_LE(r.EQ, EQ_bf + tail_first + slack * EQ_bf) << trial;
    const double EQ2 = r.VarQ + r.EQ * r.EQ;
    EXPECT_NEAR(EQ2, EQ2_bf, tail_second + K * K * tail + 1e-12 * EQ2) << trial;
    double sum_types = 0.0;
    for (std::size_t t = 0; t < types.size(); ++t) {
      const double expected = bf.of_type[t].value() * C_bf;  // E[Q_S | Q <= K]
      EXPECT_NEAR(r.EQ_type[t], expected, tail_first + K * tail + 1e-12 * expected)
          << trial << " type " << t;
      sum_types += r.EQ_type[t];
    }
    // The per-type means come from the backward (adjoint) pass, E[Q] from the forward one.
    EXPECT_LT(rel_diff(sum_types, r.EQ), 1e-12) << trial;
    for (int n = 0; n < N; ++n) {
      double expected = 0.0;
      for (std::size_t t = 0; t < types.size(); ++t)
        if (types[t].servers >> n & 1u) expected += bf.of_type[t].value() * C_bf;
      EXPECT_NEAR(
          r.ER_server[static_cast<std::size_t>(n)], expected,
          static_cast<double>(types.size()) * (tail_first + K * tail) + 1e-12 * expected + 1e-300);
    }
  }
}

// At high load the enumeration is far from converged, but its partial sums still bound the
// engine from below: sum over states with <= K jobs of pi(c) * (jobs of type S in c) <= E[Q_S].
TEST(ExactBruteForce, TruncatedSumsBoundTheMeansFromBelowAtHighLoad) {
  std::mt19937_64 gen(4242);
  std::uniform_real_distribution<double> load(0.5, 0.95);
  for (int trial = 0; trial < 20; ++trial) {
    const Instance inst = random_instance(gen);
    model::Family family(inst.params);
    const auto types = family.enumerate();
    const double L = load(gen) * max_stable_rate(types, inst.speeds);
    const auto system = make_system(inst.params, L / inst.params.N, inst.speeds);
    const Result r = run(system, 0, Engine::general);
    ASSERT_TRUE(r.stable);
    const BruteForce bf(types, inst.speeds, L, max_length_for(types.size()));
    for (std::size_t t = 0; t < types.size(); ++t) {
      EXPECT_LE(bf.of_type[t].value() * r.C, r.EQ_type[t] * (1 + 1e-12)) << trial;
    }
  }
}

// The engine's own guard: a union with mu(B) <= rate(B) reached by the DP names that union.
TEST(ExactBruteForce, EngineGuardNamesAnOverloadedUnion) {
  const std::vector<model::JobType> types{{0b01, 0.9}, {0b11, 0.1}};
  const auto m = detail::general_engine(types, {1.0, 1.0}, 1.2, 0, true);
  EXPECT_EQ(m.violating_set, std::vector<int>{0});
  EXPECT_LE(m.slack, 0.0);
}

// 20 queues each 2e-16 short of overload (stable, the stability check decides exactly) have
// 1/C = (4.5e15)^20 > 1e308: a clear error instead of infinities.
TEST(ExactBruteForce, EngineRefusesWeightsBeyondDoubleRange) {
  std::vector<model::JobType> types;
  for (int n = 0; n < 20; ++n) types.push_back({model::ServerMask{1} << n, 1.0 / 20});
  const std::vector<double> speeds(20, 1.0);
  EXPECT_THROW(detail::general_engine(types, speeds, 20 * (1 - 0x1p-52), 0, true), InputError);
}

}  // namespace
}  // namespace qsweep::exact::test
