// Warnings of simulate() and the policy stability check (docs/sim.md, "Warnings" and "Stability
// before running"): each is produced by an input that deserves it, and none on healthy inputs.
// Fixed seeds; where a warning depends on chance, the test says how likely the other outcome is.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "qsweep/model/stability.hpp"
#include "qsweep/sim/stability.hpp"
#include "sim_test_util.hpp"

namespace qsweep::sim {
namespace {

using model::FamilyKind;
using testing::family;
using testing::make_system;
using testing::options;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

model::FamilyParams explicit_family(int N, std::vector<model::ExplicitType> types) {
  model::FamilyParams p;
  p.kind = FamilyKind::explicit_types;
  p.N = N;
  p.types = std::move(types);
  return p;
}

// The kind of task the paper sweeps run: load 0.5, long horizons, detected warm-up, the default
// budget (a round whose diagnostics fail by chance is followed by a longer one).
TEST(Warnings, NoneOnHealthySystems) {
  Options o = options(Policy::redundancy_coc, 2e4, -1.0, 8);
  o.max_events = Options{}.max_events;
  for (const auto& system : {make_system(family(FamilyKind::independent, 1), 0.5),
                             make_system(family(FamilyKind::ring, 4), 0.5),
                             make_system(family(FamilyKind::star, 8), 0.5)}) {
    const Result r = simulate(system, o, 11, 0);
    EXPECT_EQ(r.warning, "") << system.family.num_servers();
    EXPECT_EQ(r.quiet_replications, 0);
    EXPECT_EQ(r.flags, 0U);
    EXPECT_LE(r.warmup, (r.warmup + r.horizon) / 4);
  }
  Options jsq = options(Policy::jsq, 200, -1.0, 8);
  jsq.max_events = Options{}.max_events;
  const Result r = simulate(make_system(family(FamilyKind::complete, 100), 0.5), jsq, 11, 1);
  EXPECT_EQ(r.warning, "");
  // Stable but heavily loaded: server 1 of the star is idle about 3e-5 of the time (redundancy,
  // load 0.9), far above the 1e-6 of saturation.
  const Result star = simulate(make_system(family(FamilyKind::star, 8), 0.9),
                               options(Policy::redundancy_coc, 2e4, 2e3, 8), 11, 2);
  EXPECT_LT(star.utilisation[0], 1.0 - 1e-6);
  EXPECT_FALSE(contains(star.warning, "idle")) << star.warning;
}

// Nothing happens after the warm-up: the estimates are NaN, not 0 +- 0. Arrivals come at rate
// N lambda = 2, so a replication of 1e-6 time units from empty sees one with probability 2e-6.
TEST(Warnings, NoEventAfterWarmupGivesNaNEstimates) {
  Options o = options(Policy::redundancy_coc, 1e-6, 0.0, 8);
  o.qmax = 3;
  const Result r = simulate(make_system(family(FamilyKind::ring, 4), 0.5), o, 3, 0);
  EXPECT_EQ(r.quiet_replications, 8);
  EXPECT_TRUE(std::isnan(r.EQ));
  EXPECT_TRUE(std::isnan(r.EQ_hw));
  EXPECT_TRUE(std::isnan(r.VarQ));
  EXPECT_TRUE(std::isnan(r.ET));
  for (double x : r.pmf) EXPECT_TRUE(std::isnan(x));
  for (std::size_t n = 0; n < r.utilisation.size(); ++n) EXPECT_TRUE(std::isnan(r.utilisation[n]));
  EXPECT_EQ(r.warning.rfind("no event after warm-up in any of 8 replications", 0), 0u) << r.warning;
  EXPECT_EQ(r.events, 0u);
  // The same with a detected warm-up (the horizon 0.001 case: 0.002 expected arrivals).
  const Result detected = simulate(make_system(family(FamilyKind::ring, 4), 0.5),
                                   options(Policy::redundancy_coc, 1e-6, -1.0, 8), 3, 0);
  EXPECT_TRUE(std::isnan(detected.EQ));
  EXPECT_TRUE(contains(detected.warning, "no event after warm-up")) << detected.warning;
}

// M/M/1 from empty with no warm-up: a replication is quiet exactly when no job arrives in the
// horizon (probability exp(-0.5 * 2) = 0.37), i.e. when its Q stays 0. 16 replications: some
// quiet and some not, except with probability 0.63^16 + 0.37^16 < 1e-3.
TEST(Warnings, SomeQuietReplicationsAreCountedAndReported) {
  const auto system = make_system(family(FamilyKind::independent, 1), 0.5);
  const Options o = options(Policy::redundancy_coc, 2.0, 0.0, 16);
  const Result r = simulate(system, o, 5, 0);
  int empty = 0;
  for (std::uint64_t k = 0; k < 16; ++k)
    if (run_replication(system, o, 5, 0, k, {0.0, 2.0, 0}).mean_Q == 0.0) ++empty;
  ASSERT_GT(empty, 0);
  ASSERT_LT(empty, 16);
  EXPECT_EQ(r.quiet_replications, empty);
  EXPECT_TRUE(contains(r.warning, std::to_string(empty) + " of 16 replications saw no event"))
      << r.warning;
  EXPECT_FALSE(std::isnan(r.EQ));
}

// An overloaded M/M/1 (lambda 1.2 > 1): Q grows linearly, so the server is never idle after the
// warm-up, and MSER-5 cuts as much as it may (the spread of a linear trend over the remaining
// m - d batches grows with m - d): half the run, the warm-up is not over.
TEST(Warnings, OverloadIsSaturationAndWarmupNotOver) {
  const auto system = make_system(family(FamilyKind::independent, 1), 1.2);
  const Result r = simulate(system, options(Policy::redundancy_coc, 1e4, -1.0, 8), 7, 0);
  EXPECT_GE(r.utilisation[0], 1.0 - 1e-6);
  EXPECT_DOUBLE_EQ(r.warmup, 5e3);  // half the run
  const std::uint32_t expected = flag_saturated | flag_warmup_not_over;
  EXPECT_EQ(r.flags & expected, expected) << r.warning;
  EXPECT_EQ(r.warning.rfind("server 1 ", 0), 0u) << r.warning;  // the most serious first
  EXPECT_TRUE(contains(r.warning, "warm-up not over: MSER-5 truncates half of the 1e+04"))
      << r.warning;
  // A given warm-up is discarded first; the detection still runs after it.
  const Result given = simulate(system, options(Policy::redundancy_coc, 1e4, 100.0, 8), 7, 0);
  EXPECT_DOUBLE_EQ(given.warmup, 100.0 + 5e3);
  EXPECT_NE(given.flags & flag_warmup_not_over, 0U);
  EXPECT_TRUE(contains(given.warning, "server 1 ")) << given.warning;
}

// Deterministic sizes 1 at speed 1 with a horizon of 0.5 from empty: no job can finish, yet jobs
// arrive (rate 10: a replication without one has probability e^-5).
TEST(Warnings, NoCompletedJobIsReported) {
  const auto system = make_system(family(FamilyKind::independent, 1), 10.0);
  const Result r = simulate(
      system, options(Policy::redundancy_coc, 0.5, 0.0, 8, ServiceKind::deterministic), 2, 0);
  EXPECT_TRUE(std::isnan(r.ET));
  EXPECT_FALSE(std::isnan(r.EQ));
  EXPECT_TRUE(contains(r.warning, "no job completed after warm-up: ET is NaN")) << r.warning;
}

TEST(Warnings, FewReplicationsAndAMissedTarget) {
  const auto system = make_system(family(FamilyKind::independent, 1), 0.5);
  const Result two = simulate(system, options(Policy::redundancy_coc, 1e3, 50.0, 2), 1, 0);
  EXPECT_TRUE(contains(two.warning,
                       "only 2 replications: half-widths other than EQ and ET rest on 1 "
                       "degrees of freedom (t = 12.7)"))
      << two.warning;
  Options five_replications = options(Policy::redundancy_coc, 1e3, 50.0, 5);
  five_replications.max_events = Options{}.max_events;
  const Result five = simulate(system, five_replications, 1, 0);
  EXPECT_EQ(five.warning, "");

  // A 1e-4 relative half-width on E[T] needs about 1e9 jobs; 1e6 events give 5e5.
  Options o = options(Policy::redundancy_coc, 1e3, 50.0, 8);
  o.target_rel_half_width = 1e-4;
  o.max_events = 1e6;
  const Result missed = simulate(system, o, 1, 0);
  EXPECT_EQ(missed.replications, 8);
  EXPECT_LE(missed.events, 1e6);
  EXPECT_EQ(missed.flags, flag_budget_spent);
  EXPECT_TRUE(contains(missed.warning, "target_rel_half_width 0.0001 not reached"))
      << missed.warning;
  o.target_rel_half_width = 0.5;
  EXPECT_EQ(simulate(system, o, 1, 0).warning, "");
}

// ---- stability before running ----

// Star, N = 8, lambda = 0.9 (the case): eq. (2) holds (the tightest set, all servers,
// has N lambda = 7.2 < 8), so redundancy and jsq are stable; random routing sends half of every
// job to the hub: N lambda / 2 = 3.6 > 1.
TEST(PolicyStability, StarAtLoad09) {
  const auto star = make_system(family(FamilyKind::star, 8), 0.9);
  for (Policy p : {Policy::redundancy_coc, Policy::redundancy_cos, Policy::jsq}) {
    const PolicyStability s = check_stability(star, options(p, 1, 0, 2));
    EXPECT_TRUE(s.stable);
    EXPECT_EQ(s.warning, "");
  }
  const PolicyStability random = check_stability(star, options(Policy::random, 1, 0, 2));
  EXPECT_FALSE(random.stable);
  EXPECT_EQ(random.reason, "random routing: server 1 gets jobs at rate 3.6 >= its service rate 1");
  Options pod = options(Policy::power_of_d, 1, 0, 2);
  pod.policy_d = 1;
  EXPECT_FALSE(check_stability(star, pod).stable);
  pod.policy_d = 2;  // the whole edge: jsq
  EXPECT_TRUE(check_stability(star, pod).stable);
  const PolicyStability jiq = check_stability(star, options(Policy::jiq, 1, 0, 2));
  EXPECT_TRUE(jiq.stable);
  EXPECT_TRUE(contains(jiq.warning, "jiq may be unstable")) << jiq.warning;
  EXPECT_TRUE(contains(jiq.warning, "server 1 rate 3.6 >= 1")) << jiq.warning;
  // Random routing's own condition on the star: the hub gets N lambda / 2 < 1 for lambda < 2/N.
  const auto light = make_system(family(FamilyKind::star, 8), 0.24);
  EXPECT_TRUE(check_stability(light, options(Policy::random, 1, 0, 2)).stable);
  EXPECT_EQ(check_stability(light, options(Policy::jiq, 1, 0, 2)).warning, "");
}

// Unequal type probabilities: server 2 gets L (0.6 / 2 + 0.4 / 2) = 3 lambda / 2 under random
// routing; eq. (2) needs only 0.6 L < 2 and L < 3.
TEST(PolicyStability, RandomRoutingOnExplicitTypes) {
  const auto f = explicit_family(3, {{{0, 1}, 0.6}, {{1, 2}, 0.4}});
  const auto system = make_system(f, 0.7);
  EXPECT_TRUE(check_stability(system, options(Policy::jsq, 1, 0, 2)).stable);
  const PolicyStability random = check_stability(system, options(Policy::random, 1, 0, 2));
  EXPECT_FALSE(random.stable);
  EXPECT_EQ(random.reason, "random routing: server 2 gets jobs at rate 1.05 >= its service rate 1");
  EXPECT_TRUE(check_stability(make_system(f, 0.6), options(Policy::random, 1, 0, 2)).stable);
}

// power_of_d (d = 2) from the single type {1,2,3,4} with speeds 0.1, 0.1, 1, 1: eq. (2) needs
// L = 4 lambda < 2.2, but the pair {1,2} is sampled with probability 1/6 and only servers 1 and 2
// can serve it: L / 6 < 0.2, i.e. lambda < 0.3. At lambda = 0.4 the pair gets 1.6 / 6.
TEST(PolicyStability, PowerOfDOnTheSetsItSamples) {
  const std::vector<double> speeds = {0.1, 0.1, 1.0, 1.0};
  Options pod = options(Policy::power_of_d, 1, 0, 2);
  pod.policy_d = 2;
  const std::string expected =
      "power_of_d (d = 2): servers {1,2} get jobs at rate 0.266667 >= their service rate 0.2";
  for (const auto& f :
       {explicit_family(4, {{{0, 1, 2, 3}, 1.0}}), family(FamilyKind::complete, 4, 4)}) {
    const auto system = make_system(f, 0.4, speeds);
    EXPECT_TRUE(check_stability(system, options(Policy::jsq, 1, 0, 2)).stable);
    const PolicyStability s = check_stability(system, pod);
    EXPECT_FALSE(s.stable);
    EXPECT_EQ(s.reason, expected);
    EXPECT_TRUE(check_stability(make_system(f, 0.29, speeds), pod).stable);
  }
  // singletons + full set, N = 4, eps = 0.5, lambda = 0.9 (L = 3.6): the sampled pairs add at
  // most 3.6 (eps / 3) C(u, 2) / 6 to a set of u, below its capacity for every u.
  model::FamilyParams sf;
  sf.kind = FamilyKind::singletons_full;
  sf.N = 4;
  sf.eps = 0.5;
  EXPECT_TRUE(check_stability(make_system(sf, 0.9), pod).stable);
}

// Within 1e-13 of the boundary (closer than the former 1e-12 tolerance): a ring server gets
// exactly lambda under random routing, and power_of_d on a complete family is eq. (2) on the
// sampled complete family, both decided exactly; one ulp above the boundary is unstable.
TEST(PolicyStability, RandomRoutingAndPowerOfDAtTheBoundary) {
  Options pod = options(Policy::power_of_d, 1, 0, 2);
  pod.policy_d = 2;
  for (const auto& f : {family(FamilyKind::ring, 20), family(FamilyKind::complete, 5, 3)}) {
    const auto close = make_system(f, 1.0 - 1e-13);
    for (const Options& o :
         {options(Policy::random, 1, 0, 2), pod, options(Policy::jiq, 1, 0, 2)}) {
      const PolicyStability s = check_stability(close, o);
      EXPECT_TRUE(s.stable) << s.reason;
      EXPECT_EQ(s.warning, "");
    }
    EXPECT_FALSE(check_stability(make_system(f, std::nextafter(1.0, 2.0)), pod).stable);
  }
}

TEST(PolicyStability, EquationTwoStillDecidesFirst) {
  const auto ring = make_system(family(FamilyKind::ring, 4), 1.1);
  for (Policy p : {Policy::redundancy_coc, Policy::jsq, Policy::random, Policy::jiq}) {
    const PolicyStability s = check_stability(ring, options(p, 1, 0, 2));
    EXPECT_FALSE(s.stable);
    EXPECT_EQ(s.reason, model::check_stability(ring).describe());
  }
}

}  // namespace
}  // namespace qsweep::sim
