#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

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
    if (type.servers.empty())
      type.servers.push_back(static_cast<int>(rng.below(static_cast<std::uint64_t>(N))));
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
      case 0:
        p.kind = FamilyKind::independent;
        break;
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
        << name_of(p.kind) << " N=" << N;
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

// The loads of a heavy_traffic sweep (lambda = mean speed (1 - 10^-k), computed in doubles) up
// to k = 15, and the boundary itself: every family whose critical set is all servers with
// speed 1 is stable below lambda = 1 and unstable at it and above, exactly. (Before the exact
// decision, a relative tolerance of 1e-12 called k = 12 unstable, and reported a positive slack.)
TEST(Stability, DecidedExactlyAtTheBoundary) {
  std::vector<FamilyParams> families;
  auto add = [&](FamilyKind kind, int N, auto&& set) {
    FamilyParams p;
    p.kind = kind;
    p.N = N;
    set(p);
    families.push_back(p);
  };
  auto none = [](FamilyParams&) {};
  add(FamilyKind::complete, 4, [](FamilyParams& p) { p.d = 2; });
  add(FamilyKind::complete, 1024, [](FamilyParams& p) { p.d = 3; });
  add(FamilyKind::independent, 8, none);
  add(FamilyKind::singletons_full, 16, [](FamilyParams& p) { p.eps = 0.5; });
  add(FamilyKind::ring, 20, none);
  add(FamilyKind::path, 7, none);
  add(FamilyKind::star, 5, none);
  for (int N : {6, 10, 14})
    for (double eps : {0.5, 0.6, 0.75, 0.9})
      add(FamilyKind::hetero_ring, N, [&](FamilyParams& p) { p.eps = eps; });
  add(FamilyKind::tree_singletons, 9, [](FamilyParams& p) { p.eps = 0.3; });
  add(FamilyKind::torus, 9, [](FamilyParams& p) { p.rows = p.cols = 3; });
  for (const FamilyParams& params : families) {
    const Family family(params);
    SCOPED_TRACE(::testing::Message()
                 << name_of(params.kind) << " N=" << params.N << " eps=" << params.eps);
    for (int k : {12, 13, 14, 15}) {
      const auto report = check_stability(System(family, {}, 1.0 - std::pow(10.0, -k)));
      EXPECT_TRUE(report.ok) << "k = " << k << ": " << report.describe();
      EXPECT_EQ(report.warning, "") << "k = " << k;
    }
    const auto at = check_stability(System(family, {}, 1.0));
    ASSERT_FALSE(at.ok);
    EXPECT_EQ(at.slack, 0.0);
    const auto above = check_stability(System(family, {}, std::nextafter(1.0, 2.0)));
    ASSERT_FALSE(above.ok);
    EXPECT_LT(above.slack, 0.0);
    EXPECT_NE(above.describe().find("<= 0"), std::string::npos);
  }
}

// Speeds of two classes (the sweep's ring with speed_profile two_class): the critical set is
// not the whole system. With fast = 1.5 the slow half {6..10} (a path of 4 edges: 4/10 of the
// jobs) and the whole ring both reach their capacity exactly at lambda = 1.25 = the mean speed;
// with fast = 2 the slow half is critical at 1.25 < 1.5.
TEST(Stability, TwoClassRingsAtTheirCriticalLoads) {
  FamilyParams ring;
  ring.kind = FamilyKind::ring;
  ring.N = 10;
  const Family family(ring);
  const auto speeds_of = [](double fast) { return speed_profile("two_class", 10, fast); };
  EXPECT_TRUE(check_stability(System(family, speeds_of(1.5), 1.25 * (1.0 - 1e-15))).ok);
  const auto at = check_stability(System(family, speeds_of(1.5), 1.25));
  ASSERT_FALSE(at.ok);
  EXPECT_EQ(at.slack, 0.0);
  EXPECT_TRUE(check_stability(System(family, speeds_of(2.0), std::nextafter(1.25, 0.0))).ok);
  const auto slow = check_stability(System(family, speeds_of(2.0), 1.5 * (1.0 - 1e-12)));
  ASSERT_FALSE(slow.ok);
  EXPECT_EQ(slow.violating_set, (std::vector<int>{5, 6, 7, 8, 9}));
  EXPECT_NEAR(slow.slack, 5.0 - 0.4 * 15.0 * (1.0 - 1e-12), 1e-12);
}

// Random instances placed within 3e-15 (relative) of their critical load lambda* =
// min_U mu(U) / (N mass(U)), computed by enumerating every U in long double (64-bit
// significands: ~1e-19, far below the gap) with the family's probabilities as exact fractions:
// explicit types (the given p over their sum; max flow) and the size-symmetric families with
// uneven speeds (closed form). Both sides of lambda* are decided correctly.
TEST(Stability, NearTheCriticalLoadAgreesWithLongDoubleEnumeration) {
  Rng rng(2027, 3);
  for (int trial = 0; trial < 120; ++trial) {
    const int N = 2 + static_cast<int>(rng.below(5));
    FamilyParams p;
    p.N = N;
    std::vector<std::pair<ServerMask, long double>> types;  // exact p as long double
    switch (trial % 4) {
      case 0: {
        p.kind = FamilyKind::complete;
        p.d = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(N)));
        const Family f(p);
        const auto listed = f.enumerate();
        for (const auto& t : listed)
          types.emplace_back(t.servers, 1.0L / static_cast<long double>(listed.size()));
        break;
      }
      case 1: {
        p.kind = FamilyKind::singletons_full;
        p.eps = 0.05 + 0.9 * rng.uniform();
        for (int n = 0; n < N; ++n)
          types.emplace_back(ServerMask{1} << n,
                             (N - 1 - static_cast<long double>(p.eps)) / (N * (N - 1.0L)));
        types.emplace_back((ServerMask{1} << N) - 1, static_cast<long double>(p.eps) / (N - 1));
        break;
      }
      default: {
        p.kind = FamilyKind::explicit_types;
        const int T = 1 + static_cast<int>(rng.below(5));
        long double total = 0;
        for (int t = 0; t < T; ++t) {
          ExplicitType type;
          for (int n = 0; n < N; ++n)
            if (rng.uniform() < 0.5) type.servers.push_back(n);
          if (type.servers.empty())
            type.servers.push_back(static_cast<int>(rng.below(static_cast<std::uint64_t>(N))));
          type.p = 0.1 + rng.uniform();
          total += type.p;
          p.types.push_back(type);
        }
        for (auto& t : p.types) t.p = static_cast<double>(t.p / total);  // sum 1 within 1e-15
        total = 0;
        for (const auto& t : p.types) total += t.p;
        for (const auto& t : p.types) {
          ServerMask m = 0;
          for (int n : t.servers) m |= ServerMask{1} << n;
          types.emplace_back(m, t.p / total);
        }
      }
    }
    if (p.types.size() == 1 && p.kind == FamilyKind::explicit_types) continue;
    const Family family(p);
    std::vector<double> speeds(static_cast<std::size_t>(N));
    for (auto& s : speeds) s = 0.25 + std::round(16 * rng.uniform()) / 8;  // ties happen
    long double critical = std::numeric_limits<long double>::infinity();
    for (ServerMask U = 1; U < (ServerMask{1} << N); ++U) {
      long double mu = 0, mass = 0;
      for (int n = 0; n < N; ++n)
        if (U >> n & 1) mu += speeds[static_cast<std::size_t>(n)];
      for (const auto& [m, prob] : types)
        if ((m & ~U) == 0) mass += prob;
      if (mass > 0) critical = std::min(critical, mu / (N * mass));
    }
    SCOPED_TRACE(::testing::Message() << "trial " << trial << " " << name_of(p.kind) << " N=" << N
                                      << " critical " << static_cast<double>(critical));
    const auto below = static_cast<double>(critical * (1 - 3e-15L));
    const auto above = static_cast<double>(critical * (1 + 3e-15L));
    const auto stable = check_stability(System(family, speeds, below));
    EXPECT_TRUE(stable.ok) << stable.describe();
    EXPECT_EQ(stable.warning, "");
    const auto unstable = check_stability(System(family, speeds, above));
    EXPECT_FALSE(unstable.ok);
    EXPECT_LT(unstable.slack, 0.0);
    EXPECT_LE(slack_of(family, speeds, N * above, unstable.violating_set), 1e-12);
  }
}

// An exact max flow beyond 2e6 edges is not attempted: a ring of 6e5 servers within rounding of
// its boundary is reported as undecided (ok, with a warning); a little further away the
// floating-point flow decides it (the retry with a smaller inflation), and at the boundary the
// found set is certainly violating.
TEST(Stability, HugeNetworksWithinRoundingAreUndecided) {
  FamilyParams ring;
  ring.kind = FamilyKind::ring;
  ring.N = 600'000;  // 2.4e6 edges: source-type, type-server and server-sink
  const Family family(ring);
  const auto undecided = check_stability(System(family, {}, 1.0 - 1e-15));
  EXPECT_TRUE(undecided.ok);
  EXPECT_NE(undecided.warning.find("undecided"), std::string::npos) << undecided.warning;
  const auto decided = check_stability(System(family, {}, 1.0 - 1e-12));
  EXPECT_TRUE(decided.ok);
  EXPECT_EQ(decided.warning, "");
  EXPECT_FALSE(check_stability(System(family, {}, 1.0 + 1e-12)).ok);
}

// C(u, k) / C(N, k) for every u in turn, within its stated roundings of the product of k ratios
// (long double), whatever k: 1 (every value a product), 2, 7 (restarts at multiples of k) and N.
TEST(Stability, InsideFractionFollowsTheProductOfRatios) {
  constexpr int N = 60;
  for (const int k : {1, 2, 7, N}) {
    InsideFraction inside(N, k);
    for (int u = 1; u <= N; ++u) {
      long double exact = u < k ? 0.0L : 1.0L;
      for (int i = 0; u >= k && i < k; ++i) exact *= static_cast<long double>(u - i) / (N - i);
      const auto [value, roundings] = inside.next();
      EXPECT_LE(roundings, 4 * k) << "u " << u << " k " << k;
      EXPECT_LE(std::fabs(static_cast<long double>(value) - exact),
                exact * (roundings + 1) * 0x1p-53L)
          << "u " << u << " k " << k;
    }
  }
}

// The minimum over sizes of complete takes O(N) however large d is (it took O(N d): hours at
// N = 10^7, d = 5 x 10^6); the verdicts at the boundary, lambda = 1 for identical speeds.
TEST(Stability, CompleteWithHugeDIsCheckedOverEverySize) {
  FamilyParams complete;
  complete.kind = FamilyKind::complete;
  complete.N = 10'000'000;
  complete.d = 5'000'000;
  const Family family(complete);
  const std::vector<double> speeds(static_cast<std::size_t>(complete.N), 1.0);
  EXPECT_TRUE(check_stability(family, speeds, 0.5).ok);
  const StabilityReport over = check_stability(family, speeds, 1.5);
  EXPECT_FALSE(over.ok);
  EXPECT_EQ(over.violating_set.size(), static_cast<std::size_t>(complete.N)) << over.describe();
}

// Random routing: a server of a ring receives exactly lambda (two edges, half of each).
TEST(Stability, RandomRoutingIsDecidedExactly) {
  FamilyParams ring;
  ring.kind = FamilyKind::ring;
  ring.N = 20;
  const Family family(ring);
  EXPECT_EQ(check_random_routing(System(family, {}, 1.0 - 1e-15)).overloaded_server, -1);
  EXPECT_GE(check_random_routing(System(family, {}, 1.0)).overloaded_server, 0);
  FamilyParams complete;
  complete.kind = FamilyKind::complete;
  complete.N = 5;
  std::vector<double> speeds{1, 1, 0.5, 1, 1};
  EXPECT_EQ(check_random_routing(System(Family(complete), speeds, std::nextafter(0.5, 0.0)))
                .overloaded_server,
            -1);
  EXPECT_EQ(check_random_routing(System(Family(complete), speeds, 0.5)).overloaded_server, 2);
}

}  // namespace
}  // namespace qsweep::model
