// The pooled dispatching kernel (docs/sim.md, "Pooled dispatching"): where automatic selects it,
// that it refuses systems it does not cover, and that its estimates agree with the general Markov
// kernel's on the same systems and seeds (confidence intervals) and with the JSQ(2) mean-field
// limit at N = 1e5. Exact chains at small N: test_dispatch_ctmc.cpp. Fixed seeds.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "qsweep/common/error.hpp"
#include "qsweep/sim/kernel.hpp"
#include "qsweep/sim/simulate.hpp"
#include "sim_test_util.hpp"

namespace qsweep::sim {
namespace {

using model::FamilyKind;

// Two independent estimates of one quantity: |a - b| <= 2 sqrt(hw_a^2 + hw_b^2), about four
// standard errors of the difference (as testing::close for one estimate).
::testing::AssertionResult agree(double a, double hw_a, double b, double hw_b) {
  return testing::close(a - b, std::hypot(hw_a, hw_b), 0.0);
}

TEST(PooledKernel, SelectedOnlyWhereItApplies) {
  const auto pairs = testing::make_system(testing::family(FamilyKind::complete, 100, 2), 0.9);
  Options o;
  for (Policy policy : {Policy::jsq, Policy::jiq, Policy::random, Policy::power_of_d}) {
    o.policy = policy;
    EXPECT_EQ(resolve_kernel(pairs, o), Kernel::pooled) << name_of(policy);
  }
  o.policy = Policy::jsq;
  // Not exchangeable, not the Markov race, or one type of all servers: the general kernels.
  const auto unequal =
      testing::make_system(testing::family(FamilyKind::complete, 3, 2), 0.5, {1.0, 1.0, 2.0});
  const auto all = testing::make_system(testing::family(FamilyKind::complete, 100, 100), 0.9);
  const auto ring = testing::make_system(testing::family(FamilyKind::ring, 100), 0.9);
  EXPECT_EQ(resolve_kernel(unequal, o), Kernel::markov);
  EXPECT_EQ(resolve_kernel(all, o), Kernel::markov);
  EXPECT_EQ(resolve_kernel(ring, o), Kernel::markov);
  Options deterministic = o;
  deterministic.service.kind = ServiceKind::deterministic;
  EXPECT_EQ(resolve_kernel(pairs, deterministic), Kernel::event_driven);
  Options redundancy = o;
  redundancy.policy = Policy::redundancy_coc;
  EXPECT_EQ(resolve_kernel(pairs, redundancy), Kernel::markov);
  // Asked for where it does not apply: a clear error.
  const auto plan = ReplicationPlan{0.0, 1.0, 0};
  EXPECT_THROW(run_replication(unequal, o, 1, 1, 0, plan, Kernel::pooled), InputError);
  EXPECT_THROW(run_replication(pairs, deterministic, 1, 1, 0, plan, Kernel::pooled), InputError);
}

// Untracked types (N = 200): the kernel draws the servers itself (one, two or three of them).
// Every estimate of the pooled kernel against the general kernel's on the same seeds.
TEST(PooledKernel, AgreesWithTheGeneralKernel) {
  struct Case {
    Policy policy;
    int family_d, policy_d;
  };
  for (const Case c : {Case{Policy::jsq, 2, 2}, Case{Policy::jiq, 2, 2}, Case{Policy::random, 2, 2},
                       Case{Policy::power_of_d, 3, 2}, Case{Policy::jsq, 3, 3}}) {
    SCOPED_TRACE(fmt::format("{} d = {}", name_of(c.policy), c.family_d));
    constexpr int N = 200;
    const auto system =
        testing::make_system(testing::family(FamilyKind::complete, N, c.family_d), 0.7);
    auto o = testing::options(c.policy, 1e3, 100.0, 16);
    o.policy_d = c.policy_d;
    o.qmax = 1000;
    o.occupancy_max = 4;
    const auto task =
        static_cast<std::uint64_t>(c.policy) * 10 + static_cast<std::uint64_t>(c.family_d);
    const Result pooled = simulate(system, o, 7, task);
    const Result general = simulate(system, o, 7, task, Kernel::markov);
    EXPECT_TRUE(agree(pooled.EQ, pooled.EQ_hw, general.EQ, general.EQ_hw));
    EXPECT_TRUE(agree(pooled.VarQ, pooled.VarQ_hw, general.VarQ, general.VarQ_hw));
    EXPECT_TRUE(agree(pooled.ET, pooled.ET_hw, general.ET, general.ET_hw));
    EXPECT_TRUE(agree(pooled.T_quantile[1], pooled.T_quantile_hw[1], general.T_quantile[1],
                      general.T_quantile_hw[1]));
    for (std::size_t i = 0; i < pooled.occupancy.size(); ++i)
      EXPECT_TRUE(agree(pooled.occupancy[i], pooled.occupancy_hw[i], general.occupancy[i],
                        general.occupancy_hw[i]))
          << "i = " << i + 1;
    // P(Q = q) over the range of Q (E[Q] from about 190, JSQ(3), to 470, random).
    for (std::size_t q = 0; q < pooled.pmf.size(); q += 20)
      EXPECT_TRUE(agree(pooled.pmf[q], pooled.pmf_hw[q], general.pmf[q], general.pmf_hw[q]))
          << "q = " << q;
    // One value for all servers, the same law as each server's.
    ASSERT_EQ(pooled.ER_server.size(), std::size_t{N});
    ASSERT_EQ(pooled.utilisation.size(), std::size_t{N});
    EXPECT_EQ(pooled.ER_server.front(), pooled.ER_server.back());
    EXPECT_NEAR(pooled.ER_server[0] * N, pooled.EQ, 1e-12 * pooled.EQ);
    EXPECT_TRUE(testing::close(pooled.utilisation[0], pooled.utilisation_hw[0], 0.7));
    for (int n : {0, N / 2, N - 1})
      EXPECT_TRUE(agree(pooled.ER_server[n], pooled.ER_server_hw[n], general.ER_server[n],
                        general.ER_server_hw[n]))
          << "server " << n;
  }
}

// JSQ(2) at N = 1e5 against its mean-field limit x_i = lambda^(2^i - 1): the finite-N bias
// (about 1/N) is far below the statistical error.
TEST(PooledKernel, JsqTwoAtLargeNMatchesTheMeanFieldLimit) {
  constexpr int N = 100'000;
  constexpr double kLambda = 0.9;
  const auto system = testing::make_system(testing::family(FamilyKind::complete, N, 2), kLambda);
  auto o = testing::options(Policy::jsq, 5.0, 100.0, 4);
  o.occupancy_max = 4;
  const Result r = simulate(system, o, 3, 1);
  for (int i = 1; i <= 4; ++i)
    EXPECT_TRUE(testing::close(r.occupancy[i - 1], r.occupancy_hw[i - 1],
                               std::pow(kLambda, std::pow(2.0, i) - 1.0), 1e-4))
        << "i = " << i;
}

}  // namespace
}  // namespace qsweep::sim
