// Common random numbers (docs/sim.md): with coupled streams, replications of one key under
// different policies see the same arrivals (the same number of jobs arriving in every batch of the
// observation), and two policies equal in law on every path give identical results; without the
// coupling the same key gives other arrivals (so that the checks can fail). The laws themselves
// are checked against the exact chain in DispatchChain.CoupledStreamsKeepTheLaws.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>

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

// With coupled streams a result holds, per replication, the totals (integral of Q, sum and
// number of sojourn times) from the start of the observation to each time of the grid
// horizon x 2^i on which every round's windows start and end. Checked against computations that
// do not use them: the replication's own estimates over the row's window (from the batch means),
// and the observer's totals (integrals by parts, not batch sums) of a replication run again alone
// over the last round and over the round before, which its start must repeat (paired rows that
// stopped at different rounds compare the same stretch of the path).
TEST(CommonRandomNumbers, CumulativeTotalsReproduceTheEstimates) {
  const auto system = testing::make_system(testing::family(FamilyKind::complete, 10, 10), 0.8);
  // A long first horizon (3 rounds within the budget: the grid reaches horizon / 16) and a short
  // one (about 10: the grid keeps the last kMaxCumulativeTimes times), from a given and from a
  // detected warm-up.
  for (const auto& [horizon, warmup] : {std::pair{400.0, 20.0}, std::pair{1.0, -1.0}}) {
    SCOPED_TRACE(horizon);
    Options o = testing::options(Policy::power_of_d, horizon, warmup, 4);
    o.policy_d = 2;
    o.common_random_numbers = kCommon;
    o.max_events = 2e5;
    const Result r = simulate(system, o, 21, 22);
    ASSERT_FALSE(r.cumulative_time.empty());
    const double given = std::max(warmup, 0.0);
    const double L = r.cumulative_time.back();  // the last round's length
    EXPECT_DOUBLE_EQ(L, r.warmup - given + r.horizon);
    const auto rounds = static_cast<int>(std::lround(std::log2(L / horizon)));
    ASSERT_EQ(std::ldexp(horizon, rounds), L);
    ASSERT_GE(rounds, 1);  // a repeated round, so that the prefix check below means something
    // The short horizon runs past the grid's length, so that its cap is checked.
    if (horizon < 10.0) {
      ASSERT_GT(rounds + 5, kMaxCumulativeTimes);
    }
    const int K = std::min(rounds + 5, kMaxCumulativeTimes);
    ASSERT_EQ(r.cumulative_time.size(), static_cast<std::size_t>(K));
    for (int k = 0; k < K; ++k) EXPECT_EQ(r.cumulative_time[k], std::ldexp(L, k + 1 - K));
    ASSERT_EQ(r.cumulative_replications.size(), static_cast<std::size_t>(4 * K * 3));
    const auto total = [&](int rep, double time, int j) {
      if (time == 0.0) return 0.0;
      const auto k = std::find(r.cumulative_time.begin(), r.cumulative_time.end(), time) -
                     r.cumulative_time.begin();
      EXPECT_LT(k, K) << "no total at " << time;
      return r.cumulative_replications[static_cast<std::size_t>(3 * (rep * K + k) + j)];
    };
    const double start = L - r.horizon;  // the row's window after the warm-up asked for
    for (int rep = 0; rep < 4; ++rep) {
      SCOPED_TRACE(rep);
      const double Q = (total(rep, L, 0) - total(rep, start, 0)) / (L - start);
      const double T =
          (total(rep, L, 1) - total(rep, start, 1)) / (total(rep, L, 2) - total(rep, start, 2));
      EXPECT_NEAR(Q, r.EQ_replications[static_cast<std::size_t>(rep)], 1e-12 * Q);
      EXPECT_NEAR(T, r.ET_replications[static_cast<std::size_t>(rep)], 1e-12 * T);
      // The replication alone over the last round: the observer's own totals at the end and
      // from each truncation point on.
      const ReplicationStats last = run_replication(
          system, o, 21, 22, static_cast<std::uint64_t>(rep), {given, L, kSeriesBatches});
      const double area = total(rep, L, 0);
      EXPECT_NEAR(last.mean_Q * L, area, 1e-12 * area);
      EXPECT_NEAR(last.sojourn_sum, total(rep, L, 1), 1e-12 * last.sojourn_sum);
      EXPECT_EQ(static_cast<double>(last.sojourn_count), total(rep, L, 2));
      for (std::size_t w = 1; w < kTruncationBatches.size(); ++w) {
        const double from = L / kSeriesBatches * kTruncationBatches[w];
        const ReplicationStats& window = last.truncated[w - 1];
        EXPECT_NEAR(window.mean_Q * (L - from), area - total(rep, from, 0), 1e-11 * area);
        EXPECT_EQ(static_cast<double>(window.sojourn_count),
                  total(rep, L, 2) - total(rep, from, 2));
      }
      // The round before: its whole run is the first half of the last round's.
      const ReplicationStats before = run_replication(
          system, o, 21, 22, static_cast<std::uint64_t>(rep), {given, L / 2.0, kSeriesBatches});
      EXPECT_NEAR(before.mean_Q * L / 2.0, total(rep, L / 2.0, 0), 1e-12 * area);
      EXPECT_EQ(static_cast<double>(before.sojourn_count), total(rep, L / 2.0, 2));
    }
    // Without coupled streams nothing is kept.
    o.common_random_numbers = 0;
    const Result independent = simulate(system, o, 21, 22);
    EXPECT_TRUE(independent.cumulative_time.empty());
    EXPECT_TRUE(independent.cumulative_replications.empty());
  }
}

}  // namespace
}  // namespace qsweep::sim
