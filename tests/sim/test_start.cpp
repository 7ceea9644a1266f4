// Starting states (docs/sim.md, "Starting states"): the queue lengths they give, where they are
// refused, and simulations from them against closed forms and the mean-field limit. Fixed seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "qsweep/common/error.hpp"
#include "qsweep/sim/kernel.hpp"
#include "sim_test_util.hpp"

namespace qsweep::sim {
namespace {

using model::FamilyKind;

// Servers holding at least i jobs.
int at_least(const std::vector<std::uint32_t>& lengths, std::uint32_t i) {
  return static_cast<int>(std::count_if(lengths.begin(), lengths.end(),
                                        [i](std::uint32_t length) { return length >= i; }));
}

Options start_counts(Policy policy, std::vector<double> counts) {
  Options o;
  o.policy = policy;
  o.start = Start::counts;
  o.initial_counts = std::move(counts);
  return o;
}

TEST(StartLengths, CountsAreRoundedToNServersByLargestRemainders) {
  const auto system = testing::make_system(testing::family(FamilyKind::ring, 10), 0.5);
  // Shares 10/3 each: 3 servers per length, the one left over to the shortest length.
  const auto lengths = start_lengths(system, start_counts(Policy::jsq, {1.0, 1.0, 1.0}));
  EXPECT_EQ(lengths, (std::vector<std::uint32_t>{0, 0, 0, 0, 1, 1, 1, 2, 2, 2}));
  // Counts given as counts: 7 idle servers, 3 with 4 jobs.
  const auto given = start_lengths(system, start_counts(Policy::random, {7, 0, 0, 0, 3}));
  EXPECT_EQ(at_least(given, 1), 3);
  EXPECT_EQ(at_least(given, 4), 3);
  EXPECT_EQ(at_least(given, 5), 0);
  EXPECT_TRUE(start_lengths(system, Options{}).empty());  // empty start
}

TEST(StartLengths, FixedPointOfPowerOfDIsTheMeanFieldOccupancy) {
  constexpr int N = 1000;
  constexpr double lambda = 0.9;
  const auto system = testing::make_system(testing::family(FamilyKind::complete, N, N), lambda);
  Options o;
  o.policy = Policy::power_of_d;
  o.policy_d = 2;
  o.start = Start::fixed_point;
  const auto lengths = start_lengths(system, o);
  ASSERT_EQ(lengths.size(), std::size_t{N});
  // x_i = lambda^(2^i - 1), each level off by at most the rounding of the levels up to it.
  for (std::uint32_t i = 1; i <= 5; ++i) {
    const double x = std::pow(lambda, std::pow(2.0, i) - 1.0);
    EXPECT_NEAR(at_least(lengths, i) / double{N}, x, 6.0 / N) << "i = " << i;
  }
  // JSQ over all servers: a fraction lambda of the servers holds one job, none more.
  o.policy = Policy::jsq;
  const auto jsq = start_lengths(system, o);
  EXPECT_EQ(at_least(jsq, 1), 900);
  EXPECT_EQ(at_least(jsq, 2), 0);
}

TEST(StartLengths, RefusedWhereTheStartHasNoMeaning) {
  const auto complete = testing::make_system(testing::family(FamilyKind::complete, 20, 2), 0.8);
  const auto ring = testing::make_system(testing::family(FamilyKind::ring, 20), 0.8);
  EXPECT_THROW(validate_start(complete, start_counts(Policy::redundancy_coc, {1.0, 1.0})),
               InputError);
  Options fixed;
  fixed.start = Start::fixed_point;
  fixed.policy = Policy::power_of_d;
  EXPECT_NO_THROW(validate_start(complete, fixed));
  EXPECT_THROW(validate_start(ring, fixed), InputError);  // no mean-field model
  fixed.policy = Policy::jiq;                             // JIQ(2): no fixed point
  EXPECT_THROW(validate_start(complete, fixed), InputError);
  fixed.policy = Policy::power_of_d;
  fixed.service.kind = ServiceKind::deterministic;
  EXPECT_THROW(validate_start(complete, fixed), InputError);
  EXPECT_THROW(validate_start(ring, start_counts(Policy::jsq, {0.0, 0.0})), InputError);
  EXPECT_THROW(validate_start(ring, start_counts(Policy::jsq, {1.0, -1.0})), InputError);
}

// M/M/1 at rho = 0.8 (and M/D/1 by the event kernel) from a backlog of 40 jobs, about 200 time
// units to clear: MSER-5 cuts the high start (from empty it cuts only low ones) and the
// intervals cover the closed forms.
TEST(StartedSimulation, AHighStartIsCutAndTheIntervalsCoverTheClosedForms) {
  constexpr double rho = 0.8;
  const auto system = testing::make_system(testing::family(FamilyKind::complete, 1, 1), rho);
  for (const auto service : {ServiceKind::exponential, ServiceKind::deterministic}) {
    Options o = testing::options(Policy::jsq, 2e4, -1.0, 8, service);
    o.start = Start::counts;
    o.initial_counts = std::vector<double>(41, 0.0);
    o.initial_counts.back() = 1.0;
    const Result r = simulate(system, o, 11, 3);
    // Pollaczek-Khinchine: E[Q] = rho + rho^2 (1 + cv2) / (2 (1 - rho)), E[T] = E[Q] / rho.
    const double cv2 = service == ServiceKind::exponential ? 1.0 : 0.0;
    const double EQ = rho + rho * rho * (1.0 + cv2) / (2.0 * (1.0 - rho));
    EXPECT_GE(r.warmup, 100.0) << name_of(service);
    EXPECT_TRUE(testing::close(r.EQ, r.EQ_hw, EQ)) << name_of(service);
    EXPECT_TRUE(testing::close(r.ET, r.ET_hw, EQ / rho)) << name_of(service);
  }
}

// Power-of-2 on 2000 servers at 0.95: from the fixed point the occupancy starts where it ends
// (within the finite-N excess), from empty it fills up first.
TEST(StartedSimulation, TheFixedPointStartsLargeSystemsNearSteadyState) {
  constexpr int N = 2000;
  constexpr double lambda = 0.95;
  const auto system = testing::make_system(testing::family(FamilyKind::complete, N, N), lambda);
  Options o = testing::options(Policy::power_of_d, 400.0, -1.0, 8);
  o.policy_d = 2;
  o.occupancy_max = 3;
  const Result from_empty = simulate(system, o, 5, 1);
  o.start = Start::fixed_point;
  const Result from_fixed_point = simulate(system, o, 5, 1);
  EXPECT_GT(from_empty.warmup, from_fixed_point.warmup);
  for (int i = 1; i <= 3; ++i) {
    const double limit = std::pow(lambda, std::pow(2.0, i) - 1.0);
    const auto k = static_cast<std::size_t>(i - 1);
    // The finite-N excess of x_i is O(1/N): 10 / N covers it.
    EXPECT_TRUE(testing::close(from_fixed_point.occupancy[k], from_fixed_point.occupancy_hw[k],
                               limit, 10.0 / N))
        << "i = " << i;
    EXPECT_TRUE(testing::close(from_fixed_point.occupancy[k], from_fixed_point.occupancy_hw[k],
                               from_empty.occupancy[k], 2.0 * from_empty.occupancy_hw[k]))
        << "i = " << i;
  }
}

}  // namespace
}  // namespace qsweep::sim
