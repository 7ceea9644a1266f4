// The coverage harness in small (bench/sim_coverage.cpp, docs/sim.md "Output analysis"): many
// independent intervals for E[T] against its exact value, from a short first horizon (20 time
// units, far shorter than the transient from empty) with the default budget. Fixed seeds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "qsweep/exact/exact.hpp"
#include "qsweep/sim/simulate.hpp"
#include "sim_test_util.hpp"

namespace qsweep::sim {
namespace {

using model::FamilyKind;

struct Coverage {
  int intervals = 0, unflagged = 0, covered = 0;
};

Coverage coverage(const model::System& system, double exact_ET, int intervals) {
  Options o;
  o.horizon = 20.0;
  Coverage c;
  c.intervals = intervals;
  for (int k = 0; k < intervals; ++k) {
    const Result r = simulate(system, o, 1000 + static_cast<std::uint64_t>(k), 1);
    if (r.flags != 0) continue;
    ++c.unflagged;
    if (std::abs(r.ET - exact_ET) <= r.ET_hw) ++c.covered;
  }
  std::printf("coverage %d/%d unflagged, %d flagged\n", c.covered, c.unflagged,
              c.intervals - c.unflagged);
  return c;
}

// Margins: with true coverage 0.92 (the floor docs/sim.md promises for unflagged rows), fewer than
// 0.92 n - 3 sd covered has probability below 0.3%; at most a fifth flagged (these systems reach
// valid intervals well within the default budget). The procedure before this one (a pilot of one
// horizon, the t-interval over 8 replications, no flags) covered 0 of 40 on the M/M/1 and 3 of
// 30 on the ring (qsweep eval, seeds 1000..1039, horizon 20): it fails both.
void expect_coverage(const Coverage& c) {
  const double n = c.unflagged;
  EXPECT_GE(c.unflagged, c.intervals * 4 / 5);
  EXPECT_GE(c.covered, 0.92 * n - 3.0 * std::sqrt(n * 0.92 * 0.08));
}

TEST(Coverage, MM1AtLoad09) {
  const auto system = testing::make_system(testing::family(FamilyKind::independent, 1), 0.9);
  expect_coverage(coverage(system, 1.0 / (1.0 - 0.9), 40));
}

TEST(Coverage, RedundancyRing4AtLoad09) {
  const auto system = testing::make_system(testing::family(FamilyKind::ring, 4), 0.9);
  expect_coverage(coverage(system, exact::evaluate(system, exact::Options{}).ET, 30));
}

}  // namespace
}  // namespace qsweep::sim
