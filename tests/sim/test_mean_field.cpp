// JSQ(d) on many servers against its mean-field limit (docs/meanfield.md, "Formulas"): the
// fraction of queues with at least i jobs tends to lambda^((d^i - 1) / (d - 1)) as N grows. jsq
// on the complete family with d-subsets is JSQ(d) over all servers; power_of_d with d choices
// among the servers of a larger uniform subset is the same law. Fixed seeds.
#include <gtest/gtest.h>

#include <cmath>

#include "qsweep/sim/simulate.hpp"
#include "sim_test_util.hpp"

namespace qsweep::sim {
namespace {

using model::FamilyKind;

constexpr double kLambda = 0.9;
constexpr int kLevels = 4;

double mean_field(int d, int i) { return std::pow(kLambda, (std::pow(d, i) - 1.0) / (d - 1.0)); }

Result run(Policy policy, int N, int family_d, int policy_d, double events_per_replication) {
  const auto system =
      testing::make_system(testing::family(FamilyKind::complete, N, family_d), kLambda);
  // Events come at rate N (lambda + lambda); the mean-field relaxation time is O(1).
  auto o = testing::options(policy, events_per_replication / (2.0 * N * kLambda), 50.0, 8);
  o.policy_d = policy_d;
  o.occupancy_max = kLevels;
  return simulate(system, o, 5, static_cast<std::uint64_t>(N));
}

double max_error(const Result& r, int d) {
  double error = 0.0;
  for (int i = 1; i <= kLevels; ++i)
    error = std::max(error, std::abs(r.occupancy[i - 1] - mean_field(d, i)));
  return error;
}

TEST(MeanField, JsqOnCompletePairsApproachesTheLimitAsNGrows) {
  const Result small = run(Policy::jsq, 10, 2, 2, 5e5);
  const Result medium = run(Policy::jsq, 100, 2, 2, 5e5);
  const Result large = run(Policy::jsq, 1000, 2, 2, 2e6);
  const double e10 = max_error(small, 2), e100 = max_error(medium, 2), e1000 = max_error(large, 2);
  std::printf(
      "JSQ(2), lambda = 0.9: max_i |x_i - mean field| = %.4f (N = 10), %.4f (N = 100), "
      "%.4f (N = 1000)\n",
      e10, e100, e1000);
  EXPECT_GT(e10, e100);
  EXPECT_GT(e100, e1000);
  // At N = 1000 the finite-N bias (about 1/N) is below the statistical error.
  for (int i = 1; i <= kLevels; ++i)
    EXPECT_TRUE(
        testing::close(large.occupancy[i - 1], large.occupancy_hw[i - 1], mean_field(2, i), 1e-3))
        << "i = " << i;
}

TEST(MeanField, PowerOfThreeAmongFourMatchesJsq3Limit) {
  const Result r = run(Policy::power_of_d, 1000, 4, 3, 2e6);
  for (int i = 1; i <= kLevels; ++i)
    EXPECT_TRUE(testing::close(r.occupancy[i - 1], r.occupancy_hw[i - 1], mean_field(3, i), 1e-3))
        << "i = " << i;
}

}  // namespace
}  // namespace qsweep::sim
