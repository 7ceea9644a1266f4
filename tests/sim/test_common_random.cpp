// Common random numbers (docs/sim.md): with coupled streams, replications of one key under
// different policies see the same arrivals (the same number of jobs arriving in every batch of the
// observation), and two policies equal in law on every path give identical results; without the
// coupling the same key gives other arrivals (so that the checks can fail). The laws themselves
// are checked against the exact chain in DispatchChain.CoupledStreamsKeepTheLaws.
#include <gtest/gtest.h>

#include "qsweep/sim/kernel.hpp"
#include "sim_test_util.hpp"

namespace qsweep::sim {
namespace {

using model::FamilyKind;

constexpr unsigned kCommon = static_cast<unsigned>(CommonRandomKey::policy) |
                             static_cast<unsigned>(CommonRandomKey::policy_d);

ReplicationStats replicate(const model::System& system, Policy policy, int policy_d,
                           unsigned common, ServiceKind service = ServiceKind::exponential) {
  Options o = testing::options(policy, 400.0, 50.0, 2, service);
  o.policy_d = policy_d;
  o.common_random_numbers = common;
  return run_replication(system, o, 11, 12, 3, {50.0, 400.0, kSeriesBatches});
}

// The markov kernel records each arriving job once (its sojourn law): batch_T_count is the
// number of arrivals in each batch.
TEST(CommonRandomNumbers, PoliciesSeeTheSameArrivals) {
  for (int d : {10, 4}) {  // one type of all servers (by length), and 4-subsets (the family's draw)
    SCOPED_TRACE(d);
    const auto system = testing::make_system(testing::family(FamilyKind::complete, 10, d), 0.8);
    const ReplicationStats two = replicate(system, Policy::power_of_d, 2, kCommon);
    const ReplicationStats three = replicate(system, Policy::power_of_d, 3, kCommon);
    const ReplicationStats jsq = replicate(system, Policy::jsq, 2, kCommon);
    ASSERT_EQ(two.batch_T_count.size(), static_cast<std::size_t>(kSeriesBatches));
    EXPECT_EQ(two.batch_T_count, three.batch_T_count);
    EXPECT_EQ(two.batch_T_count, jsq.batch_T_count);
    EXPECT_NE(two.mean_Q, three.mean_Q);  // the policies still differ
    // Not coupled: the race's rate depends on the state, so the same key gives other arrivals.
    EXPECT_NE(replicate(system, Policy::power_of_d, 2, 0).batch_T_count,
              replicate(system, Policy::power_of_d, 3, 0).batch_T_count);
  }
}

// random and power_of_d with d = 1 draw the same server from the same draws: with coupled
// streams every path is the same, in the markov and the event-driven kernel.
TEST(CommonRandomNumbers, EqualPoliciesGiveEqualPaths) {
  const auto system = testing::make_system(testing::family(FamilyKind::complete, 8, 8), 0.7);
  for (ServiceKind service : {ServiceKind::exponential, ServiceKind::deterministic}) {
    SCOPED_TRACE(name_of(service));
    const ReplicationStats random = replicate(system, Policy::random, 2, kCommon, service);
    const ReplicationStats one = replicate(system, Policy::power_of_d, 1, kCommon, service);
    EXPECT_EQ(random.mean_Q, one.mean_Q);
    EXPECT_EQ(random.batch_Q, one.batch_Q);
    EXPECT_EQ(random.batch_T_sum, one.batch_T_sum);
    EXPECT_GT(random.mean_Q, 0.0);
    // Not coupled, power_of_d reorders the servers it samples from: other paths.
    EXPECT_NE(replicate(system, Policy::random, 2, 0, service).batch_Q,
              replicate(system, Policy::power_of_d, 1, 0, service).batch_Q);
  }
}

// Coupled marginals keep their closed forms: random routing over all servers is N independent
// M/M/1 queues (E[T] = 1 / (mu - lambda)), and with deterministic sizes M/D/1 queues
// (E[T] = 1 + rho / (2 (1 - rho))).
TEST(CommonRandomNumbers, MarginalsKeepTheirClosedForms) {
  const double lambda = 0.7;
  const auto system = testing::make_system(testing::family(FamilyKind::complete, 8, 8), lambda);
  for (ServiceKind service : {ServiceKind::exponential, ServiceKind::deterministic}) {
    SCOPED_TRACE(name_of(service));
    Options o = testing::options(Policy::random, 4000.0, 100.0, 16, service);
    o.common_random_numbers = kCommon;
    const Result r = simulate(system, o, 5, 6);
    const double ET = service == ServiceKind::exponential ? 1.0 / (1.0 - lambda)
                                                          : 1.0 + lambda / (2.0 * (1.0 - lambda));
    EXPECT_TRUE(testing::close(r.ET, r.ET_hw, ET));
    EXPECT_TRUE(testing::close(r.EQ, r.EQ_hw, 8 * lambda * ET));
    ASSERT_EQ(r.ET_replications.size(), 16U);
    ASSERT_EQ(r.EQ_replications.size(), 16U);
    // The replications' own estimates average to about the pooled ones (equal windows, equal
    // weights up to the replications' job counts).
    double sum = 0.0;
    for (double x : r.EQ_replications) sum += x;
    EXPECT_NEAR(sum / 16.0, r.EQ, 1e-9 * r.EQ);
  }
}

}  // namespace
}  // namespace qsweep::sim
