// The simulator against queues with closed forms: M/M/1, M/G/1 (Pollaczek-Khinchine), M/M/N
// (Erlang C), and systems that reduce to them. Fixed seeds; tolerances from the reported
// half-widths (sim_test_util.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

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

constexpr std::uint64_t kSeed = 20261130;

// Mean number in an M/G/1 queue with load rho and squared coefficient of variation cv2 of the
// service time (Pollaczek-Khinchine).
double pk_mean_jobs(double rho, double cv2) {
  return rho + rho * rho * (1.0 + cv2) / (2.0 * (1.0 - rho));
}

// M/M/1, N = 1: mean, variance, distribution, sojourn mean and quantiles (Exp(mu - lambda)).
TEST(ClosedForms, SingleServerMM1EveryPolicy) {
  const double lambda = 0.8, mu = 1.25, rho = lambda / mu;
  for (Policy policy : {Policy::redundancy_coc, Policy::redundancy_cos, Policy::jsq, Policy::random,
                        Policy::jiq, Policy::power_of_d}) {
    SCOPED_TRACE(static_cast<int>(policy));
    const auto system = make_system(family(FamilyKind::independent, 1), lambda, {mu});
    auto o = options(policy, 2e4, 200.0, 20);
    o.qmax = 6;
    const Result r = simulate(system, o, kSeed, 1);
    EXPECT_TRUE(close(r.EQ, r.EQ_hw, rho / (1 - rho)));
    EXPECT_TRUE(close(r.VarQ, r.VarQ_hw, rho / ((1 - rho) * (1 - rho))));
    EXPECT_TRUE(close(r.ET, r.ET_hw, 1.0 / (mu - lambda)));
    for (int q = 0; q <= 6; ++q)
      EXPECT_TRUE(close(r.pmf[q], r.pmf_hw[q], (1 - rho) * std::pow(rho, q))) << "q = " << q;
    EXPECT_TRUE(close(r.utilisation[0], r.utilisation_hw[0], rho));
    // Quantiles are resolved to a histogram bin (< 0.8% relative).
    const double rate = mu - lambda;
    // (The default levels 0.5, 0.9, 0.99; test_distribution.cpp checks them sharply.)
    ASSERT_EQ(r.T_quantile.size(), 3U);
    EXPECT_TRUE(
        close(r.T_quantile[0], r.T_quantile_hw[0], std::log(2.0) / rate, 0.008 * r.T_quantile[0]));
    EXPECT_TRUE(
        close(r.T_quantile[1], r.T_quantile_hw[1], std::log(10.0) / rate, 0.008 * r.T_quantile[1]));
    EXPECT_TRUE(close(r.T_quantile[2], r.T_quantile_hw[2], std::log(100.0) / rate,
                      0.008 * r.T_quantile[2]));
  }
}

// Family independent, heterogeneous speeds: every policy sees one server per job, so the servers
// are independent M/M/1 queues with arrival rate lambda each.
TEST(ClosedForms, IndependentFamilyIsIndependentMM1Queues) {
  const double lambda = 0.6;
  const std::vector<double> speeds = {0.8, 1.0, 1.5, 2.5};
  const auto system = make_system(family(FamilyKind::independent, 4), lambda, speeds);
  for (Policy policy : {Policy::redundancy_coc, Policy::jsq, Policy::redundancy_cos}) {
    SCOPED_TRACE(static_cast<int>(policy));
    const Result r = simulate(system, options(policy, 1e4, 200.0, 16), kSeed, 2);
    double total = 0.0, sojourn = 0.0;
    for (std::size_t n = 0; n < speeds.size(); ++n) {
      const double rho = lambda / speeds[n];
      EXPECT_TRUE(close(r.ER_server[n], r.ER_server_hw[n], rho / (1 - rho))) << "server " << n;
      EXPECT_TRUE(close(r.utilisation[n], r.utilisation_hw[n], rho)) << "server " << n;
      total += rho / (1 - rho);
      sojourn += 1.0 / (speeds[n] - lambda) / 4.0;
    }
    EXPECT_TRUE(close(r.EQ, r.EQ_hw, total));
    EXPECT_TRUE(close(r.ET, r.ET_hw, sojourn));
    // Sojourn times: a job is at server n with probability 1/4 and then Exp(mu_n - lambda);
    // the 90% quantile of that mixture by bisection.
    double lo = 0.0, hi = 100.0;
    while (hi - lo > 1e-9) {
      const double x = (lo + hi) / 2.0;
      double F = 0.0;
      for (double mu : speeds) F += (1.0 - std::exp(-(mu - lambda) * x)) / 4.0;
      (F < 0.9 ? lo : hi) = x;
    }
    EXPECT_TRUE(close(r.T_quantile[1], r.T_quantile_hw[1], lo, 0.008 * lo));
    ASSERT_EQ(r.EQ_type.size(), 4U);  // one type per server, in enumerate() order
    for (std::size_t k = 0; k < 4; ++k) {
      const int n = std::countr_zero(r.type_servers[k]);
      const double rho = lambda / speeds[static_cast<std::size_t>(n)];
      EXPECT_TRUE(close(r.EQ_type[k], r.EQ_type_hw[k], rho / (1 - rho)));
      EXPECT_TRUE(close(r.ET_type[k], r.ET_type_hw[k],
                        1.0 / (speeds[static_cast<std::size_t>(n)] - lambda)));
    }
  }
}

// Random dispatching splits the Poisson stream: server n is an M/M/1 queue with arrival rate
// sum over types S containing n of N lambda p_S / |S| (computed here from enumerate()).
// The star makes those rates unequal; the pmf of the total is the convolution of geometrics.
TEST(ClosedForms, RandomDispatchOnAStarIsIndependentMM1Queues) {
  const int N = 4;
  const double lambda = 0.5;
  const std::vector<double> speeds = {2.0, 1.0, 0.7, 1.0};
  const auto system = make_system(family(FamilyKind::star, N), lambda, speeds);
  std::vector<double> rate(N, 0.0);
  for (const auto& type : system.family.enumerate())
    for (int n = 0; n < N; ++n)
      if (type.servers >> n & 1)
        rate[static_cast<std::size_t>(n)] += N * lambda * type.p / std::popcount(type.servers);
  auto o = options(Policy::random, 1e4, 200.0, 16);
  o.qmax = 5;
  const Result r = simulate(system, o, kSeed, 3);
  std::vector<double> pmf = {1.0};  // convolution of the per-server geometric laws, q <= 5
  for (int n = 0; n < N; ++n) {
    const double rho = rate[static_cast<std::size_t>(n)] / speeds[static_cast<std::size_t>(n)];
    EXPECT_TRUE(close(r.ER_server[n], r.ER_server_hw[n], rho / (1 - rho))) << "server " << n;
    std::vector<double> next(6, 0.0);
    for (std::size_t q = 0; q < 6; ++q)
      for (std::size_t k = 0; k <= q && k < pmf.size(); ++k)
        next[q] += pmf[k] * (1 - rho) * std::pow(rho, static_cast<double>(q - k));
    pmf = next;
  }
  for (int q = 0; q <= 5; ++q) EXPECT_TRUE(close(r.pmf[q], r.pmf_hw[q], pmf[q])) << "q = " << q;
}

// M/D/1, M/H2/1 and an empirical law on one server against Pollaczek-Khinchine.
TEST(ClosedForms, SingleServerGeneralServiceMatchesPollaczekKhinchine) {
  const double lambda = 0.7, mu = 1.0, rho = lambda / mu;
  struct Case {
    Service service;
    double cv2;
  };
  Service deterministic{ServiceKind::deterministic, 1.0, {}, {}};
  Service hyper{ServiceKind::hyperexponential, 4.0, {}, {}};
  // Sizes {1, 3}, weights omitted (uniform), rescaled to {0.5, 1.5}: cv2 = 0.25.
  Service uniform{ServiceKind::empirical, 1.0, {1.0, 3.0}, {}};
  // Sizes {1, 4} with weights {3/4, 1/4}: mean 7/4, E[X^2] = 19/4, cv2 = 19/4 / (49/16) - 1.
  Service skewed{ServiceKind::empirical, 1.0, {1.0, 4.0}, {0.75, 0.25}};
  for (const Case& c : {Case{deterministic, 0.0}, Case{hyper, 4.0}, Case{uniform, 0.25},
                        Case{skewed, 76.0 / 49.0 - 1.0}}) {
    SCOPED_TRACE(static_cast<int>(c.service.kind));
    for (Policy policy : {Policy::redundancy_coc, Policy::jsq, Policy::redundancy_cos}) {
      const auto system = make_system(family(FamilyKind::independent, 1), lambda, {mu});
      auto o = options(policy, 2e4, 500.0, 20);
      o.service = c.service;
      const Result r = simulate(system, o, kSeed, 4);
      const double EQ = pk_mean_jobs(rho, c.cv2);
      EXPECT_TRUE(close(r.EQ, r.EQ_hw, EQ)) << "policy " << static_cast<int>(policy);
      EXPECT_TRUE(close(r.ET, r.ET_hw, EQ / lambda)) << "policy " << static_cast<int>(policy);
    }
  }
}

// Deterministic sizes, independent family with heterogeneous speeds: M/D/1 per server with
// service time 1 / mu_n.
TEST(ClosedForms, IndependentFamilyDeterministicServicePerServer) {
  const double lambda = 0.5;
  const std::vector<double> speeds = {0.75, 1.0, 2.0};
  const auto system = make_system(family(FamilyKind::independent, 3), lambda, speeds);
  const Result r = simulate(
      system, options(Policy::random, 1e4, 200.0, 16, ServiceKind::deterministic), kSeed, 5);
  for (std::size_t n = 0; n < 3; ++n)
    EXPECT_TRUE(close(r.ER_server[n], r.ER_server_hw[n], pk_mean_jobs(lambda / speeds[n], 0.0)));
}

// Redundancy to all servers with independent exponential replicas: the minimum of the replicas
// is exponential with rate mu(all), so Q is an M/M/1 queue with service rate N * mu. Both
// kernels.
TEST(ClosedForms, RedundancyToAllServersIsMM1WithTotalRate) {
  const int N = 4;
  const std::vector<double> speeds = {0.5, 1.0, 1.0, 1.5};  // total 4
  const double lambda = 0.75, rho = N * lambda / 4.0;
  const auto system = make_system(family(FamilyKind::complete, N, N), lambda, speeds);
  for (Kernel kernel : {Kernel::markov, Kernel::event_driven}) {
    SCOPED_TRACE(static_cast<int>(kernel));
    double sum = 0.0, sum_sq = 0.0;
    const int R = 16;
    for (int rep = 0; rep < R; ++rep) {
      const auto s = run_replication(system, options(Policy::redundancy_coc, 1e4, 0, R), kSeed, 6,
                                     static_cast<std::uint64_t>(rep), {200.0, 1e4, 0}, kernel);
      sum += s.mean_Q;
      sum_sq += s.mean_Q * s.mean_Q;
    }
    const double mean = sum / R, sd = std::sqrt((sum_sq - R * mean * mean) / (R - 1));
    // 4.5 standard errors.
    EXPECT_NEAR(mean, rho / (1 - rho), 4.5 * sd / std::sqrt(R));
  }
}

// Identical replica sizes to all servers: every job starts on all servers at once and the
// fastest finishes first, so Q is M/G/1 with service size / max speed.
TEST(ClosedForms, IdenticalReplicasToAllServersUseTheFastestServer) {
  const int N = 3;
  const std::vector<double> speeds = {0.5, 2.0, 1.0};
  const double lambda = 0.4, rho = N * lambda / 2.0;
  const auto system = make_system(family(FamilyKind::complete, N, N), lambda, speeds);
  for (ServiceKind kind : {ServiceKind::deterministic, ServiceKind::exponential}) {
    auto o = options(Policy::redundancy_coc, 1e4, 200.0, 16, kind);
    o.identical_replicas = true;
    const Result r = simulate(system, o, kSeed, 7);
    EXPECT_TRUE(
        close(r.EQ, r.EQ_hw, pk_mean_jobs(rho, kind == ServiceKind::deterministic ? 0.0 : 1.0)));
  }
}

// Cancel-on-start to all servers is join-the-smallest-workload over all servers, i.e. a central
// FCFS queue: M/M/N (Erlang C).
TEST(ClosedForms, CancelOnStartToAllServersIsMMN) {
  const int N = 3;
  const double lambda = 0.8, a = N * lambda;  // offered load in servers, mu = 1
  double sum = 0.0, term = 1.0;
  for (int k = 0; k < N; ++k) {
    sum += term;
    term *= a / (k + 1);
  }
  const double tail = term / (1.0 - lambda);  // a^N / N! / (1 - rho)
  const double erlang_c = tail / (sum + tail);
  const double EQ = a + erlang_c * lambda / (1.0 - lambda);
  const auto system = make_system(family(FamilyKind::complete, N, N), lambda);
  const Result r = simulate(system, options(Policy::redundancy_cos, 1e4, 200.0, 16), kSeed, 8);
  EXPECT_TRUE(close(r.EQ, r.EQ_hw, EQ));
  EXPECT_TRUE(close(r.ET, r.ET_hw, EQ / a));
  for (int n = 0; n < N; ++n) EXPECT_TRUE(close(r.utilisation[n], r.utilisation_hw[n], lambda));
}

}  // namespace
}  // namespace qsweep::sim
