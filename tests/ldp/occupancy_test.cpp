// The occupancy-vector simulator: state bookkeeping, routing distributions, and the fluid limit.
#include "qsweep/ldp/occupancy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "qsweep/common/error.hpp"
#include "qsweep/ldp/theory.hpp"

namespace {

using qsweep::Rng;
using qsweep::ldp::OccupancySimulator;
using qsweep::ldp::Policy;

std::vector<std::int64_t> counts_of(const OccupancySimulator& sim) {
  std::vector<std::int64_t> counts;
  for (int k = 0; k <= sim.max_length(); ++k) counts.push_back(sim.count(k));
  return counts;
}

TEST(Occupancy, BookkeepingStaysConsistent) {
  for (Policy policy : {Policy::jsq, Policy::jiq, Policy::power_of_d}) {
    OccupancySimulator sim(policy, 3, 50, 1.0, {5, 20, 15, 10});
    Rng rng(1, 2, 3);
    for (int event = 0; event < 20000; ++event) {
      const auto before = counts_of(sim);
      if (rng.uniform() < 0.5) {
        const int length = sim.arrive(rng);
        auto after = counts_of(sim);
        after.resize(std::max(after.size(), before.size()), 0);
        ASSERT_EQ(after[static_cast<std::size_t>(length)],
                  (static_cast<std::size_t>(length) < before.size()
                       ? before[static_cast<std::size_t>(length)]
                       : 0) +
                      1);
        int shortest = 0;
        while (before[static_cast<std::size_t>(shortest)] == 0) ++shortest;
        if (policy == Policy::jsq) {
          ASSERT_EQ(length - 1, shortest);
        }
        if (policy == Policy::jiq && before[0] > 0) {
          ASSERT_EQ(length, 1);
        }
      } else {
        const auto rank = static_cast<std::int64_t>(rng.below(50));
        sim.serve_rank(rank);
        // the queue of that rank (queues sorted by length) lost one job, unless it was idle
        std::int64_t below = 0;
        std::size_t length = 0;
        while (below + before[length] <= rank) below += before[length++];
        auto after = counts_of(sim);
        after.resize(before.size(), 0);
        auto expected = before;
        if (length > 0) --expected[length], ++expected[length - 1];
        ASSERT_EQ(after, expected);
      }
      const auto counts = counts_of(sim);
      ASSERT_EQ(std::accumulate(counts.begin(), counts.end(), std::int64_t{0}), 50);
      ASSERT_GT(sim.count(sim.min_length()), 0);
      ASSERT_GT(sim.count(sim.max_length()), 0);
      for (int k = 0; k < sim.min_length(); ++k) ASSERT_EQ(sim.count(k), 0);
      ASSERT_EQ(sim.busy(), 50 - sim.count(0));
    }
  }
}

// Frequencies of the length joined by one arrival from a fixed occupancy.
std::vector<double> joined_lengths(Policy policy, int d, const std::vector<std::int64_t>& counts,
                                   int draws) {
  const std::int64_t n = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
  const OccupancySimulator start(policy, d, n, 1.0, counts);
  std::vector<double> frequency(counts.size(), 0.0);
  Rng rng(5, 6, 7);
  for (int i = 0; i < draws; ++i) {
    OccupancySimulator sim = start;
    frequency[static_cast<std::size_t>(sim.arrive(rng) - 1)] += 1.0;
  }
  for (double& f : frequency) f /= draws;
  return frequency;
}

TEST(Occupancy, RoutingDistributions) {
  // Fixed seeds; tolerances are 5 binomial standard deviations for the number of draws.
  const int draws = 200000;
  auto check = [&](const std::vector<double>& observed, const std::vector<double>& expected) {
    for (std::size_t k = 0; k < expected.size(); ++k)
      EXPECT_NEAR(observed[k], expected[k],
                  5 * std::sqrt(expected[k] * (1 - expected[k]) / draws) + 1e-12)
          << "length " << k;
  };
  const std::vector<std::int64_t> no_idle{0, 6, 3, 1};  // n = 10
  // jiq without idle queues: uniform over all queues
  check(joined_lengths(Policy::jiq, 1, no_idle, draws), {0.0, 0.6, 0.3, 0.1});
  // power of d over distinct queues: P(shortest of d >= a) = C(S_a, d) / C(n, d)
  // d = 2: S = (10, 10, 4, 1): P(join 1) = 1 - C(4,2)/C(10,2) = 1 - 6/45, P(join 2) = 6/45 - 0, ...
  check(joined_lengths(Policy::power_of_d, 2, no_idle, draws), {0.0, 39.0 / 45, 6.0 / 45, 0.0});
  // d = 3 with idle queues: S = (12, 10, 4, 1), C(12,3) = 220
  const std::vector<std::int64_t> some_idle{2, 6, 3, 1};
  check(joined_lengths(Policy::power_of_d, 3, some_idle, draws),
        {1 - 120.0 / 220, (120.0 - 4) / 220, 4.0 / 220, 0.0});
  // d = n is jsq, d = 1 is uniform routing
  check(joined_lengths(Policy::power_of_d, 12, some_idle, draws), {1.0, 0.0, 0.0, 0.0});
  check(joined_lengths(Policy::power_of_d, 1, some_idle, draws),
        {2.0 / 12, 6.0 / 12, 3.0 / 12, 1.0 / 12});
}

TEST(Occupancy, RunForStopsAtTheLevel) {
  Rng rng(9, 9, 9);
  int hits = 0;
  for (int run = 0; run < 200; ++run) {
    OccupancySimulator sim(Policy::jsq, 1, 5, 1.2);
    const bool hit = sim.run_for(2.0, 3, rng);
    hits += hit;
    EXPECT_EQ(sim.max_length() >= 3, hit);
    EXPECT_LE(sim.max_length(), 3);
    EXPECT_LE(sim.events(), sim.steps());
  }
  EXPECT_GT(hits, 0);
  EXPECT_LT(hits, 200);
}

TEST(Occupancy, RejectsBadInput) {
  EXPECT_THROW(OccupancySimulator(Policy::jsq, 1, 0, 1.0), qsweep::InputError);
  EXPECT_THROW(OccupancySimulator(Policy::jsq, 1, 3, 0.0), qsweep::InputError);
  EXPECT_THROW(OccupancySimulator(Policy::power_of_d, 4, 3, 1.0), qsweep::InputError);
  EXPECT_THROW(OccupancySimulator(Policy::jsq, 1, 3, 1.0, {1, 1}), qsweep::InputError);
}

TEST(Occupancy, MeanOccupancyFollowsTheFluidLimit) {
  // n = 10^6, one path each. The tolerance is 5 sigma with sigma = sqrt((1 + lambda) t / n), the
  // standard deviation of (arrivals - departures) / n by time t, which bounds the O(1/sqrt(n))
  // fluctuation of every X_i here; the fluid ODE error is far smaller.
  struct Case {
    Policy policy;
    int d;
    double lambda;
  };
  const std::int64_t n = 1'000'000;
  const std::vector<double> times{0.5, 1.0, 2.0};
  for (const Case& c :
       {Case{Policy::jsq, 1, 0.7}, Case{Policy::jsq, 1, 1.3}, Case{Policy::jsq, 1, 1.0},
        Case{Policy::jiq, 1, 1.3}, Case{Policy::power_of_d, 2, 0.9}}) {
    const auto fluid = qsweep::ldp::fluid_trajectory(c.policy, c.d, c.lambda, {1.0}, times);
    OccupancySimulator sim(c.policy, c.d, n, c.lambda);
    Rng rng(11, static_cast<std::uint64_t>(c.policy), 0);
    for (std::size_t k = 0; k < times.size(); ++k) {
      ASSERT_FALSE(sim.run_for(times[k] - (k == 0 ? 0.0 : times[k - 1]), 1000, rng));
      const double tolerance = 5 * std::sqrt((1 + c.lambda) * times[k] / static_cast<double>(n));
      for (int i = 1; i <= 4; ++i) {
        const double x = static_cast<std::size_t>(i) <= fluid[k].size()
                             ? fluid[k][static_cast<std::size_t>(i) - 1]
                             : 0.0;
        EXPECT_NEAR(sim.fraction_at_least(i), x, tolerance)
            << "policy " << static_cast<int>(c.policy) << " lambda " << c.lambda << " t "
            << times[k] << " i " << i;
      }
    }
  }
}

}  // namespace
