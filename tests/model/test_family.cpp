#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "qsweep/common/error.hpp"
#include "qsweep/model/family.hpp"

namespace qsweep::model {
namespace {

FamilyParams make(FamilyKind kind, int N) {
  FamilyParams p;
  p.kind = kind;
  p.N = N;
  return p;
}

double total_p(const std::vector<JobType>& types) {
  double s = 0.0;
  for (const auto& t : types) s += t.p;
  return s;
}

// Every family, small N: enumerate() gives distinct masks within range, probabilities sum to 1,
// and num_types() / max_type_size() agree with the list.
TEST(Family, EnumerationIsAProbabilityDistributionForEveryFamily) {
  std::vector<FamilyParams> all;
  auto add = [&](FamilyParams p) { all.push_back(std::move(p)); };
  add(make(FamilyKind::independent, 5));
  for (int d = 1; d <= 6; ++d) {
    auto p = make(FamilyKind::complete, 6);
    p.d = d;
    add(p);
  }
  add(make(FamilyKind::ring, 7));
  auto hr = make(FamilyKind::hetero_ring, 8);
  hr.eps = 0.7;
  add(hr);
  add(make(FamilyKind::path, 6));
  add(make(FamilyKind::star, 6));
  auto ts = make(FamilyKind::tree_singletons, 9);
  ts.eps = 0.3;
  add(ts);
  auto sf = make(FamilyKind::singletons_full, 6);
  sf.eps = 0.4;
  add(sf);
  auto rr = make(FamilyKind::random_regular, 12);
  rr.degree = 3;
  add(rr);
  auto er = make(FamilyKind::erdos_renyi, 10);
  er.edge_prob = 0.4;
  add(er);
  auto to = make(FamilyKind::torus, 12);
  to.rows = 3;
  to.cols = 4;
  add(to);
  for (const auto& p : all) {
    SCOPED_TRACE(std::string(name_of(p.kind)));
    Family f(p);
    auto types = f.enumerate();
    EXPECT_NEAR(total_p(types), 1.0, 1e-12);
    EXPECT_EQ(static_cast<double>(types.size()), std::round(f.num_types()));
    std::set<ServerMask> masks;
    int max_size = 0;
    for (const auto& t : types) {
      EXPECT_GT(t.p, 0.0);
      EXPECT_NE(t.servers, 0u);
      EXPECT_EQ(t.servers >> p.N, 0u);
      masks.insert(t.servers);
      max_size = std::max(max_size, std::popcount(t.servers));
    }
    EXPECT_EQ(masks.size(), types.size());
    EXPECT_EQ(max_size, f.max_type_size());
  }
}

TEST(Family, HeteroRingFollowsEq35) {
  auto p = make(FamilyKind::hetero_ring, 4);
  p.eps = 0.9;
  Family f(p);
  std::map<ServerMask, double> by_mask;
  for (auto t : f.enumerate()) by_mask[t.servers] = t.p;
  // 1-based edges {1,2} (i = 1, odd): (1 - eps) 2 / N; {2,3} (i = 2, even): eps 2 / N.
  EXPECT_NEAR(by_mask.at(0b0011), 0.1 * 0.5, 1e-15);
  EXPECT_NEAR(by_mask.at(0b0110), 0.9 * 0.5, 1e-15);
  EXPECT_NEAR(by_mask.at(0b1100), 0.1 * 0.5, 1e-15);
  EXPECT_NEAR(by_mask.at(0b1001), 0.9 * 0.5, 1e-15);
}

TEST(Family, SectionSixExamplesHaveThePapersProbabilities) {
  auto sf = make(FamilyKind::singletons_full, 5);
  sf.eps = 0.5;
  for (auto t : Family(sf).enumerate()) {
    if (std::popcount(t.servers) == 1)
      EXPECT_NEAR(t.p, (5 - 1 - 0.5) / (5 * 4.0), 1e-15);
    else
      EXPECT_NEAR(t.p, 0.5 / 4, 1e-15);
  }
  auto ts = make(FamilyKind::tree_singletons, 5);
  ts.eps = 0.5;
  ts.tree_edges = {{0, 1}, {1, 2}, {1, 3}, {3, 4}};
  int edges = 0;
  for (auto t : Family(ts).enumerate()) {
    if (std::popcount(t.servers) == 1) {
      EXPECT_NEAR(t.p, 0.5 / 5, 1e-15);
    } else {
      EXPECT_NEAR(t.p, 0.5 / 4, 1e-15);
      ++edges;
    }
  }
  EXPECT_EQ(edges, 4);
}

TEST(Family, RandomRegularIsSimpleRegularAndSeeded) {
  for (int degree : {3, 4, 7}) {
    auto p = make(FamilyKind::random_regular, 40);
    p.degree = degree;
    p.graph_seed = 17;
    Family f(p);
    std::vector<int> deg(40, 0);
    for (const auto& e : f.listed_types()) {
      ASSERT_EQ(e.size(), 2u);
      ASSERT_NE(e[0], e[1]);
      ++deg[static_cast<std::size_t>(e[0])];
      ++deg[static_cast<std::size_t>(e[1])];
    }
    for (int d : deg) EXPECT_EQ(d, degree);
    EXPECT_EQ(Family(p).listed_types(), f.listed_types());
    p.graph_seed = 18;
    EXPECT_NE(Family(p).listed_types(), f.listed_types());
  }
}

// Small random regular graphs are often disconnected (two K4s at N = 8); the family resamples.
TEST(Family, RandomRegularGraphsAreConnected) {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    auto p = make(FamilyKind::random_regular, 8);
    p.degree = 3;
    p.graph_seed = seed;
    std::vector<int> parent(8);
    std::iota(parent.begin(), parent.end(), 0);
    std::function<int(int)> find = [&](int x) {
      return parent[x] == x ? x : parent[x] = find(parent[x]);
    };
    const Family f(p);
    for (const auto& e : f.listed_types()) parent[find(e[0])] = find(e[1]);
    for (int v = 0; v < 8; ++v) EXPECT_EQ(find(v), find(0)) << "seed " << seed;
  }
}

TEST(Family, CompleteProbabilitiesAreExactReciprocals) {
  auto p = make(FamilyKind::complete, 4);
  for (auto t : Family(p).enumerate()) EXPECT_EQ(t.p, 1.0 / 6.0);
}

TEST(Family, RandomTreeIsASpanningTree) {
  auto p = make(FamilyKind::tree_singletons, 30);
  p.eps = 0.2;
  p.graph_seed = 4;
  Family f(p);
  std::vector<int> parent(30);
  std::iota(parent.begin(), parent.end(), 0);
  std::function<int(int)> find = [&](int x) {
    return parent[x] == x ? x : parent[x] = find(parent[x]);
  };
  int edges = 0;
  for (const auto& t : f.listed_types())
    if (t.size() == 2) {
      ++edges;
      EXPECT_NE(find(t[0]), find(t[1])) << "cycle";
      parent[find(t[0])] = find(t[1]);
    }
  EXPECT_EQ(edges, 29);
}

TEST(Family, ErdosRenyiEdgeCountMatchesBinomialMean) {
  // N = 200, q = 0.1: E edges = 1990, sd = sqrt(19900 * 0.09) = 42.3; allow 5 sd.
  auto p = make(FamilyKind::erdos_renyi, 200);
  p.edge_prob = 0.1;
  p.graph_seed = 3;
  Family f(p);
  EXPECT_NEAR(static_cast<double>(f.listed_types().size()), 1990.0, 5 * 42.3);
  p.edge_prob = 1.0;
  EXPECT_EQ(Family(p).listed_types().size(), 200u * 199u / 2u);
}

// The edges come out as distinct pairs u < v inside 0..N-1 (the pair index is walked row by row
// of the upper triangle); all of them for edge_prob = 1.
TEST(Family, ErdosRenyiEdgesAreDistinctPairsInRange) {
  for (double q : {0.02, 0.3, 1.0}) {
    auto p = make(FamilyKind::erdos_renyi, 60);
    p.edge_prob = q;
    p.graph_seed = 11;
    const Family f(p);
    std::set<std::pair<int, int>> seen;
    for (const auto& edge : f.listed_types()) {
      ASSERT_EQ(edge.size(), 2u);
      EXPECT_TRUE(0 <= edge[0] && edge[0] < edge[1] && edge[1] < 60) << edge[0] << " " << edge[1];
      EXPECT_TRUE(seen.insert({edge[0], edge[1]}).second);
    }
    if (q == 1.0) {
      EXPECT_EQ(seen.size(), 60u * 59u / 2u);
    }
  }
}

// Families too large to build are refused from their parameters, before any allocation (a
// 46340 x 46340 torus used to allocate gigabytes first), and the message names the limit.
TEST(Family, SizesBeyondTheLimitsAreRefusedWithTheLimit) {
  auto message = [](const FamilyParams& p) -> std::string {
    try {
      Family family(p);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string servers = std::to_string(kMaxServers);
  auto torus = make(FamilyKind::torus, 46340 * 46340);
  torus.rows = torus.cols = 46340;
  EXPECT_NE(message(torus).find("2147395600 servers; expected rows x cols <= " + servers),
            std::string::npos)
      << message(torus);
  auto ring = make(FamilyKind::ring, kMaxServers + 1);
  EXPECT_NE(message(ring).find("expected N <= " + servers), std::string::npos) << message(ring);
  auto regular = make(FamilyKind::random_regular, 1'000'000);
  regular.degree = 41;  // 2.05e7 edges, just over kMaxListedJobTypes = 2e7
  EXPECT_NE(message(regular).find("would list 2.05e+07 job types"), std::string::npos)
      << message(regular);
  auto dense = make(FamilyKind::erdos_renyi, 100'000);
  dense.edge_prob = 0.01;  // 5e7 expected edges
  EXPECT_NE(message(dense).find("would list 5e+07 job types"), std::string::npos) << message(dense);
  // A family within the limits is built.
  auto ok = make(FamilyKind::random_regular, 1000);
  ok.degree = 3;
  EXPECT_NO_THROW(Family{ok});
}

// Sampling frequencies match enumerate() probabilities (chi-square, fixed seed).
TEST(Family, SamplingMatchesEnumeratedProbabilities) {
  std::vector<FamilyParams> cases;
  auto c = make(FamilyKind::complete, 6);
  c.d = 3;
  cases.push_back(c);
  // 22! / 1! ordered tuples do not fit in 64 bits: Floyd's algorithm instead of one draw.
  auto floyd = make(FamilyKind::complete, 22);
  floyd.d = 21;
  cases.push_back(floyd);
  auto hr = make(FamilyKind::hetero_ring, 6);
  hr.eps = 0.8;
  cases.push_back(hr);
  auto sf = make(FamilyKind::singletons_full, 4);
  sf.eps = 0.6;
  cases.push_back(sf);
  auto ex = make(FamilyKind::explicit_types, 3);
  ex.types = {{{0, 1}, 0.25}, {{1, 2}, 0.7}, {{2}, 0.05}};
  cases.push_back(ex);
  cases.push_back(make(FamilyKind::independent, 5));
  for (const auto& p : cases) {
    SCOPED_TRACE(std::string(name_of(p.kind)));
    Family f(p);
    auto types = f.enumerate();
    std::map<ServerMask, double> counts;
    Rng rng(123, 456);
    std::vector<int> servers;
    const int n = 200'000;
    for (int i = 0; i < n; ++i) {
      f.sample(rng, servers);
      ServerMask m = 0;
      for (int s : servers) {
        ASSERT_EQ(m & (ServerMask{1} << s), 0u) << "repeated server";
        m |= ServerMask{1} << s;
      }
      counts[m] += 1;
    }
    double chi2 = 0.0;
    for (const auto& t : types) {
      const double expected = n * t.p;
      chi2 += (counts[t.servers] - expected) * (counts[t.servers] - expected) / expected;
    }
    EXPECT_EQ(counts.size(), types.size());
    // Chi-square with k - 1 <= 21 degrees of freedom: mean k - 1, sd sqrt(2 (k - 1));
    // k - 1 + 6 sd is beyond the 0.9999 quantile.
    const double k = static_cast<double>(types.size()) - 1.0;
    EXPECT_LT(chi2, k + 6 * std::sqrt(2 * k));
  }
}

// The complete family's one-draw sampler (ordered tuples from one 64-bit number; d = 2 has its
// own inline path) gives every ordered d-tuple of distinct servers the same probability: the
// order is a uniform permutation too. Chi-square over all ordered tuples, fixed seed.
TEST(Family, CompleteSamplesUniformOrderedTuples) {
  for (auto [N, d] : {std::pair{5, 2}, {6, 3}, {4, 4}, {7, 1}}) {
    SCOPED_TRACE(testing::Message() << "N = " << N << ", d = " << d);
    auto p = make(FamilyKind::complete, N);
    p.d = d;
    Family f(p);
    EXPECT_TRUE(f.samples_in_random_order());
    std::map<long, double> counts;  // tuple read as a number in base N
    Rng rng(321, 654);
    std::vector<int> servers;
    const int n = 200'000;
    for (int i = 0; i < n; ++i) {
      f.sample(rng, servers);
      ASSERT_EQ(servers.size(), static_cast<std::size_t>(d));
      long code = 0;
      for (int s : servers) {
        ASSERT_GE(s, 0);
        ASSERT_LT(s, N);
        code = code * N + s;
      }
      ASSERT_EQ(std::set<int>(servers.begin(), servers.end()).size(), servers.size());
      counts[code] += 1;
    }
    double tuples = 1.0;
    for (int i = 0; i < d; ++i) tuples *= N - i;
    ASSERT_EQ(static_cast<double>(counts.size()), tuples);
    const double expected = n / tuples;
    double chi2 = 0.0;
    for (const auto& [code, count] : counts)
      chi2 += (count - expected) * (count - expected) / expected;
    // k - 1 <= 119 degrees of freedom; mean + 6 sd is beyond the 0.9999 quantile.
    const double k = tuples - 1.0;
    EXPECT_LT(chi2, k + 6 * std::sqrt(2 * k));
  }
  // Floyd's algorithm (too many tuples for one draw) and listed families give no random order.
  auto floyd = make(FamilyKind::complete, 22);
  floyd.d = 21;
  EXPECT_FALSE(Family(floyd).samples_in_random_order());
  EXPECT_FALSE(Family(make(FamilyKind::ring, 5)).samples_in_random_order());
  // N = 1000, d = 2 (JSQ(2)): both positions uniform over 10 blocks of 100 servers, distinct.
  auto pairs = make(FamilyKind::complete, 1000);
  Family f(pairs);
  Rng rng(11, 12);
  std::vector<int> servers;
  std::vector<double> first(10, 0.0), second(10, 0.0);
  const int n = 100'000;
  for (int i = 0; i < n; ++i) {
    f.sample(rng, servers);
    ASSERT_EQ(servers.size(), 2u);
    ASSERT_NE(servers[0], servers[1]);
    first[static_cast<std::size_t>(servers[0] / 100)] += 1;
    second[static_cast<std::size_t>(servers[1] / 100)] += 1;
  }
  for (const auto* cells : {&first, &second}) {
    double chi2 = 0.0;
    for (double c : *cells) chi2 += (c - n / 10.0) * (c - n / 10.0) / (n / 10.0);
    EXPECT_LT(chi2, 33.7);  // the 0.9999 quantile of chi-square with 9 degrees of freedom
  }
}

TEST(Family, ValidationNamesTheProblem) {
  auto expect_error = [](FamilyParams p, const std::string& fragment) {
    try {
      Family f(std::move(p));
      ADD_FAILURE() << "no error, expected: " << fragment;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  auto hr = make(FamilyKind::hetero_ring, 5);
  hr.eps = 0.5;
  expect_error(hr, "even N");
  hr.N = 6;
  hr.eps = 1.0;
  expect_error(hr, "eps = 1");
  auto c = make(FamilyKind::complete, 4);
  c.d = 5;
  expect_error(c, "d = 5");
  expect_error(make(FamilyKind::ring, 2), "N >= 3");
  expect_error(make(FamilyKind::complete, 0), "N must be at least 1");
  auto ex = make(FamilyKind::explicit_types, 3);
  ex.types = {{{0, 3}, 1.0}};
  expect_error(ex, "server 4, outside 1..3");
  ex.types = {{{0, 1}, 0.5}, {{1, 2}, 0.4}};
  expect_error(ex, "sum to 0.9");
  ex.types = {{{0, 0}, 1.0}};
  expect_error(ex, "twice");
  ex.types = {{{0}, -1.0}, {{1}, 2.0}};
  expect_error(ex, "p = -1");
  auto rr = make(FamilyKind::random_regular, 5);
  rr.degree = 3;
  expect_error(rr, "must be even");
  auto to = make(FamilyKind::torus, 10);
  to.rows = 3;
  to.cols = 3;
  expect_error(to, "not N");
  auto ts = make(FamilyKind::tree_singletons, 4);
  ts.eps = 0.5;
  ts.tree_edges = {{0, 1}, {1, 2}, {0, 2}};
  expect_error(ts, "spanning tree");
}

TEST(Family, EnumerateRefusesHugeOrWideFamilies) {
  auto c = make(FamilyKind::complete, 100);
  Family f(c);
  EXPECT_THROW(f.enumerate(), InputError);
  auto c2 = make(FamilyKind::complete, 60);
  c2.d = 10;
  EXPECT_THROW(Family(c2).enumerate(1000), InputError);
}

TEST(Family, ParamsWithUnusedNaNFieldsCompareEqual) {
  auto a = make(FamilyKind::ring, 5), b = make(FamilyKind::ring, 5);
  EXPECT_EQ(a, b);
  b.eps = 0.5;
  EXPECT_NE(a, b);
}

TEST(Family, KindNamesRoundTrip) {
  for (auto kind : {FamilyKind::independent, FamilyKind::complete, FamilyKind::explicit_types,
                    FamilyKind::torus, FamilyKind::singletons_full})
    EXPECT_EQ(parse_name<FamilyKind>(name_of(kind)), kind);
  EXPECT_EQ(parse_name<FamilyKind>("compete"), std::nullopt);
}

}  // namespace
}  // namespace qsweep::model
