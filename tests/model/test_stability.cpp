#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "qsweep/common/error.hpp"
#include "qsweep/model/stability.hpp"

namespace qsweep::model {
namespace {

// Independent reference: enumerate all 2^N server sets and evaluate eq. (2) / eq. (5) directly.
struct BruteForce {
  double min_slack = INFINITY;  // min over the allowed U of mu(U) - L * sum_{S subset U} p_S
};
BruteForce brute_force(const Family& f, const std::vector<double>& speeds, double L, bool strict) {
  const int N = f.num_servers();
  const auto types = f.enumerate();
  BruteForce r;
  const ServerMask all = (ServerMask{1} << N) - 1;
  for (ServerMask U = 1; U <= all; ++U) {
    if (strict && U == all) continue;
    double mu = 0.0, mass = 0.0;
    for (int n = 0; n < N; ++n)
      if (U >> n & 1) mu += speeds[static_cast<std::size_t>(n)];
    for (const auto& t : types)
      if ((t.servers & ~U) == 0) mass += t.p;
    r.min_slack = std::min(r.min_slack, mu - L * mass);
  }
  return r;
}

double slack_of(const Family& f, const std::vector<double>& speeds, double L,
                const std::vector<int>& U) {
  ServerMask m = 0;
  double mu = 0.0, mass = 0.0;
  for (int n : U) {
    m |= ServerMask{1} << n;
    mu += speeds[static_cast<std::size_t>(n)];
  }
  for (const auto& t : f.enumerate())
    if ((t.servers & ~m) == 0) mass += t.p;
  return mu - L * mass;
}

Family random_explicit(Rng& rng, int N) {
  FamilyParams p;
  p.kind = FamilyKind::explicit_types;
  p.N = N;
  const int T = 1 + static_cast<int>(rng.below(6));
  double total = 0.0;
  for (int t = 0; t < T; ++t) {
    ExplicitType type;
    for (int n = 0; n < N; ++n)
      if (rng.uniform() < 0.4) type.servers.push_back(n);
    if (type.servers.empty()) type.servers.push_back(static_cast<int>(rng.below(static_cast<std::uint64_t>(N))));
    type.p = 0.1 + rng.uniform();
    total += type.p;
    p.types.push_back(type);
  }
  for (auto& t : p.types) t.p /= total;
  p.types.back().p = 1.0;
  for (std::size_t t = 0; t + 1 < p.types.size(); ++t) p.types.back().p -= p.types[t].p;
  return Family(p);
}

// The checks agree with subset enumeration on random instances, and the reported set violates.
TEST(Stability, AgreesWithSubsetEnumerationOnRandomInstances) {
  Rng rng(2026, 1);
  int unstable = 0, stable = 0, locally_unstable = 0, locally_stable = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int N = 1 + static_cast<int>(rng.below(7));
    Family f = random_explicit(rng, N);
    std::vector<double> speeds(static_cast<std::size_t>(N));
    for (auto& s : speeds) s = 0.2 + 2.0 * rng.uniform();
    double mean = 0.0;
    for (double s : speeds) mean += s / N;
    const double lambda = mean * (0.2 + 0.9 * rng.uniform());
    System sys(f, speeds, lambda);
    const auto bf = brute_force(f, speeds, sys.total_arrival_rate(), false);
    const auto report = check_stability(sys);
    ASSERT_EQ(report.ok, bf.min_slack > 1e-9) << "trial " << trial << " slack " << bf.min_slack;
    if (!report.ok) {
      EXPECT_LE(slack_of(f, speeds, sys.total_arrival_rate(), report.violating_set), 1e-9);
      ++unstable;
    } else {
      ++stable;
    }
    if (N >= 2) {
      const auto local_bf = brute_force(f, speeds, mean * N, true);
      const auto local = check_local_stability(f, speeds);
      ASSERT_EQ(local.ok, local_bf.min_slack > 1e-9) << "trial " << trial;
      if (!local.ok) {
        EXPECT_LT(local.violating_set.size(), static_cast<std::size_t>(N));
        EXPECT_LE(slack_of(f, speeds, mean * N, local.violating_set), 1e-9);
        ++locally_unstable;
      } else {
        ++locally_stable;
      }
    }
  }
  // The random instances exercise both outcomes of both checks.
  EXPECT_GT(unstable, 20);
  EXPECT_GT(stable, 20);
  EXPECT_GT(locally_unstable, 20);
  EXPECT_GT(locally_stable, 5);
}

// The closed forms for size-symmetric families agree with enumeration, with uneven speeds.
TEST(Stability, SizeSymmetricFamiliesAgreeWithEnumeration) {
  Rng rng(7, 7);
  for (int trial = 0; trial < 200; ++trial) {
    const int N = 2 + static_cast<int>(rng.below(6));
    FamilyParams p;
    p.N = N;
    switch (trial % 3) {
      case 0: p.kind = FamilyKind::independent; break;
      case 1:
        p.kind = FamilyKind::complete;
        p.d = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(N)));
        break;
      default:
        p.kind = FamilyKind::singletons_full;
        p.eps = 0.05 + 0.9 * rng.uniform();
    }
    Family f(p);
    std::vector<double> speeds(static_cast<std::size_t>(N));
    for (auto& s : speeds) s = trial % 2 ? 1.0 : 0.5 + rng.uniform();
    double mean = 0.0;
    for (double s : speeds) mean += s / N;
    System sys(f, speeds, mean * (0.3 + 0.8 * rng.uniform()));
    EXPECT_EQ(check_stability(sys).ok,
              brute_force(f, speeds, sys.total_arrival_rate(), false).min_slack > 1e-9);
    EXPECT_EQ(check_local_stability(f, speeds).ok,
              brute_force(f, speeds, mean * N, true).min_slack > 1e-9)
        << to_string(p.kind) << " N=" << N;
  }
}

TEST(Stability, PaperFacts) {
  // Independent identical servers: stable for lambda < mu but never locally stable (eq. 5 is an
  // equality for every U); section 6 examples are locally stable for any eps > 0.
  FamilyParams ind;
  ind.kind = FamilyKind::independent;
  ind.N = 4;
  Family f(ind);
  EXPECT_TRUE(check_stability(System(f, {}, 0.99)).ok);
  EXPECT_FALSE(check_stability(System(f, {}, 1.0)).ok);
  EXPECT_FALSE(check_local_stability(f, std::vector<double>(4, 1.0)).ok);
  for (auto kind : {FamilyKind::singletons_full, FamilyKind::tree_singletons}) {
    FamilyParams p;
    p.kind = kind;
    p.N = 12;
    p.eps = 0.01;
    EXPECT_TRUE(check_local_stability(Family(p), std::vector<double>(12, 1.0)).ok);
  }
  // A connected ring with identical speeds is locally stable; a path too.
  FamilyParams ring;
  ring.kind = FamilyKind::ring;
  ring.N = 50;
  EXPECT_TRUE(check_local_stability(Family(ring), std::vector<double>(50, 1.0)).ok);
  // Ring with one very fast server (speed 10): the other 49 servers get 48/50 of the jobs but
  // only 49/59 of the capacity, so local stability fails; stability holds at moderate load
  // (L * 0.96 = 28.3 < 49 at lambda = 0.5) and fails near the mean speed (55.5 > 49).
  std::vector<double> speeds(50, 1.0);
  speeds[7] = 10.0;
  EXPECT_TRUE(check_stability(System(Family(ring), speeds, 0.5)).ok);
  const auto overloaded = check_stability(System(Family(ring), speeds, 0.98 * 59.0 / 50.0));
  EXPECT_FALSE(overloaded.ok);
  const auto local = check_local_stability(Family(ring), speeds);
  ASSERT_FALSE(local.ok);
  EXPECT_EQ(std::count(local.violating_set.begin(), local.violating_set.end(), 7), 0);
}

TEST(Stability, DescribeNamesServersOneBased) {
  FamilyParams p;
  p.kind = FamilyKind::explicit_types;
  p.N = 3;
  p.types = {{{0}, 0.9}, {{1, 2}, 0.1}};
  const auto report = check_stability(System(Family(p), {1.0, 1.0, 1.0}, 0.5));
  ASSERT_FALSE(report.ok);  // server 1 gets 3 * 0.5 * 0.9 = 1.35 > 1
  EXPECT_EQ(report.violating_set, std::vector<int>{0});
  EXPECT_NE(report.describe().find("{1}"), std::string::npos) << report.describe();
}

}  // namespace
}  // namespace qsweep::model
